"""The `papcoll` command: algorithms, verify, schedule, bench, sim, demo.

Exit status: 0 success, 1 a verification found a violation, 2 bad arguments (including an
algorithm that refuses its input). Machine-readable output is JSON.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import random
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from .core import PapcollError, algorithm, algorithms, schedule_text, verify, verify_texts

EXIT_OK, EXIT_VIOLATION, EXIT_USAGE = 0, 1, 2

_SUFFIXES = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}


def parse_count(text: str) -> int:
    """An element count: a non-negative integer with an optional K, M or G suffix (x1024)."""
    match = re.fullmatch(r"\s*(\d+)\s*([KMG]?)\s*", text, flags=re.IGNORECASE)
    if match is None:
        raise argparse.ArgumentTypeError(
            f"'{text}' is not a count (a non-negative integer, optionally with K, M or G)"
        )
    return int(match.group(1)) * _SUFFIXES[match.group(2).upper()]


def _positive(what: str, limit: int = 2**31 - 1) -> type:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} must be an integer, not '{text}'") from None
        if not 1 <= value <= limit:
            raise argparse.ArgumentTypeError(f"{what} must be in 1..{limit}, not {value}")
        return value

    parse.__name__ = what
    return parse  # type: ignore[return-value]


def _non_negative(what: str) -> type:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} must be an integer, not '{text}'") from None
        if value < 0:
            raise argparse.ArgumentTypeError(f"{what} must not be negative, not {value}")
        return value

    parse.__name__ = what
    return parse  # type: ignore[return-value]


def _algorithm_name(text: str) -> str:
    try:
        return algorithm(text).name
    except PapcollError as error:
        raise argparse.ArgumentTypeError(error.message) from None


def _add_problem(parser: argparse.ArgumentParser, required: bool = True) -> None:
    parser.add_argument("--algorithm", required=required, type=_algorithm_name,
                        help="algorithm name (see `papcoll algorithms`)")
    parser.add_argument("--ranks", "-P", required=required, type=_positive("ranks", 1 << 20),
                        help="number of ranks P")
    parser.add_argument("--count", required=required, type=parse_count,
                        help="elements per rank; K/M/G multiply by 1024")
    parser.add_argument("--elem-size", type=_positive("element size", 1 << 16), default=4,
                        help="bytes per element (default 4)")
    parser.add_argument("--segment-elements", type=_non_negative("segment elements"), default=0,
                        help="segmented algorithms: elements per segment (0: default)")
    parser.add_argument("--segment-count", type=_non_negative("segment count"), default=0,
                        help="linear_tree, slt: number of segments (0: P)")
    parser.add_argument("--arrivals", type=_arrivals, default=None,
                        help="slt, prr: predicted arrival time per rank in seconds, "
                             "a0,a1,... or random:SEED[:MAX] (uniform in [0, MAX], default 0.01)")
    parser.add_argument("--tau", type=_tau, default=1e-3,
                        help="prr: seconds to move and reduce one segment (default 0.001)")
    _add_schedule_option(parser)
    _add_group_options(parser)
    parser.add_argument("--tree", default=None, metavar="NETWORK",
                        help="ring_topology: a network preset or file whose tree the ranks "
                             "run on")


def _add_group_options(parser: argparse.ArgumentParser, sim: bool = False) -> None:
    parser.add_argument("--groups", type=_groups, default=None, metavar="LAYOUT",
                        help="hr1, hr2, smp_*: the group of every rank: g0,g1,... or blocks:K "
                             "(K consecutive ranks per group)" +
                             (", or host / switch (from the network's topology; default: "
                              "host when some host runs several ranks, else switch)"
                              if sim else ""))
    parser.add_argument("--inner", default=None, type=_algorithm_name, metavar="ALGORITHM",
                        help="hr2: the all-reduce inside groups (default ring)")
    parser.add_argument("--outer", default=None, type=_algorithm_name, metavar="ALGORITHM",
                        help="hr1, hr2: the all-reduce across groups (default "
                             "recursive_doubling)")


def _number_list(text: str, kind: type, what: str) -> list[float]:
    """'1,2,3' -> numbers of `kind`, or an argparse error saying the text is not `what`."""
    try:
        return [kind(item) for item in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not {what}") from None


def _groups(text: str) -> str | list[int]:
    if text in ("host", "switch") or text.startswith("blocks:"):
        if text.startswith("blocks:") and not (text[7:].isdigit() and int(text[7:]) > 0):
            raise argparse.ArgumentTypeError(f"'{text}': blocks:K needs a positive K")
        return text
    values = [int(value) for value in _number_list(text, int, "a group layout (g0,g1,... or "
                                                               "blocks:K)")]
    if any(value < 0 for value in values):
        raise argparse.ArgumentTypeError(f"group ids must not be negative: '{text}'")
    return values


def groups_for(layout: str | list[int] | None, ranks: int,
               topology: Any = None) -> list[int] | None:
    """The group of every rank from a --groups value (and the topology, for host/switch)."""
    if layout is None and topology is not None:
        shared = len(set(topology.rank_vertex)) < len(topology.rank_vertex)
        layout = "host" if shared else "switch"
    if layout is None:
        return None
    if isinstance(layout, list):
        if len(layout) != ranks:
            raise PapcollError(1, f"--groups gives {len(layout)} groups for {ranks} ranks: "
                                  "give one per rank")
        return layout
    if layout.startswith("blocks:"):
        size = int(layout[7:])
        return [rank // size for rank in range(ranks)]
    if topology is None:
        raise PapcollError(1, f"--groups {layout} needs a network with a topology")
    if layout == "host":
        return list(topology.rank_vertex)
    return [topology.parent[vertex] for vertex in topology.rank_vertex]


def _add_schedule_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--schedule", default=None, metavar="STRING",
                        help="recursive_multiplying: the schedule, e.g. a4,a3 or "
                             "c6m2,a2,a2,e6m2 (default: see `papcoll schedules --ranks P`); "
                             "`sim` takes several separated by ';'")


def _arrivals(text: str) -> str | list[float]:
    """'0,0.001,0' -> floats; 'random:SEED[:MAX]' stays text until P is known."""
    if text.startswith("random:"):
        parts = text.split(":")
        try:
            if len(parts) not in (2, 3):
                raise ValueError
            int(parts[1])
            if len(parts) == 3 and not float(parts[2]) >= 0:
                raise ValueError
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"'{text}' is not random:SEED or random:SEED:MAX (MAX seconds >= 0)") from None
        return text
    values = _number_list(text, float, "a list of arrival times in seconds (a0,a1,...)")
    if not all(math.isfinite(value) for value in values):
        raise argparse.ArgumentTypeError(f"arrival times must be finite numbers: '{text}'")
    return values


def _tau(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"tau must be a number of seconds, not '{text}'") from None
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"tau must be a positive number of seconds, not {text}")
    return value


def _context_of(arguments: argparse.Namespace) -> object:
    from .core import Context, Parameters

    arrivals = arguments.arrivals
    if isinstance(arrivals, str):
        _, seed, *maximum = arrivals.split(":")
        generator = random.Random(int(seed))
        top = float(maximum[0]) if maximum else 0.01
        arrivals = [generator.uniform(0, top) for _ in range(arguments.ranks)]
    elif arrivals is not None and len(arrivals) != arguments.ranks:
        raise PapcollError(1, f"--arrivals gives {len(arrivals)} times for {arguments.ranks} "
                              "ranks: give one per rank")
    tree = None
    if arguments.tree:
        from .network import load_network

        tree = load_network(arguments.tree).topology(arguments.ranks)
    parameters = Parameters(segment_elements=arguments.segment_elements,
                            segment_count=arguments.segment_count, schedule=arguments.schedule,
                            tree=tree, inner_algorithm=arguments.inner,
                            outer_algorithm=arguments.outer)
    return Context(parameters=parameters, arrivals=arrivals, tau=arguments.tau,
                   groups=groups_for(arguments.groups, arguments.ranks, tree))


def command_algorithms(arguments: argparse.Namespace) -> int:
    found = algorithms()
    if arguments.json:
        print(json.dumps([info.__dict__ for info in found], indent=2))
        return EXIT_OK
    table = Table(title="papcoll algorithms")
    for column in ("name", "description", "source", "ops", "limitations"):
        table.add_column(column, overflow="fold")
    for info in found:
        ops = "commutative only" if info.commutative_only else "any (keeps rank order)"
        table.add_row(info.name, info.description, info.source, ops, info.limitations)
    Console(width=max(Console().width, 140)).print(table)
    return EXIT_OK


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
        print("papcoll verify: give either --algorithm, --ranks and --count, or --schedule-files",
              file=sys.stderr)
        return EXIT_USAGE
    if not from_files and None in (arguments.algorithm, arguments.ranks, arguments.count):
        print("papcoll verify: --algorithm, --ranks and --count are all required",
              file=sys.stderr)
        return EXIT_USAGE
    try:
        if from_files:
            row = _verify_files(arguments)
        else:
            report = verify(arguments.algorithm, arguments.ranks, arguments.count,
                            arguments.elem_size, _context_of(arguments),  # type: ignore[arg-type]
                            eager_limit_bytes=arguments.eager_limit)
            row = {"ok": report.ok, "algorithm": arguments.algorithm, "ranks": arguments.ranks,
                   "count": arguments.count, "elem_size": arguments.elem_size,
                   **report.as_dict()}
    except PapcollError as error:
        print(f"papcoll verify: {error.message}", file=sys.stderr)
        return EXIT_USAGE
    print(json.dumps(row))
    if not row["ok"]:
        print(f"papcoll verify: violation: {row['reason']}", file=sys.stderr)
    return EXIT_OK if row["ok"] else EXIT_VIOLATION


def command_schedule(arguments: argparse.Namespace) -> int:
    if arguments.rank >= arguments.ranks:
        print(f"papcoll schedule: --rank {arguments.rank} is not below --ranks {arguments.ranks}",
              file=sys.stderr)
        return EXIT_USAGE
    try:
        text = schedule_text(arguments.algorithm, arguments.ranks, arguments.rank,
                             arguments.count, arguments.elem_size,
                             _context_of(arguments))  # type: ignore[arg-type]
    except PapcollError as error:
        print(f"papcoll schedule: {error.message}", file=sys.stderr)
        return EXIT_USAGE
    sys.stdout.write(text)
    return EXIT_OK


def command_demo(arguments: argparse.Namespace) -> int:
    from .demo import run_demo

    return run_demo(arguments.ranks, arguments.count, bench=not arguments.no_bench)


def _algorithm_list(text: str) -> list[str]:
    """papcoll algorithm names (checked here) and native / native:NAME (checked by the MPI)."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise argparse.ArgumentTypeError("no algorithm given")
    for name in names:
        if name != "native" and not name.startswith("native:"):
            _algorithm_name(name)
    return names


def _delays(text: str) -> list[float]:
    from .bench import parse_delays

    return parse_delays(text)


def _run_later(module: str, function: str) -> Callable[[argparse.Namespace], int]:
    """A handler that imports its module only when its command runs (keeps start-up fast:
    matplotlib, the MPI launcher and the simulator load only when needed)."""

    def handler(arguments: argparse.Namespace) -> int:
        return int(getattr(importlib.import_module(f"papcoll.{module}"), function)(arguments))

    return handler


def _add_bench(commands: Any) -> None:
    bench = commands.add_parser(
        "bench", help="the mini-benchmark (seed 000 Fig. 9) over mpiexec, against native MPI",
        description="Runs papcoll-bench under mpiexec: e-bar of each algorithm when rank 1 "
                    "(one-late) or every rank (rand-late) arrives up to --max-delay late.")
    bench.add_argument("--ranks", "-P", type=_positive("ranks", 4096), default=4,
                       help="MPI processes (default 4)")
    bench.add_argument("--algorithms", type=_algorithm_list,
                       default=_algorithm_list("ring,rabenseifner,native"),
                       help="comma-separated: papcoll names, native (MPI_Allreduce), "
                            "native:NAME (one of the MPI library's algorithms); "
                            "ring is always added as the baseline")
    bench.add_argument("--count", type=lambda text: [parse_count(item)
                                                     for item in text.split(",")],
                       default=[parse_count("1M")],
                       help="elements per rank, comma-separated; K/M/G multiply by 1024")
    bench.add_argument("--mode", choices=("one-late", "rand-late"), default="one-late")
    bench.add_argument("--max-delay", type=_delays, default=_delays("0,10,50ms"),
                       help="maximum arrival delays, e.g. 0,1,5,10,50ms (default 0,10,50ms)")
    bench.add_argument("--iterations", type=_positive("iterations", 1000000), default=20)
    bench.add_argument("--warmup", type=_non_negative("warm-up"), default=2)
    bench.add_argument("--compute-ms", type=float, default=100.0,
                       help="emulated compute phase per iteration (default 100, as the paper)")
    bench.add_argument("--datatype", choices=("float", "double", "int"), default="float")
    bench.add_argument("--seed", type=_non_negative("seed"), default=1)
    _add_schedule_option(bench)
    bench.add_argument("--json", metavar="FILE", help="write the rows as JSON ('-': stdout)")
    bench.add_argument("--plot", metavar="FILE.png", help="plot e-bar against max delay")
    bench.add_argument("--timeout", type=float, default=3600,
                       help="kill the MPI job after this many seconds (default 3600)")
    bench.set_defaults(handler=_run_later("bench", "command_bench"))


def _one_duration(text: str) -> float:
    """A single duration ('5us', '0.2ms', '1s'; no unit: ms) -> seconds."""
    values = _delays(text)
    if len(values) != 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not one duration")
    return values[0] / 1e3


def _add_sim(commands: Any) -> None:
    sim = commands.add_parser(
        "sim", help="simulate algorithms on a modelled network (discrete-event engine)",
        description="Runs the schedules of all ranks in the simulator: e-bar, makespan and "
                    "the lower bound per algorithm and delay.")
    sim.add_argument("--network", default="hockney",
                     help="preset (hockney, ethernet-1g, infiniband-fdr, aries: crossbars; "
                          "geo-2site: two sites) or a .json / .toml network file "
                          "(docs/simulator.md)")
    sim.add_argument("--ranks", "-P", type=_positive("ranks", 1 << 22))
    sim.add_argument("--algorithms", type=_algorithm_list,
                     default=_algorithm_list("ring,rabenseifner,slt,prr"),
                     help="papcoll algorithm names, comma-separated")
    sim.add_argument("--baseline", default="ring", type=lambda text: _algorithm_name(text)
                     if text != "none" else "",
                     help="the algorithm speedups are measured against, added to the run "
                          "(default ring; 'none': no speedups, e.g. where a ring is too big)")
    sim.add_argument("--max-operations", type=_positive("max operations", 1 << 62),
                     default=200_000_000,
                     help="refuse runs whose schedules hold more operations (about 40 bytes "
                          "each; default 200000000)")
    _add_schedule_option(sim)
    _add_group_options(sim, sim=True)
    sim.add_argument("--count", type=parse_count, default=parse_count("1M"))
    size = sim.add_mutually_exclusive_group()
    size.add_argument("--elem-size", type=_positive("element size", 1 << 16), default=4)
    size.add_argument("--dtype", choices=("float", "double", "int", "char"),
                      help="element type (sets --elem-size)")
    sim.add_argument("--mode", choices=("balanced", "one-late", "rand-late"),
                     default="balanced")
    sim.add_argument("--max-delay", type=_delays, default=_delays("0,10,50ms"))
    sim.add_argument("--arrivals", metavar="FILE",
                     help="arrival time of every rank, seconds: a JSON list or one number "
                          "per line (replaces --mode and --max-delay)")
    sim.add_argument("--seed", type=_non_negative("seed"), default=1,
                     help="for rand-late arrivals and for --noise")
    sim.add_argument("--noise", type=_one_duration, default=0.0, metavar="MEAN",
                     help="every op starts late by an exponential delay of this mean, "
                          "e.g. 2us (OS noise; seeded by --seed)")
    sim.add_argument("--param", help="override model parameters, e.g. alpha=5e-5,beta=8e-9")
    sim.add_argument("--show", action="store_true",
                     help="print the network's parameters and topology, then stop")
    sim.add_argument("--per-rank", action="store_true",
                     help="print a_i, f_i, e_i of every rank (and add them to --json rows)")
    sim.add_argument("--links", action="store_true",
                     help="print the bytes over each link of the topology")
    sim.add_argument("--timeline", metavar="FILE.png",
                     help="draw every op of every rank (a Gantt chart, seed 004 Figs. 18-23)")
    sim.add_argument("--export-goal", metavar="FILE",
                     help="write the (single) algorithm's schedule as LogGOPSim GOAL text "
                          "and stop")
    sim.add_argument("--profile", action="store_true",
                     help="print the engine's speed: operations per second, memory per op")
    sim.add_argument("--json", metavar="FILE", help="write the rows as JSON ('-': stdout)")
    sim.set_defaults(handler=_run_later("sim_command", "command_sim"))


def _add_search(commands: Any) -> None:
    space = commands.add_parser(
        "schedules", help="list the recursive multiplying schedules of P (seed 004)",
        description="Every factored, split (collapse/expand) and merged schedule of P.")
    space.add_argument("--ranks", "-P", required=True, type=_positive("ranks", 4096))
    space.add_argument("--max-base", type=_positive("max base", 64), default=8,
                       help="largest base of a stage (default 8)")
    space.add_argument("--json", action="store_true", help="print JSON rows")
    space.set_defaults(handler=_run_later("search_command", "command_schedules"))

    finder = commands.add_parser(
        "search", help="simulate every recursive multiplying schedule of P and rank them",
        description="Simulates each schedule of `papcoll schedules` on a network (balanced "
                    "arrivals) and ranks them by e-bar, against MPICH's recursive doubling; "
                    "prints the optimal fan-out of seed 004 Eq. 5 for the network.")
    finder.add_argument("--ranks", "-P", required=True, type=_positive("ranks", 4096))
    finder.add_argument("--network", default="aries",
                        help="network preset or file, as for `papcoll sim` (default aries)")
    finder.add_argument("--count", type=parse_count, default=2,
                        help="elements per rank (default 2: 8-byte floats, as seed 004)")
    finder.add_argument("--elem-size", type=_positive("element size", 1 << 16), default=4)
    finder.add_argument("--max-base", type=_positive("max base", 64), default=8)
    finder.add_argument("--param", help="override model parameters, as for `papcoll sim`")
    finder.add_argument("--top", type=_positive("top"), default=10,
                        help="rows to print (default 10)")
    finder.add_argument("--json", metavar="FILE",
                        help="write all rows as JSON ('-': stdout)")
    finder.set_defaults(handler=_run_later("search_command", "command_search"))


def _add_reproduce(commands: Any) -> None:
    again = commands.add_parser(
        "reproduce", help="a paper's table in the simulator (docs/reproductions.md)",
        description="seed004-table2 (recursive multiplying), seed003-table1 (hierarchical, "
                    "two sites), seed001-crossover (contention-free ring vs butterfly on a "
                    "tree), seed002-tables (priority-aware reduce-scatter); see "
                    "docs/reproductions.md.")
    again.add_argument("table", choices=("seed004-table2", "seed003-table1", "seed001-crossover",
                                         "seed002-tables"))
    again.add_argument("--network", default="aries")
    again.add_argument("--json", metavar="FILE", help="write the rows as JSON")
    again.set_defaults(handler=_run_later("reproduce", "command_reproduce"))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="papcoll", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    listing = commands.add_parser("algorithms", help="list the algorithms")
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(handler=command_algorithms)

    checking = commands.add_parser("verify", help="prove an algorithm's schedules correct")
    _add_problem(checking, required=False)
    checking.add_argument("--schedule-files", nargs="+", metavar="FILE",
                          help="verify hand-written schedules instead: one file per rank, "
                               "rank 0 first, in the format `papcoll schedule` prints")
    checking.add_argument("--eager-limit", type=int, default=0,
                          help="bytes up to which sends complete without their receive "
                               "(default 0: every send waits, the strictest; -1: all eager)")
    checking.add_argument("--json", action="store_true",
                          help="print the JSON object (the default output already is one)")
    checking.set_defaults(handler=command_verify)

    dumping = commands.add_parser("schedule", help="print one rank's schedule")
    _add_problem(dumping)
    dumping.add_argument("--rank", required=True, type=_non_negative("rank"),
                         help="which rank's schedule")
    dumping.set_defaults(handler=command_schedule)

    _add_bench(commands)
    _add_sim(commands)
    _add_search(commands)
    _add_reproduce(commands)

    demo = commands.add_parser("demo", help="the algorithms and a table of verified schedules")
    demo.add_argument("--ranks", type=_positive("ranks", 4096), nargs="+", default=[4, 13, 64])
    demo.add_argument("--count", type=parse_count, default=parse_count("1M"))
    demo.add_argument("--no-bench", action="store_true",
                      help="only the verified schedules: no MPI benchmark, no simulation")
    demo.set_defaults(handler=command_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    arguments = parser.parse_args(argv)
    return int(arguments.handler(arguments))


if __name__ == "__main__":
    sys.exit(main())
