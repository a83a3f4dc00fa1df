"""`papcoll settings`: every setting papcoll reads (environment variables, papcoll_config and
Config fields, CMake options) with who reads it and when, its default, what it accepts and
what it does, from the one table in papcoll.settings; the way `ompi_info --param` or Intel
MPI's `mpivars` list theirs. As a table, as JSON (`--json`), or as the Markdown of
docs/settings.md (`--markdown`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from ..settings import READERS, SETTINGS, setting_rows, settings_markdown
from .options import EXIT_OK, UsageError, add_command
from .output_options import add_json, console_for, json_took_stdout


def add_parser(commands: Any) -> None:
    listing = add_command(commands, command_settings, "settings")
    add_json(listing, "the list")
    listing.add_argument("--markdown", metavar="FILE",
                         help="write the list as the Markdown of docs/settings.md to FILE "
                              "('-': stdout)")


def _write_markdown(target: str) -> None:
    text = settings_markdown()
    if target == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        Path(target).write_text(text)


def command_settings(arguments: argparse.Namespace) -> int:
    if arguments.markdown == "-" and arguments.json == "-":
        raise UsageError("--markdown - and --json - would both write to stdout: give one a "
                         "file")
    if arguments.markdown:
        _write_markdown(arguments.markdown)
        if arguments.markdown == "-":
            return EXIT_OK
    if json_took_stdout(arguments, setting_rows()):
        return EXIT_OK
    console = console_for(arguments, 160)
    for reader in READERS:
        table = Table(title=f"read by {reader}", title_justify="left", show_lines=True,
                      expand=True)
        for column, share in (("names", None), ("read", 2), ("default", 2), ("accepted", 3),
                              ("meaning", 4)):
            table.add_column(column, overflow="fold", no_wrap=share is None, ratio=share)
        for setting in SETTINGS:
            if setting.reader == reader:
                table.add_row(escape("\n".join(setting.names)), escape(setting.when),
                              escape(setting.default), escape(setting.accepted),
                              escape(setting.meaning))
        console.print(table)
    return EXIT_OK
