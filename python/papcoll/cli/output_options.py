"""The options that say where a command's results go (--json, --csv and the other files it
writes) and the one writer of each: JSON for programs, CSV for spreadsheets, a rich console
for people, moved to stderr when stdout carries the JSON or CSV. check_outputs refuses,
before any work, a file that could not be written at the end."""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from collections.abc import Collection
from pathlib import Path
from typing import Any

from rich.console import Console

from .options import UsageError

# the options whose value is a file papcoll writes ('-': stdout where the option allows it)
OUTPUT_OPTIONS = ("json", "csv", "plot", "timeline", "export_goal", "output")
# the ones matplotlib draws, an optional dependency (pyproject.toml's extra "plot")
PLOT_OPTIONS = ("plot", "timeline")


def add_json(parser: argparse.ArgumentParser, what: str = "the rows") -> None:
    parser.add_argument("--json", metavar="FILE",
                        help=f"write {what} as JSON to FILE ('-': stdout)")


def add_csv(parser: argparse.ArgumentParser, what: str = "the rows") -> None:
    parser.add_argument("--csv", metavar="FILE",
                        help=f"write {what} as CSV to FILE, the JSON keys as the header, but "
                             "for lists and objects, which only the JSON has ('-': stdout)")


def csv_columns(rows: list[dict[str, Any]], json_only: Collection[str] = ()) -> list[str]:
    """The CSV's header: the keys of the rows in their first order, less `json_only` and
    any other whose value is a list or an object in some row (a spreadsheet cell holds one
    value; a 100-element list in one was unreadable, and Python's repr of it no format)."""
    keys = dict.fromkeys(key for row in rows for key in row)
    structured = {key for row in rows for key, value in row.items()
                  if isinstance(value, (list, tuple, dict))}
    return [key for key in keys if key not in json_only and key not in structured]


def write_csv(rows: list[dict[str, Any]], target: str, json_only: Collection[str] = ()) -> None:
    """The one CSV writer: one header line (csv_columns), then a line per row; to the file
    `target`, or to stdout for '-'. None is an empty cell, booleans are true/false as in the
    JSON."""
    fields = csv_columns(rows, json_only)

    def cell(value: Any) -> Any:
        return "" if value is None else str(value).lower() if isinstance(value, bool) else value

    def write(out: Any) -> None:
        writer = csv.DictWriter(out, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        writer.writerows({key: cell(row.get(key)) for key in fields} for row in rows)

    if target == "-":
        write(sys.stdout)
        sys.stdout.flush()
    else:
        with open(target, "w", newline="") as file:
            write(file)


def write_json(data: Any, target: str, indent: int | None = 1) -> None:
    """The one JSON writer: `data` to the file `target`, or to stdout for '-'."""
    text = json.dumps(data, indent=indent) + "\n"
    if target == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        Path(target).write_text(text)


def console_for(arguments: argparse.Namespace, width: int) -> Console:
    """The console of tables and progress: stderr when --json - or --csv - has stdout, at
    least `width` columns wide."""
    return Console(stderr="-" in (arguments.json, getattr(arguments, "csv", None)),
                   width=max(Console().width, width))


def check_outputs(arguments: argparse.Namespace) -> None:
    """Refuses, before any work, an output option (OUTPUT_OPTIONS) whose file papcoll could
    not write at the end: a directory, a missing or read-only folder, a read-only file, or
    a plot without matplotlib (found missing after a long sweep, the sweep was lost)."""
    check_plotting(arguments)
    for name in OUTPUT_OPTIONS:
        target = getattr(arguments, name, None)
        if not target or target == "-":
            continue
        option, path = "--" + name.replace("_", "-"), Path(target)
        if path.is_dir():
            raise UsageError(f"{option} {target}: is a directory, not a file")
        if not path.parent.is_dir():
            raise UsageError(f"{option} {target}: no directory {path.parent}")
        if not os.access(path.parent, os.W_OK | os.X_OK) or \
                path.exists() and not os.access(path, os.W_OK):
            raise UsageError(f"{option} {target}: not writable")


def check_plotting(arguments: argparse.Namespace) -> None:
    """Refuses a PLOT_OPTIONS option where matplotlib cannot be imported, naming the extra
    that installs it."""
    wanted = [name for name in PLOT_OPTIONS if getattr(arguments, name, None)]
    if not wanted:
        return
    try:
        import matplotlib  # noqa: F401 - imported to see that it can be
    except ImportError as error:
        option = "--" + wanted[0].replace("_", "-")
        raise UsageError(f"{option} draws with matplotlib, which cannot be imported "
                         f"({error}): pip install 'papcoll[plot]'") from None


def json_took_stdout(arguments: argparse.Namespace, data: Any) -> bool:
    """Writes `data` where --json asks (if it asks); True when that was stdout, where a
    listing prints nothing else (its table would break the JSON)."""
    if arguments.json:
        write_json(data, arguments.json)
    return arguments.json == "-"
