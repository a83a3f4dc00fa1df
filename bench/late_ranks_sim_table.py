"""Two late ranks and rand-late in the simulator, excess over e-bar_lo.

How far the arrival-aware algorithms stay above Proficz 2018's lower bound e-bar_lo (mean over
ranks of a_last - a_i, plus delta: papcoll.sim.lower_bound) when more than one rank is late,
measured against the best stand-in for MPI_Allreduce (ring, rabenseifner):

    ratio = excess(algorithm) / min(excess(ring), excess(rabenseifner))

(1.0: no better than native; 0: the bound). Patterns, delays D in multiples of delta (one
transfer of the vector, papcoll.sim.transfer_time):

    two-same    ranks 1 and P-1 late by D
    two-half    rank 1 late by D, rank P-1 by D / 2
    rand-true   every rank uniform in [0, D] (seeds 1..5), predicted exactly
    rand-wrong  the same arrivals, the schedules built on those of seeds 101..105: the
                predictions are wrong (papcoll.sim.simulate's `context`; `papcoll sim`
                itself always predicts the true arrivals)
    rand-class  the same arrivals, predicted as the MPI library hands them to a schedule:
                rounded to their arrival class (src/mpi/arrival_class.c: on time within
                max(tau, 100 us) of the earliest, then classes doubling in width, each
                predicted at its geometric middle)

slt, prr and straggler get tau = papcoll.sim.tau as `papcoll sim` gives them. A cell is the
mean over its seeds. The whole grid (2 networks x P 4, 8, 16 x 3 sizes x 4 delays x 4
patterns) takes a few seconds:

    PYTHONPATH=python .venv/bin/python bench/late_ranks_sim_table.py > table.md
"""

from __future__ import annotations

import argparse
import math
import statistics
from collections.abc import Sequence

from papcoll import Context
from papcoll.model import preset
from papcoll.sim import arrival_pattern, lower_bound, simulate, tau, transfer_time

NATIVE = ("ring", "rabenseifner")
PREDICTING = ("straggler", "slt", "prr")  # built from the predictions
SIZES = {"64K": 64 << 10, "1M": 1 << 20, "16M": 16 << 20}  # bytes per rank
PATTERNS = ("two-same", "two-half", "rand-true", "rand-wrong", "rand-class")
SEEDS = (1, 2, 3, 4, 5)
WRONG_SEED_OFFSET = 100
ELEM_SIZE = 4
JITTER_SECONDS = 100e-6  # papcoll_tuning's arrival_jitter_seconds, its default


def arrival_classes(arrivals: Sequence[float], on_time_unit: float) -> list[float]:
    """The representative of each arrival's class, as src/mpi/arrival_class.c computes it
    from the lateness after the earliest."""
    on_time = max(on_time_unit, JITTER_SECONDS)
    earliest = min(arrivals)
    classes = []
    for arrival in arrivals:
        lateness = arrival - earliest
        level = 0 if lateness < on_time else min(60, 1 + math.floor(math.log2(lateness / on_time)))
        classes.append(0.0 if level == 0 else on_time * math.sqrt(2) * 2.0 ** (level - 1))
    return classes


def arrivals(pattern: str, ranks: int, delay: float,
             on_time: float) -> list[tuple[list[float], list[float]]]:
    """(true arrivals, predicted arrivals) of every run of the pattern; on_time: tau (the
    unit of the arrival classes, src/mpi/arrival_class.h)."""
    if pattern == "two-same":
        late = [delay if rank in (1, ranks - 1) else 0.0 for rank in range(ranks)]
        return [(late, late)]
    if pattern == "two-half":
        late = [delay if rank == 1 else delay / 2 if rank == ranks - 1 else 0.0
                for rank in range(ranks)]
        return [(late, late)]
    runs = []
    for seed in SEEDS:
        true = arrival_pattern("rand-late", ranks, delay, seed)
        predicted = (arrival_pattern("rand-late", ranks, delay, seed + WRONG_SEED_OFFSET)
                     if pattern == "rand-wrong" else arrival_classes(true, on_time)
                     if pattern == "rand-class" else true)
        runs.append((true, predicted))
    return runs


def ratios(network: str, ranks: int, size: int, delay_deltas: float, pattern: str,
           algorithms: Sequence[str]) -> tuple[dict[str, float], float]:
    """Mean ratio of every algorithm, and native's mean excess (ms), for one cell."""
    model = preset(network)
    count = size // ELEM_SIZE
    delta = transfer_time(model, None, size)
    found: dict[str, list[float]] = {name: [] for name in algorithms}
    native_excess = []
    step = tau(model, ranks, count, ELEM_SIZE)
    for true, predicted in arrivals(pattern, ranks, delay_deltas * delta, step):
        bound = lower_bound(true, delta)
        native = min(simulate(name, ranks, count, ELEM_SIZE, model, true).average_elapsed
                     for name in NATIVE) - bound
        native_excess.append(native)
        context = Context(arrivals=predicted, tau=step)
        for name in algorithms:
            given = context if name in PREDICTING else None
            elapsed = simulate(name, ranks, count, ELEM_SIZE, model, true, given).average_elapsed
            found[name].append((elapsed - bound) / native)
    return ({name: statistics.mean(values) for name, values in found.items()},
            statistics.mean(native_excess) * 1e3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--networks", default="ethernet-1g,infiniband-fdr")
    parser.add_argument("--ranks", default="4,8,16")
    parser.add_argument("--sizes", default=",".join(SIZES))
    parser.add_argument("--delays", default="3,10,30,100", help="multiples of delta")
    parser.add_argument("--patterns", default=",".join(PATTERNS))
    parser.add_argument("--algorithms", default=",".join(PREDICTING))
    options = parser.parse_args()
    algorithms = options.algorithms.split(",")
    for pattern in options.patterns.split(","):
        print(f"\n{pattern}: excess over e-bar_lo / best native excess (ring, rabenseifner)\n")
        print("| network | P | size | D/delta | " + " | ".join(algorithms)
              + " | native excess ms |")
        print("|---" * (5 + len(algorithms)) + "|")
        for network in options.networks.split(","):
            for ranks in (int(text) for text in options.ranks.split(",")):
                for size in options.sizes.split(","):
                    for delay in (float(text) for text in options.delays.split(",")):
                        cell, native = ratios(network, ranks, SIZES[size], delay, pattern,
                                              algorithms)
                        values = " | ".join(f"{cell[name]:.2f}" for name in algorithms)
                        print(f"| {network} | {ranks} | {size} | {delay:g} | {values} | "
                              f"{native:.3f} |", flush=True)


if __name__ == "__main__":
    main()
