"""`papcoll testbed up | down | status | check`: an emulated cluster of network namespaces
and shaped links on this machine (papcoll.lab.testbed), for `papcoll bench / calibrate /
validate --testbed` to run MPI on, or for a user's own mpiexec (status prints the command)."""

from __future__ import annotations

import argparse
import os
from dataclasses import asdict
from typing import Any

from rich.console import Console
from rich.table import Table

from ..lab.testbed import (
    MAX_HOSTS,
    DamagedStateError,
    Plan,
    StrayStateError,
    Testbed,
    TestbedError,
    check_state_name,
    down,
    link_bytes,
    load,
    missing_pieces,
    require_support,
    state_names,
    stream_bandwidth,
    survey,
    up,
)
from .options import EXIT_OK, EXIT_USAGE, EXIT_VIOLATION, add_command, integer_in_range
from .output_options import add_json, write_json

# a shaped link counts as working when a bulk stream gets this share of its rate (TCP/IP
# headers alone take 4.4 % of a 1500-byte frame)
STREAM_TOLERANCE = 0.10


def add_parser(commands: Any) -> None:
    testbed = add_command(commands, command_testbed, "testbed")
    actions = testbed.add_subparsers(dest="action", required=True, metavar="ACTION",
                                     help="up, down, status or check")
    make = actions.add_parser("up", help="build a testbed")
    make.add_argument("--network", required=True,
                      help="preset or .json / .toml network file whose hosts, switches and "
                           "link bandwidths to build")
    make.add_argument("--hosts", type=integer_in_range("hosts", 1, MAX_HOSTS), required=True,
                      help=f"how many of the network's hosts to build (1..{MAX_HOSTS})")
    make.add_argument("--name", help="1-6 letters or digits (default: t0, t1, ...)")
    add_json(make, "the testbed's plan (names, addresses, link rates)")
    remove = actions.add_parser("down", help="remove a testbed (safe to repeat)")
    which = remove.add_mutually_exclusive_group(required=True)
    which.add_argument("--name", help="the testbed to remove")
    which.add_argument("--all", action="store_true", help="remove every testbed")
    add_json(remove, "the names removed")
    show = actions.add_parser("status", help="list the testbeds and what they hold")
    add_json(show, "the testbeds")
    check = actions.add_parser("check", help="stream between two hosts: the shaped rate?")
    check.add_argument("--name", required=True, help="the testbed")
    check.add_argument("--mebibytes", type=integer_in_range("mebibytes", 1, 4096), default=64,
                       help="MiB (2^20 bytes) to send each way (default 64)")
    add_json(check, "the measured rates")


def _host_table(plan: Plan) -> Table:
    table = Table(title=f"testbed {plan.name}: network {plan.network}, {len(plan.hosts)} hosts")
    for column in ("host", "namespace", "address", "ranks", "link Gb/s"):
        table.add_column(column)
    host_links = [link for link in plan.links if link.namespace is not None]
    for host, namespace, address, cores, link in zip(plan.hosts, plan.namespaces,
                                                     plan.addresses, plan.cores, host_links,
                                                     strict=True):
        table.add_row(host, namespace, address, str(cores), f"{link.rate_bits / 1e9:g}")
    return table


def command_testbed(arguments: argparse.Namespace) -> int:
    console = Console(stderr=getattr(arguments, "json", None) == "-")
    require_support()
    if arguments.action == "up":
        plan = up(arguments.network, arguments.hosts, name=arguments.name)
        if arguments.json:
            write_json(asdict(plan), arguments.json)
        console.print(_host_table(plan))
        argv, environment = Testbed(plan).mpiexec_command(plan.ranks, ["PROGRAM"])
        settings = " ".join(f"{key}={value}" for key, value in environment.items()
                            if os.environ.get(key) != value)
        console.print(f"run MPI on it with: {settings} {' '.join(argv)}\nremove it with: "
                      f"papcoll testbed down --name {plan.name}", soft_wrap=True)
        return EXIT_OK
    if arguments.action == "down":
        return _down(arguments, console)
    if arguments.action == "status":
        plans, problems = survey()
        report = []
        for plan in plans:
            missing = missing_pieces(plan)
            console.print(_host_table(plan))
            console.print("complete" if not missing else
                          f"[red]incomplete[/]: {', '.join(missing[:5])} missing "
                          f"(papcoll testbed down --name {plan.name})")
            report.append({"name": plan.name, "network": plan.network, "hosts": plan.hosts,
                           "addresses": plan.addresses, "cores": plan.cores,
                           "missing": missing,
                           "link_bytes": link_bytes(plan) if not missing else None})
        if not plans and not problems:
            console.print("no testbeds")
        if arguments.json:
            write_json(report, arguments.json)
        # a damaged state file is reported as `check` and `up` report it: one line each,
        # exit 2 (the testbeds that load are listed above)
        errors = Console(stderr=True, soft_wrap=True, highlight=False)
        for problem in problems:
            errors.print(f"papcoll testbed: {problem}", markup=False)
        return EXIT_USAGE if problems else EXIT_OK
    return _check(load(arguments.name), arguments, console)


def _down(arguments: argparse.Namespace, console: Console) -> int:
    """Removes the named testbed or every one (--all: every state file, damaged or not). A
    damaged state file is said, since then only what the testbed's own names cover went;
    pieces `down` refused are errors (exit 2), after --all has gone through the rest."""
    names = state_names() if arguments.all else [arguments.name]
    removed: list[str] = []
    refused: list[TestbedError] = []
    for name in names:
        damage = None
        try:
            if arguments.all:
                check_state_name(name)
            load(name)
        except DamagedStateError as error:
            damage = error
        except StrayStateError as error:
            refused.append(error)
            continue
        except TestbedError:  # no state file: down says "not found"
            pass
        try:
            found = down(name)
        except TestbedError as error:
            refused.append(error)
            continue
        if found:
            removed.append(name)
        outcome = ("not found" if not found else "removed" if damage is None else
                   f"removed what its own names cover (its state file {damage.path} "
                   f"{damage.problem})")
        console.print(f"testbed {name}: {outcome}", soft_wrap=True, markup=False)
    if arguments.json:
        write_json(removed, arguments.json)
    if refused:  # main() says the last, as it says any error
        errors = Console(stderr=True, soft_wrap=True, highlight=False)
        for error in refused[:-1]:
            errors.print(f"papcoll testbed: {error}", markup=False)
        raise refused[-1]
    return EXIT_OK


def _check(plan: Plan, arguments: argparse.Namespace, console: Console) -> int:
    """A bulk TCP stream each way between host 0 and host 1, against the shaped rate."""
    if len(plan.hosts) < 2:
        raise TestbedError(f"testbed {plan.name} has one host: a stream needs two")
    host_links = [link for link in plan.links if link.namespace is not None]
    rows = []
    table = Table(title=f"testbed {plan.name}: TCP stream of {arguments.mebibytes} MiB")
    for column in ("from", "to", "shaped Gb/s", "measured Gb/s", "ratio"):
        table.add_column(column)
    for source, destination in ((0, 1), (1, 0)):
        rate = min(host_links[source].rate_bits, host_links[destination].rate_bits)
        measured = stream_bandwidth(plan, source, destination, arguments.mebibytes) * 8
        rows.append({"from": plan.hosts[source], "to": plan.hosts[destination],
                     "shaped_bits_per_second": rate, "measured_bits_per_second": measured,
                     "ratio": measured / rate})
        table.add_row(plan.hosts[source], plan.hosts[destination], f"{rate / 1e9:.3f}",
                      f"{measured / 1e9:.3f}", f"{measured / rate:.3f}")
    console.print(table)
    good = all(abs(row["ratio"] - 1) <= STREAM_TOLERANCE for row in rows)
    percent = f"{100 * STREAM_TOLERANCE:g} %"
    console.print(f"within {percent} of the shaped rate" if good else
                  f"[red]more than {percent} off the shaped rate[/]")
    if arguments.json:
        write_json(rows, arguments.json)
    return EXIT_OK if good else EXIT_VIOLATION
