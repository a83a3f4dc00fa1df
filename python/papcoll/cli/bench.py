"""`papcoll bench`: the seed 000 mini-benchmark (Fig. 9) over mpiexec, papcoll's algorithms
against the MPI library's own; the engine is papcoll.bench."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn
from rich.table import Table

from ..bench import BASELINE, BenchOptions, plot, run_benchmark, saving_summary
from .options import (
    EXIT_OK,
    EXIT_VIOLATION,
    INT32_MAX,
    UsageError,
    add_algorithms,
    add_count,
    add_datatype,
    add_json,
    add_ranks,
    add_schedule,
    check_schedule,
    console_for,
    durations,
    integer_in_range,
    write_json,
)


def add_parser(commands: Any) -> None:
    bench = commands.add_parser(
        "bench", help="the mini-benchmark (seed 000 Fig. 9) over mpiexec, against native MPI",
        description="Runs papcoll-bench under mpiexec: e-bar of each algorithm when rank 1 "
                    "(one-late) or every rank (rand-late) arrives up to --max-delay late.")
    add_ranks(bench, 4096, default=4)
    add_algorithms(bench, "ring,rabenseifner,native", native=True)
    add_count(bench, "1M", many=True)
    bench.add_argument("--mode", choices=("one-late", "rand-late"), default="one-late",
                       help="rank 1 late (one-late) or every rank late by a random share "
                            "(rand-late) of the maximum delay (default one-late)")
    bench.add_argument("--max-delay", type=durations, default=durations("0,10,50ms"),
                       help="maximum arrival delays, e.g. 0,1,5,10,50ms (default 0,10,50ms)")
    bench.add_argument("--iterations", type=integer_in_range("iterations", 1, 1000000),
                       default=20, help="timed iterations (default 20)")
    bench.add_argument("--warmup", type=integer_in_range("warm-up", 0, INT32_MAX), default=2,
                       help="untimed iterations first (default 2)")
    bench.add_argument("--compute-ms", type=float, default=100.0,
                       help="emulated compute phase per iteration (default 100, as the paper)")
    add_datatype(bench, ("float", "double", "int"), default="float")
    bench.add_argument("--seed", type=integer_in_range("seed", 0, INT32_MAX), default=1,
                       help="for rand-late delays (default 1)")
    add_schedule(bench)
    add_json(bench)
    bench.add_argument("--plot", metavar="FILE.png", help="plot e-bar against max delay")
    bench.add_argument("--timeout", type=float, default=3600,
                       help="kill the MPI job after this many seconds (default 3600)")
    bench.set_defaults(handler=command_bench)


def print_table(rows: list[dict[str, Any]], console: Console) -> None:
    first = rows[0]
    table = Table(title=f"e-bar of all-reduce, P = {first['ranks']}, {first['mode']}, "
                        f"{first['datatype']}, compute {first['compute_ms']:g} ms, "
                        f"{first['iterations']} iterations ({first['mpi_library']})")
    for column in ("algorithm", "count", "max delay ms", "e-bar ms", "+-2 sigma ms",
                   "median ms", "e-bar_lo ms", "speedup vs ring", "correct"):
        if column == "algorithm":
            table.add_column(column, no_wrap=True, min_width=12)
        else:
            table.add_column(column, justify="right")
    ordered = sorted(rows, key=lambda row: (row["count"], row["max_delay_ms"]))
    previous = None
    for row in ordered:
        key = (row["count"], row["max_delay_ms"])
        if previous is not None and key != previous:
            table.add_section()
        previous = key
        speedup = row["speedup_vs_ring"]
        table.add_row(row["algorithm"], str(row["count"]), f"{row['max_delay_ms']:g}",
                      f"{row['avg_elapsed_ms']:.3f}", f"{2 * row['stddev_ms']:.3f}",
                      f"{row['median_ms']:.3f}", f"{row.get('lower_bound_ms', 0):.3f}",
                      "-" if speedup is None else f"{speedup:.2f}",
                      "[green]yes[/]" if row["correct"] else "[red]NO[/]")
    console.print(table)
    for line in saving_summary(rows):
        console.print(line)


def _run(options: BenchOptions, console: Console) -> list[dict[str, Any]]:
    """papcoll.bench.run_benchmark behind a progress bar."""
    progress = Progress("[progress.description]{task.description}", BarColumn(),
                        MofNCompleteColumn(), TimeElapsedColumn(), console=console,
                        transient=True)
    with progress:
        task = progress.add_task(f"P = {options.ranks}, {', '.join(options.algorithms)}",
                                 total=None)
        return run_benchmark(options, lambda done, total: progress.update(
            task, completed=done, total=total))


def command_bench(arguments: argparse.Namespace) -> int:
    check_schedule(arguments.schedule, arguments.algorithms)
    console = console_for(arguments, 140)
    algorithms = list(arguments.algorithms)
    if BASELINE not in algorithms:
        algorithms.append(BASELINE)
        console.print(f"[dim]adding '{BASELINE}', the baseline of speedup_vs_ring[/]")
    if arguments.mode == "one-late" and arguments.ranks < 2:
        raise UsageError("one-late delays rank 1, so it needs --ranks 2 or more")
    options = BenchOptions(
        ranks=arguments.ranks, algorithms=algorithms, counts=arguments.count,
        mode=arguments.mode, max_delays_ms=arguments.max_delay,
        iterations=arguments.iterations, warmup=arguments.warmup,
        compute_ms=arguments.compute_ms, datatype=arguments.datatype, seed=arguments.seed,
        schedule=arguments.schedule, timeout=arguments.timeout)
    try:
        rows = _run(options, console)
    except RuntimeError as error:  # the MPI job failed: its message says how
        raise UsageError(str(error)) from None
    print_table(rows, console)
    if arguments.json:
        write_json(rows, arguments.json)
    if arguments.plot:
        plot(rows, arguments.plot)
        console.print(f"plot written to {arguments.plot}")
    return EXIT_OK if all(row["correct"] for row in rows) else EXIT_VIOLATION
