"""Run under mpiexec: a rules file through the Python API (papcoll.Config.rules_file).

    python rules_check.py FILE

Creates a Communicator with the rules file, then runs the shapes of tests/mpi/rules.c as a
blocking call, a non-blocking one and two persistent starts, and prints on rank 0, per call,
"choice KIND SHAPE ALGORITHM RULE EQUAL" (RULE "-" where the model decided; EQUAL 1 where
every rank's result equals mpi4py's Allreduce bit for bit), as the C program does; where the
Communicator is refused, "create-error MESSAGE". tests/python/test_rules.py reads the lines.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import papcoll
from mpi4py import MPI

world = MPI.COMM_WORLD
rank = world.Get_rank()
SHAPES = (("int_sum_100", 100, np.int32, MPI.SUM), ("double_sum_1000", 1000, np.float64, MPI.SUM),
          ("double_sum_20000", 20000, np.float64, MPI.SUM),
          ("float_max_1000", 1000, np.float32, MPI.MAX))

try:
    communicator = papcoll.Communicator(world, config=papcoll.Config(rules_file=Path(sys.argv[1])))
except papcoll.PapcollError as error:
    if rank == 0:
        print(f"create-error {error}", flush=True)
    sys.exit(0)

with communicator as pc:
    for name, count, dtype, op in SHAPES:
        # whole numbers: every order of combining them gives the same bits
        data = ((np.arange(count) + rank * 7) % 13).astype(dtype)
        expected = np.empty_like(data)
        world.Allreduce(data, expected, op=op)
        runs: list[tuple[str, np.ndarray, papcoll.Choice]] = []
        result = pc.allreduce(data, op=op)
        runs.append(("blocking", result, pc.last_choice()))
        result = pc.iallreduce(data, op=op).wait()
        runs.append(("nonblocking", result, pc.last_choice()))
        persistent = pc.allreduce_init(data, op=op)
        for _ in range(2):
            result = persistent.start().wait()
        runs.append(("persistent", result, persistent.last_choice()))
        persistent.free()
        for kind, got, choice in runs:
            equal = world.allreduce(int(np.array_equal(got, expected)), op=MPI.MIN)
            if rank == 0:
                print(f"choice {kind} {name} {choice.algorithm} {choice.rule or '-'} {equal}",
                      flush=True)
