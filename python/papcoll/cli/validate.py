"""`papcoll validate`: the simulator's e-bar against the measured one, per algorithm, size
and arrival mode, with the geometric mean of |error|; the engine is papcoll.lab.validate."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn
from rich.table import Table

from ..lab.bench import format_bytes
from ..lab.validate import (
    DEFAULT_SIZES,
    ERROR_FLOOR,
    MODES,
    ValidateOptions,
    validate,
    validated_algorithms,
)
from .options import (
    EXIT_OK,
    INT32_MAX,
    MOST_COMPUTE_MS,
    UsageError,
    add_command,
    add_ranks,
    add_sizes,
    bench_algorithm,
    comma_list,
    durations,
    integer_in_range,
    milliseconds,
)
from .output_options import add_json, console_for, write_json
from .run_options import add_network, add_testbed, add_timeout, launch_for, network_of

# the simulator's network when --network is not given, without --testbed (command_validate)
DEFAULT_NETWORK = "hockney"


def _mode(text: str) -> str:
    if text not in MODES:
        raise ValueError(text)
    return text


def add_parser(commands: Any) -> None:
    command = add_command(commands, command_validate, "validate")
    add_network(command, DEFAULT_NETWORK)
    # None: not given. The default stands only without --testbed, where the measured network
    # is this machine's; command_validate refuses --testbed without --network
    command.set_defaults(network=None)
    add_ranks(command, 4096, default=2)
    command.add_argument("--algorithms", type=comma_list(bench_algorithm), default=None,
                         help="comma-separated algorithm names (default: every algorithm "
                              "that is an all-reduce on its own and runs at P; native has "
                              "nothing to simulate)")
    add_sizes(command)
    command.add_argument("--modes", type=comma_list(_mode, "a list of balanced, one-late, "
                                                           "rand-late"),
                         default=list(MODES),
                         help="arrival modes: balanced (nobody late), one-late (rank 1 late "
                              "by the max delay), rand-late (every rank late by a random "
                              "share of it) (default all three)")
    command.add_argument("--max-delay", type=durations, default=durations("1ms"),
                         help="maximum delays of one-late and rand-late, e.g. 0.1,1ms "
                              "(default 1ms)")
    command.add_argument("--iterations", type=integer_in_range("iterations", 1, 1000000),
                         default=10, help="timed iterations per case (default 10)")
    command.add_argument("--warmup", type=integer_in_range("warm-up", 0, INT32_MAX),
                         default=2, help="untimed iterations first (default 2)")
    command.add_argument("--compute-ms", type=milliseconds(MOST_COMPUTE_MS), default=0.0,
                         help="emulated compute phase per iteration (default 0: a rank that "
                              "sleeps pays some 150 us on this machine's first message after "
                              "waking, which no model of the network has; docs/simulator.md)")
    command.add_argument("--seed", type=integer_in_range("seed", 0, INT32_MAX), default=1,
                         help="for rand-late delays (default 1)")
    add_timeout(command, 3600)
    add_testbed(command)
    add_json(command, "the report (options, model, rows, geometric means)")


def _percent(value: float) -> str:
    return f"{100 * value:+.1f} %"


def print_report(report: dict[str, Any], console: Console) -> None:
    """A table of every case, then the geometric means per algorithm, per mode and overall."""
    rows = report["rows"]
    table = Table(title=f"e-bar measured against simulated, P = {rows[0]['ranks']}, network "
                        f"{report['network']}, {rows[0]['iterations']} iterations")
    for column in ("algorithm", "bytes", "mode", "max delay ms", "arrival spread ms",
                   "measured ms", "+-2 sigma ms", "simulated ms", "error",
                   "error of medians"):
        table.add_column(column, justify="left" if column in ("algorithm", "mode")
                         else "right", no_wrap=column == "algorithm")
    previous = None
    for row in rows:
        if previous is not None and row["algorithm"] != previous:
            table.add_section()
        previous = row["algorithm"]
        error = row["relative_error"]
        colour = "green" if abs(error) <= 0.1 else "yellow" if abs(error) <= 0.3 else "red"
        table.add_row(row["algorithm"], format_bytes(row["bytes"]), row["mode"],
                      f"{row['max_delay_ms']:g}", f"{row['mean_arrival_spread_ms']:.3f}",
                      f"{row['measured_ms']:.4f}", f"{2 * row['measured_stddev_ms']:.4f}",
                      f"{row['simulated_ms']:.4f}", f"[{colour}]{_percent(error)}[/]",
                      _percent(row["median_relative_error"]))
    console.print(table)
    summary = Table(title=f"geometric mean of |relative error| (each at least "
                          f"{100 * ERROR_FLOOR:g} %)")
    summary.add_column("over")
    summary.add_column("cases", justify="right")
    summary.add_column("geomean |error|", justify="right")
    summary.add_column("of medians", justify="right")
    for name, value in report["geomean_abs_error_by_algorithm"].items():
        cases = sum(row["algorithm"] == name for row in rows)
        summary.add_row(name, str(cases), f"{100 * value:.1f} %",
                        f"{100 * report['median_geomean_abs_error_by_algorithm'][name]:.1f} %")
    summary.add_section()
    for mode, value in report["geomean_abs_error_by_mode"].items():
        cases = sum(row["mode"] == mode for row in rows)
        summary.add_row(f"mode {mode}", str(cases), f"{100 * value:.1f} %",
                        f"{100 * report['median_geomean_abs_error_by_mode'][mode]:.1f} %")
    summary.add_section()
    summary.add_row("all", str(len(rows)), f"{100 * report['geomean_abs_error']:.1f} %",
                    f"{100 * report['median_geomean_abs_error']:.1f} %")
    console.print(summary)
    load = report["load_average"]
    console.print(f"load average {load['before'][0]:.2f} before, {load['after'][0]:.2f} after "
                  f"(1 min), on {load['cores']} cores")


def command_validate(arguments: argparse.Namespace) -> int:
    if arguments.network is None:
        if arguments.testbed:
            # the default would compare the testbed's measurements with the uncalibrated
            # hockney preset, silently
            raise UsageError(f"--testbed {arguments.testbed} needs --network: the network "
                             "the simulator models (for this testbed, --network "
                             f"{arguments.testbed} or the file `papcoll calibrate --testbed "
                             f"{arguments.testbed} --output FILE.json` writes), not the "
                             f"{DEFAULT_NETWORK} preset it would take")
        arguments.network = DEFAULT_NETWORK
    network = network_of(arguments)
    algorithms = arguments.algorithms or validated_algorithms(arguments.ranks)
    options = ValidateOptions(
        ranks=arguments.ranks, algorithms=algorithms,
        sizes=arguments.sizes or list(DEFAULT_SIZES), modes=arguments.modes,
        max_delays_ms=arguments.max_delay, iterations=arguments.iterations,
        warmup=arguments.warmup, compute_ms=arguments.compute_ms, seed=arguments.seed,
        timeout=arguments.timeout)
    console = console_for(arguments, 140)
    progress = Progress("[progress.description]{task.description}", BarColumn(),
                        MofNCompleteColumn(), TimeElapsedColumn(), console=console,
                        transient=True)
    try:
        with progress:
            task = progress.add_task(f"P = {options.ranks}, {len(algorithms)} algorithms",
                                     total=None)
            with launch_for(arguments, options.ranks) as (launch, _):
                report = validate(options, network, lambda done, total: progress.update(
                    task, completed=done, total=total), launch)
    except RuntimeError as error:  # the MPI job failed: its message says how
        raise UsageError(str(error)) from None
    print_report(report, console)
    if arguments.json:
        write_json(report, arguments.json)
    return EXIT_OK
