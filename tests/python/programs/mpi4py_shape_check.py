"""Run under mpiexec: papcoll.Communicator in mpi4py's shape (Allreduce, Iallreduce,
Allreduce_init, and a PersistentRequest started again and again like mpi4py's Prequest:
Start, Wait, Test, Startall, Free) against mpi4py's own Comm.Allreduce given the same
buffer specifications.

Integer values (as integers, and as doubles that hold them exactly), so every algorithm's
result must equal mpi4py's exactly. Prints "N passed, M failed" and exits 1 if any failed.
"""

from __future__ import annotations

import numpy as np
import papcoll
from mpi4py import MPI
from tally import Tally

world = MPI.COMM_WORLD
rank, size = world.Get_rank(), world.Get_size()
tally = Tally(world)
check, expect_error = tally.check, tally.expect_error
COUNTS = (0, 1, size + 1, 4099)
TYPES = ((np.float64, MPI.DOUBLE), (np.int32, MPI.INT), (np.int64, MPI.INT64_T))


def values(count: int, dtype: type, start: int = 0) -> np.ndarray:
    return ((np.arange(count) % 13 + 1) * (rank + 1) * (start + 1)).astype(dtype)


def mpi4py_answer(send: object, template: np.ndarray) -> np.ndarray:
    """mpi4py's own Comm.Allreduce of the same buffer specification."""
    out = np.zeros_like(template)
    world.Allreduce(send, out, op=MPI.SUM)
    return out


with papcoll.Communicator(world) as pc:
    for algorithm in ("auto", "ring", "recursive_doubling"):
        pc.algorithm = algorithm
        for dtype, datatype in TYPES:
            for count in COUNTS:
                label = f"{algorithm} {np.dtype(dtype).name} count={count}"
                data = values(count, dtype)
                expected = mpi4py_answer(data, data)
                out = np.zeros_like(data)
                check(label + " Allreduce returns None", pc.Allreduce(data, out) is None)
                check(label + " Allreduce", np.array_equal(out, expected))
                out[:] = 0
                pc.Allreduce([data, datatype], [out, datatype])
                check(label + " [buffer, datatype]", np.array_equal(out, expected))
                part = max(count - 1, 0)
                partial = np.zeros_like(data)
                pc.Allreduce([data, part, datatype], [partial, part, datatype])
                reference = np.zeros_like(data)
                world.Allreduce([data, part, datatype], [reference, part, datatype])
                check(label + " [buffer, count, datatype]", np.array_equal(partial, reference)
                      and not partial[part:].any())
                in_place = data.copy()
                pc.Allreduce(MPI.IN_PLACE, in_place)
                check(label + " MPI.IN_PLACE", np.array_equal(in_place, expected))
                # raw bytes viewed as the datatype, as mpi4py views them
                raw_out = bytearray(data.nbytes)
                pc.Allreduce([data.tobytes(), datatype], [raw_out, datatype])
                check(label + " bytes", np.array_equal(np.frombuffer(raw_out, dtype),
                                                       expected))
                out[:] = 0
                request = pc.Iallreduce(data, out)
                check(label + " Iallreduce Wait", request.Wait() is True and
                      np.array_equal(out, expected))
                out[:] = 0
                request = pc.Iallreduce([data, datatype], [out, datatype])
                while not request.Test():
                    pass
                check(label + " Iallreduce Test", np.array_equal(out, expected))

    # one persistent request, started again and again with new contents each time
    pc.algorithm = "auto"
    send, receive = values(5000, np.int64), np.zeros(5000, np.int64)
    persistent = pc.Allreduce_init(send, receive)
    check("inactive at first: Test", persistent.Test() is True)
    check("inactive at first: Wait", persistent.Wait() is True)
    check("inactive: mpi is MPI.REQUEST_NULL", persistent.mpi == MPI.REQUEST_NULL)
    for start in range(6):
        send[:] = values(5000, np.int64, start)
        receive[:] = 0
        persistent.Start()
        if start % 3 == 0:
            persistent.Wait()
        elif start % 3 == 1:
            while not persistent.Test():
                pass
        else:  # MPI's own completion call, beside the program's own message
            token, got = np.array([rank], np.int64), np.empty(1, np.int64)
            mine = [world.Isend(token, dest=(rank + 1) % size, tag=5),
                    world.Irecv(got, source=(rank - 1) % size, tag=5)]
            if papcoll.mpi_advances_requests():
                MPI.Request.Waitall([persistent.mpi, *mine])
            else:
                MPI.Request.Waitall(mine)
            persistent.Wait()
        check(f"persistent start {start}", np.array_equal(receive,
                                                          mpi4py_answer(send, receive)))
    # a second request, both started by Startall, completed in either order
    other_send, other_receive = values(77, np.float64), np.zeros(77)
    other = pc.Allreduce_init([other_send, MPI.DOUBLE], [other_receive, MPI.DOUBLE],
                              MPI.SUM, MPI.INFO_NULL)
    for start in range(3):
        papcoll.PersistentRequest.Startall([persistent, other])
        for request in ([persistent, other] if rank % 2 == 0 else [other, persistent]):
            request.Wait()
        check(f"Startall {start}",
              np.array_equal(receive, mpi4py_answer(send, receive)) and
              np.array_equal(other_receive, mpi4py_answer(other_send, other_receive)))
    persistent.Start()
    expect_error("Start while active", papcoll.PapcollError, "not completed",
                 persistent.Start)
    persistent.Wait()
    other.Free()
    persistent.Free()
    expect_error("Start after Free", ValueError, "has been freed", persistent.Start)

    # what the upper-case methods refuse, by name
    data = values(8, np.float64)
    expect_error("no recvbuf", TypeError, "recvbuf is None",
                 lambda: pc.Allreduce(data, None))
    expect_error("displacements", ValueError, "not displacements",
                 lambda: pc.Allreduce([data, (4, 0), MPI.DOUBLE], np.zeros(8)))
    expect_error("not a datatype", TypeError, "must be an mpi4py MPI.Datatype",
                 lambda: pc.Allreduce([data, "double"], np.zeros(8)))
    expect_error("bytes that are not whole elements", ValueError, "not a whole number",
                 lambda: pc.Allreduce([bytearray(12), MPI.DOUBLE], np.zeros(1)))
    expect_error("count beyond the buffer", ValueError, "count 9",
                 lambda: pc.Allreduce([data, 9, MPI.DOUBLE], np.zeros(9)))
    expect_error("a derived datatype", TypeError, "predefined",
                 lambda: pc.Allreduce([data, MPI.DOUBLE.Create_contiguous(2)],
                                      np.zeros(8)))
    expect_error("info not an MPI.Info", TypeError, "MPI.Info",
                 lambda: pc.Allreduce_init(data, np.zeros(8), MPI.SUM, {"hint": 1}))
    expect_error("mismatched buffers", ValueError, "does not match",
                 lambda: pc.Allreduce(data, np.zeros(7)))
tally.finish()
