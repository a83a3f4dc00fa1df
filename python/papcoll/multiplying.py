"""Recursive multiplying schedules (Ruefenacht et al. 2017): checking, the schedule space of a
process count, the model's optimal fan-out, and the search that simulates every schedule.

The language and its semantics are documented in src/core/algorithms/recursive_multiplying.c.
The enumeration follows the paper's generator ("factored, split and merged schedules"):
  factored  every ordered factorisation of P into bases 2..max_base: a8,a6 and a6,a8 differ;
  split     one collapse around a factored inner group: cTmB,<factored N'>,eTmB with
            N' = T/B + P - T, every base B <= max_base and multiple T of B up to P;
  merged    mRgGaB,<middle>,nRgGaB for every R >= 1 whose interior P - R has a factorisation
            with two or more stages.
Choice: one level of collapse and no collapse inside a merge (the C builder accepts nested
collapses; the enumeration does not generate them, to keep the space small).
Limit: no rank receives more than PAPCOLL_RM_MAX_BASE (C, papcoll_core.h) vectors in one stage,
as papcoll_rm_check demands: bases are capped at it, and a merge is left out when a block
member would receive B - 1 + ceil(R / G) vectors, more than it (P = 2051: m2035g2a8).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ._core import ffi, lib
from .core import Context, PapcollError, Parameters, c_string
from .errors import _ERROR_SIZE, _text
from .model import SimModel
from .sim import simulate

if TYPE_CHECKING:
    from .network import Network
    from .topology import Topology

DEFAULT_MAX_BASE = 8
# the most vectors one rank may receive in a stage; the C checker's own number
MAX_RECEIVED = int(lib.PAPCOLL_RM_MAX_BASE)


def check(schedule: str, ranks: int) -> bool:
    """Raises PapcollError naming the problem if `schedule` is not valid for `ranks`; returns
    whether it reorders operands (merges: commutative ops only)."""
    reorders = ffi.new("int32_t *")
    error = ffi.new("char[]", _ERROR_SIZE)
    status = lib.papcoll_rm_check(c_string(schedule, f"schedule {schedule!r}"), ranks,
                                  reorders, error, _ERROR_SIZE)
    if status != lib.PAPCOLL_OK:
        raise PapcollError(status, f"schedule '{schedule}': {_text(error)}")
    return bool(reorders[0])


def _text_of(function: object, ranks: int) -> str:
    length = function(ranks, ffi.NULL, 0)  # type: ignore[operator]
    text = ffi.new("char[]", length + 1)
    function(ranks, text, length + 1)  # type: ignore[operator]
    return _text(text)


def default_schedule(ranks: int) -> str:
    """What recursive_multiplying runs without a schedule string."""
    return _text_of(lib.papcoll_rm_default, ranks)


def recursive_doubling_schedule(ranks: int) -> str:
    """MPICH's recursive doubling written in the language (the baseline of the search)."""
    return _text_of(lib.papcoll_rm_recursive_doubling, ranks)


@lru_cache(maxsize=4096)
def factorisations(n: int, max_base: int) -> tuple[tuple[int, ...], ...]:
    """Every ordered factorisation of n into bases 2..max_base (n = 1: one empty one)."""
    if n == 1:
        return ((),)
    found: list[tuple[int, ...]] = []
    for base in range(2, min(max_base, n) + 1):
        if n % base == 0:
            found.extend((base, *rest) for rest in factorisations(n // base, max_base))
    return tuple(found)


def _stages(bases: tuple[int, ...]) -> str:
    return ",".join(f"a{base}" for base in bases)


def enumerate_schedules(ranks: int, max_base: int = DEFAULT_MAX_BASE) -> Iterator[tuple[str, str]]:
    """(kind, schedule) for every schedule of the space, each once; each passes check()."""
    max_base = min(max_base, MAX_RECEIVED)
    if ranks == 1:
        yield "factored", ""
        return
    for bases in factorisations(ranks, max_base):
        yield "factored", _stages(bases)
    for base in range(2, min(max_base, ranks) + 1):
        for threshold in range(base, ranks + 1, base):
            inner = threshold // base + ranks - threshold
            for bases in factorisations(inner, max_base):
                middle = _stages(bases)
                yield "split", ",".join(filter(None, (f"c{threshold}m{base}", middle,
                                                      f"e{threshold}m{base}")))
    for remaining in range(1, ranks - 3):
        interior = ranks - remaining
        for bases in factorisations(interior, max_base):
            if len(bases) < 2:
                continue
            first, *middle, last = bases
            groups = interior // first
            if first - 1 + -(-remaining // groups) > MAX_RECEIVED:
                continue  # a block member would receive too many vectors in the m-stage
            yield "merged", ",".join(
                [f"m{remaining}g{groups}a{first}", *(f"a{b}" for b in middle),
                 f"n{remaining}g{interior // last}a{last}"])


def lambert_w(z: float) -> float:
    """The principal branch W(z) for z >= 0 (w e^w = z), by Newton's method."""
    if z < 0:
        raise ValueError("W is only needed here for z >= 0")
    w = math.log1p(z)
    for _ in range(64):
        step = (w * math.exp(w) - z) / (math.exp(w) * (w + 1))
        w -= step
        if abs(step) < 1e-15 * max(1.0, abs(w)):
            break
    return w


def optimal_fanout(ratio: float) -> float:
    """Ruefenacht et al. 2017, Eq. (5): the b (peers per stage) minimising (alpha_p + b alpha_r)
    log_(b+1) N, for ratio = alpha_p / alpha_r. Setting the derivative to zero gives x (ln x - 1) =
    ratio - 1 with x = b + 1, so x = (ratio - 1) / W((ratio - 1) / e), and b = e - 1 at ratio 1."""
    if not ratio >= 1:
        raise ValueError(f"the overlap ratio alpha_p / alpha_r must be >= 1, not {ratio}")
    if math.isinf(ratio):
        return math.inf
    z = (ratio - 1) / math.e
    x = math.e if z == 0 else (ratio - 1) / lambert_w(z)
    return x - 1


def simulate_schedule(schedule: str, ranks: int, count: int, elem_size: int, model: SimModel,
                      topology: Topology | None = None) -> float:
    """e-bar (seconds) of recursive_multiplying with `schedule`, balanced arrivals."""
    return simulate("recursive_multiplying", ranks, count, elem_size, model, topology=topology,
                    context=Context(parameters=Parameters(schedule=schedule))).average_elapsed


@dataclass(frozen=True)
class Candidate:
    schedule: str
    kind: str
    stages: int
    max_base: int
    average_elapsed: float
    reorders: bool


def schedule_shape(schedule: str) -> tuple[int, int]:
    """(number of stages, largest base) of a schedule string."""
    if not schedule:
        return 0, 1
    parts = schedule.split(",")
    bases = [int(part.rsplit("a", 1)[1]) if "a" in part else int(part.rsplit("m", 1)[1])
             for part in parts]
    return len(parts), max(bases)


def search_schedules(ranks: int, network: Network, count: int, elem_size: int,
                     max_base: int = DEFAULT_MAX_BASE,
                     progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Simulates every schedule of P on the network (balanced arrivals) and ranks them by
    e-bar against MPICH's recursive doubling; with the model's optimal fan-out (the
    paper's Eq. 5). `progress(done, total)` is called after each schedule."""
    topology = network.topology(ranks)
    candidates = list(enumerate_schedules(ranks, max_base))
    rows: list[dict[str, Any]] = []
    for kind, schedule in candidates:
        elapsed = simulate_schedule(schedule, ranks, count, elem_size, network.model, topology)
        stages, largest = schedule_shape(schedule)
        rows.append({"schedule": schedule, "kind": kind, "stages": stages,
                     "max_base": largest, "avg_elapsed_ms": elapsed * 1e3,
                     "reorders": check(schedule, ranks)})
        if progress is not None:
            progress(len(rows), len(candidates))
    rows.sort(key=lambda row: (row["avg_elapsed_ms"], row["stages"], row["schedule"]))
    baseline = recursive_doubling_schedule(ranks)
    baseline_ms = simulate_schedule(baseline, ranks, count, elem_size, network.model,
                                    topology) * 1e3
    for rank, row in enumerate(rows, 1):
        row["rank"] = rank
        row["reduction_vs_recursive_doubling_percent"] = (
            100 * (baseline_ms - row["avg_elapsed_ms"]) / baseline_ms if baseline_ms else 0.0)
    model = network.model
    ratio = model.latency / model.overhead if model.overhead > 0 else float("inf")
    return {"network": network.name, "ranks": ranks, "count": count,
            "recursive_doubling": {"schedule": baseline, "avg_elapsed_ms": baseline_ms},
            "default": default_schedule(ranks),
            "overlap_ratio": ratio, "optimal_fanout": optimal_fanout(ratio) if ratio >= 1
            else None, "rows": rows}
