"""The `papcoll` command: list, verify, print, benchmark and simulate all-reduce algorithms.

One module a subcommand (algorithms, parameters, settings, verify, schedule, bench, calibrate,
sim, validate, search: schedules and search, reproduce, testbed, demo, report: report and
preload), each with its add_parser(commands) and its handler; command_texts.py holds every
command's help and description, options.py and the *_options.py beside it what the
commands share, by concept. The library (papcoll.core, .sim
...) and the lab never import this.

Exit status: 0 success, 1 a verification found a violation, 2 bad arguments (including an
algorithm that refuses its input). Machine-readable output is JSON (`--json FILE`, '-':
stdout).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib import metadata

from .. import __version__
from ..core import PapcollError
from ..lab.testbed import TestbedError
from . import (
    algorithms,
    bench,
    calibrate,
    demo,
    parameters,
    report,
    reproduce,
    schedule,
    search,
    settings,
    sim,
    testbed,
    validate,
    verify,
)
from .options import EXIT_USAGE, Parser
from .output_options import check_outputs

# in the order `papcoll --help` lists them
SUBCOMMANDS = (algorithms, parameters, settings, verify, schedule, bench, calibrate, sim, validate,
               search, reproduce, testbed, demo, report)
# What bad input raises (NetworkError, UnicodeDecodeError and options.UsageError are
# ValueErrors; FileNotFoundError and PermissionError OSErrors): one line and exit 2. Any
# other exception is a bug in papcoll and keeps its traceback. A TestbedError says what the
# machine lacks or which testbed piece failed.
EXPECTED_FAILURES = (PapcollError, ValueError, OverflowError, RecursionError, OSError,
                     TestbedError)
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports it


def papcoll_version() -> str:
    """The installed distribution's version; in a checkout run from its source tree (no
    distribution installed), the package's own __version__."""
    try:
        return metadata.version("papcoll")
    except metadata.PackageNotFoundError:
        return __version__


def build_parser() -> Parser:
    """The top-level parser: every subcommand, each with a one-line help."""
    parser = Parser(prog="papcoll", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"papcoll {papcoll_version()}",
                        help="print papcoll's version and exit")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in SUBCOMMANDS:
        module.add_parser(commands)
    return parser


def refuse_arguments_after_version(parser: Parser, argv: list[str]) -> None:
    """argparse's version action prints and exits 0 as soon as it meets --version, whatever
    follows: `papcoll --version sim ...` ran nothing and said nothing about it. --version is
    the top level's only option besides --help, so it is the first argument (or an
    abbreviation of it, which argparse takes too)."""
    first = argv[0] if argv else ""
    if len(first) >= 3 and "--version".startswith(first) and len(argv) > 1:
        parser.error(f"--version takes nothing after it, and {argv[1]!r} followed; run "
                     "`papcoll --version` alone")


def failure_message(error: BaseException) -> str:
    """One line that says what went wrong with the input."""
    if isinstance(error, PapcollError):
        message = error.message
    elif isinstance(error, UnicodeDecodeError):
        message = f"not UTF-8 text: {error.reason} at byte {error.start}"
    elif isinstance(error, OSError) and error.strerror:
        message = error.strerror + (f": {error.filename}" if error.filename else "")
    elif isinstance(error, RecursionError):
        message = "input nested too deeply"
    else:
        message = str(error) or type(error).__name__
    return " ".join(message.split())


def main(argv: Sequence[str] | None = None) -> int:
    """`papcoll COMMAND ...`: the one place where expected failures become exit statuses."""
    command = "papcoll"
    try:
        parser = build_parser()
        refuse_arguments_after_version(parser, sys.argv[1:] if argv is None else list(argv))
        arguments = parser.parse_args(argv)  # a usage error exits 2 here (Parser)
        command = f"papcoll {arguments.command}"
        check_outputs(arguments)
        return int(arguments.handler(arguments))
    except KeyboardInterrupt:
        print(f"{command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except EXPECTED_FAILURES as error:
        print(f"{command}: {failure_message(error)}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
