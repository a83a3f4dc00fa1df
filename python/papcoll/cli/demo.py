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
import json
import tempfile
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


def _run_commands(console: Console, folder: Path) -> tuple[list[int], list[list[dict]]]:
    """The bench and sim parts, parsed and run as `papcoll bench` / `papcoll sim` would; their
    statuses and JSON rows (written into `folder`) for the verdict."""
    parser = Parser(prog="papcoll")
    commands = parser.add_subparsers(dest="command", required=True)
    bench.add_parser(commands)
    sim.add_parser(commands)
    statuses, results = [], []
    for number, command in enumerate((DEMO_BENCH, DEMO_SIM, DEMO_TOPOLOGY)):
        console.print("\n[bold]papcoll " + " ".join(command) + "[/]")
        rows_file = folder / f"part{number}.json"
        arguments = parser.parse_args([*command, "--json", str(rows_file)])
        statuses.append(int(arguments.handler(arguments)))
        results.append(json.loads(rows_file.read_text()) if rows_file.exists() else [])
    return statuses, results


def _fastest(rows: list[dict], delay_ms: float, papcoll_only: bool) -> dict | None:
    chosen = [row for row in rows if row["max_delay_ms"] == delay_ms and
              row["algorithm"].startswith("native") != papcoll_only]
    return min(chosen, key=lambda row: row["avg_elapsed_ms"], default=None)


def _compare(ours: dict, theirs: dict) -> str:
    ratio = theirs["avg_elapsed_ms"] / ours["avg_elapsed_ms"]
    word = "faster" if ratio >= 1 else "slower"
    return (f"{ours['algorithm']} {ours['avg_elapsed_ms']:.2f} ms against "
            f"{theirs['algorithm']} {theirs['avg_elapsed_ms']:.2f} ms: papcoll "
            f"{abs(ratio - 1) * 100:.0f} % {word}")


def verdict(rows: list[dict[str, Any]], bench_rows: list[dict], sim_rows: list[dict]) -> list[str]:
    """What the demo showed, in a few sentences a newcomer can read."""
    proved = sum(row["ok"] is True for row in rows)
    violations = sum(row["ok"] is False for row in rows)
    refused = len(rows) - proved - violations
    lines = [f"Correctness: the verifier proved {proved} schedules correct and found "
             f"{violations} wrong" + (" (a bug: see the table)" if violations else "")
             + (f"; {refused} are refused by their algorithm (e.g. a reduce-scatter that needs "
                f"P a power of two)" if refused else "")
             + (f"; every benchmark call matched MPI_Allreduce: "
                f"{'yes' if all(row['correct'] for row in bench_rows) else 'NO'}"
                if bench_rows else "") + "."]
    for delay in sorted({row["max_delay_ms"] for row in bench_rows}):
        ours, theirs = _fastest(bench_rows, delay, True), _fastest(bench_rows, delay, False)
        if ours and theirs:
            late = "all ranks on time" if delay == 0 else f"rank 1 {delay:g} ms late"
            lines.append(f"Real MPI, P = 4 on this machine, {late}: e-bar (time a rank spends "
                         f"in the call) {_compare(ours, theirs)}.")
    if sim_rows:
        delay = max(row["max_delay_ms"] for row in sim_rows)
        by_name = {row["algorithm"]: row for row in sim_rows if row["max_delay_ms"] == delay}
        aware = min((by_name[name] for name in ("slt", "prr") if name in by_name),
                    key=lambda row: row["avg_elapsed_ms"], default=None)
        if aware and "ring" in by_name:
            lines.append(f"Simulated seed 000 cluster (P = 48, 1 Gb/s), one rank {delay:g} ms "
                         f"late: arrival-aware {aware['algorithm']} e-bar "
                         f"{aware['avg_elapsed_ms']:.1f} ms against ring "
                         f"{by_name['ring']['avg_elapsed_ms']:.1f} ms "
                         f"({by_name['ring']['avg_elapsed_ms'] / aware['avg_elapsed_ms']:.2f}x).")
    lines.append("On 4 ranks sharing 2 cores the real-MPI gaps are small and noisy; the "
                 "simulator shows where waiting for a late rank costs most.")
    return lines


def command_demo(arguments: argparse.Namespace) -> int:
    elem_size = 4
    console = console_for(arguments, 120)
    _listing(console)
    rows = verified_rows(arguments.ranks, arguments.count, elem_size, console)
    console.print(_table(rows, arguments.count, elem_size))
    if arguments.json:
        write_json(rows, arguments.json)
    failed = any(row["ok"] is False for row in rows)
    statuses: list[int] = []
    results: list[list[dict]] = [[], [], []]
    if not arguments.no_bench:
        with tempfile.TemporaryDirectory() as folder:
            statuses, results = _run_commands(console, Path(folder))
    console.print("\n[bold]Verdict[/]")
    for line in verdict(rows, results[0], results[1]):
        console.print(f"- {line}")
    return EXIT_VIOLATION if failed or any(statuses) else EXIT_OK
