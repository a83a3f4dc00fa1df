"""`papcoll schedules` (the recursive multiplying schedule space of P) and `papcoll search`
(simulate every schedule on a network and rank them, Ruefenacht et al. 2017 Section 5.3 done in the
simulator instead of by exhaustive measurement); the engine is papcoll.multiplying."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from ..multiplying import (
    DEFAULT_MAX_BASE,
    check,
    default_schedule,
    enumerate_schedules,
    recursive_doubling_schedule,
    schedule_shape,
    search_schedules,
)
from .options import (
    EXIT_OK,
    UsageError,
    add_command,
    add_count,
    add_element_size,
    add_ranks,
    integer_in_range,
)
from .output_options import add_json, console_for, json_took_stdout, write_json
from .run_options import add_network, network_of

# search simulates every schedule of P, some 2.3 us per schedule and rank on a 2-core
# machine: P = 256 (6158 schedules) takes 4 s, P = 512 (16741) 20 s. The limit on
# schedules x P keeps a search under about 10 s; --max-base makes fewer schedules.
SEARCH_MAX_WORK = 4_000_000


def _add_max_base(parser: argparse.ArgumentParser) -> None:
    # a base is 2 or more: --max-base 1 left no schedule for P > 1 (search indexed an empty
    # list); the stages are factors of P, so 64 bounds the work, not P
    parser.add_argument("--max-base", type=integer_in_range("max base", 2, 64),
                        default=DEFAULT_MAX_BASE,
                        help=f"largest base of a stage (default {DEFAULT_MAX_BASE})")


def add_parser(commands: Any) -> None:
    space = add_command(commands, command_schedules, "schedules")
    add_ranks(space, 4096, required=True)
    _add_max_base(space)
    add_json(space)

    finder = add_command(commands, command_search, "search")
    add_ranks(finder, 4096, required=True)
    add_network(finder, "aries")
    add_count(finder, "2")
    add_element_size(finder)
    _add_max_base(finder)
    finder.add_argument("--top", type=integer_in_range("top", 1), default=10,
                        help="rows to print (default 10)")
    add_json(finder, "all rows")


def command_schedules(arguments: argparse.Namespace) -> int:
    rows = []
    for kind, schedule in enumerate_schedules(arguments.ranks, arguments.max_base):
        stages, largest = schedule_shape(schedule)
        rows.append({"schedule": schedule, "kind": kind, "stages": stages,
                     "max_base": largest, "reorders": check(schedule, arguments.ranks)})
    if json_took_stdout(arguments, rows):
        return EXIT_OK
    print(f"# P = {arguments.ranks}: {len(rows)} schedules (bases <= {arguments.max_base}); "
          f"default {default_schedule(arguments.ranks) or '(none)'}; MPICH recursive "
          f"doubling {recursive_doubling_schedule(arguments.ranks) or '(none)'}")
    for row in rows:
        note = "  (commutative ops only)" if row["reorders"] else ""
        print(f"{row['kind']:8s} {row['schedule'] or '(empty: one rank)'}{note}")
    return EXIT_OK


def _search(arguments: argparse.Namespace) -> dict[str, Any]:
    """papcoll.multiplying.search_schedules behind a progress bar (none under --json -)."""
    network = network_of(arguments)
    with Progress(transient=True, disable=arguments.json == "-",
                  console=Console(stderr=True)) as progress:
        task = progress.add_task("simulating schedules", total=None)
        return search_schedules(arguments.ranks, network, arguments.count, arguments.elem_size,
                                arguments.max_base, lambda done, total: progress.update(
                                    task, completed=done, total=total))


def command_search(arguments: argparse.Namespace) -> int:
    schedules = sum(1 for _ in enumerate_schedules(arguments.ranks, arguments.max_base))
    if schedules * arguments.ranks > SEARCH_MAX_WORK:
        raise UsageError(f"P = {arguments.ranks} has {schedules} schedules (bases <= "
                         f"{arguments.max_base}): {schedules} x P is above the limit of "
                         f"{SEARCH_MAX_WORK} (about 10 s); use a smaller --ranks or --max-base")
    console = console_for(arguments, 110)
    found = _search(arguments)
    rows, baseline = found["rows"], found["recursive_doubling"]
    table = Table(title=f"Recursive multiplying schedules, {found['network']}, "
                        f"P = {arguments.ranks}, {arguments.count} x {arguments.elem_size} B "
                        f"(best {min(arguments.top, len(rows))} of {len(rows)})")
    for column in ("rank", "schedule", "kind", "stages", "e-bar us", "vs recursive doubling"):
        table.add_column(column, justify="left" if column in ("schedule", "kind") else "right")
    for row in rows[:arguments.top]:
        table.add_row(str(row["rank"]), row["schedule"] + (" *" if row["reorders"] else ""),
                      row["kind"], str(row["stages"]), f"{row['avg_elapsed_ms'] * 1e3:.3f}",
                      f"{-row['reduction_vs_recursive_doubling_percent']:+.1f} %")
    console.print(table)
    best = rows[0]
    ratio, fanout = found["overlap_ratio"], found["optimal_fanout"]
    console.print(
        f"recursive doubling ({baseline['schedule'] or 'nothing to do'}): "
        f"{baseline['avg_elapsed_ms'] * 1e3:.3f} us; default ({found['default'] or '-'}); "
        f"best: {best['schedule']} ({best['reduction_vs_recursive_doubling_percent']:.1f} % "
        f"faster)\nmodel (Ruefenacht et al. 2017 Eq. 5): alpha_p / alpha_r = latency / overhead = "
        f"{ratio:.3g} -> optimal fan-out b_opt = {fanout:.2f} peers per stage (base "
        f"{fanout + 1:.2f}); the best schedule's largest base is {best['max_base']} "
        f"({best['max_base'] - 1} peers)" if fanout is not None else
        "model: the overlap ratio is below 1, Eq. 5 does not apply")
    console.print("* reorders operands: commutative ops only")
    if arguments.json:
        write_json(found, arguments.json)
    return EXIT_OK
