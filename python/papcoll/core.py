"""Python view of the MPI-free core: the algorithm registry, schedules, the verifier."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ._core import ffi, lib
from .checks import (
    INT32_MAX,
    arrival_times,
    optional_sequence,
    real_number,
    whole_number,
)
from .errors import _ERROR_SIZE, PapcollError, _raise, _text, c_string
from .parameters import Parameters, c_parameters


@dataclass(frozen=True)
class AlgorithmInfo:
    name: str
    description: str
    source: str
    limitations: str
    commutative_only: bool
    needs_arrivals: bool
    needs_groups: bool = False
    reduce_scatter: bool = False
    canonical_order: bool = False  # keeps reproducible mode (the rank-order left fold)


@dataclass(frozen=True)
class Context:
    """Everything besides (P, rank, count, elem_size) that may shape a schedule (C:
    papcoll_context): the user's parameters, and what is known per call (predicted arrivals,
    tau, whether the op keeps order) or per communicator (groups). Identical on every rank.
    """

    parameters: Parameters = Parameters()
    arrivals: Sequence[float] | None = None  # slt, prr, straggler: predicted arrival per rank (s)
    tau: float = 0.0                     # prr, straggler: seconds to move and reduce one segment
    keep_order: bool = False             # the op is not commutative: refuse reordering
    groups: Sequence[int] | None = None  # hr1, hr2, smp_*: the group of each rank

    def __post_init__(self) -> None:
        if not isinstance(self.parameters, Parameters):
            raise TypeError("Context.parameters must be a Parameters, not "
                            f"{type(self.parameters).__name__}")
        arrival_times(self.arrivals, "Context.arrivals")
        real_number(self.tau, "Context.tau", 0.0)
        for group in optional_sequence(self.groups, "Context.groups") or ():
            whole_number(group, "every entry of Context.groups", 0, INT32_MAX)


@dataclass(frozen=True)
class VerifyReport:
    ok: bool
    violation_rank: int
    violation_op: int
    reason: str
    order_preserved: bool
    rounds: int
    max_bytes_sent: int
    max_bytes_received: int
    total_bytes_sent: int
    lower_bound_bytes: int
    max_ops: int
    max_scratch_elements: int
    # every result element is the rank-order left fold (reproducible mode); else where not
    canonical_order: bool = False
    canonical_break: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _info(raw: Any) -> AlgorithmInfo:
    return AlgorithmInfo(
        name=_text(raw.name),
        description=_text(raw.description),
        source=_text(raw.source),
        limitations=_text(raw.limitations),
        commutative_only=bool(raw.commutative_only),
        needs_arrivals=bool(raw.needs_arrivals),
        needs_groups=bool(raw.needs_groups),
        reduce_scatter=bool(raw.reduce_scatter),
        canonical_order=bool(raw.canonical_order),
    )


def algorithms() -> list[AlgorithmInfo]:
    """Every registered algorithm, in registry order."""
    raw = ffi.new("papcoll_algorithm_info *")
    found = []
    for index in range(lib.papcoll_algorithm_count()):
        lib.papcoll_algorithm_get(index, raw)
        found.append(_info(raw))
    return found


def algorithm(name: str) -> AlgorithmInfo:
    raw = ffi.new("papcoll_algorithm_info *")
    status = lib.papcoll_algorithm_find(c_string(name, "algorithm name"), raw)
    if status != lib.PAPCOLL_OK:
        known = ", ".join(info.name for info in algorithms())
        raise PapcollError(status, f"unknown algorithm '{name}' (known: {known})")
    return _info(raw)


def _c_context(context: Context | None) -> tuple[Any, list[Any]]:
    """A papcoll_context and the cffi objects that must outlive it."""
    raw = ffi.new("papcoll_context *")
    keep: list[Any] = [raw]
    if context is None:
        return raw, keep
    c_parameters(context.parameters, raw.parameters, keep)
    if context.arrivals is not None:
        arrivals = ffi.new("double[]", [float(a) for a in context.arrivals])
        keep.append(arrivals)
        raw.arrivals, raw.arrival_count = arrivals, len(context.arrivals)
    raw.tau = context.tau
    raw.keep_order = int(context.keep_order)
    if context.groups is not None:
        groups = ffi.new("int32_t[]", [int(g) for g in context.groups])
        keep.append(groups)
        raw.groups, raw.group_count = groups, len(context.groups)
    return raw, keep


def check_parameters(parameters: Parameters, ranks: int) -> None:
    """Raises PapcollError naming the field when `parameters` do not suit `ranks` ranks (C:
    papcoll_parameters_check: a permutation, a schedule that fits P, flat inner and outer
    algorithms, a tree placing P ranks)."""
    raw = ffi.new("papcoll_parameters *")
    keep: list[Any] = [raw]
    c_parameters(parameters, raw, keep)
    error = ffi.new("char[]", _ERROR_SIZE)
    _raise(lib.papcoll_parameters_check(raw, ranks, error, _ERROR_SIZE), error)


def _dump(schedule: Any) -> str:
    length = lib.papcoll_schedule_dump(schedule, ffi.NULL, 0)
    text = ffi.new("char[]", length + 1)
    lib.papcoll_schedule_dump(schedule, text, length + 1)
    return _text(text)


def schedule_text(
    algorithm_name: str,
    ranks: int,
    rank: int,
    count: int,
    elem_size: int = 4,
    context: Context | None = None,
) -> str:
    """The text dump of one rank's schedule (one operation per line)."""
    schedule = _build(algorithm_name, ranks, rank, count, elem_size, context)
    try:
        return _dump(schedule)
    finally:
        lib.papcoll_schedule_free(schedule)


def _build(algorithm_name: str, ranks: int, rank: int, count: int, elem_size: int,
           context: Context | None) -> Any:
    """One rank's C schedule; the caller frees it (papcoll_schedule_free)."""
    raw_context, _keep = _c_context(context)
    out = ffi.new("papcoll_schedule **")
    error = ffi.new("char[]", _ERROR_SIZE)
    status = lib.papcoll_schedule_build(
        c_string(algorithm_name, "algorithm name"), ranks, rank, count, elem_size, raw_context,
        out, error, _ERROR_SIZE,
    )
    _raise(status, error)
    return out[0]


def estimated_operations(
    algorithm_name: str,
    ranks: int,
    count: int,
    elem_size: int = 4,
    context: Context | None = None,
) -> int:
    """About how many operations the schedules of all ranks hold, from three of them: P
    times the median op count of ranks 0, P/2 and P-1 (a root's extra work is not
    multiplied by P). Lets a caller refuse a run before building P schedules."""
    counts = []
    for rank in sorted({0, ranks // 2, ranks - 1}):
        schedule = _build(algorithm_name, ranks, rank, count, elem_size, context)
        try:
            counts.append(int(lib.papcoll_schedule_op_count(schedule)))
        finally:
            lib.papcoll_schedule_free(schedule)
    return ranks * sorted(counts)[len(counts) // 2]


def _report(raw: Any) -> VerifyReport:
    return VerifyReport(
        ok=bool(raw.ok),
        violation_rank=raw.violation_rank,
        violation_op=raw.violation_op,
        reason=_text(raw.reason),
        order_preserved=bool(raw.order_preserved),
        rounds=raw.rounds,
        max_bytes_sent=raw.max_bytes_sent,
        max_bytes_received=raw.max_bytes_received,
        total_bytes_sent=raw.total_bytes_sent,
        lower_bound_bytes=raw.lower_bound_bytes,
        max_ops=raw.max_ops,
        max_scratch_elements=raw.max_scratch_elements,
        canonical_order=bool(raw.canonical_order),
        canonical_break=_text(raw.canonical_break),
    )


def _options(eager_limit_bytes: int, check_in_place: bool, reproducible: bool) -> Any:
    options = ffi.new("papcoll_verify_options *")
    options.eager_limit_bytes = eager_limit_bytes
    options.check_in_place = int(check_in_place)
    options.require_canonical_order = int(reproducible)
    return options


def verify(
    algorithm_name: str,
    ranks: int,
    count: int,
    elem_size: int = 4,
    context: Context | None = None,
    eager_limit_bytes: int = 0,
    check_in_place: bool = True,
    reproducible: bool = False,
) -> VerifyReport:
    """Builds all `ranks` schedules and verifies them symbolically.

    eager_limit_bytes: messages up to this size complete without their receive; larger ones
    block until it is posted (0, the default, is the strictest; negative: all eager).
    reproducible: also require every result element to be the rank-order left fold
    ((x0 op x1) op x2) ... (reproducible mode; the report's canonical_break says where not).
    Raises PapcollError when a schedule cannot be built (bad input, unsupported case).
    """
    raw_context, _keep = _c_context(context)
    report = ffi.new("papcoll_verify_report *")
    error = ffi.new("char[]", _ERROR_SIZE)
    status = lib.papcoll_verify(
        c_string(algorithm_name, "algorithm name"), ranks, count, elem_size, raw_context,
        _options(eager_limit_bytes, check_in_place, reproducible), report, error, _ERROR_SIZE,
    )
    _raise(status, error)
    return _report(report)


def verify_texts(
    texts: Sequence[str], eager_limit_bytes: int = 0, check_in_place: bool = True,
    reproducible: bool = False,
) -> VerifyReport:
    """Verifies hand-written schedules: texts[r] is rank r's, in the dump format."""
    error = ffi.new("char[]", _ERROR_SIZE)
    schedules = ffi.new("papcoll_schedule *[]", len(texts))
    try:
        for rank, text in enumerate(texts):
            slot = ffi.new("papcoll_schedule **")
            encoded = c_string(text, f"the schedule text of rank {rank}")
            _raise(lib.papcoll_schedule_parse(encoded, slot, error, _ERROR_SIZE), error)
            schedules[rank] = slot[0]
        report = ffi.new("papcoll_verify_report *")
        status = lib.papcoll_verify_schedules(
            schedules, len(texts), _options(eager_limit_bytes, check_in_place, reproducible),
            report, error, _ERROR_SIZE,
        )
        _raise(status, error)
        return _report(report)
    finally:
        for rank in range(len(texts)):
            lib.papcoll_schedule_free(schedules[rank])
