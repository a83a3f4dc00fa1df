"""`papcoll sim`: simulated e-bar and makespan of algorithms under an arrival pattern."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from .core import PapcollError
from .sim import arrival_pattern, preset, simulate, with_parameters

BASELINE = "ring"


def _transfer_time(model: Any, bytes_: int) -> float:
    """delta of seed 000 S3: one point-to-point transfer of the whole vector."""
    return model.latency + 2 * model.overhead + bytes_ * model.seconds_per_byte


def command_sim(arguments: argparse.Namespace) -> int:
    try:
        model = with_parameters(preset(arguments.network), arguments.param or "")
    except ValueError as error:
        print(f"papcoll sim: {error}", file=sys.stderr)
        return 2
    console = Console(stderr=arguments.json == "-", width=max(Console().width, 120))
    if arguments.show:
        console.print_json(json.dumps({"network": arguments.network, "topology": "crossbar",
                                       **asdict(model)}))
        return 0
    if arguments.ranks is None:
        print("papcoll sim: --ranks is required", file=sys.stderr)
        return 2
    algorithms = list(arguments.algorithms)
    if BASELINE not in algorithms:
        algorithms.append(BASELINE)
    delays = arguments.max_delay if arguments.mode != "balanced" else [0.0]
    rows: list[dict[str, Any]] = []
    delta = _transfer_time(model, arguments.count * arguments.elem_size)
    try:
        for delay_ms in delays:
            arrivals = arrival_pattern(arguments.mode, arguments.ranks, delay_ms / 1e3,
                                       arguments.seed)
            for name in algorithms:
                result = simulate(name, arguments.ranks, arguments.count, arguments.elem_size,
                                  model, arrivals)
                late = (arguments.ranks - 1) / arguments.ranks * delay_ms / 1e3
                bound = (late if arguments.mode == "one-late" else 0.0) + delta
                rows.append({"algorithm": name, "ranks": arguments.ranks,
                             "count": arguments.count, "elem_size": arguments.elem_size,
                             "network": arguments.network, "mode": arguments.mode,
                             "max_delay_ms": delay_ms,
                             "avg_elapsed_ms": result.average_elapsed * 1e3,
                             "makespan_ms": result.makespan * 1e3,
                             "lower_bound_ms": bound * 1e3,
                             "operations": result.operations})
    except PapcollError as error:
        print(f"papcoll sim: {error.message}", file=sys.stderr)
        return 2
    ring = {row["max_delay_ms"]: row["avg_elapsed_ms"] for row in rows
            if row["algorithm"] == BASELINE}
    for row in rows:
        row["speedup_vs_ring"] = ring[row["max_delay_ms"]] / row["avg_elapsed_ms"]
    table = Table(title=f"Simulated all-reduce, {arguments.network}, P = {arguments.ranks}, "
                        f"{arguments.count} x {arguments.elem_size} B, {arguments.mode}")
    for column in ("algorithm", "max delay ms", "e-bar ms", "makespan ms", "e-bar_lo ms",
                   "e-bar / e-bar_lo", "speedup vs ring"):
        table.add_column(column, justify="left" if column == "algorithm" else "right",
                         no_wrap=column == "algorithm")
    for row in rows:
        table.add_row(row["algorithm"], f"{row['max_delay_ms']:g}",
                      f"{row['avg_elapsed_ms']:.3f}", f"{row['makespan_ms']:.3f}",
                      f"{row['lower_bound_ms']:.3f}",
                      f"{row['avg_elapsed_ms'] / row['lower_bound_ms']:.2f}",
                      f"{row['speedup_vs_ring']:.2f}")
    console.print(table)
    if arguments.json == "-":
        print(json.dumps(rows, indent=1))
    elif arguments.json:
        Path(arguments.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0
