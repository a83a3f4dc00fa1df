"""straggler and auto in the simulator: with one rank late, straggler comes close
to e-bar_lo where the ring does not, and auto (papcoll.sim.choose, src/core/select.c) runs
native for balanced arrivals and a papcoll algorithm for the late case."""

from __future__ import annotations

import pytest
from papcoll import Context
from papcoll.core import algorithms
from papcoll.model import preset
from papcoll.sim import arrival_pattern, choose, lower_bound, simulate, tau, transfer_time

RANKS, COUNT, ELEM_SIZE = 16, 1 << 18, 4  # 1 MiB per rank
MODEL = preset("ethernet-1g")
DELTA = transfer_time(MODEL, None, COUNT * ELEM_SIZE)
LATE = arrival_pattern("one-late", RANKS, 100 * DELTA)  # rank 1 late by 100 delta


def context(arrivals: list[float]) -> Context:
    return Context(arrivals=arrivals, tau=tau(MODEL, RANKS, COUNT, ELEM_SIZE))


def excess(name: str) -> float:
    """e-bar - e-bar_lo (seconds) of `name` with rank 1 late, predicted exactly."""
    result = simulate(name, RANKS, COUNT, ELEM_SIZE, MODEL, LATE, context(LATE))
    return result.average_elapsed - lower_bound(LATE, DELTA)


def test_straggler_with_one_rank_late_comes_within_a_third_of_the_rings_excess():
    straggler, ring = excess("straggler"), excess("ring")
    assert 0 < ring
    assert 0 <= straggler < ring
    assert straggler < 0.3 * ring


def test_auto_runs_native_when_balanced_and_a_papcoll_algorithm_when_one_is_late():
    balanced = choose(RANKS, COUNT, ELEM_SIZE, MODEL, context([0.0] * RANKS))
    assert balanced.algorithm == "native"
    assert not balanced.from_arrivals
    late = choose(RANKS, COUNT, ELEM_SIZE, MODEL, context(LATE))
    assert late.algorithm in {info.name for info in algorithms()}
    assert late.from_arrivals
    assert late.predicted_gain > 1
    # what it chose is what the simulator then finds, and it beats the ring
    assert late.predicted_seconds == pytest.approx(
        simulate(late.algorithm, RANKS, COUNT, ELEM_SIZE, MODEL, LATE,
                 context(LATE)).average_elapsed, rel=1e-9)
    assert late.predicted_seconds - lower_bound(LATE, DELTA) < excess("ring")
