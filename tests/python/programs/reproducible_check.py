"""Run under mpiexec: papcoll.Communicator(reproducible=True): reproducible mode.

float64 and float32 sums of data with wildly different magnitudes and signed zeros, every
rank arriving after a random delay: the result must be bit for bit the canonical order's
value, ((x0 + x1) + x2) ..., which numpy computes here from every rank's input, for auto
and each algorithm that keeps the order, blocking and non-blocking. Refusals: ring on
floating-point data; a Config.reproducible that is not a bool. Prints "N passed, M failed".
"""

from __future__ import annotations

import time

import numpy as np
import papcoll
from mpi4py import MPI
from tally import Tally

world = MPI.COMM_WORLD
rank, size = world.Get_rank(), world.Get_size()
tally = Tally(world)
check, expect_error = tally.check, tally.expect_error


def wild(generator: np.random.Generator, count: int, dtype: type) -> np.ndarray:
    magnitudes = 10.0 ** generator.integers(-300, 300, count)
    values = generator.choice([-1.0, 1.0], count) * magnitudes * generator.random(count)
    values[generator.random(count) < 0.1] = -0.0
    values[generator.random(count) < 0.1] = 0.0
    with np.errstate(over="ignore"):
        return values.astype(dtype)


def canonical(inputs: list[np.ndarray]) -> np.ndarray:
    total = inputs[0].copy()
    with np.errstate(over="ignore", invalid="ignore"):
        for contribution in inputs[1:]:
            total = total + contribution
    return total


with papcoll.Communicator(world, reproducible=True) as pc:
    generator = np.random.default_rng(100 + rank)
    for algorithm in ("auto", "canonical_scatter", "canonical_gather", "canonical_straggler",
                      "linear_tree"):
        pc.algorithm = algorithm
        for dtype in (np.float64, np.float32):
            for count in (1, 5, 1009, 70000):
                data = wild(generator, count, dtype)
                expected = canonical(world.allgather(data))
                for how in ("blocking", "nonblocking"):
                    world.Barrier()
                    time.sleep(generator.random() * 0.002)  # a random arrival order
                    with np.errstate(over="ignore", invalid="ignore"):
                        result = (pc.allreduce(data) if how == "blocking"
                                  else pc.iallreduce(data).wait())
                    check(f"{algorithm} {np.dtype(dtype).name} count={count} {how}",
                          result.tobytes() == expected.tobytes())
    pc.algorithm = "ring"
    expect_error("ring on float64 in reproducible mode", papcoll.PapcollError,
                 "does not keep the canonical order", lambda: pc.allreduce(np.ones(4)))
    check("ring on int64 (exact: pays nothing)",
          np.array_equal(pc.allreduce(np.ones(4, np.int64)), np.full(4, size)))
expect_error("Config(reproducible='yes')", TypeError, "True or False",
             lambda: papcoll.Config(reproducible="yes"))  # type: ignore[arg-type]
tally.finish()
