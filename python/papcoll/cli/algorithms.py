"""`papcoll algorithms`: the registry, as a table or JSON."""

from __future__ import annotations

import argparse
from typing import Any

from rich.table import Table

from ..core import algorithms
from ..parameters import PARAMETER_TABLE
from .options import EXIT_OK, add_command
from .output_options import add_json, console_for, json_took_stdout


def add_parser(commands: Any) -> None:
    listing = add_command(commands, command_algorithms, "algorithms")
    add_json(listing, "the list")


def command_algorithms(arguments: argparse.Namespace) -> int:
    found = algorithms()
    # each with the parameters it reads, from the parameter table's rows
    listed = [{**info.__dict__, "parameters": [row.name for row in PARAMETER_TABLE
                                               if info.name in row.algorithms]}
              for info in found]
    if json_took_stdout(arguments, listed):
        return EXIT_OK
    table = Table(title="papcoll algorithms")
    for column in ("name", "description", "source", "ops", "limitations"):
        table.add_column(column, overflow="fold")
    for info in found:
        ops = "commutative only" if info.commutative_only else "any (keeps rank order)"
        table.add_row(info.name, info.description, info.source, ops, info.limitations)
    console_for(arguments, 140).print(table)
    return EXIT_OK
