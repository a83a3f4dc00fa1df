"""`papcoll sim`: simulated e-bar and makespan of algorithms under an arrival pattern, on a
crossbar preset or a topology; per-rank and per-link detail, timelines, GOAL export. The
engine is papcoll.sim (and papcoll.network, papcoll.lab.timeline, papcoll.lab.goal)."""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from ..core import PapcollError
from ..lab.goal import goal_text
from ..lab.timeline import draw_timelines
from ..network import Network
from ..sim import (
    SimResult,
    arrival_pattern,
    exchanged_predictions,
    lower_bound,
    network_lower_bound,
    simulate,
    simulate_auto,
    tau,
    transfer_time,
)
from ..topology import Topology
from .context_options import (
    add_arrivals,
    add_parameters,
    arrival_times,
    arrivals_from_file,
    check_schedule,
    context_of,
)
from .options import (
    EXIT_OK,
    INT32_MAX,
    UsageError,
    add_algorithms,
    add_command,
    add_count,
    add_element_size,
    add_osu_sizes,
    add_ranks,
    add_sizes,
    algorithm_name,
    check_operations,
    durations,
    element_counts,
    element_size,
    integer_in_range,
    one_duration,
    require_ranks,
)
from .output_options import add_json, console_for, write_json
from .run_options import add_network, network_of

BASELINE = "ring"
TIMELINE_MAX_RANKS = 64
TIMELINE_MAX_PANELS = 8


def add_parser(commands: Any) -> None:
    sim = add_command(commands, command_sim, "sim")
    add_network(sim, "hockney")
    add_ranks(sim, 1 << 22)
    add_algorithms(sim, "ring,rabenseifner,slt,prr")
    sim.add_argument("--baseline", default="ring", type=lambda text: algorithm_name(text)
                     if text != "none" else "",
                     help="the algorithm the others are compared with, as e-bar / the "
                          "baseline's e-bar (below 1 is faster), added to the run (default "
                          "ring; 'none': no comparison, e.g. where a ring is too big)")
    sim.add_argument("--max-operations", type=integer_in_range("max operations", 1, 1 << 62),
                     default=200_000_000,
                     help="refuse runs whose schedules hold more operations (about 40 bytes "
                          "each; default 200000000)")
    add_parameters(sim, topology=True, tau_default="from the network model",
                   several_schedules=True)
    # --count (elements), --sizes (bytes) or OSU's -m, as `papcoll bench` takes them
    amount = sim.add_mutually_exclusive_group()
    add_count(amount, "1M", many=True)
    add_sizes(amount)
    add_osu_sizes(amount)
    add_element_size(sim, datatype=True)
    sim.add_argument("--mode", choices=("balanced", "one-late", "rand-late"),
                     default="balanced",
                     help="arrivals: all together, rank 1 late, or every rank late by a "
                          "random share of the maximum delay (default balanced)")
    sim.add_argument("--max-delay", type=durations, default=durations("0,10,50ms"),
                     help="maximum arrival delays of one-late and rand-late, e.g. 0,10,50ms "
                          "(default 0,10,50ms)")
    add_arrivals(sim, "replaces --mode and --max-delay")
    sim.add_argument("--seed", type=integer_in_range("seed", 0, 2**31 - 1), default=1,
                     help="for rand-late arrivals and for --noise")
    sim.add_argument("--noise", type=one_duration, default=0.0, metavar="MEAN",
                     help="every op starts late by an exponential delay of this mean, "
                          "e.g. 2us (OS noise; seeded by --seed)")
    sim.add_argument("--exchange-predictions", action="store_true",
                     help="PAP-aware algorithms first receive the other ranks' edge() "
                          "predictions, as papcoll's MPI library does: (P - 1) x o_r from "
                          "each arrival")
    sim.add_argument("--show", action="store_true",
                     help="print the network's parameters and topology, then stop")
    sim.add_argument("--per-rank", action="store_true",
                     help="print a_i, f_i, e_i of every rank (and add them to --json rows)")
    sim.add_argument("--links", action="store_true",
                     help="print the bytes over each link of the topology")
    sim.add_argument("--timeline", metavar="FILE.png",
                     help="draw every op of every rank (a Gantt chart, as Ruefenacht et al. "
                          "2017 Figs. 18-23)")
    sim.add_argument("--export-goal", metavar="FILE",
                     help="write the (single) algorithm's schedule as LogGOPSim GOAL text "
                          "and stop")
    sim.add_argument("--profile", action="store_true",
                     help="print the engine's speed: operations per second, memory per op")
    add_json(sim)


def _scenarios(arguments: argparse.Namespace) -> list[tuple[Any, list[float]]]:
    """(max_delay_ms, or 'given' for --arrivals, and the arrivals) to simulate."""
    given = arrival_times(arguments.arrivals, arguments.ranks)
    if given is not None:
        return [("given", given)]
    delays = arguments.max_delay if arguments.mode != "balanced" else [0.0]
    return [(delay, arrival_pattern(arguments.mode, arguments.ranks, delay / 1e3,
                                    arguments.seed)) for delay in delays]


def _variants(algorithms: list[str], schedules: str | None) -> list[tuple[str, str, str | None]]:
    """(label, algorithm, schedule) to run: recursive_multiplying once per schedule of
    --schedule (several separated by ';'), labelled with it; the others once."""
    variants: list[tuple[str, str, str | None]] = []
    for name in algorithms:
        if name == "recursive_multiplying" and schedules:
            variants += [(f"{name} {schedule.strip()}", name, schedule.strip())
                         for schedule in schedules.split(";") if schedule.strip()]
        else:
            variants.append((name, name, None))
    return variants


def _show(network: Network, ranks: int | None, console: Console) -> int:
    shown: dict[str, Any] = {"network": network.name, "description": network.description,
                             **asdict(network.model)}
    if network.layout is None:
        shown["topology"] = "crossbar"
    else:
        # without --ranks, as many ranks as the hosts have cores; a preset's layout depends
        # on the ranks (geo-2site lists the host of every rank), so it is made for those
        places = ranks or sum(network.layout(1).cores)
        shown["topology"] = network.layout(places).place(places).describe()
    console.print_json(json.dumps(shown))
    return EXIT_OK


def _export_goal(arguments: argparse.Namespace, network: Network, topology: Topology | None,
                 elem_size: int) -> int:
    if len(arguments.algorithms) != 1:
        raise PapcollError(1, "--export-goal writes one algorithm's schedule: give one name "
                              "in --algorithms")
    name = arguments.algorithms[0]
    arrivals = _scenarios(arguments)[0][1]
    context = context_of(arguments, arrivals, topology,
                         tau(network.model, arguments.ranks, arguments.count, elem_size),
                         arguments.schedule)
    text = goal_text(name, arguments.ranks, arguments.count, elem_size, network.model, context)
    if arguments.export_goal == "-":
        print(text)
    else:
        Path(arguments.export_goal).write_text(text)
        print(f"wrote {arguments.export_goal} ({name}, P = {arguments.ranks})")
    return EXIT_OK


def _row(arguments: argparse.Namespace, name: str, delay: Any, arrivals: list[float],
         result: SimResult, delta: float, network_bound: float, elem_size: int,
         topology: Topology | None, seconds: float) -> dict[str, Any]:
    given = arrivals_from_file(arguments.arrivals)
    bound = lower_bound(arrivals, delta)
    row: dict[str, Any] = {
        "algorithm": name, "ranks": arguments.ranks, "count": arguments.count,
        "elem_size": elem_size, "network": arguments.network,
        "mode": arguments.mode if delay != "given" else "file" if given else "given",
        "max_delay_ms": delay if delay != "given" else max(arrivals) * 1e3,
        "noise_mean_s": arguments.noise,
        "exchange_predictions": arguments.exchange_predictions,
        "avg_elapsed_ms": result.average_elapsed * 1e3,
        "max_elapsed_ms": result.max_elapsed * 1e3,
        "makespan_ms": result.makespan * 1e3,
        "lower_bound_ms": bound * 1e3,
        "network_bound_ms": network_bound * 1e3,
        # how far above each bound the run stayed (e-bar - bound)
        "excess_ms": (result.average_elapsed - bound) * 1e3,
        "network_excess_ms": (result.average_elapsed - network_bound) * 1e3,
        "operations": result.operations, "events": result.events,
        "memory_bytes": result.memory_bytes, "engine_seconds": seconds,
        "build_seconds": result.build_seconds, "run_seconds": result.run_seconds,
    }
    if topology is not None:
        row["link_bytes"] = {topology.link_name(i): n for i, n in enumerate(result.link_bytes)
                             if n}
    if arguments.per_rank:
        row["per_rank"] = [{"rank": r, "arrival_ms": a * 1e3, "finish_ms": f * 1e3,
                            "elapsed_ms": (f - a) * 1e3}
                           for r, (a, f) in enumerate(zip(arrivals, result.finish, strict=True))]
    return row


def _auto_ran(row: dict[str, Any]) -> str:
    """An auto row's choice and its model's predicted gain over native ("" elsewhere)."""
    if "chosen" not in row:
        return ""
    gain = row.get("predicted_gain")
    return row["chosen"] + (f" (gain {gain:.2f})" if isinstance(gain, float) else "")


def _print_rows(arguments: argparse.Namespace, rows: list[dict[str, Any]], elem_size: int,
                console: Console, network: Network) -> None:
    table = Table(title=f"Simulated all-reduce, {network.name}, P = {arguments.ranks}, "
                        f"{arguments.count} x {elem_size} B, "
                        f"{rows[0]['mode']}" + (f", noise {arguments.noise:g} s"
                                                if arguments.noise else ""),
                  caption="; ".join(part for part in (
                      f"e-bar / {arguments.baseline}: below 1 is faster than "
                      f"{arguments.baseline}" if arguments.baseline else "",
                      "auto ran: what auto chose, and the gain its model predicted over "
                      "native (1.00: none, so it runs native)"
                      if any("chosen" in row for row in rows) else "") if part) or None)
    relative = "time_vs_ring" if arguments.baseline == BASELINE else "time_vs_baseline"
    # what auto ran, and the gain its model predicted over native (1.0: no gain, so native):
    # at P = 256 it ran native on a predicted gain of 1.0, seen before only in the JSON
    chose = any("chosen" in row for row in rows)
    columns = ["algorithm", "max delay ms", "e-bar ms", "makespan ms", "e-bar_lo ms",
               "net bound ms", "e-bar / net bound", f"e-bar / {arguments.baseline or '-'}"]
    for column in columns + (["auto ran"] if chose else []):
        table.add_column(column, justify="left" if column in ("algorithm", "auto ran")
                         else "right", no_wrap=column in ("algorithm", "auto ran"))
    for row in rows:
        cells = [row["algorithm"], f"{row['max_delay_ms']:g}",
                 f"{row['avg_elapsed_ms']:.3f}", f"{row['makespan_ms']:.3f}",
                 f"{row['lower_bound_ms']:.3f}", f"{row['network_bound_ms']:.3f}",
                 f"{row['avg_elapsed_ms'] / row['network_bound_ms']:.2f}"
                 if row["network_bound_ms"] > 0 else "-",
                 f"{row[relative]:.2f}" if row[relative] is not None else "-"]
        if chose:
            cells.append(_auto_ran(row))
        table.add_row(*cells)
    console.print(table)
    if arguments.per_rank:
        for row in rows:
            detail = Table(title=f"{row['algorithm']}, max delay {row['max_delay_ms']:g} ms: "
                                 "per rank (ms)")
            for column in ("rank", "a_i", "f_i", "e_i = f_i - a_i"):
                detail.add_column(column, justify="right")
            for item in row["per_rank"]:
                detail.add_row(str(item["rank"]), f"{item['arrival_ms']:.3f}",
                               f"{item['finish_ms']:.3f}", f"{item['elapsed_ms']:.3f}")
            console.print(detail)
    if arguments.links:
        for row in rows:
            links = row.get("link_bytes")
            if links is None:
                console.print("[yellow]--links: a crossbar has no links to show[/]")
                break
            detail = Table(title=f"{row['algorithm']}, max delay {row['max_delay_ms']:g} ms: "
                                 "bytes per link")
            detail.add_column("link")
            detail.add_column("bytes", justify="right")
            for name, nbytes in sorted(links.items()):
                detail.add_row(name, str(nbytes))
            console.print(detail)
    if arguments.profile:
        profile = Table(title="Engine speed, one core: M ops/s over the whole call (build + "
                              "run) and over the event loop alone")
        for column in ("algorithm", "max delay ms", "operations", "events", "build s",
                       "run s", "M ops/s", "M ops/s run", "engine bytes/op"):
            profile.add_column(column, justify="left" if column == "algorithm" else "right")
        for row in rows:
            profile.add_row(row["algorithm"], f"{row['max_delay_ms']:g}",
                            str(row["operations"]), str(row["events"]),
                            f"{row['build_seconds']:.3f}", f"{row['run_seconds']:.3f}",
                            f"{row['operations'] / row['engine_seconds'] / 1e6:.2f}",
                            f"{row['operations'] / max(row['run_seconds'], 1e-9) / 1e6:.2f}",
                            f"{row['memory_bytes'] / max(row['operations'], 1):.1f}")
        console.print(profile)


def command_sim(arguments: argparse.Namespace) -> int:
    console = console_for(arguments, 120)
    network = network_of(arguments)
    elem_size = element_size(arguments)
    if arguments.show:
        return _show(network, arguments.ranks, console)
    require_ranks("sim", arguments)
    # beyond 2^31 elements the simulator still runs: its limit is its memory
    counts = element_counts(arguments, elem_size, "elements", INT32_MAX * 1024)
    if len(counts) > 1 and (arguments.export_goal or arguments.timeline):
        raise UsageError(f"{'--export-goal' if arguments.export_goal else '--timeline'} "
                         f"takes one size; this run has {len(counts)}")
    rows: list[dict[str, Any]] = []
    for count in counts:
        arguments.count = count
        status, here = _simulate_count(arguments, network, elem_size, console)
        if status != EXIT_OK or here is None:
            return status
        rows += here
    if arguments.json:
        write_json(rows, arguments.json)
    return EXIT_OK


def _simulate_count(arguments: argparse.Namespace, network: Network, elem_size: int,
                    console: Console) -> tuple[int, list[dict[str, Any]] | None]:
    """One size (arguments.count elements): its rows, printed as a table (and its detail
    and timeline where asked); (status, None) where --export-goal wrote the schedule."""
    topology = network.topology(arguments.ranks)
    if arguments.export_goal:
        return _export_goal(arguments, network, topology, elem_size), None
    check_schedule(arguments.schedule, arguments.algorithms)
    algorithms = list(arguments.algorithms)
    if arguments.baseline and arguments.baseline not in algorithms:
        algorithms.append(arguments.baseline)
    scenarios = _scenarios(arguments)
    if arguments.timeline and (arguments.ranks > TIMELINE_MAX_RANKS or
                               len(scenarios) * len(algorithms) > TIMELINE_MAX_PANELS):
        raise PapcollError(1, f"--timeline draws at most {TIMELINE_MAX_RANKS} ranks and "
                              f"{TIMELINE_MAX_PANELS} panels (algorithms x delays); this run "
                              f"has P = {arguments.ranks} and "
                              f"{len(scenarios) * len(algorithms)} panels")
    delta = transfer_time(network.model, topology, arguments.count * elem_size)
    model_tau = tau(network.model, arguments.ranks, arguments.count, elem_size)
    variants = _variants(algorithms, arguments.schedule)
    for _, name, schedule in variants:  # before any run builds P schedules
        if name == "auto":
            continue  # what it runs is checked by the simulation's own limit
        check_operations(name, arguments.ranks, arguments.count, elem_size,
                         context_of(arguments, scenarios[0][1], topology, model_tau, schedule),
                         arguments.max_operations, "--max-operations; the engine holds about "
                         "64 bytes and runs some 15 M of them a second")
    rows: list[dict[str, Any]] = []
    panels: list[tuple[str, SimResult]] = []
    for delay, arrivals in scenarios:
        network_bound = network_lower_bound(arrivals, network.model, topology,
                                            arguments.count * elem_size)
        for label, name, schedule in variants:
            context = context_of(arguments, arrivals, topology, model_tau, schedule)
            began = time.perf_counter()
            options = {"topology": topology, "noise_mean": arguments.noise,
                       "noise_seed": arguments.seed, "timeline": bool(arguments.timeline),
                       "max_operations": arguments.max_operations,
                       "own_work": exchanged_predictions(name, arguments.ranks, network.model)
                       if arguments.exchange_predictions else None}
            decided = None
            if name == "auto":
                decided, ran, result = simulate_auto(arguments.ranks, arguments.count,
                                                     elem_size, network.model, arrivals,
                                                     context, **options)
            else:
                result = simulate(name, arguments.ranks, arguments.count, elem_size,
                                  network.model, arrivals, context, **options)
            seconds = time.perf_counter() - began
            rows.append(_row(arguments, label, delay, arrivals, result, delta, network_bound,
                             elem_size, topology, seconds))
            rows[-1]["schedule"] = schedule
            if decided is not None:
                rows[-1].update(chosen=decided.algorithm, simulated=ran,
                                predicted_gain=decided.predicted_gain)
            if arguments.timeline:
                panels.append((f"{label}, max delay {rows[-1]['max_delay_ms']:g} ms", result))
    base = {row["max_delay_ms"]: row["avg_elapsed_ms"] for row in rows
            if row["algorithm"] == arguments.baseline}
    # Printed and in time_vs_*: e-bar / the baseline's, below 1 faster, the one convention of
    # papcoll's output (docs/benchmarks.md). speedup_vs_*, the inverse, stays in the JSON for
    # the programs that read it (bench/testbed_table3.py). None where the run takes no time
    # (P = 1, count 0): 0 / 0.
    suffix = "ring" if arguments.baseline == BASELINE else "baseline"
    for row in rows:
        reference, mine = base.get(row["max_delay_ms"], 0.0), row["avg_elapsed_ms"]
        usable = bool(base) and mine > 0 and reference > 0
        row[f"speedup_vs_{suffix}"] = reference / mine if usable else None
        row[f"time_vs_{suffix}"] = mine / reference if usable else None
    _print_rows(arguments, rows, elem_size, console, network)
    if arguments.timeline:
        draw_timelines(panels, arguments.timeline,
                       f"{network.name}, P = {arguments.ranks}, "
                       f"{arguments.count} x {elem_size} B")
        console.print(f"timeline: {arguments.timeline}")
    return EXIT_OK, rows
