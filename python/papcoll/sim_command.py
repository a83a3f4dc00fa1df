"""`papcoll sim`: simulated e-bar and makespan of algorithms under an arrival pattern, on a
crossbar preset or a topology; per-rank and per-link detail, timelines, GOAL export."""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from .cli import groups_for
from .core import Context, PapcollError, Parameters
from .network import Network, Topology, load_network
from .sim import SimModel, SimResult, arrival_pattern, simulate, tau

BASELINE = "ring"
DTYPE_SIZES = {"float": 4, "double": 8, "int": 4, "char": 1}
TIMELINE_MAX_RANKS = 64
TIMELINE_MAX_PANELS = 8


class _Refusal(Exception):
    """Bad input: the message goes to stderr and the command exits with 2."""


def _path_time(model: SimModel, topology: Topology | None, first: int, second: int,
               nbytes: int) -> float:
    """One message of nbytes between two vertices (or across the crossbar), alone."""
    if topology is None:
        return model.latency + 2 * model.overhead + nbytes * model.seconds_per_byte
    if first == second:
        return (topology.local_latency + 2 * model.overhead
                + nbytes * topology.local_seconds_per_byte)
    vertices = [link // 2 for link in topology.vertex_path(first, second)]
    latency = sum(topology.link_latency[vertex] for vertex in vertices)
    per_byte = max(topology.link_seconds_per_byte[vertex] for vertex in vertices)
    return latency + 2 * model.overhead + nbytes * per_byte


def transfer_time(model: SimModel, topology: Topology | None, nbytes: int) -> float:
    """delta of seed 000 S3: one point-to-point transfer of the whole vector. With a topology,
    the fastest pair of ranks (all pairs of the vertices used when there are at most 64 of
    them, else the pairs with rank 0), so that e-bar_lo stays a lower bound."""
    if topology is None:
        return _path_time(model, None, 0, 0, nbytes)
    used = sorted(set(topology.rank_vertex))
    shared = len(used) < len(topology.rank_vertex)
    pairs = ([(a, b) for i, a in enumerate(used) for b in used[i + 1:]] if len(used) <= 64
             else [(topology.rank_vertex[0], b) for b in used if b != topology.rank_vertex[0]])
    times = [_path_time(model, topology, a, b, nbytes) for a, b in pairs]
    if shared:
        times.append(_path_time(model, topology, used[0], used[0], nbytes))
    return min(times) if times else 0.0


def _read_arrivals(path: str, ranks: int) -> list[float]:
    try:
        text = Path(path).read_text()
    except OSError as error:
        raise _Refusal(f"cannot read arrivals file {path}: {error.strerror}") from None
    try:
        values = json.loads(text) if text.lstrip().startswith("[") else [
            float(line) for line in text.split() if line]
    except ValueError as error:
        raise _Refusal(f"arrivals file {path}: not a JSON list or numbers one per line "
                       f"({error})") from None
    if not isinstance(values, list) or len(values) != ranks:
        raise _Refusal(f"arrivals file {path}: needs {ranks} arrival times (one per rank), "
                       f"found {len(values) if isinstance(values, list) else 'no list'}")
    for rank, value in enumerate(values):
        if isinstance(value, bool) or not isinstance(value, int | float) or \
                not math.isfinite(value):
            raise _Refusal(f"arrivals file {path}: the time of rank {rank} is not a finite "
                           f"number ({value!r})")
    return [float(value) for value in values]


def _scenarios(arguments: argparse.Namespace) -> list[tuple[Any, list[float]]]:
    """(max_delay_ms or 'file', arrivals) to simulate."""
    if arguments.arrivals:
        return [("file", _read_arrivals(arguments.arrivals, arguments.ranks))]
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


def _lower_bound(arrivals: list[float], delta: float) -> float:
    """e-bar_lo of seed 000 S3: every rank waits for the last arrival, then one transfer.
    Mean over ranks of (last arrival - a_i) + delta; for one-late that is (P-1)/P D + delta."""
    last = max(arrivals)
    return sum(last - a for a in arrivals) / len(arrivals) + delta


def _show(network: Network, ranks: int | None, console: Console) -> int:
    shown: dict[str, Any] = {"network": network.name, "description": network.description,
                             **asdict(network.model)}
    if network.layout is None:
        shown["topology"] = "crossbar"
    else:
        layout = network.layout(ranks or 1)
        places = ranks or sum(layout.cores)
        shown["topology"] = layout.place(places).describe()
    console.print_json(json.dumps(shown))
    return 0


def _export_goal(arguments: argparse.Namespace, network: Network, elem_size: int) -> int:
    from .goal import goal_text

    if len(arguments.algorithms) != 1:
        raise _Refusal("--export-goal writes one algorithm's schedule: give one name in "
                       "--algorithms")
    name = arguments.algorithms[0]
    arrivals = _scenarios(arguments)[0][1]
    context = Context(parameters=Parameters(schedule=arguments.schedule), arrivals=arrivals,
                      tau=tau(network.model, arguments.ranks, arguments.count, elem_size))
    text = goal_text(name, arguments.ranks, arguments.count, elem_size, network.model, context)
    if arguments.export_goal == "-":
        print(text)
    else:
        Path(arguments.export_goal).write_text(text)
        print(f"wrote {arguments.export_goal} ({name}, P = {arguments.ranks})")
    return 0


def _row(arguments: argparse.Namespace, name: str, delay: Any, arrivals: list[float],
         result: SimResult, delta: float, elem_size: int, topology: Topology | None,
         seconds: float) -> dict[str, Any]:
    row: dict[str, Any] = {
        "algorithm": name, "ranks": arguments.ranks, "count": arguments.count,
        "elem_size": elem_size, "network": arguments.network,
        "mode": "file" if arguments.arrivals else arguments.mode,
        "max_delay_ms": delay if delay != "file" else max(arrivals) * 1e3,
        "noise_mean_s": arguments.noise,
        "avg_elapsed_ms": result.average_elapsed * 1e3,
        "max_elapsed_ms": result.max_elapsed * 1e3,
        "makespan_ms": result.makespan * 1e3,
        "lower_bound_ms": _lower_bound(arrivals, delta) * 1e3,
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


def _print_rows(arguments: argparse.Namespace, rows: list[dict[str, Any]], elem_size: int,
                console: Console, network: Network) -> None:
    table = Table(title=f"Simulated all-reduce, {network.name}, P = {arguments.ranks}, "
                        f"{arguments.count} x {elem_size} B, "
                        f"{rows[0]['mode']}" + (f", noise {arguments.noise:g} s"
                                                if arguments.noise else ""))
    speedup = "speedup_vs_ring" if arguments.baseline == BASELINE else "speedup_vs_baseline"
    for column in ("algorithm", "max delay ms", "e-bar ms", "makespan ms", "e-bar_lo ms",
                   "e-bar / e-bar_lo", f"speedup vs {arguments.baseline or '-'}"):
        table.add_column(column, justify="left" if column == "algorithm" else "right",
                         no_wrap=column == "algorithm")
    for row in rows:
        table.add_row(row["algorithm"], f"{row['max_delay_ms']:g}",
                      f"{row['avg_elapsed_ms']:.3f}", f"{row['makespan_ms']:.3f}",
                      f"{row['lower_bound_ms']:.3f}",
                      f"{row['avg_elapsed_ms'] / row['lower_bound_ms']:.2f}"
                      if row["lower_bound_ms"] > 0 else "-",
                      f"{row[speedup]:.2f}" if row[speedup] else "-")
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
    console = Console(stderr=arguments.json == "-", width=max(Console().width, 120))
    try:
        return _run(arguments, console)
    except (_Refusal, ValueError) as error:  # NetworkError is a ValueError
        print(f"papcoll sim: {error}", file=sys.stderr)
        return 2
    except PapcollError as error:
        print(f"papcoll sim: {error.message}", file=sys.stderr)
        return 2


def _run(arguments: argparse.Namespace, console: Console) -> int:
    network = load_network(arguments.network)
    if arguments.param:
        network = network.with_parameters(arguments.param)
    elem_size = DTYPE_SIZES[arguments.dtype] if arguments.dtype else arguments.elem_size
    if arguments.show:
        return _show(network, arguments.ranks, console)
    if arguments.ranks is None:
        raise _Refusal("--ranks is required")
    topology = network.topology(arguments.ranks)
    if arguments.export_goal:
        return _export_goal(arguments, network, elem_size)
    algorithms = list(arguments.algorithms)
    if arguments.baseline and arguments.baseline not in algorithms:
        algorithms.append(arguments.baseline)
    scenarios = _scenarios(arguments)
    if arguments.timeline and (arguments.ranks > TIMELINE_MAX_RANKS or
                               len(scenarios) * len(algorithms) > TIMELINE_MAX_PANELS):
        raise _Refusal(f"--timeline draws at most {TIMELINE_MAX_RANKS} ranks and "
                       f"{TIMELINE_MAX_PANELS} panels (algorithms x delays); this run has "
                       f"P = {arguments.ranks} and {len(scenarios) * len(algorithms)} panels")
    delta = transfer_time(network.model, topology, arguments.count * elem_size)
    rows: list[dict[str, Any]] = []
    panels: list[tuple[str, SimResult]] = []
    variants = _variants(algorithms, arguments.schedule)
    groups = groups_for(arguments.groups, arguments.ranks, topology)
    for delay, arrivals in scenarios:
        for label, name, schedule in variants:
            parameters = Parameters(schedule=schedule, tree=topology,
                                    inner_algorithm=arguments.inner,
                                    outer_algorithm=arguments.outer)
            context = Context(parameters=parameters, arrivals=arrivals, groups=groups,
                              tau=tau(network.model, arguments.ranks, arguments.count,
                                      elem_size))
            began = time.perf_counter()
            result = simulate(name, arguments.ranks, arguments.count, elem_size, network.model,
                              arrivals, context, topology=topology, noise_mean=arguments.noise,
                              noise_seed=arguments.seed, timeline=bool(arguments.timeline),
                              max_operations=arguments.max_operations)
            seconds = time.perf_counter() - began
            rows.append(_row(arguments, label, delay, arrivals, result, delta, elem_size,
                             topology, seconds))
            rows[-1]["schedule"] = schedule
            if arguments.timeline:
                panels.append((f"{label}, max delay {rows[-1]['max_delay_ms']:g} ms", result))
    base = {row["max_delay_ms"]: row["avg_elapsed_ms"] for row in rows
            if row["algorithm"] == arguments.baseline}
    for row in rows:
        row["speedup_vs_ring" if arguments.baseline == BASELINE else "speedup_vs_baseline"] = (
            base[row["max_delay_ms"]] / row["avg_elapsed_ms"] if base else None)
    _print_rows(arguments, rows, elem_size, console, network)
    if arguments.timeline:
        from .timeline import draw_timelines

        draw_timelines(panels, arguments.timeline,
                       f"{network.name}, P = {arguments.ranks}, "
                       f"{arguments.count} x {elem_size} B")
        console.print(f"timeline: {arguments.timeline}")
    if arguments.json == "-":
        print(json.dumps(rows, indent=1))
    elif arguments.json:
        Path(arguments.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0
