"""`papcoll reproduce NAME`: a paper's table in the simulator, printed (the tables are
computed by papcoll.lab.reproduce; docs/reproductions.md)."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..lab.bench import readable_bytes
from ..lab.reproduce import (
    SEED_003_ALGORITHMS,
    seed001_crossover,
    seed002_tables,
    seed003_table1,
    seed004_table2,
)
from .options import EXIT_OK, UsageError, add_command
from .output_options import add_json, console_for, write_json

TABLES = ("seed004-table2", "seed003-table1", "seed001-crossover", "seed002-tables")
SEED004_NETWORK = "aries"


def add_parser(commands: Any) -> None:
    again = add_command(commands, command_reproduce, "reproduce")
    again.add_argument("table", choices=TABLES, help="which paper's table (above)")
    # None: not given, so that a table on its paper's fixed networks can refuse it
    again.add_argument("--network", default=None,
                       help=f"seed004-table2 only: the network preset or file (default "
                            f"{SEED004_NETWORK}); the other tables run on their papers' "
                            "networks")
    add_json(again)


def command_reproduce(arguments: argparse.Namespace) -> int:
    if arguments.network is not None and arguments.table != "seed004-table2":
        raise UsageError(f"--network applies to seed004-table2 only: {arguments.table} runs "
                         "on its paper's networks (docs/reproductions.md)")
    console = console_for(arguments, 130)
    found: Any
    if arguments.table == "seed003-table1":
        found = seed003_table1()
        _print_seed003(console, found)
    elif arguments.table == "seed001-crossover":
        found = seed001_crossover()
        _print_seed001(console, found)
    elif arguments.table == "seed002-tables":
        found = seed002_tables()
        _print_seed002(console, found)
    else:
        found = _seed004(console, arguments)
    if arguments.json:
        write_json(found, arguments.json)
    return EXIT_OK


def _print_seed003(console: Console, found: dict[str, Any]) -> None:
    bound = found["table"][0]["network_bound_ms"]
    table = Table(title="Proficz et al., Table 1 (geo-2site, P = 20, 512 K floats, balanced)",
                  caption=f"net bound: {bound:.1f} ms, the bound that knows the network")
    for column in ("algorithm", "e-bar ms (sim)", "over net bound ms", "paper ms"):
        table.add_column(column, justify="left" if column == "algorithm" else "right")
    for row in found["table"]:
        paper = row["paper_ms"]
        table.add_row(row["algorithm"], f"{row['avg_elapsed_ms']:.1f}",
                      f"{row['avg_elapsed_ms'] - row['network_bound_ms']:.1f}",
                      "-" if paper is None else str(paper))
    console.print(table)
    for key, first, title in (("scaling", "ranks", "scalability, balanced, e-bar ms"),
                              ("imbalanced", "max_delay_ms",
                               "P = 20, rand-late (mean of 5 seeds), e-bar ms")):
        curve = Table(title=f"Proficz et al.: {title}")
        curve.add_column(first.replace("_", " "), justify="right")
        for name in SEED_003_ALGORITHMS:
            curve.add_column(name, justify="right")
        curve.add_column("net bound", justify="right")  # sim.network_lower_bound
        for row in found[key]:
            curve.add_row(str(row[first]), *(f"{row[name]:.1f}" for name in SEED_003_ALGORITHMS),
                          f"{row['network_bound_ms']:.1f}")
        console.print(curve)


def _print_seed001(console: Console, rows: list[dict[str, Any]]) -> None:
    names = ("ring_topology", "ring", "recursive_doubling", "rabenseifner",
             "ring_topology (interleaved)", "ring (interleaved)")
    table = Table(title="Patarasuk & Yuan 2009: 32 hosts, two switches, 1 Gb/s: e-bar ms")
    table.add_column("size", justify="right")
    for name in names:
        table.add_column(name, justify="right")
    table.add_column("fastest (block)", justify="left")
    for row in rows:
        best = min(names[:4], key=lambda name: row[name])
        table.add_row(readable_bytes(row["bytes"]), *(f"{row[name]:.3f}" for name in names), best)
    console.print(table)


def _print_seed002(console: Console, rows: list[dict[str, Any]]) -> None:
    table = Table(title="Gavahi: priority_rabenseifner vs rabenseifner, P = 128 (8 x 16)")
    for column in ("network", "size", "naive us", "priority us", "overhead (sim)",
                   "overhead (paper)"):
        table.add_column(column, justify="left" if column == "network" else "right")
    for row in rows:
        paper = row["paper_overhead_percent"]
        table.add_row(row["network"], readable_bytes(row["bytes"]), f"{row['naive_us']:.1f}",
                      f"{row['priority_us']:.1f}", f"{row['overhead_percent']:+.1f} %",
                      "-" if paper is None else f"{paper:+.1f} %")
    console.print(table)


def _seed004(console: Console, arguments: argparse.Namespace) -> list[dict[str, Any]]:
    network = arguments.network or SEED004_NETWORK
    rows = seed004_table2(network)
    table = Table(title=f"Ruefenacht et al. 2017, Table 2, in the simulator "
                        f"({escape(network)}, 8-byte all-reduce): reduction of e-bar against "
                        "MPICH recursive doubling")
    for column in ("P", "RD us", "paper's schedule", "us", "reduction", "best found", "us",
                   "reduction", "paper: min", "paper: median"):
        table.add_column(column, justify="left" if "schedule" in column or column ==
                         "best found" else "right")
    for row in rows:
        table.add_row(str(row["ranks"]), f"{row['recursive_doubling_us']:.2f}",
                      row["paper_schedule"], f"{row['paper_schedule_us']:.2f}",
                      f"{row['paper_schedule_reduction_percent']:.1f} %", row["best_schedule"],
                      f"{row['best_us']:.2f}", f"{row['best_reduction_percent']:.1f} %",
                      f"{row['paper_min_reduction_percent']:.1f} %",
                      f"{row['paper_median_reduction_percent']:.1f} %")
    console.print(table)
    return rows
