"""Run under mpiexec: papcoll.Communicator.iallreduce and allreduce_init
against mpi4py's own Allreduce, and mixed with mpi4py's requests.

Integer sums, so every algorithm's result must equal comm.Allreduce's exactly and be the
same on every rank. Each non-blocking call is completed three ways: Request.wait(),
Request.test() in a loop, and MPI.Request.Waitall over its `.mpi` and the program's own
point-to-point requests (where MPI advances papcoll: MPICH, or the progress thread). Prints
"N passed, M failed" and exits 1 if any failed.
"""

from __future__ import annotations

import gc

import numpy as np
import papcoll
from mpi4py import MPI
from tally import Tally

world = MPI.COMM_WORLD
rank, size = world.Get_rank(), world.Get_size()
tally = Tally(world)
check, expect_error = tally.check, tally.expect_error
# MPI's progress hook (both MPIs from PyPI have one), or the progress thread
MPI_ADVANCES_PAPCOLL = papcoll.mpi_advances_requests()
check("MPI's calls advance papcoll (both MPIs from PyPI have a hook)", MPI_ADVANCES_PAPCOLL)


def reference(data: np.ndarray) -> np.ndarray:
    out = np.empty_like(data)
    world.Allreduce(data, out, op=MPI.SUM)
    return out


def complete(request: papcoll.Request, how: str) -> np.ndarray:
    if how == "test":
        while not request.test():
            pass
        return request.wait()
    if how == "waitall" and MPI_ADVANCES_PAPCOLL:
        token = np.array([rank], dtype=np.int64)
        got = np.empty(1, dtype=np.int64)
        mine = [world.Isend(token, dest=(rank + 1) % size, tag=9),
                world.Irecv(got, source=(rank - 1) % size, tag=9)]
        MPI.Request.Waitall([request.mpi, *mine])
        check("the program's own message beside it", int(got[0]) == (rank - 1) % size)
    return request.wait()


with papcoll.Communicator(world) as pc:
    for algorithm in ("auto", "ring", "rabenseifner", "straggler", "recursive_doubling"):
        pc.algorithm = algorithm
        for count in (0, 1, size + 1, 4099):
            data = (np.arange(count, dtype=np.int64) + 1) * (rank + 1)
            expected = reference(data)
            for how in ("wait", "test", "waitall"):
                label = f"{algorithm} count={count} {how}"
                result = complete(pc.iallreduce(data), how)
                check(label, np.array_equal(result, expected))
                in_place = data.copy()
                complete(pc.iallreduce(MPI.IN_PLACE, in_place), how)
                check(label + " in place", np.array_equal(in_place, expected))
            persistent = pc.allreduce_init(data)
            for start in range(3):
                result = persistent.start().wait()
                check(f"{algorithm} count={count} persistent start {start}",
                      np.array_equal(result, expected))
            persistent.free()
    # two outstanding at once, completed in opposite orders on even and odd ranks
    pc.algorithm = "auto"
    first, second = np.ones(1000, np.int64) * rank, np.ones(77, np.int64) * 2 * rank
    requests = [pc.iallreduce(first), pc.iallreduce(second)]
    order = requests if rank % 2 == 0 else requests[::-1]
    results = [request.wait() for request in order]
    if rank % 2:
        results = results[::-1]
    total = size * (size - 1) // 2
    check("two outstanding", np.all(results[0] == total) and np.all(results[1] == 2 * total))
    persistent = pc.allreduce_init(first)
    active = persistent.start()
    expect_error("start while active", papcoll.PapcollError, "not completed",
                 persistent.start)
    expect_error("free while active", papcoll.PapcollError, "not completed", persistent.free)
    active.wait()
    persistent.free()
    expect_error("iallreduce of mismatched buffers", ValueError, "does not match",
                 lambda: pc.iallreduce(first, second))
    # a Request dropped without wait(): its buffers stay alive until papcoll completes it
    # at a later post, start, wait or test (nonblocking.py: _orphans)
    from papcoll import nonblocking as nonblocking_module

    dropped_input = np.arange(4099, dtype=np.int64) * (rank + 1)
    pc.iallreduce(dropped_input)
    del dropped_input
    gc.collect()
    check("a dropped request's buffers are kept", len(nonblocking_module._orphans) == 1)
    pc.iallreduce(np.ones(1, np.int64)).wait()  # a later post and wait sweep the orphans
    deadline = MPI.Wtime() + 30
    while (still := nonblocking_module._complete_orphans()) and MPI.Wtime() < deadline:
        pass  # papcoll_test advances every operation: local, no rank waits for another
    check("  ...and let go once it completed", still == 0)
tally.finish()
