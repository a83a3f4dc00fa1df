"""`papcoll report` and `papcoll preload`: libpapcoll_pmpi.so for unmodified programs.

`papcoll preload` prints the library's path (LD_PRELOAD=$(papcoll preload) mpiexec ...);
`papcoll report FILE` prints the report it wrote (PAPCOLL_REPORT=FILE) as a table."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rich.markup import escape
from rich.table import Table

from ..lab.bench import readable_bytes
from ..pmpi import load_report, preload_library_path, report_rows
from ..rules import rules_from_report, write_rules
from .options import EXIT_OK, add_command
from .output_options import add_json, console_for, json_took_stdout

# the call sites the table shows, the busiest first (--json writes every one)
TABLE_SITES = 100


def add_parser(commands: Any) -> None:
    reporting = add_command(
        commands, run_report, "report",
        help="print the report of libpapcoll_pmpi.so (PAPCOLL_REPORT=FILE)",
        description="Prints what libpapcoll_pmpi.so saw in a run: per communicator and call "
                    "site the call (MPI_Allreduce, MPI_Iallreduce, or persistent: "
                    "MPI_Allreduce_init and its starts), the calls, their size, time "
                    "inside, the arrival "
                    "imbalance, the algorithms papcoll ran, the calls passed to native and "
                    "why, the cost model's estimated saving, and auto's closed loop: its "
                    "probes, the calls where measurements overruled the model, and the "
                    "last choice's predicted and measured times. The table shows the "
                    f"{TABLE_SITES} busiest call sites; --json FILE writes every one. "
                    "docs/pmpi.md.")
    reporting.add_argument("report", metavar="FILE", help="the JSON report")
    reporting.add_argument("--rules", metavar="OUT",
                           help="also write a rules file (docs/rules.md) with one rule per "
                                "call site's shape naming the algorithm most of its calls "
                                "ran: run again with PAPCOLL_RULES=OUT to make the same "
                                "decisions")
    add_json(reporting, "the table's rows")
    preloading = add_command(
        commands, run_preload, "preload",
        help="print the path of libpapcoll_pmpi.so, for LD_PRELOAD",
        description="Prints the path of libpapcoll_pmpi.so: "
                    "LD_PRELOAD=$(papcoll preload) mpiexec -n 4 ./app gives an unmodified "
                    "MPI program papcoll's all-reduce. docs/pmpi.md.")
    add_json(preloading, "the path as {\"library\": PATH}")


def run_preload(arguments: argparse.Namespace) -> int:
    library = preload_library_path()
    if json_took_stdout(arguments, {"library": str(library)}):
        return EXIT_OK
    print(library)
    return EXIT_OK


def shown_text(text: str) -> str:
    """Text from the report (a call site, a communicator's name) as the table shows it: its
    '[' is not rich markup ("f[/]" raised MarkupError), and a control character (an escape
    sequence would reach the terminal) is shown as its Python escape."""
    if not text.isprintable():
        text = "".join(character if character.isprintable() else
                       repr(character)[1:-1] for character in text)
    return escape(text)


def run_report(arguments: argparse.Namespace) -> int:
    report = load_report(arguments.report)
    if arguments.rules is not None:
        rules = rules_from_report(report)
        write_rules(rules, arguments.rules)
        print(f"wrote {len(rules['rules'])} rules to {arguments.rules}", file=sys.stderr)
    rows = report_rows(report)
    if json_took_stdout(arguments, rows):
        return EXIT_OK
    console = console_for(arguments, 210)
    totals = report["totals"]
    # rich renders a table whole, in memory, at some 2 ms a row: 200,000 call sites took
    # 7 minutes and 2 GB. The busiest TABLE_SITES are what a person reads; --json has all.
    shown = rows[:TABLE_SITES]
    left_out = len(rows) - len(shown)
    table = Table(title=f"papcoll report: {shown_text(str(arguments.report))}",
                  caption="auto: the last choice's two sides (the model's and its "
                          "alternative), each with its time after the last arrival, "
                          "predicted / measured (-: not yet)")
    for column, justify in (("communicator", "left"), ("call site", "left"),
                            ("call", "left"), ("calls", "right"), ("size/call", "right"),
                            ("ms/call", "right"),
                            ("imbalance ms", "right"), ("papcoll ran", "left"),
                            ("native (why)", "left"), ("saving ms", "right"),
                            ("probes", "right"), ("overruled", "right"),
                            ("auto: predicted/measured ms", "left")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for row in shown:
        table.add_row(shown_text(row["communicator"]), shown_text(row["site"]),
                      row["call"], str(row["calls"]), readable_bytes(row["kib_per_call"] * 1024),
                      f"{row['ms_per_call']:.3f}", f"{row['imbalance_ms']:.3f}",
                      shown_text(row["algorithms"]), shown_text(row["native"]),
                      f"{row['saving_ms']:.3f}", str(row["probe_calls"]),
                      str(row["overruled_calls"]), shown_text(row["closed_loop"]))
    console.print(table)
    if left_out:
        console.print(f"{left_out:,} quieter call sites not shown (of {len(rows):,}; "
                      "--json FILE has every one)")
    incomplete = "" if report["complete"] else \
        " - INCOMPLETE: the program ended without MPI_Finalize, rank 0's calls only"
    console.print(f"{totals['calls']} calls on {report['ranks']} ranks: papcoll ran "
                  f"{totals['papcoll_calls']}, native {totals['native_calls']}; "
                  f"{totals['seconds_inside']:.3f} s inside MPI_Allreduce per rank; the "
                  f"model's estimated saving {totals['estimated_saving_seconds'] * 1e3:.3f} "
                  f"ms{incomplete}")
    node = report.get("node")
    if node is not None and node["oversubscribed"]:
        # MPICH's default MPI_Allreduce on a node with more ranks than cores took 650 ms a
        # 512 KiB call where its 'mpir' setting took 9.4 ms: papcoll's gains there may be
        # MPICH's setting's (docs/pmpi.md)
        tuning = shown_text(node["native_tuning"]) or "none: the MPI's defaults"
        console.print(f"{node['ranks']} ranks shared {node['cores']} cores on rank 0's node "
                      f"(oversubscribed): native MPI_Allreduce there depends on the MPI's "
                      f"tuning, in force: {tuning}")
    return EXIT_OK
