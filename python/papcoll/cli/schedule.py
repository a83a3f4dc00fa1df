"""`papcoll schedule`: one rank's schedule, as text or JSON."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..core import schedule_text
from . import context_options, options, output_options
from .options import add_command

# one rank's schedule: ring's at P = 2^20 has 2 M operations, built in a fraction of a second
SCHEDULE_MAX_RANKS = 1 << 20


def add_parser(commands: Any) -> None:
    dumping = add_command(commands, command_schedule, "schedule")
    context_options.add_problem(dumping, SCHEDULE_MAX_RANKS)
    dumping.add_argument("--rank", required=True, type=options.integer_in_range("rank", 0, 1 << 20),
                         help="which rank's schedule")
    output_options.add_json(dumping, "the schedule (header fields and one line per op)")


def schedule_json(text: str) -> dict[str, Any]:
    """The text dump as JSON: the header's key=value fields and the op lines."""
    header, *lines = text.splitlines()
    fields: dict[str, Any] = {}
    for item in header.split()[1:]:
        key, _, value = item.partition("=")
        fields[key] = int(value) if value.lstrip("-").isdigit() else value
    return {**fields, "ops": lines}


def command_schedule(arguments: argparse.Namespace) -> int:
    if arguments.rank >= arguments.ranks:
        raise options.UsageError(f"--rank {arguments.rank} is not below --ranks {arguments.ranks}")
    text = schedule_text(arguments.algorithm, arguments.ranks, arguments.rank, arguments.count,
                         arguments.elem_size, context_options.problem_context(arguments))
    if arguments.json:
        output_options.write_json(schedule_json(text), arguments.json)
    if arguments.json != "-":
        sys.stdout.write(text)
    return options.EXIT_OK
