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
from ..pmpi import load_report, preload_library_path, report_contradictions, report_rows
from ..rules import rules_from_report, write_rules
from .options import EXIT_OK, add_command
from .output_options import add_json, console_for, json_took_stdout

# the call sites the table shows, the busiest first (--json writes every one)
TABLE_SITES = 100


def add_parser(commands: Any) -> None:
    reporting = add_command(commands, run_report, "report")
    reporting.add_argument("report", metavar="FILE", help="the JSON report")
    reporting.add_argument("--rules", metavar="OUT",
                           help="also write a rules file (docs/rules.md) with one rule per "
                                "call site's shape naming the algorithm most of its calls "
                                "ran: run again with PAPCOLL_RULES=OUT to make the same "
                                "decisions")
    add_json(reporting, "the table's rows")
    preloading = add_command(commands, run_preload, "preload")
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
        warn_of_contradictions(report)
        return EXIT_OK
    console = console_for(arguments, 210)
    # rich renders a table whole, in memory, at some 2 ms a row: 200,000 call sites took
    # 7 minutes and 2 GB. The busiest TABLE_SITES are what a person reads; --json has all.
    shown = rows[:TABLE_SITES]
    left_out = len(rows) - len(shown)
    table = Table(title=f"papcoll report: {shown_text(str(arguments.report))}",
                  caption="decided, ran: what ran in the calls papcoll decided (native: auto "
                          "chose MPI's own all-reduce); passed to MPI: calls papcoll left to "
                          "MPI, and why. ms/call: time inside the call (MPI_Iallreduce, "
                          "persistent: the post or start only). modelled saving: auto's cost "
                          "model's estimate against MPI_Allreduce, not a measurement. probes: "
                          "calls that ran auto's alternative to measure it; overruled: calls "
                          "that ran it because measurements beat the model. auto: the last "
                          "choice's two sides, each with its time after the last arrival, "
                          "predicted / measured (-: not yet)")
    for column, justify in (("communicator", "left"), ("call site", "left"),
                            ("call", "left"), ("calls", "right"), ("size/call", "right"),
                            ("ms/call", "right"),
                            ("imbalance ms", "right"), ("decided, ran", "left"),
                            ("passed to MPI (why)", "left"), ("modelled saving ms", "right"),
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
    for row in shown:
        if row["closed_loop_note"]:
            console.print(f"note: {shown_text(row['closed_loop_note'])}")
    console.print(totals_line(report))
    node = report.get("node")
    if node is not None and node["oversubscribed"]:
        # MPICH's default MPI_Allreduce on a node with more ranks than cores took 650 ms a
        # 512 KiB call where its 'mpir' setting took 9.4 ms: papcoll's gains there may be
        # MPICH's setting's (docs/pmpi.md)
        tuning = shown_text(node["native_tuning"]) or "none: the MPI's defaults"
        console.print(f"{node['ranks']} ranks shared {node['cores']} cores on rank 0's node "
                      f"(oversubscribed): native MPI_Allreduce there depends on the MPI's "
                      f"tuning, in force: {tuning}")
    warn_of_contradictions(report)
    return EXIT_OK


def totals_line(report: dict[str, Any]) -> str:
    """The totals, each count named for what it counts: "native" was both auto's choice of
    MPI's own all-reduce (in the table's algorithms) and a call passed to MPI undecided
    (here), so a line "native 0" stood beside a column "native 8". The time is inside the
    calls, non-blocking ones' posts included; the saving is the model's, not measured."""
    totals = report["totals"]
    sites = report["sites"]
    chose_native = sum(count for site in sites for name, count in site["algorithms"].items()
                       if name.split(":")[0] == "native")
    nonblocking = sum(site["nonblocking_calls"] for site in sites)
    incomplete = "" if report["complete"] else \
        " - INCOMPLETE: the program ended without MPI_Finalize, rank 0's calls only"
    posts = (f" ({nonblocking} of them MPI_Iallreduce posts or persistent starts, timed to "
             "the end of the post, not of the wait)" if nonblocking else "")
    return (f"{totals['calls']} calls on {report['ranks']} ranks{posts}: papcoll decided "
            f"{totals['papcoll_calls']} (auto ran MPI's own all-reduce in {chose_native} of "
            f"them), passed {totals['native_calls']} straight to MPI; "
            f"{totals['seconds_inside']:.3f} s inside the calls per rank; auto's cost model "
            f"estimated {totals['estimated_saving_seconds'] * 1e3:.3f} ms saved against "
            "MPI_Allreduce (modelled, not measured: run without the preload to measure "
            f"MPI_Allreduce itself){incomplete}")


def warn_of_contradictions(report: dict[str, Any]) -> None:
    """On stderr, one line each: counts that cannot all be true (a damaged or edited
    report), so that the table is not taken as a measurement."""
    problems = report_contradictions(report)
    shown = problems[:20]
    for problem in shown:
        print(f"papcoll report: warning: the report contradicts itself: {problem}",
              file=sys.stderr)
    if len(problems) > len(shown):
        print(f"papcoll report: warning: {len(problems) - len(shown)} more contradictions",
              file=sys.stderr)
