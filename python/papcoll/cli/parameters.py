"""`papcoll parameters`: every parameter of the algorithms as the C core declares it (its
kind, range, default, the option that sets it and the algorithms that read it), as a table
or JSON, the way `ompi_info --param coll tuned` lists Open MPI's registered variables."""

from __future__ import annotations

import argparse
from typing import Any

from rich.table import Table

from ..parameters import PARAMETER_TABLE, WHOLE_NUMBER
from .options import EXIT_OK, add_command
from .output_options import add_json, console_for, json_took_stdout


def add_parser(commands: Any) -> None:
    listing = add_command(commands, command_parameters, "parameters")
    add_json(listing, "the list")


def command_parameters(arguments: argparse.Namespace) -> int:
    if json_took_stdout(arguments, [row.describe() for row in PARAMETER_TABLE]):
        return EXIT_OK
    table = Table(title="papcoll parameters")
    for column in ("name", "option", "kind", "range", "default", "read by", "what it is"):
        table.add_column(column, overflow="fold")
    for row in PARAMETER_TABLE:
        bounds = f"{row.minimum}..{row.maximum}" if row.kind == WHOLE_NUMBER else ""
        table.add_row(row.name, row.option or "(set otherwise)", row.kind_name, bounds,
                      row.unset, ", ".join(row.algorithms), row.help)
    console_for(arguments, 160).print(table)
    return EXIT_OK
