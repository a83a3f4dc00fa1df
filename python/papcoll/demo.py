"""`make demo`: the algorithms, then a table of verified schedules: for each algorithm and P,
whether the verifier proves it, the bytes the busiest rank sends against the bandwidth lower
bound of seed 001 (Lemma 4), and the communication rounds on the critical path; then a
small run of the mini-benchmark (`papcoll bench`, seed 000 Fig. 9) over real MPI, papcoll
against the MPI library's own all-reduce; then the simulator on seed 000's setting (P = 48,
1 Gb/s Ethernet, one rank late) and on seed 001's tree of switches (32 hosts, two leaf
switches), where the butterfly's messages contend for the links between the switches."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from .core import Context, algorithms, verify

_MIB = 1024.0 * 1024.0


# The benchmark part: P = 4 (oversubscribed on a 2-core machine, which MPI handles), 1 Mi
# floats, rank 1 late by 0 or 10 ms, a short compute phase so the demo takes under a minute.
DEMO_BENCH = ["bench", "--ranks", "4", "--count", "1M", "--mode", "one-late",
              "--algorithms", "ring,rabenseifner,recursive_doubling,native,native:ring",
              "--max-delay", "0,10ms", "--iterations", "10", "--compute-ms", "20"]
DEMO_SIM = ["sim", "--network", "ethernet-1g", "--ranks", "48", "--count", "1M",
            "--algorithms", "ring,rabenseifner,slt,prr", "--mode", "one-late",
            "--max-delay", "0,10,50,100ms"]
# the network files ship in the source tree's docs/networks/ (papcoll is installed editable)
_NETWORKS = Path(__file__).resolve().parents[2] / "docs" / "networks"
DEMO_TOPOLOGY = ["sim", "--network", str(_NETWORKS / "two-switch-32.json"), "--ranks", "32",
                 "--count", "256K", "--algorithms", "ring,recursive_doubling,rabenseifner"]


def run_demo(ranks_list: list[int], count: int, elem_size: int = 4, bench: bool = True) -> int:
    console = Console(width=max(Console().width, 120))
    listing = Table(title="papcoll algorithms")
    for column in ("name", "description", "source"):
        listing.add_column(column, overflow="fold")
    for info in algorithms():
        listing.add_row(info.name, info.description, info.source)
    console.print(listing)

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
    failures = 0
    with console.status("verifying...") as status:
        for info in algorithms():
            for ranks in ranks_list:
                status.update(f"verifying {info.name} at P = {ranks}")
                if info.reduce_scatter and ranks & (ranks - 1):
                    table.add_row(info.name, str(ranks), "- (P must be a power of two)",
                                  *["-"] * 7)
                    continue
                late = Context(arrivals=[0.01 if rank == 1 else 0.0 for rank in range(ranks)],
                               tau=1e-3, groups=[rank // 4 for rank in range(ranks)])
                report = verify(info.name, ranks, count, elem_size, late)
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
    if not bench:
        return 0 if failures == 0 else 1
    from .cli import build_parser

    statuses = []
    for command in (DEMO_BENCH, DEMO_SIM, DEMO_TOPOLOGY):
        console.print("\n[bold]papcoll " + " ".join(command) + "[/]")
        arguments = build_parser().parse_args(command)
        statuses.append(int(arguments.handler(arguments)))
    return 0 if failures == 0 and not any(statuses) else 1
