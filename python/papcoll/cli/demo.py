"""`papcoll demo` (`make demo`): the algorithms, then a table of verified schedules: for each
algorithm and P, whether the verifier proves it, the bytes the busiest rank sends against the
bandwidth lower bound of seed 001 (Lemma 4), and the communication rounds on the critical
path; then a small run of the mini-benchmark (`papcoll bench`, seed 000 Fig. 9) over real
MPI, papcoll against the MPI library's own all-reduce; then the simulator on seed 000's
setting (P = 48, 1 Gb/s Ethernet, one rank late) and on seed 001's tree of switches (32
hosts, two leaf switches), where the butterfly's messages contend for the links between the
switches."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from ..core import Context, algorithms, verify
from . import bench, sim
from .options import (
    EXIT_OK,
    EXIT_VIOLATION,
    Parser,
    add_count,
    add_json,
    comma_list,
    console_for,
    integer_in_range,
    write_json,
)

_MIB = 1024.0 * 1024.0
DEMO_RANKS = "4,13,64"
# the table verifies every algorithm at every P: about 3 s at P = 256 on a 2-core machine,
# 20 s at 512 (several algorithms' schedules grow as P^2)
DEMO_MAX_RANKS = 256

# The benchmark part: P = 4 (oversubscribed on a 2-core machine, which MPI handles), 1 Mi
# floats, rank 1 late by 0 or 10 ms, a short compute phase so the demo takes under a minute.
DEMO_BENCH = ["bench", "--ranks", "4", "--count", "1M", "--mode", "one-late",
              "--algorithms", "ring,rabenseifner,recursive_doubling,native,native:ring",
              "--max-delay", "0,10ms", "--iterations", "10", "--compute-ms", "20"]
DEMO_SIM = ["sim", "--network", "ethernet-1g", "--ranks", "48", "--count", "1M",
            "--algorithms", "ring,rabenseifner,slt,prr", "--mode", "one-late",
            "--max-delay", "0,10,50,100ms"]
# the network files ship in the source tree's docs/networks/ (papcoll is installed editable)
_NETWORKS = Path(__file__).resolve().parents[3] / "docs" / "networks"
DEMO_TOPOLOGY = ["sim", "--network", str(_NETWORKS / "two-switch-32.json"), "--ranks", "32",
                 "--count", "256K", "--algorithms", "ring,recursive_doubling,rabenseifner"]


def add_parser(commands: Any) -> None:
    demo = commands.add_parser(
        "demo", help="the algorithms and a table of verified schedules",
        description="The algorithms, a table of verified schedules, then (unless --no-bench) "
                    "a short `papcoll bench` and two `papcoll sim` runs.")
    demo.add_argument("--ranks", "-P",
                      type=comma_list(integer_in_range("ranks", 1, DEMO_MAX_RANKS)),
                      default=comma_list(int)(DEMO_RANKS),
                      help=f"numbers of ranks P, comma-separated (default {DEMO_RANKS})")
    add_count(demo, "1M")
    demo.add_argument("--no-bench", action="store_true",
                      help="only the verified schedules: no MPI benchmark, no simulation")
    add_json(demo, "the verified schedules' rows")
    demo.set_defaults(handler=command_demo)


def _listing(console: Console) -> None:
    listing = Table(title="papcoll algorithms")
    for column in ("name", "description", "source"):
        listing.add_column(column, overflow="fold")
    for info in algorithms():
        listing.add_row(info.name, info.description, info.source)
    console.print(listing)


def verified_rows(ranks_list: list[int], count: int, elem_size: int,
                  console: Console) -> list[dict[str, Any]]:
    """verify() of every algorithm at every P: slt and prr with rank 1 predicted 10 ms late,
    tau 1 ms; hierarchical ones with groups of 4 consecutive ranks. None for ok where the
    algorithm does not take P (reduce-scatter ones: powers of two)."""
    rows: list[dict[str, Any]] = []
    with console.status("verifying...") as status:
        for info in algorithms():
            for ranks in ranks_list:
                status.update(f"verifying {info.name} at P = {ranks}")
                row: dict[str, Any] = {"algorithm": info.name, "ranks": ranks, "ok": None}
                rows.append(row)
                if info.reduce_scatter and ranks & (ranks - 1):
                    continue
                late = Context(arrivals=[0.01 if rank == 1 else 0.0 for rank in range(ranks)],
                               tau=1e-3, groups=[rank // 4 for rank in range(ranks)])
                report = verify(info.name, ranks, count, elem_size, late)
                row.update({"ok": report.ok, **report.as_dict()})
    return rows


def _table(rows: list[dict[str, Any]], count: int, elem_size: int) -> Table:
    table = Table(
        title=f"Verified schedules, {count} elements x {elem_size} B per rank "
        "(busiest rank vs the lower bound 2(P-1)/P x n; slt and prr with rank 1 predicted "
        "10 ms late, tau 1 ms; hierarchical ones with groups of 4 consecutive ranks)"
    )
    for column in ("algorithm", "P", "verified", "order kept", "rounds", "busiest rank sends",
                   "lower bound", "ratio", "ops/rank", "scratch"):
        if column == "algorithm":
            table.add_column(column, no_wrap=True)
        else:
            table.add_column(column, justify="right")
    for index, row in enumerate(rows):
        if index and row["algorithm"] != rows[index - 1]["algorithm"]:
            table.add_section()
        if row["ok"] is None:
            table.add_row(row["algorithm"], str(row["ranks"]), "- (P must be a power of two)",
                          *["-"] * 7)
            continue
        sent, bound = row["max_bytes_sent"], row["lower_bound_bytes"]
        table.add_row(
            row["algorithm"], str(row["ranks"]),
            "[green]yes[/]" if row["ok"] else f"[red]NO: {row['reason']}[/]",
            "yes" if row["order_preserved"] else "no",
            str(row["rounds"]),
            f"{sent / _MIB:.2f} MiB",
            f"{bound / _MIB:.2f} MiB",
            f"{sent / bound if bound else 1.0:.2f}",
            str(row["max_ops"]),
            f"{row['max_scratch_elements'] * elem_size / _MIB:.2f} MiB",
        )
    return table


def _run_commands(console: Console) -> list[int]:
    """The bench and sim parts, parsed and run as `papcoll bench` / `papcoll sim` would."""
    parser = Parser(prog="papcoll")
    commands = parser.add_subparsers(dest="command", required=True)
    bench.add_parser(commands)
    sim.add_parser(commands)
    statuses = []
    for command in (DEMO_BENCH, DEMO_SIM, DEMO_TOPOLOGY):
        console.print("\n[bold]papcoll " + " ".join(command) + "[/]")
        arguments = parser.parse_args(command)
        statuses.append(int(arguments.handler(arguments)))
    return statuses


def command_demo(arguments: argparse.Namespace) -> int:
    elem_size = 4
    console = console_for(arguments, 120)
    _listing(console)
    rows = verified_rows(arguments.ranks, arguments.count, elem_size, console)
    console.print(_table(rows, arguments.count, elem_size))
    if arguments.json:
        write_json(rows, arguments.json)
    failed = any(row["ok"] is False for row in rows)
    statuses = [] if arguments.no_bench else _run_commands(console)
    return EXIT_VIOLATION if failed or any(statuses) else EXIT_OK
