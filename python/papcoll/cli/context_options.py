"""The options that build a papcoll Context, and the one builder (context_of): the
algorithms' parameters, each made from its row of the C parameter table (papcoll.parameters:
the option's name, its value's check, its help, which algorithms read it), so a new
parameter is an option of every command that builds a Context without a line here; the
predicted arrivals (--arrivals), the groups (--groups) and tau (--tau), which are known per
call or per communicator rather than chosen per algorithm."""

from __future__ import annotations

import argparse
import json
import math
import random
import re
from collections.abc import Callable, Sequence
from typing import Any

from .. import checks
from ..core import Context, PapcollError, Parameters, algorithms
from ..network import load_network
from ..parameters import (
    ALGORITHM,
    PARAMETER_TABLE,
    RANK_LIST,
    WHOLE_NUMBER,
    ParameterInfo,
    parameter,
)
from ..topology import NetworkError, Topology
from .options import (
    INT32_MAX,
    UsageError,
    add_algorithm,
    add_count,
    add_element_size,
    add_ranks,
    algorithm_name,
    comma_list,
    integer_in_range,
)

# the algorithms that take --schedule (Parameters.schedule)
SCHEDULE_ALGORITHMS = parameter("schedule").algorithms


# an arrivals file holds one number per rank: 64 MiB is some 4 M ranks of 16-digit numbers,
# more than any run takes, and it keeps /dev/zero or a wrong file from filling memory
ARRIVALS_FILE_MAX_BYTES = 64 << 20


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


def _option_type(row: ParameterInfo) -> Callable[[str], Any]:
    """The check of a parameter's option value, by the row's kind and range."""
    if row.kind == WHOLE_NUMBER:
        return integer_in_range(row.name.replace("_", " "), row.minimum, row.maximum)
    if row.kind == ALGORITHM:
        return algorithm_name
    if row.kind == RANK_LIST:
        return comma_list(integer_in_range("a rank", 0, INT32_MAX))
    return str


def add_parameter_option(parser: argparse.ArgumentParser, name: str, note: str = "") -> None:
    """The option of the parameter `name`, as its row declares it (dest: the field's name);
    `note` adds what this command does with it."""
    row = parameter(name)
    assert row.option is not None, f"{name} has no option"
    parser.add_argument(row.option, dest=row.name, type=_option_type(row),
                        default=0 if row.kind == WHOLE_NUMBER else None, metavar=row.metavar,
                        help=f"{', '.join(row.algorithms)}: {row.help} (default: {row.unset})"
                             + note)


def add_parameters(parser: argparse.ArgumentParser, topology: bool = False,
                   tau_default: str = "0.001", several_schedules: bool = False) -> None:
    """Every parameter that has an option (the parameter table's rows), and the per-call
    inputs of a Context (--groups, --tau) that context_of builds from; `topology`: --groups
    may name host / switch / site of the network's topology; `several_schedules`: --schedule
    takes several, separated by ';' (`sim` runs each)."""
    for row in PARAMETER_TABLE:
        if row.option is not None:
            note = ("; several separated by ';' are run one by one"
                    if row.name == "schedule" and several_schedules else "")
            add_parameter_option(parser, row.name, note)
    parser.add_argument("--groups", type=group_layout, default=None, metavar="LAYOUT",
                        help=f"{', '.join(_algorithms_needing('needs_groups'))}: the group of "
                             "every rank: g0,g1,... or blocks:K "
                             "(K consecutive ranks per group)" +
                             (", or host / switch / site (from the network's topology; "
                              "default: site when the network marks sites, else host when "
                              "some host runs several ranks, else switch)"
                              if topology else ""))
    parser.add_argument("--tau", type=_seconds, default=None,
                        help=f"{', '.join(_algorithms_needing('needs_arrivals'))}: seconds to "
                             f"move and reduce one segment (default {tau_default})")


def _algorithms_needing(flag: str) -> list[str]:
    """The algorithms whose registry entry sets `flag` (needs_groups, needs_arrivals)."""
    return [info.name for info in algorithms() if getattr(info, flag)]


def parameters_of(arguments: argparse.Namespace, **given: Any) -> Any:
    """The Parameters of the options add_parameters added, with `given` fields (those a
    command decides itself: the tree of its network, one of several schedules) over them."""
    chosen = {row.name: getattr(arguments, row.name) for row in PARAMETER_TABLE
              if row.option is not None and hasattr(arguments, row.name)}
    return Parameters(**{**chosen, **given})


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
    add_arrivals(parser, f"{', '.join(_algorithms_needing('needs_arrivals'))}: the predictions")
    readers = [name for name in parameter("tree").algorithms if name != "auto"]
    parser.add_argument("--tree", default=None, metavar="NETWORK",
                        help=f"{', '.join(readers)}: a network preset or file whose tree the "
                             "ranks run on")


def problem_context(arguments: argparse.Namespace) -> Context:
    """The Context of add_problem's options: predicted arrivals, the tree of --tree."""
    ranks = arguments.ranks
    check_schedule(arguments.schedule, [arguments.algorithm])
    tree = load_network(arguments.tree).topology(ranks) if arguments.tree else None
    return context_of(arguments, arrival_times(arguments.arrivals, ranks), tree, 1e-3,
                      arguments.schedule)


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
    raw = checks.read_small_file(path, ARRIVALS_FILE_MAX_BYTES, where, UsageError)
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
    return Context(parameters=parameters_of(arguments, schedule=schedule, tree=tree),
                   arrivals=arrivals,
                   tau=arguments.tau if arguments.tau is not None else tau,
                   groups=groups_for(arguments.groups, arguments.ranks, tree))


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
