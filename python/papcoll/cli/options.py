"""What the subcommands share: the checkers of option values, the options themselves (each
added in one place, so it has one name, one form and one help text in every subcommand),
the one builder of a papcoll Context from parsed arguments, the one JSON writer and the
exit statuses."""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import random
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from rich.console import Console

from .. import checks
from .._core import lib
from ..core import Context, PapcollError, Parameters, algorithm, estimated_operations
from ..lab.launcher import Launch, mpiexec_command
from ..lab.testbed import temporary
from ..network import NetworkError, Topology, load_network

EXIT_OK, EXIT_VIOLATION, EXIT_USAGE = 0, 1, 2
INT32_MAX, INT64_MAX = 2**31 - 1, 2**63 - 1
# bytes per element of the element types a datatype option offers
DATATYPE_SIZES = {"float": 4, "double": 8, "int": 4, "char": 1}

Handler = Callable[[argparse.Namespace], int]
Item = TypeVar("Item")
_SUFFIXES = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}
_UNITS_MS = {"us": 1e-3, "ms": 1.0, "s": 1e3}
# the options whose value is a file papcoll writes ('-': stdout where the option allows it)
OUTPUT_OPTIONS = ("json", "csv", "plot", "timeline", "export_goal", "output")
# the algorithms that take --schedule (Parameters.schedule)
SCHEDULE_ALGORITHMS = ("recursive_multiplying",)
# an arrivals file holds one number per rank: 64 MiB is some 4 M ranks of 16-digit numbers,
# more than any run takes, and it keeps /dev/zero or a wrong file from filling memory
ARRIVALS_FILE_MAX_BYTES = 64 << 20


class UsageError(ValueError):
    """Input the command line refuses after parsing; main() prints `papcoll COMMAND:
    message` and exits 2."""


class Parser(argparse.ArgumentParser):
    """argparse's parser with two changes: a usage error is one line, `papcoll COMMAND:
    message`, exit 2 (not the usage text); and a value that starts with '-' and a digit is
    a value (`--count -5K` reaches --count's check, which says why it is wrong) since no
    option of papcoll starts with one."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = re.compile(r"^-\d")

    def error(self, message: str) -> NoReturn:
        # "argument --count: must be >= 0" reads as "--count must be >= 0", and "argument
        # --arrivals: --arrivals spans ..." as "--arrivals spans ..."
        # and "argument --sizes: not allowed with argument --count" (a mutually exclusive
        # group) as "--sizes and --count exclude each other"
        match = re.fullmatch(r"argument (\S+): (.*)", message, flags=re.DOTALL)
        excluded = match and re.fullmatch(r"not allowed with argument (\S+)", match.group(2))
        if match and excluded:
            message = f"{match.group(1)} and {excluded.group(1)} exclude each other: give one"
        elif match and match.group(2).startswith("must "):
            message = f"{match.group(1)} {match.group(2)}"
        elif match and match.group(2).startswith(match.group(1) + " "):
            message = match.group(2)
        print(f"{self.prog}: {message} (see `{self.prog} --help`)", file=sys.stderr)
        sys.exit(EXIT_USAGE)


# --- value checkers (argparse `type=`) ---------------------------------------------------

def integer_in_range(what: str, low: int, high: int = INT32_MAX) -> Callable[[str], int]:
    """A checker of an integer option: `what` must be an integer in low..high."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} must be an integer, not '{text}'") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{what} must be in {low}..{high}, not {value}")
        return value

    parse.__name__ = what
    return parse


def parse_count(text: str) -> int:
    """An element count: a non-negative integer with an optional K, M or G suffix (x1024),
    at most INT64_MAX."""
    match = re.fullmatch(r"\s*([-+]?)(\d{1,30})\s*([KMG]?)\s*", text, flags=re.IGNORECASE)
    if match is None:
        raise argparse.ArgumentTypeError(
            f"'{text}' is not a count (a non-negative integer, optionally with K, M or G)"
        )
    value = int(match.group(2)) * _SUFFIXES[match.group(3).upper()]
    if match.group(1) == "-" and value:
        raise argparse.ArgumentTypeError(f"must be >= 0, not '{text.strip()}'")
    if value > INT64_MAX:
        raise argparse.ArgumentTypeError(f"must be at most {INT64_MAX}, not '{text.strip()}'")
    return value


def parse_sizes(text: str) -> list[int]:
    """Message sizes in bytes, the way OSU and IMB sweep them: a comma list of sizes (K, M,
    G: x1024) and ranges A:B, which double from A up to B (B included when a doubling of A
    reaches it): '8:16M', '8,1K,64K', '1:4,1M'. Every size is at least 1 byte (a 0-byte
    all-reduce times only the call); duplicates are dropped, the order kept."""
    sizes: list[int] = []
    for item in (part.strip() for part in text.split(",")):
        bounds = item.split(":")
        if not item or len(bounds) > 2:
            raise argparse.ArgumentTypeError(
                f"'{text}' is not a list of sizes (e.g. 8:16M, or 8,1K,64K)")
        low, high = (parse_count(bound) for bound in (bounds[0], bounds[-1]))
        if low == 0:
            raise argparse.ArgumentTypeError(f"sizes must be at least 1 byte, not '{item}'")
        if high < low:
            raise argparse.ArgumentTypeError(f"'{item}': the range ends below its start")
        size = low
        while size <= high:
            sizes.append(size)
            size *= 2
    return list(dict.fromkeys(sizes))


def comma_list(item: Callable[[str], Item], what: str | None = None) -> Callable[[str], list[Item]]:
    """A checker of a comma-separated list whose items `item` checks. With `what`, an item
    that is not a valid one (ValueError) makes the message "'TEXT' is not WHAT"; without,
    the item checker's own message stands."""

    def parse(text: str) -> list[Item]:
        items = [part.strip() for part in text.split(",") if part.strip()]
        if not items:
            raise argparse.ArgumentTypeError(f"'{text}' is an empty list")
        try:
            return [item(part) for part in items]
        except ValueError:
            if what is None:
                raise
            raise argparse.ArgumentTypeError(f"'{text}' is not {what}") from None

    parse.__name__ = what or getattr(item, "__name__", "list")
    return parse


def algorithm_name(text: str) -> str:
    """A papcoll algorithm name (the registry's spelling)."""
    try:
        return algorithm(text).name
    except PapcollError as error:
        raise argparse.ArgumentTypeError(error.message) from None


def bench_algorithm(text: str) -> str:
    """A papcoll algorithm or auto (checked here) or native / native:NAME (checked by the
    MPI)."""
    if text in ("auto", "native") or text.startswith("native:"):
        return text
    return algorithm_name(text)


def durations(text: str) -> list[float]:
    """'0,1,5,10,50ms' or '0ms,1.5ms,2s' -> milliseconds. A unit on the last item alone
    applies to all; with none, milliseconds."""
    items = [item.strip() for item in text.split(",")]
    shared_unit = re.fullmatch(r"[\d.]+\s*(us|ms|s)", items[-1])
    values = []
    for item in items:
        match = re.fullmatch(r"(\d+(?:\.\d*)?)\s*(us|ms|s)?", item)
        if match is None:
            raise argparse.ArgumentTypeError(
                f"'{item}' is not a delay (a number with an optional unit us, ms or s)")
        unit = match.group(2) or (shared_unit.group(1) if shared_unit else "ms")
        values.append(float(match.group(1)) * _UNITS_MS[unit])
    if any(value > 60000 for value in values):
        raise argparse.ArgumentTypeError(f"delays above 60 s are not sensible: '{text}'")
    return values


def one_duration(text: str) -> float:
    """A single duration ('5us', '0.2ms', '1s'; no unit: ms) -> seconds."""
    values = durations(text)
    if len(values) != 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not one duration")
    return values[0] / 1e3


def _group_id(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"group ids must not be negative: '{text}'")
    return value


_group_ids = comma_list(_group_id, "a group layout (g0,g1,... or blocks:K)")


def group_layout(text: str) -> str | list[int]:
    """g0,g1,... (a group per rank), blocks:K, host, switch or site (resolved by
    groups_for)."""
    if text in ("host", "switch", "site") or text.startswith("blocks:"):
        if text.startswith("blocks:") and not (text[7:].isdigit() and int(text[7:]) > 0):
            raise argparse.ArgumentTypeError(f"'{text}': blocks:K needs a positive K")
        return text
    return _group_ids(text)


def _arrival_list(text: str) -> list[float]:
    """a0,a1,... in seconds: finite, with a finite spread (checks.arrival_times)."""
    try:
        values = [float(item) for item in text.split(",") if item.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"'{text}' is not a list of arrival times in seconds (a0,a1,...)") from None
    try:
        return checks.arrival_times(values, "--arrivals") or []
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def arrivals(text: str) -> str | list[float]:
    """a0,a1,... (seconds) -> floats; random:SEED[:MAX] and a FILE stay text until P is
    known (arrival_times)."""
    if text.startswith("random:"):
        parts = text.split(":")
        try:
            if len(parts) not in (2, 3):
                raise ValueError
            int(parts[1])
            if len(parts) == 3 and not 0 <= float(parts[2]) < math.inf:
                raise ValueError
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"'{text}' is not random:SEED or random:SEED:MAX (MAX seconds >= 0)") from None
        return text
    if "," in text or re.fullmatch(r"\s*[-+.\deE]+\s*|\s*[-+]?(nan|inf)\s*", text, re.I):
        return _arrival_list(text)
    return text  # a file


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"tau must be a number of seconds, not '{text}'") from None
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"tau must be a positive number of seconds, not {text}")
    return value


# --- options ---------------------------------------------------------------------------

def add_ranks(parser: argparse.ArgumentParser, high: int, default: int | None = None,
              required: bool = False) -> None:
    """--ranks / -P: one number of ranks; required, defaulted or (None) checked by the handler
    where other options can stand in for it (require_ranks)."""
    parser.add_argument("--ranks", "-P", type=integer_in_range("ranks", 1, high),
                        default=default, required=required,
                        help="number of ranks P" + (f" (default {default})" if default else ""))


def require_ranks(command: str, arguments: argparse.Namespace) -> None:
    """Where --ranks has no default: refuses a run without it."""
    if arguments.ranks is None:
        raise PapcollError(1, f"--ranks is required for `papcoll {command}` here")


def add_count(parser: Any, default: str | None, many: bool = False,
              required: bool = False) -> None:
    """--count: elements per rank (K/M/G suffixes); with `many`, a comma list."""
    parser.add_argument(
        "--count", type=comma_list(parse_count) if many else parse_count, required=required,
        default=None if default is None else
        comma_list(parse_count)(default) if many else parse_count(default),
        help=("elements per rank" + (", comma-separated" if many else "")
              + "; K/M/G multiply by 1024" + (f" (default {default})" if default else "")))


def add_sizes(parser: Any) -> None:
    """--sizes: message sizes in bytes per rank (parse_sizes); the alternative to --count
    where a command takes both (a mutually exclusive group)."""
    parser.add_argument("--sizes", type=parse_sizes, default=None, metavar="SIZES",
                        help="message sizes in bytes per rank: A:B doubles from A to B, or a "
                             "comma list (8,1K,64K); K/M/G multiply by 1024; each a multiple "
                             "of the datatype's size")


def add_element_size(parser: argparse.ArgumentParser, datatype: bool = False) -> None:
    """--elem-size (bytes, where no element type applies); with `datatype`, --datatype as
    the alternative that sets it."""
    size = parser.add_mutually_exclusive_group() if datatype else parser
    size.add_argument("--elem-size", type=integer_in_range("element size", 1, 1 << 16),
                      default=4, help="bytes per element (default 4)")
    if datatype:
        add_datatype(size, tuple(DATATYPE_SIZES), default=None,
                     why="sets --elem-size")


def add_datatype(parser: Any, choices: tuple[str, ...], default: str | None,
                 why: str = "", metavar: str | None = None) -> None:
    """--datatype: the element type (MPI's, in `bench`); `metavar` stands for a list of
    choices too long for the usage line."""
    parser.add_argument("--datatype", choices=choices, default=default, metavar=metavar,
                        help="element type" + (f"; {why}" if why else "")
                             + (f" (default {default})" if default else ""))


def element_size(arguments: argparse.Namespace) -> int:
    """Bytes per element from --datatype (where given) or --elem-size (add_element_size with
    datatype)."""
    return DATATYPE_SIZES[arguments.datatype] if arguments.datatype else arguments.elem_size


def add_algorithm(parser: argparse.ArgumentParser, required: bool = True) -> None:
    parser.add_argument("--algorithm", required=required, type=algorithm_name,
                        help="algorithm name (see `papcoll algorithms`)")


def simulated_algorithm(text: str) -> str:
    """A papcoll algorithm, or auto (what auto would run, as the MPI library decides)."""
    return text if text == "auto" else algorithm_name(text)


def add_algorithms(parser: argparse.ArgumentParser, default: str, native: bool = False) -> None:
    """--algorithms: a comma list of algorithm names and auto (in `bench` also native,
    native:NAME)."""
    names = comma_list(bench_algorithm if native else simulated_algorithm)
    parser.add_argument("--algorithms", type=names, default=names(default),
                        help="comma-separated algorithm names" +
                             (": papcoll names, auto, native (MPI_Allreduce), native:NAME "
                              "(one of the MPI library's algorithms)" if native
                              else " or auto")
                             + f" (default {default})")


def add_parameters(parser: argparse.ArgumentParser, topology: bool = False,
                   tau_default: str = "0.001") -> None:
    """The algorithm parameters every subcommand that builds a Context takes (context_of);
    `topology`: --groups may name host / switch of the network's topology."""
    parser.add_argument("--segment-elements", default=0,
                        type=integer_in_range("segment elements", 0, INT64_MAX),
                        help="segmented algorithms: elements per segment (0: default)")
    parser.add_argument("--segment-count", default=0,
                        type=integer_in_range("segment count", 0, lib.PAPCOLL_MAX_SEGMENTS),
                        help="linear_tree, slt: number of segments (0: P)")
    add_schedule(parser)
    parser.add_argument("--groups", type=group_layout, default=None, metavar="LAYOUT",
                        help="hr1, hr2, smp_*, pap_hierarchical: the group of every rank: "
                             "g0,g1,... or blocks:K "
                             "(K consecutive ranks per group)" +
                             (", or host / switch / site (from the network's topology; "
                              "default: site when the network marks sites, else host when "
                              "some host runs several ranks, else switch)"
                              if topology else ""))
    parser.add_argument("--inner", default=None, type=algorithm_name, metavar="ALGORITHM",
                        help="hr2: the all-reduce inside groups (default ring)")
    parser.add_argument("--outer", default=None, type=algorithm_name, metavar="ALGORITHM",
                        help="hr1, hr2: the all-reduce across groups (default "
                             "recursive_doubling)")
    parser.add_argument("--tau", type=_seconds, default=None,
                        help=f"prr: seconds to move and reduce one segment (default "
                             f"{tau_default})")


def add_schedule(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--schedule", default=None, metavar="STRING",
                        help="recursive_multiplying: the schedule, e.g. a4,a3 or "
                             "c6m2,a2,a2,e6m2 (default: see `papcoll schedules --ranks P`); "
                             "`sim` takes several separated by ';'")


def add_arrivals(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--arrivals", type=arrivals, default=None,
                        metavar="a0,a1,...|random:SEED[:MAX]|FILE",
                        help=f"{what}: the arrival time of every rank in seconds, a comma "
                             "list, random:SEED[:MAX] (uniform in [0, MAX], default MAX 0.01) "
                             "or a FILE holding a JSON list or one number per line")


def add_problem(parser: argparse.ArgumentParser, max_ranks: int, required: bool = True) -> None:
    """One all-reduce to build schedules of (`verify`, `schedule`): the algorithm, P (at
    most max_ranks), the count, the element size and the algorithm's parameters."""
    add_algorithm(parser, required)
    add_ranks(parser, max_ranks, required=required)
    add_count(parser, None, required=required)
    add_element_size(parser)
    add_parameters(parser)
    add_arrivals(parser, "slt, prr: the predictions")
    parser.add_argument("--tree", default=None, metavar="NETWORK",
                        help="ring_topology: a network preset or file whose tree the ranks "
                             "run on")


def problem_context(arguments: argparse.Namespace) -> Context:
    """The Context of add_problem's options: predicted arrivals, the tree of --tree."""
    ranks = arguments.ranks
    check_schedule(arguments.schedule, [arguments.algorithm])
    tree = load_network(arguments.tree).topology(ranks) if arguments.tree else None
    return context_of(arguments, arrival_times(arguments.arrivals, ranks), tree, 1e-3,
                      arguments.schedule)


def add_network(parser: argparse.ArgumentParser, default: str) -> None:
    """--network and --param, as `papcoll sim` takes them."""
    parser.add_argument("--network", default=default,
                        help="preset (hockney, ethernet-1g, infiniband-fdr, aries: crossbars; "
                             "geo-2site, geo-3site: two and three sites) or a .json / .toml "
                             "network file "
                             f"(docs/simulator.md; default {default})")
    parser.add_argument("--param",
                        help="override model parameters, e.g. alpha=5e-5,beta=8e-9")


def _timeout_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--timeout must be a number of seconds, not "
                                         f"'{text}'") from None
    if not (0 < value < math.inf):
        raise argparse.ArgumentTypeError(f"--timeout must be a positive number of seconds, "
                                         f"not {text}")
    return value


def add_timeout(parser: argparse.ArgumentParser, default: float) -> None:
    """--timeout: how long the command's MPI job may run before it is stopped."""
    parser.add_argument("--timeout", type=_timeout_seconds, default=default,
                        help=f"stop the MPI job after this many seconds (default {default:g})")


def add_testbed(parser: argparse.ArgumentParser) -> None:
    """--testbed: run the MPI job on an emulated cluster instead of this machine's shared
    memory (papcoll.testbed)."""
    parser.add_argument("--testbed", metavar="NETWORK",
                        help="run on an emulated cluster of this network (a preset or file, "
                             "as --network): one network namespace per host, links shaped "
                             "with tc, MPI over TCP; made for the run and removed after it "
                             "(needs root; docs/testbed.md)")


@contextmanager
def launch_for(arguments: argparse.Namespace, ranks: int) -> Iterator[tuple[Launch, Any]]:
    """How to start the command's MPI job: on this machine, or on a testbed of --testbed
    made for `ranks` ranks for the command's duration. Yields (launch, Testbed or None)."""
    if not getattr(arguments, "testbed", None):
        yield mpiexec_command, None
        return
    with temporary(arguments.testbed, ranks) as testbed:
        yield testbed.mpiexec_command, testbed


def add_json(parser: argparse.ArgumentParser, what: str = "the rows") -> None:
    parser.add_argument("--json", metavar="FILE",
                        help=f"write {what} as JSON to FILE ('-': stdout)")


# --- building and writing --------------------------------------------------------------

def network_of(arguments: argparse.Namespace) -> Any:
    """The network of --network with the overrides of --param."""
    network = load_network(arguments.network)
    return network.with_parameters(arguments.param) if arguments.param else network


def groups_for(layout: str | list[int] | None, ranks: int,
               topology: Topology | None = None) -> list[int] | None:
    """The group of every rank from a --groups value (and the topology, for host, switch and
    site; without a value, the topology's default: Topology.groups)."""
    if layout is None:
        return topology.groups() if topology is not None else None
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
    try:
        return topology.groups(layout)
    except NetworkError as error:
        raise PapcollError(1, f"--groups {layout}: {error}") from None


def arrivals_from_file(value: str | list[float] | None) -> bool:
    """Whether an --arrivals value names a file (not a list, not random:...)."""
    return isinstance(value, str) and not value.startswith("random:")


def arrival_times(value: str | list[float] | None, ranks: int) -> list[float] | None:
    """The arrival time of every rank from an --arrivals value."""
    if value is None:
        return None
    if isinstance(value, str) and value.startswith("random:"):
        _, seed, *maximum = value.split(":")
        generator = random.Random(int(seed))
        top = float(maximum[0]) if maximum else 0.01
        return [generator.uniform(0, top) for _ in range(ranks)]
    if isinstance(value, str):
        return _read_arrivals(value, ranks)
    return checks.arrival_times(value, "--arrivals", ranks)


def _read_arrivals(path: str, ranks: int) -> list[float]:
    where = f"arrivals file {path}"
    try:
        with open(path, "rb") as file:
            raw = file.read(ARRIVALS_FILE_MAX_BYTES + 1)
    except OSError as error:
        raise UsageError(f"cannot read {where}: {error.strerror}") from None
    if len(raw) > ARRIVALS_FILE_MAX_BYTES:
        raise UsageError(f"{where}: larger than {ARRIVALS_FILE_MAX_BYTES >> 20} MiB")
    try:
        text = raw.decode()
        values = json.loads(text) if text.lstrip().startswith("[") else [
            float(line) for line in text.split()]
    except (ValueError, RecursionError) as error:  # UnicodeDecodeError is a ValueError
        raise UsageError(f"{where}: not a JSON list or numbers one per line "
                         f"({str(error)[:80]})") from None
    if not isinstance(values, list):
        raise UsageError(f"{where}: not a JSON list or numbers one per line")
    try:
        return checks.arrival_times(values, where, ranks) or []
    except TypeError as error:  # a JSON item that is not a number
        raise UsageError(str(error)) from None


def context_of(arguments: argparse.Namespace, arrivals: list[float] | None,
               tree: Topology | None, tau: float, schedule: str | None) -> Context:
    """The papcoll Context of a run: the options of add_parameters (--tau, where given,
    before `tau`) with the arrival times, tree and recursive multiplying schedule the
    subcommand decided on; --groups resolved against the tree."""
    parameters = Parameters(segment_elements=arguments.segment_elements,
                            segment_count=arguments.segment_count, schedule=schedule,
                            tree=tree, inner_algorithm=arguments.inner,
                            outer_algorithm=arguments.outer)
    return Context(parameters=parameters, arrivals=arrivals,
                   tau=arguments.tau if arguments.tau is not None else tau,
                   groups=groups_for(arguments.groups, arguments.ranks, tree))


def add_csv(parser: argparse.ArgumentParser, what: str = "the rows") -> None:
    parser.add_argument("--csv", metavar="FILE",
                        help=f"write {what} as CSV to FILE, the JSON keys as the header "
                             "('-': stdout)")


def write_csv(rows: list[dict[str, Any]], target: str) -> None:
    """The one CSV writer: one header line (the keys of the rows, in their first order),
    then a line per row; to the file `target`, or to stdout for '-'. None is an empty cell,
    booleans are true/false as in the JSON."""
    fields = list(dict.fromkeys(key for row in rows for key in row))

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
    not write at the end: a directory, a missing or read-only folder, a read-only file."""
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


def check_schedule(schedule: str | None, algorithms: Sequence[str | None]) -> None:
    """Refuses a --schedule that no algorithm of the run takes, or whose ';'-separated
    schedules (`sim` takes several) include an empty one."""
    if schedule is None:
        return
    if not any(name in SCHEDULE_ALGORITHMS for name in algorithms):
        raise UsageError(f"--schedule applies to {', '.join(SCHEDULE_ALGORITHMS)}; "
                         f"{', '.join(str(name) for name in algorithms)} "
                         f"{'takes' if len(algorithms) == 1 else 'take'} no schedule")
    if any(not part.strip() for part in schedule.split(";")):
        raise UsageError(f"--schedule '{schedule}' holds an empty schedule")


def check_operations(name: str, ranks: int, count: int, elem_size: int, context: Context,
                     limit: int, raise_it: str) -> None:
    """Refuses, before P schedules are built, a run whose schedules would hold more than
    `limit` operations (core.estimated_operations); `raise_it` says how to allow more."""
    estimate = estimated_operations(name, ranks, count, elem_size, context)
    if estimate > limit:
        raise UsageError(f"{name} at P = {ranks} builds about {estimate:.3g} operations, above "
                         f"the limit of {limit:.3g} ({raise_it})")
