"""Python view of the MPI-free core: the algorithm registry, schedules, the verifier."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ._core import ffi, lib

_ERROR_SIZE = 512


class PapcollError(Exception):
    """A call into the C core failed; `status` is the papcoll_status code."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


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


@dataclass(frozen=True)
class Context:
    """Everything besides (P, rank, count, elem_size) that may shape a schedule.

    It must be identical on every rank. Fields an algorithm does not use are ignored.
    """

    arrivals: Sequence[float] | None = None
    tau: float = 0.0
    segment_elements: int = 0
    segment_count: int = 0
    rank_order: Sequence[int] | None = None
    schedule_string: str | None = None
    keep_order: bool = False  # the op is not commutative: refuse reordering schedules
    groups: Sequence[int] | None = None  # hr1, hr2, smp_*: the group of each rank
    inner_algorithm: str | None = None   # hr2: inside groups (None: ring)
    outer_algorithm: str | None = None   # hr1, hr2: across groups (None: recursive_doubling)
    tree: Any = None                     # ring_topology: a network.Topology, or None


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

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _text(pointer: Any) -> str:
    return ffi.string(pointer).decode() if pointer != ffi.NULL else ""


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
    status = lib.papcoll_algorithm_find(name.encode(), raw)
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
    if context.arrivals is not None:
        arrivals = ffi.new("double[]", [float(a) for a in context.arrivals])
        keep.append(arrivals)
        raw.arrivals, raw.arrival_count = arrivals, len(context.arrivals)
    raw.tau = context.tau
    raw.keep_order = int(context.keep_order)
    raw.segment_elements = context.segment_elements
    raw.segment_count = context.segment_count
    if context.rank_order is not None:
        order = ffi.new("int32_t[]", [int(r) for r in context.rank_order])
        keep.append(order)
        raw.rank_order, raw.rank_order_count = order, len(context.rank_order)
    if context.groups is not None:
        groups = ffi.new("int32_t[]", [int(g) for g in context.groups])
        keep.append(groups)
        raw.groups, raw.group_count = groups, len(context.groups)
    if context.tree is not None:
        from .sim import _c_topology

        raw.tree = _c_topology(context.tree, keep)
    for field in ("schedule_string", "inner_algorithm", "outer_algorithm"):
        value = getattr(context, field)
        if value is not None:
            text = ffi.new("char[]", value.encode())
            keep.append(text)
            setattr(raw, field, text)
    return raw, keep


def _raise(status: int, error: Any) -> None:
    if status != lib.PAPCOLL_OK:
        raise PapcollError(status, _text(error) or _text(lib.papcoll_status_name(status)))


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
    raw_context, _keep = _c_context(context)
    out = ffi.new("papcoll_schedule **")
    error = ffi.new("char[]", _ERROR_SIZE)
    status = lib.papcoll_schedule_build(
        algorithm_name.encode(), ranks, rank, count, elem_size, raw_context, out, error,
        _ERROR_SIZE,
    )
    _raise(status, error)
    try:
        return _dump(out[0])
    finally:
        lib.papcoll_schedule_free(out[0])


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
    )


def _options(eager_limit_bytes: int, check_in_place: bool) -> Any:
    options = ffi.new("papcoll_verify_options *")
    options.eager_limit_bytes = eager_limit_bytes
    options.check_in_place = int(check_in_place)
    return options


def verify(
    algorithm_name: str,
    ranks: int,
    count: int,
    elem_size: int = 4,
    context: Context | None = None,
    eager_limit_bytes: int = 0,
    check_in_place: bool = True,
) -> VerifyReport:
    """Builds all `ranks` schedules and verifies them symbolically.

    eager_limit_bytes: messages up to this size complete without their receive; larger ones
    block until it is posted (0, the default, is the strictest; negative: all eager).
    Raises PapcollError when a schedule cannot be built (bad input, unsupported case).
    """
    raw_context, _keep = _c_context(context)
    report = ffi.new("papcoll_verify_report *")
    error = ffi.new("char[]", _ERROR_SIZE)
    status = lib.papcoll_verify(
        algorithm_name.encode(), ranks, count, elem_size, raw_context,
        _options(eager_limit_bytes, check_in_place), report, error, _ERROR_SIZE,
    )
    _raise(status, error)
    return _report(report)


def verify_texts(
    texts: Sequence[str], eager_limit_bytes: int = 0, check_in_place: bool = True
) -> VerifyReport:
    """Verifies hand-written schedules: texts[r] is rank r's, in the dump format."""
    error = ffi.new("char[]", _ERROR_SIZE)
    schedules = ffi.new("papcoll_schedule *[]", len(texts))
    try:
        for rank, text in enumerate(texts):
            slot = ffi.new("papcoll_schedule **")
            _raise(lib.papcoll_schedule_parse(text.encode(), slot, error, _ERROR_SIZE), error)
            schedules[rank] = slot[0]
        report = ffi.new("papcoll_verify_report *")
        status = lib.papcoll_verify_schedules(
            schedules, len(texts), _options(eager_limit_bytes, check_in_place), report, error,
            _ERROR_SIZE,
        )
        _raise(status, error)
        return _report(report)
    finally:
        for rank in range(len(texts)):
            lib.papcoll_schedule_free(schedules[rank])
