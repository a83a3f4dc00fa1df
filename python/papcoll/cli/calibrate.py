"""`papcoll calibrate`: this machine's simulator parameters measured with real MPI
(papcoll-calibrate under mpiexec), fitted, printed with the fit's residuals and written as a
network file for `papcoll sim` and `papcoll search`; the engine is papcoll.lab.calibrate."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console
from rich.table import Table

from ..datatypes import DATATYPES
from ..lab.calibrate import (
    DEFAULT_DATATYPE,
    MONITOR_ENVIRONMENT,
    STATISTICS,
    Calibration,
    calibrate,
)
from .options import EXIT_OK, UsageError, add_command, add_datatype, add_ranks, comma_list
from .output_options import add_json, console_for, write_json
from .run_options import add_testbed, add_timeout, launch_for


def _datatype(text: str) -> str:
    if text not in DATATYPES:
        raise argparse.ArgumentTypeError(f"unknown datatype '{text}' (known: "
                                         f"{', '.join(DATATYPES)})")
    return text


def add_parser(commands: Any) -> None:
    parser = add_command(commands, command_calibrate, "calibrate")
    add_ranks(parser, 4096, default=2)
    parser.add_argument("--output", "-o", metavar="FILE.json",
                        help="write the calibrated network file here")
    add_json(parser, "the measurements and the fitted parameters")
    parser.add_argument("--quick", action="store_true",
                        help="fewer samples, sizes up to 1 MiB, fan-out up to 4 (seconds)")
    parser.add_argument("--datatypes", type=comma_list(_datatype), default=None,
                        metavar="TYPES",
                        help="reduction speeds to measure, comma-separated (default: all of "
                             "papcoll-bench's types)")
    add_datatype(parser, tuple(DATATYPES), default=DEFAULT_DATATYPE, metavar="TYPE",
                 why="whose reduction speed the model's gamma takes")
    parser.add_argument("--statistic", choices=tuple(STATISTICS), default="median",
                        help="fit the median of each measurement's samples, or the minimum "
                             "(steadier on a machine busy with other work; default median)")
    add_testbed(parser)
    add_timeout(parser, 600)


def _seconds(value: float, unit: str) -> str:
    if unit == "s/B":
        return f"{value * 1e9:.4g} ns/B"
    return f"{value * 1e6:.4g} us"


def print_table(calibration: Calibration, console: Console) -> None:
    measured = calibration.measurements
    table = Table(title=f"calibration: {' '.join(str(measured['mpi_library']).split())}, "
                        f"P = {measured['ranks']}{', quick' if measured['quick'] else ''}, "
                        f"fitted to the {calibration.statistic}s")
    table.add_column("parameter", no_wrap=True, min_width=23)  # names as --param takes them
    for column in ("value", "from", "points", "residual rms", "residual max"):
        table.add_column(column, justify="left" if column == "from" else "right")
    for parameter in calibration.parameters:
        residuals = parameter.residuals
        table.add_row(parameter.name, _seconds(parameter.value, parameter.unit),
                      parameter.source,
                      *(("-", "-", "-") if residuals is None else (
                          str(residuals.points), f"{100 * residuals.relative_rms:.1f} %",
                          f"{100 * residuals.relative_max:.1f} %")))
    console.print(table)
    speeds = Table(title="reduction (MPI_Reduce_local, sum) per datatype")
    speeds.add_column("datatype")
    speeds.add_column("gamma", justify="right")
    for name, value in calibration.reduce_seconds_per_byte.items():
        speeds.add_row(name, _seconds(value, "s/B"))
    console.print(speeds)
    model = calibration.model
    ratio = (f"{model.latency / model.overhead:.2f}" if model.overhead > 0 else "-")
    console.print(f"alpha_p = latency, alpha_r = overhead (Ruefenacht et al. 2017); "
                  f"alpha_p / alpha_r = {ratio}. Not measured: gap (0), eager limit (all "
                  f"eager). burst_bytes: {model.burst_bytes:g} (a testbed's token bucket, set "
                  "when it shapes links).")
    # on a line of its own, never wrapped, so that it can be pasted into a shell
    console.print(f"the arrival monitor (slt, prr) takes this calibration's tau "
                  f"(gamma of {calibration.datatype}) with:")
    console.print(f"export {MONITOR_ENVIRONMENT}={calibration.tau_model_text()}",
                  soft_wrap=True, markup=False, highlight=False)


def command_calibrate(arguments: argparse.Namespace) -> int:
    if arguments.ranks < 2:
        raise UsageError("calibration needs --ranks 2 or more (a ping-pong has two ends)")
    if arguments.output == "-":
        raise UsageError("--output needs a file: `papcoll sim --network` reads it from there")
    if arguments.output is not None and not arguments.output.endswith(".json"):
        raise UsageError(f"--output {arguments.output}: a calibrated network file ends in "
                         ".json")
    console = console_for(arguments, 120)
    where = f" on testbed {arguments.testbed}" if arguments.testbed else ""
    with console.status(f"measuring with {arguments.ranks} ranks{where}"
                        f"{' (quick)' if arguments.quick else ''} ..."):
        try:
            with launch_for(arguments, arguments.ranks) as (launch, testbed):
                calibration = calibrate(arguments.ranks, arguments.quick, arguments.datatypes,
                                        arguments.datatype, launch, arguments.timeout,
                                        arguments.statistic,
                                        testbed.bucket_bytes if testbed else 0.0)
        except RuntimeError as error:  # the MPI job failed: its message says how
            raise UsageError(str(error)) from None
    print_table(calibration, console)
    if arguments.output:
        calibration.write_network(arguments.output)
        console.print(f"network file written to {arguments.output}: papcoll sim --network "
                      f"{arguments.output}")
    if arguments.json:
        write_json(calibration.network(), arguments.json)
    return EXIT_OK
