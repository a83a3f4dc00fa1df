"""`papcoll verify`: proves an algorithm's schedules (or hand-written ones) correct."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..core import PapcollError, verify, verify_texts
from .context_options import add_problem, problem_context
from .options import (
    EXIT_OK,
    EXIT_VIOLATION,
    INT64_MAX,
    UsageError,
    add_command,
    check_operations,
    integer_in_range,
)
from .output_options import add_json, write_json

# The verifier's time and memory grow with the operations of all ranks times P (it tracks
# every rank's contribution to every buffer): on a 2-core machine ring at P = 2048 (21 M
# operations) takes 9 s and 2 GB, hr2 at P = 16384 12 s. These two limits keep a run under
# about 10 s.
VERIFY_MAX_RANKS = 8192
VERIFY_MAX_OPERATIONS = 25_000_000


def add_parser(commands: Any) -> None:
    checking = add_command(commands, command_verify, "verify")
    add_problem(checking, VERIFY_MAX_RANKS, required=False)
    checking.add_argument("--schedule-files", nargs="+", metavar="FILE",
                          help="verify hand-written schedules instead: one file per rank, "
                               "rank 0 first, in the format `papcoll schedule` prints")
    checking.add_argument("--eager-limit", type=integer_in_range("eager limit", -1, INT64_MAX),
                          default=0,
                          help="bytes up to which sends complete without their receive "
                               "(default 0: every send waits, the strictest; -1: all eager)")
    add_json(checking, "the JSON object (stdout has it anyway)")


def _verify_files(arguments: argparse.Namespace) -> dict[str, object]:
    """Verifies hand-written schedules, one file per rank, in the `papcoll schedule` format."""
    texts = []
    for path in arguments.schedule_files:
        try:
            with open(path) as file:
                texts.append(file.read())
        except OSError as error:
            raise PapcollError(1, f"cannot read schedule file {path}: {error.strerror}") from None
    report = verify_texts(texts, eager_limit_bytes=arguments.eager_limit)
    header = texts[0].split("\n", 1)[0].split()
    fields = dict(item.split("=", 1) for item in header[1:] if "=" in item)
    return {"ok": report.ok, "algorithm": "(schedule files)", "ranks": len(texts),
            "count": int(fields.get("count", 0)), "elem_size": int(fields.get("elem_size", 0)),
            **report.as_dict()}


def command_verify(arguments: argparse.Namespace) -> int:
    from_files = bool(arguments.schedule_files)
    if from_files == any(getattr(arguments, name) is not None
                         for name in ("algorithm", "ranks", "count")):
        raise UsageError("give either --algorithm, --ranks and --count, or --schedule-files")
    if not from_files and None in (arguments.algorithm, arguments.ranks, arguments.count):
        raise UsageError("--algorithm, --ranks and --count are all required")
    if from_files:
        row = _verify_files(arguments)
    else:
        context = problem_context(arguments)
        check_operations(arguments.algorithm, arguments.ranks, arguments.count,
                         arguments.elem_size, context, VERIFY_MAX_OPERATIONS,
                         "the verifier's, about 10 s: use a smaller --ranks")
        report = verify(arguments.algorithm, arguments.ranks, arguments.count,
                        arguments.elem_size, context, eager_limit_bytes=arguments.eager_limit)
        row = {"ok": report.ok, "algorithm": arguments.algorithm, "ranks": arguments.ranks,
               "count": arguments.count, "elem_size": arguments.elem_size, **report.as_dict()}
    write_json(row, "-", indent=None)
    if arguments.json and arguments.json != "-":
        write_json(row, arguments.json)
    if not row["ok"]:
        print(f"papcoll verify: violation: {row['reason']}", file=sys.stderr)
    return EXIT_OK if row["ok"] else EXIT_VIOLATION

