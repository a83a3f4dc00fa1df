"""`papcoll algorithms`: the registry, as a table or JSON."""

from __future__ import annotations

import argparse
from typing import Any

from rich.table import Table

from ..core import algorithms
from ..parameters import PARAMETER_TABLE
from .options import EXIT_OK
from .output_options import add_json, console_for, write_json


def add_parser(commands: Any) -> None:
    listing = commands.add_parser("algorithms", help="list the algorithms",
                                  description="The algorithms: description, source, the ops "
                                              "they take and their limitations.")
    add_json(listing, "the list")
    listing.set_defaults(handler=command_algorithms)


def command_algorithms(arguments: argparse.Namespace) -> int:
    found = algorithms()
    if arguments.json:
        # each with the parameters it reads, from the parameter table's rows
        write_json([{**info.__dict__,
                     "parameters": [row.name for row in PARAMETER_TABLE
                                    if info.name in row.algorithms]} for info in found],
                   arguments.json)
        if arguments.json == "-":
            return EXIT_OK
    table = Table(title="papcoll algorithms")
    for column in ("name", "description", "source", "ops", "limitations"):
        table.add_column(column, overflow="fold")
    for info in found:
        ops = "commutative only" if info.commutative_only else "any (keeps rank order)"
        table.add_row(info.name, info.description, info.source, ops, info.limitations)
    console_for(arguments, 140).print(table)
    return EXIT_OK
