"""`papcoll schedules` (the recursive multiplying schedule space of P) and `papcoll search`
(simulate every schedule on a network and rank them, seed 004 Section 5.3 done in the
simulator instead of by exhaustive measurement)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from .core import PapcollError
from .multiplying import (
    check,
    default_schedule,
    enumerate_schedules,
    optimal_fanout,
    recursive_doubling_schedule,
    schedule_shape,
    simulate_schedule,
)
from .network import load_network


def command_schedules(arguments: argparse.Namespace) -> int:
    rows = []
    for kind, schedule in enumerate_schedules(arguments.ranks, arguments.max_base):
        stages, largest = schedule_shape(schedule)
        rows.append({"schedule": schedule, "kind": kind, "stages": stages,
                     "max_base": largest, "reorders": check(schedule, arguments.ranks)})
    if arguments.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(f"# P = {arguments.ranks}: {len(rows)} schedules (bases <= {arguments.max_base}); "
          f"default {default_schedule(arguments.ranks) or '(none)'}; MPICH recursive "
          f"doubling {recursive_doubling_schedule(arguments.ranks) or '(none)'}")
    for row in rows:
        note = "  (commutative ops only)" if row["reorders"] else ""
        print(f"{row['kind']:8s} {row['schedule'] or '(empty: one rank)'}{note}")
    return 0


def _simulate_schedule(schedule: str, arguments: argparse.Namespace, network: Any,
                       topology: Any) -> float:
    return simulate_schedule(schedule, arguments.ranks, arguments.count, arguments.elem_size,
                             network.model, topology)


def search(arguments: argparse.Namespace, quiet: bool = False) -> dict[str, Any]:
    """Simulates every schedule of P on the network; returns the ranked rows and the baselines."""
    network = load_network(arguments.network)
    if arguments.param:
        network = network.with_parameters(arguments.param)
    topology = network.topology(arguments.ranks)
    candidates = list(enumerate_schedules(arguments.ranks, arguments.max_base))
    rows: list[dict[str, Any]] = []
    with Progress(transient=True, disable=quiet, console=Console(stderr=True)) as progress:
        task = progress.add_task(f"simulating {len(candidates)} schedules", total=len(candidates))
        for kind, schedule in candidates:
            elapsed = _simulate_schedule(schedule, arguments, network, topology)
            stages, largest = schedule_shape(schedule)
            rows.append({"schedule": schedule, "kind": kind, "stages": stages,
                         "max_base": largest, "avg_elapsed_ms": elapsed * 1e3,
                         "reorders": check(schedule, arguments.ranks)})
            progress.advance(task)
    rows.sort(key=lambda row: (row["avg_elapsed_ms"], row["stages"], row["schedule"]))
    baseline = recursive_doubling_schedule(arguments.ranks)
    baseline_ms = _simulate_schedule(baseline, arguments, network, topology) * 1e3
    for rank, row in enumerate(rows, 1):
        row["rank"] = rank
        row["reduction_vs_recursive_doubling_percent"] = (
            100 * (baseline_ms - row["avg_elapsed_ms"]) / baseline_ms if baseline_ms else 0.0)
    model = network.model
    ratio = model.latency / model.overhead if model.overhead > 0 else float("inf")
    return {"network": network.name, "ranks": arguments.ranks, "count": arguments.count,
            "recursive_doubling": {"schedule": baseline, "avg_elapsed_ms": baseline_ms},
            "default": default_schedule(arguments.ranks),
            "overlap_ratio": ratio, "optimal_fanout": optimal_fanout(ratio) if ratio >= 1
            else None, "rows": rows}


def command_search(arguments: argparse.Namespace) -> int:
    console = Console(stderr=arguments.json == "-", width=max(Console().width, 110))
    try:
        found = search(arguments, quiet=arguments.json == "-")
    except (ValueError, PapcollError) as error:
        print(f"papcoll search: {getattr(error, 'message', error)}", file=sys.stderr)
        return 2
    rows, baseline = found["rows"], found["recursive_doubling"]
    table = Table(title=f"Recursive multiplying schedules, {found['network']}, "
                        f"P = {arguments.ranks}, {arguments.count} x {arguments.elem_size} B "
                        f"(best {min(arguments.top, len(rows))} of {len(rows)})")
    for column in ("rank", "schedule", "kind", "stages", "e-bar us", "vs recursive doubling"):
        table.add_column(column, justify="left" if column in ("schedule", "kind") else "right")
    for row in rows[:arguments.top]:
        table.add_row(str(row["rank"]), row["schedule"] + (" *" if row["reorders"] else ""),
                      row["kind"], str(row["stages"]), f"{row['avg_elapsed_ms'] * 1e3:.3f}",
                      f"{-row['reduction_vs_recursive_doubling_percent']:+.1f} %")
    console.print(table)
    best = rows[0]
    ratio, fanout = found["overlap_ratio"], found["optimal_fanout"]
    console.print(
        f"recursive doubling ({baseline['schedule'] or 'nothing to do'}): "
        f"{baseline['avg_elapsed_ms'] * 1e3:.3f} us; default ({found['default'] or '-'}); "
        f"best: {best['schedule']} ({best['reduction_vs_recursive_doubling_percent']:.1f} % "
        f"faster)\nmodel (seed 004 Eq. 5): alpha_p / alpha_r = latency / overhead = "
        f"{ratio:.3g} -> optimal fan-out b_opt = {fanout:.2f} peers per stage (base "
        f"{fanout + 1:.2f}); the best schedule's largest base is {best['max_base']} "
        f"({best['max_base'] - 1} peers)" if fanout is not None else
        "model: the overlap ratio is below 1, Eq. 5 does not apply")
    console.print("* reorders operands: commutative ops only")
    if arguments.json == "-":
        print(json.dumps(found, indent=1))
    elif arguments.json:
        with open(arguments.json, "w") as handle:
            json.dump(found, handle, indent=1)
    return 0
