"""What every subcommand shares: the parser (one-line usage errors), the exit statuses, the
checkers of option values (integers in a range, counts and sizes with K/M/G, comma lists,
durations), and the options of the problem itself (--ranks, --count, --sizes, the element
size and type, --algorithm, --algorithms). Each option is added in one place, so it has one
name, one form and one help text in every subcommand. The options that build a Context are
in context_options.py, where the results go in output_options.py, where the work runs in
run_options.py."""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

from ..core import Context, PapcollError, algorithm, algorithms, estimated_operations
from ..datatypes import DATATYPES
from .command_texts import COMMAND_TEXTS

EXIT_OK, EXIT_VIOLATION, EXIT_USAGE = 0, 1, 2
INT32_MAX, INT64_MAX = 2**31 - 1, 2**63 - 1
# bytes per element of the element types a datatype option offers: bench's own table, and
# "char" (1 byte), which sim took before it had that table (MPI_CHAR reduces nothing, so
# bench does not offer it)
DATATYPE_SIZES = {**{name: datatype.size for name, datatype in DATATYPES.items()}, "char": 1}
# papcoll-bench's longest emulated compute phase per iteration (bench/bench_options.c)
MOST_COMPUTE_MS = 60000.0

Handler = Callable[[argparse.Namespace], int]
Item = TypeVar("Item")
_SUFFIXES = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}
_UNITS_MS = {"us": 1e-3, "ms": 1.0, "s": 1e3}


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

    def parse_args(self, args: Any = None, namespace: Any = None) -> Any:
        """argparse's, but an unknown option after a subcommand is that subcommand's error:
        argparse reported `papcoll sim --sizes 4K` as "papcoll: unrecognized arguments" and
        pointed at `papcoll --help`, which does not list sim's options."""
        arguments, extras = self.parse_known_args(args, namespace)
        if extras:
            command = getattr(arguments, "command", None)
            prog = f"{self.prog} {command}" if command else self.prog
            print(f"{prog}: unrecognized arguments: {' '.join(extras)} (see `{prog} --help`)",
                  file=sys.stderr)
            sys.exit(EXIT_USAGE)
        return arguments

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
        elif match:  # "argument --algorithms: unknown ..." reads as "--algorithms: unknown ..."
            message = f"{match.group(1)}: {match.group(2)}"
        print(f"{self.prog}: {message} (see `{self.prog} --help`)", file=sys.stderr)
        sys.exit(EXIT_USAGE)


def add_command(commands: Any, handler: Handler, name: str, **extra: Any) -> Any:
    """The subcommand `name` and the handler that runs it, declared together, with its help
    and description from command_texts.py (`extra`: argparse's other texts, an epilog);
    returns its parser, for the command's options."""
    texts = COMMAND_TEXTS[name]
    parser = commands.add_parser(name, help=texts.help, description=texts.description, **extra)
    parser.set_defaults(handler=handler)
    return parser


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


def milliseconds(most: float) -> Callable[[str], float]:
    """A checker of a duration in milliseconds, a plain number from 0 to `most`: argparse
    names the option in the message ("--compute-ms must be ..."), where papcoll-bench, which
    would refuse it later, said "bad max delay" for any of its durations."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not 0 <= value <= most:  # NaN fails too
            raise argparse.ArgumentTypeError(
                f"must be a number of milliseconds from 0 to {most:g}, not '{text}'")
        return value

    parse.__name__ = "milliseconds"
    return parse


def parse_count(text: str) -> int:
    """An element count: a non-negative integer with an optional K, M or G suffix (x1024,
    also written KB or KiB), at most INT64_MAX; a byte count may end in B ('8B')."""
    match = re.fullmatch(r"\s*([-+]?)(\d{1,30})\s*(?:([KMG])(?:I?B)?|B)?\s*", text,
                         flags=re.IGNORECASE)
    if match is None:
        raise argparse.ArgumentTypeError(
            f"'{text}' is not a count (a non-negative integer, optionally with K, M or G)"
        )
    value = int(match.group(2)) * _SUFFIXES[(match.group(3) or "").upper()]
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


def osu_sizes(text: str) -> tuple[int | None, int]:
    """OSU's -m [MIN:]MAX: the sizes doubling from MIN up to MAX, MIN by default the
    smallest message (one element of the datatype, known only later: None). Each bound a
    size as --sizes takes it (K, M, G: x1024); MIN at least 1 and at most MAX."""
    bounds = text.split(":")
    if len(bounds) > 2 or not all(bound.strip() for bound in bounds):
        raise argparse.ArgumentTypeError(f"'{text}' is not [MIN:]MAX (e.g. 8:1M, or 1M)")
    high = parse_count(bounds[-1])
    low = parse_count(bounds[0]) if len(bounds) == 2 else None
    if low == 0 or high == 0:
        raise argparse.ArgumentTypeError(f"sizes must be at least 1 byte, not '{text}'")
    if low is not None and high < low:
        raise argparse.ArgumentTypeError(f"'{text}': the range ends below its start")
    return low, high


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


def algorithm_name(text: str, others: str = "") -> str:
    """A papcoll algorithm name (the registry's spelling). `others`: the names besides
    papcoll's that the option takes, listed first where the name is unknown."""
    try:
        return algorithm(text).name
    except PapcollError as error:
        if not others:
            raise argparse.ArgumentTypeError(error.message) from None
        known = ", ".join(info.name for info in algorithms())
        raise argparse.ArgumentTypeError(f"unknown algorithm '{text}' (known: {others}; "
                                         f"papcoll's: {known})") from None


# what an option that runs algorithms on MPI takes besides papcoll's own
NATIVE_NAMES = ("auto, native (MPI_Allreduce as the MPI library chooses), native:NAME (one "
                "of the MPI library's own algorithms)")


def bench_algorithm(text: str) -> str:
    """A papcoll algorithm or auto (checked here) or native / native:NAME (NAME checked
    against the MPI library before the job starts: papcoll.cli.bench.check_native_names)."""
    if text in ("auto", "native") or text.startswith("native:"):
        return text
    return algorithm_name(text, NATIVE_NAMES)


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


def add_osu_sizes(parser: Any) -> None:
    """-m: OSU's spelling of the message sizes (osu_sizes); beside --sizes and --count in
    their mutually exclusive group."""
    parser.add_argument("-m", dest="osu_sizes", type=osu_sizes, default=None,
                        metavar="[MIN:]MAX",
                        help="message sizes as OSU's -m takes them: bytes doubling from MIN "
                             "(default: one element of the datatype) up to MAX, e.g. -m 8:1M")


def element_counts(arguments: argparse.Namespace, elem_size: int, elements: str,
                   most: int) -> list[int]:
    """Elements per rank, one list whichever of --sizes, -m (bytes, divided by elem_size) or
    --count the command was given (add_sizes, add_osu_sizes, add_count), as every command
    that takes them reads them; `elements` names them in messages ("float elements"), and
    more than `most` in one call is refused."""
    if arguments.osu_sizes is not None:
        option = "-m"
        low, high = arguments.osu_sizes
        # OSU's sizes double from MIN, which defaults to the smallest message: one element
        if high < (low or elem_size):
            raise UsageError(f"-m: MAX {high} is below the smallest message, "
                             f"{low or elem_size} bytes (one of the {elements})")
        sizes = parse_sizes(f"{low or elem_size}:{high}")
    elif arguments.sizes is not None:
        option, sizes = "--sizes", arguments.sizes
    else:
        return list(arguments.count)
    counts = []
    for total in sizes:
        if total % elem_size:
            raise UsageError(f"{option}: {total} bytes is not a whole number of {elements} "
                             f"({elem_size} bytes each)")
        if total // elem_size > most:
            raise UsageError(f"{option}: {total} bytes is more than {most} {elements}, the "
                             "most one call takes")
        counts.append(total // elem_size)
    return counts


def add_iterations(parser: argparse.ArgumentParser, default: int, what: str = "") -> None:
    """--iterations, -i as OSU and IMB spell it: timed iterations."""
    parser.add_argument("--iterations", "-i", type=integer_in_range("iterations", 1, 1000000),
                        default=default,
                        help=f"timed iterations{what} (default {default}; OSU's -i)")


def add_warmup(parser: argparse.ArgumentParser, default: int) -> None:
    """--warmup, -x as OSU spells it: untimed iterations before the timed ones."""
    parser.add_argument("--warmup", "-x", type=integer_in_range("warm-up", 0, INT32_MAX),
                        default=default,
                        help=f"untimed iterations first (default {default}; OSU's -x)")


def add_element_size(parser: argparse.ArgumentParser, datatype: bool = False) -> None:
    """--elem-size (bytes, where no element type applies); with `datatype`, --datatype as
    the alternative that sets it."""
    size = parser.add_mutually_exclusive_group() if datatype else parser
    size.add_argument("--elem-size", type=integer_in_range("element size", 1, 1 << 16),
                      default=4, help="bytes per element (default 4)")
    if datatype:
        add_datatype(size, tuple(DATATYPE_SIZES), default=None, metavar="TYPE",
                     why="sets --elem-size; any of `papcoll bench`'s types")


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
    return text if text == "auto" else algorithm_name(text, "auto")


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


# --- building and writing --------------------------------------------------------------


def check_operations(name: str, ranks: int, count: int, elem_size: int, context: Context,
                     limit: int, raise_it: str) -> None:
    """Refuses, before P schedules are built, a run whose schedules would hold more than
    `limit` operations (core.estimated_operations); `raise_it` says how to allow more."""
    estimate = estimated_operations(name, ranks, count, elem_size, context)
    if estimate > limit:
        raise UsageError(f"{name} at P = {ranks} builds about {estimate:.3g} operations, above "
                         f"the limit of {limit:.3g} ({raise_it})")
