"""`papcoll algorithms`: the registry, as a table or JSON."""

from __future__ import annotations

import argparse
from typing import Any

from rich.table import Table

from ..core import algorithms
from .options import EXIT_OK, add_json, console_for, write_json


def add_parser(commands: Any) -> None:
    listing = commands.add_parser("algorithms", help="list the algorithms",
                                  description="The algorithms: description, source, the ops "
                                              "they take and their limitations.")
    add_json(listing, "the list")
    listing.set_defaults(handler=command_algorithms)


def command_algorithms(arguments: argparse.Namespace) -> int:
    found = algorithms()
    if arguments.json:
        write_json([info.__dict__ for info in found], arguments.json)
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
