"""`make demo`: the algorithms, then a table of verified schedules: for each algorithm and P,
whether the verifier proves it, the bytes the busiest rank sends against the bandwidth lower
bound of seed 001 (Lemma 4), and the communication rounds on the critical path.
(The benchmark and the simulator join this demo in later issues.)"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from .core import algorithms, verify

_MIB = 1024.0 * 1024.0


def run_demo(ranks_list: list[int], count: int, elem_size: int = 4) -> int:
    console = Console(width=max(Console().width, 120))
    listing = Table(title="papcoll algorithms")
    for column in ("name", "description", "source"):
        listing.add_column(column, overflow="fold")
    for info in algorithms():
        listing.add_row(info.name, info.description, info.source)
    console.print(listing)

    table = Table(
        title=f"Verified schedules, {count} elements x {elem_size} B per rank "
        "(busiest rank vs the lower bound 2(P-1)/P x n)"
    )
    for column in ("algorithm", "P", "verified", "order kept", "rounds", "busiest rank sends",
                   "lower bound", "ratio", "ops/rank", "scratch"):
        if column == "algorithm":
            table.add_column(column, no_wrap=True)
        else:
            table.add_column(column, justify="right")
    failures = 0
    with console.status("verifying...") as status:
        for info in algorithms():
            for ranks in ranks_list:
                status.update(f"verifying {info.name} at P = {ranks}")
                report = verify(info.name, ranks, count, elem_size)
                failures += not report.ok
                ratio = (report.max_bytes_sent / report.lower_bound_bytes
                         if report.lower_bound_bytes else 1.0)
                table.add_row(
                    info.name, str(ranks),
                    "[green]yes[/]" if report.ok else f"[red]NO: {report.reason}[/]",
                    "yes" if report.order_preserved else "no",
                    str(report.rounds),
                    f"{report.max_bytes_sent / _MIB:.2f} MiB",
                    f"{report.lower_bound_bytes / _MIB:.2f} MiB",
                    f"{ratio:.2f}",
                    str(report.max_ops),
                    f"{report.max_scratch_elements * elem_size / _MIB:.2f} MiB",
                )
            table.add_section()
    console.print(table)
    return 0 if failures == 0 else 1
