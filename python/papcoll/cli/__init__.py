"""The `papcoll` command: list, verify, print, benchmark and simulate all-reduce algorithms.

One module a subcommand (algorithms, verify, schedule, bench, sim, search: schedules and
search, reproduce, demo), each with its add_parser(commands) and its handler; options.py
holds what they share. The library (papcoll.core, .sim, .bench ...) never imports this.

Exit status: 0 success, 1 a verification found a violation, 2 bad arguments (including an
algorithm that refuses its input). Machine-readable output is JSON (`--json FILE`, '-':
stdout).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import algorithms, bench, demo, reproduce, schedule, search, sim, verify

# in the order `papcoll --help` lists them
SUBCOMMANDS = (algorithms, verify, schedule, bench, sim, search, reproduce, demo)


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser: every subcommand, each with a one-line help."""
    parser = argparse.ArgumentParser(prog="papcoll", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in SUBCOMMANDS:
        module.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    arguments = build_parser().parse_args(argv)
    return int(arguments.handler(arguments))


if __name__ == "__main__":
    sys.exit(main())
