"""papcoll.Communicator in an mpi4py program (docs/python.md):

    .venv/bin/mpiexec -n 4 .venv/bin/python examples/python_allreduce.py
"""

import numpy as np
import papcoll
from mpi4py import MPI

with papcoll.Communicator(MPI.COMM_WORLD, algorithm="prr") as communicator:
    rank = communicator.rank
    local = np.full(1000, float(rank + 1))
    for _step in range(5):
        communicator.compute_begin()          # a compute phase begins
        # ... the first half of this step's work ...
        communicator.edge(0.5)                # half done: predicts this rank's arrival
        # ... the rest ...
        total = communicator.allreduce(local)  # a new array: the sum over ranks
    expected = communicator.size * (communicator.size + 1) / 2
    line = (f"{rank} {communicator.algorithm} {total[0] == expected} "
            f"{communicator.last_prediction().predicted}")
    # rank 0 prints every rank's line, in rank order: lines printed by each rank reach
    # mpiexec's output in whatever order the ranks get there, and may be cut up
    lines = MPI.COMM_WORLD.gather(line, root=0)
    if rank == 0:
        print("\n".join(lines), flush=True)
