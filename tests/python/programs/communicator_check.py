"""Run under mpiexec: papcoll.Communicator against mpi4py's own Allreduce.

Each case compares papcoll's result with comm.Allreduce on the same input (bitwise for
integers and for max/min, within rounding for floating-point sums, whose order differs
between algorithms) and checks that every rank holds the bitwise identical result. Errors
must be raised as the documented exception with a message naming the problem. Prints
"N passed, M failed" and exits 1 if any failed.
"""

from __future__ import annotations

import array
from pathlib import Path
from typing import Any

import numpy as np
import papcoll
from mpi4py import MPI
from papcoll.network import load_network
from tally import Tally

world = MPI.COMM_WORLD
rank, size = world.Get_rank(), world.Get_size()
tally = Tally(world)
check, expect_error = tally.check, tally.expect_error


def same_on_every_rank(result: np.ndarray) -> bool:
    gathered = world.allgather(result.tobytes())
    return all(item == gathered[0] for item in gathered)


class DLPackOnly:
    """An object that offers only DLPack (as a CPU torch tensor does)."""

    def __init__(self, array: np.ndarray) -> None:
        self._array = array

    def __dlpack__(self, **keywords: Any) -> Any:
        return self._array.__dlpack__(**keywords)

    def __dlpack_device__(self) -> Any:
        return self._array.__dlpack_device__()


class DeviceTensor(DLPackOnly):
    """A DLPack object that says it lives in CUDA memory (device type 2)."""

    def __dlpack_device__(self) -> Any:
        return (2, 0)


ALGORITHMS = ["auto", "ring", "recursive_doubling", "rabenseifner", "binomial", "prr", "slt"]
DTYPES = [np.float64, np.float32, np.int32, np.int64, np.uint8, np.complex128]
OPS = [("sum", MPI.SUM), ("max", MPI.MAX), ("prod", MPI.PROD)]


def predict(algorithm: str) -> None:
    """A compute phase with a prediction before each slt/prr call (only the phase's first
    edge() counts, and a call without one runs the plain ring)."""
    if algorithm in ("prr", "slt"):
        communicator.compute_begin()
        communicator.edge(0.5)


def data(dtype: Any, count: int, salt: int) -> np.ndarray:
    generator = np.random.default_rng([rank, count, salt])
    if np.dtype(dtype).kind == "c":
        return (generator.standard_normal(count) + 1j * generator.standard_normal(count))
    if np.dtype(dtype).kind == "f":
        return generator.standard_normal(count).astype(dtype)
    return generator.integers(0, 3, count).astype(dtype)


def reference(sendbuf: np.ndarray, op: MPI.Op) -> np.ndarray:
    result = np.empty_like(sendbuf)
    world.Allreduce(sendbuf, result, op=op)
    return result


def agrees(result: np.ndarray, expected: np.ndarray, op: MPI.Op) -> bool:
    if result.dtype.kind in "fc" and op in (MPI.SUM, MPI.PROD):
        return bool(np.allclose(result, expected, rtol=1e-5, atol=1e-5))
    return bool(np.array_equal(result, expected))


with papcoll.Communicator(world) as communicator:
    # ---- results: algorithms x dtypes x ops x counts, MPI_IN_PLACE, recvbuf None ---------
    for algorithm in ALGORITHMS:
        communicator.algorithm = algorithm
        check("algorithm property", communicator.algorithm == algorithm)
        for dtype in DTYPES:
            for op_name, op in OPS:
                if np.dtype(dtype).kind == "c" and op is MPI.MAX:
                    continue  # MPI defines no MAX on complex numbers
                for count in (0, 1, size + 1, 1009):
                    label = f"{algorithm} {np.dtype(dtype)} {op_name} n={count}"
                    sendbuf = data(dtype, count, 1)
                    expected = reference(sendbuf, op)
                    predict(algorithm)
                    result = communicator.allreduce(sendbuf, op=op)
                    check(label + " (new array)", agrees(result, expected, op))
                    check(label + " identical on all ranks", same_on_every_rank(result))
                    inplace = sendbuf.copy()
                    predict(algorithm)
                    returned = communicator.allreduce(MPI.IN_PLACE, inplace, op=op)
                    check(label + " in place", returned is inplace
                          and agrees(inplace, expected, op) and same_on_every_rank(inplace))
        if algorithm in ("prr", "slt"):
            check(f"{algorithm} ran on predictions",
                  communicator.last_prediction().predicted)
        before, after = communicator.last_own_seconds()
        # the monitor works (receives predictions) for auto and the algorithms that need
        # arrivals only; alone, a rank has nothing to receive
        monitored = algorithm in ("auto", "prr", "slt")
        check(f"{algorithm}: own work {before} s before, {after} s after",
              before >= 0 and after >= 0 and (before == after == 0 or monitored)
              and (before > 0 or not monitored or size == 1))

    # ---- buffer kinds: buffer protocol, DLPack, 2-D arrays, given recvbuf ----------------
    communicator.algorithm = "ring"
    sendbuf = data(np.float64, 37, 2)
    expected = reference(sendbuf, MPI.SUM)
    recv = array.array("d", bytes(8 * 37))
    returned = communicator.allreduce(array.array("d", sendbuf.tobytes()), recv)
    check("array.array in and out", returned is recv
          and np.allclose(np.frombuffer(recv), expected))
    out = np.empty(37)
    communicator.allreduce(DLPackOnly(sendbuf), DLPackOnly(out))
    check("DLPack in and out", np.allclose(out, expected))
    matrix = sendbuf[:36].reshape(6, 6)
    check("2-D array", np.allclose(communicator.allreduce(matrix).ravel(),
                                   reference(np.ascontiguousarray(matrix), MPI.SUM).ravel()))
    buffer = bytearray(np.arange(8, dtype=np.uint8).tobytes())
    communicator.allreduce(MPI.IN_PLACE, buffer, op=MPI.MAX)
    check("bytearray in place", bytes(buffer) == bytes(range(8)))
    check("resolve names an algorithm", communicator.resolve(1000) == "ring")
    communicator.algorithm = "auto"
    # auto runs the MPI library's own MPI_Allreduce ("native") unless the arrivals the
    # earlier calls saw let the model predict a gain for one of papcoll's
    names = {info.name for info in papcoll.algorithms()} | {"native"}
    check("resolve follows auto", communicator.resolve(1000, np.float32, MPI.SUM) in names)
    communicator.allreduce(sendbuf)
    choice = communicator.last_choice()
    check("last_choice says what auto ran", choice.algorithm in names and (
        (choice.algorithm == "native" and choice.predicted_gain == 1.0)
        or (choice.from_arrivals and choice.predicted_gain > 1.0)))

    # ---- a user-defined op, and a non-commutative one refused by reordering algorithms ---
    def first_minus(invec: Any, inoutvec: Any, datatype: MPI.Datatype) -> None:
        a = np.frombuffer(invec, dtype=np.float64)
        b = np.frombuffer(inoutvec, dtype=np.float64)
        b[:] = a - b

    subtract = MPI.Op.Create(first_minus, commute=False)
    communicator.algorithm = "recursive_doubling"
    values = np.full(3, float(rank + 1))
    check("non-commutative op in rank order",
          np.array_equal(communicator.allreduce(values, op=subtract),
                         reference(values, subtract)))
    communicator.algorithm = "ring"
    expect_error("non-commutative op refused by ring", papcoll.PapcollError, "commutative",
                 lambda: communicator.allreduce(values, op=subtract))
    subtract.Free()

    # ---- bad input: clear errors, never a hang ------------------------------------------
    x = np.ones(10)
    expect_error("unknown algorithm", papcoll.PapcollError, "unknown algorithm 'nope'",
                 lambda: setattr(communicator, "algorithm", "nope"))
    expect_error("in place without recvbuf", ValueError, "MPI.IN_PLACE",
                 lambda: communicator.allreduce(MPI.IN_PLACE))
    expect_error("recvbuf size", ValueError, "does not match",
                 lambda: communicator.allreduce(x, np.empty(9)))
    expect_error("recvbuf dtype", ValueError, "does not match",
                 lambda: communicator.allreduce(x, np.empty(10, dtype=np.float32)))
    expect_error("overlap", ValueError, "overlap",
                 lambda: communicator.allreduce(x, x))
    expect_error("non-contiguous", ValueError, "not contiguous",
                 lambda: communicator.allreduce(np.ones(20)[::2]))
    readonly = np.ones(10)
    readonly.flags.writeable = False
    expect_error("read-only recvbuf", ValueError, "read-only",
                 lambda: communicator.allreduce(x, readonly))
    expect_error("object dtype", TypeError, "dtype object",
                 lambda: communicator.allreduce(np.array([1, "a"], dtype=object)))
    expect_error("a tensor in device memory", TypeError, "move the tensor to the CPU",
                 lambda: communicator.allreduce(DeviceTensor(x)))
    expect_error("big-endian dtype", TypeError, "native byte order",
                 lambda: communicator.allreduce(np.ones(3, dtype=">f8")))
    expect_error("not a buffer", TypeError, "not list",
                 lambda: communicator.allreduce([1.0, 2.0]))
    expect_error("op not an MPI.Op", TypeError, "op must be",
                 lambda: communicator.allreduce(x, op="sum"))
    communicator.algorithm = "binomial"  # leaves never reduce: all must see the error
    expect_error("sum of booleans", papcoll.PapcollError,
                 "MPI_SUM is not defined on datatype MPI_C_BOOL",
                 lambda: communicator.allreduce(np.ones(4, dtype=bool)))
    check("or of booleans", bool(communicator.allreduce(np.array([rank == 0]),
                                                        op=MPI.LOR)[0]))
    communicator.algorithm = "ring"
    expect_error("edge fraction", papcoll.PapcollError, "not in (0, 1]",
                 lambda: communicator.edge(1.5))
    expect_error("bad config", ValueError, "arrival_source",
                 lambda: papcoll.Communicator(world, config=papcoll.Config(
                     arrival_source="guess")))  # type: ignore[arg-type]
    expect_error("huge max_message_elements", ValueError, "Config.max_message_elements",
                 lambda: papcoll.Config(max_message_elements=2**70))
    expect_error("schedule not text", TypeError, "Parameters.schedule must be text",
                 lambda: papcoll.Parameters(schedule=5))  # type: ignore[arg-type]
    expect_error("resolve a negative count", ValueError, "count must be from 0",
                 lambda: communicator.resolve(-5))
    expect_error("bad schedule", papcoll.PapcollError, "schedule",
                 lambda: communicator.set_schedule("a0"))
    expect_error("not a communicator", TypeError, "intra-communicator",
                 lambda: papcoll.Communicator("world"))  # type: ignore[arg-type]

# ---- after the with block the C communicator is freed --------------------------------
expect_error("use after free", ValueError, "freed", lambda: communicator.allreduce(x))
communicator.free()  # a second free does nothing (an exception would end the program)

# ---- ring_topology on a tree from a network file (Config.tree) -------------------------
layout = load_network(str(Path(__file__).resolve().parents[3] / "docs" / "networks"
                          / "two-switch-32.json"))
with papcoll.Communicator(world, algorithm="ring_topology",
                          config=papcoll.Config(parameters=papcoll.Parameters(
                              tree=layout.topology(size)))) as on_tree:
    sendbuf = data(np.float64, 1000, 4)
    result = on_tree.allreduce(sendbuf)
    check("ring_topology on a tree", agrees(result, reference(sendbuf, MPI.SUM), MPI.SUM)
          and same_on_every_rank(result))

# ---- a ring in a given rank order (Config.parameters.rank_order) ------------------------
backwards = papcoll.Parameters(rank_order=list(reversed(range(size))))
with papcoll.Communicator(world, algorithm="ring",
                          config=papcoll.Config(parameters=backwards)) as reordered:
    sendbuf = data(np.float64, 1000, 5)
    result = reordered.allreduce(sendbuf)
    check("ring in reverse rank order", agrees(result, reference(sendbuf, MPI.SUM), MPI.SUM)
          and same_on_every_rank(result))
expect_error("rank order not a permutation", papcoll.PapcollError, "not a permutation",
             lambda: papcoll.Communicator(world, config=papcoll.Config(
                 parameters=papcoll.Parameters(rank_order=[size] * size))))

# ---- a hierarchy from Config (grouping by color) --------------------------------------
config = papcoll.Config(grouping="color", group_color=rank % 2)
with papcoll.Communicator(world, algorithm="hr2", config=config) as hierarchical:
    sendbuf = data(np.int64, 100, 3)
    check("hr2 by color", np.array_equal(hierarchical.allreduce(sendbuf),
                                         reference(sendbuf, MPI.SUM)))

# ---- ranks that disagree, with the agreement check on (Config.check_agreement) ----------
with papcoll.Communicator(world, algorithm="ring",
                          config=papcoll.Config(check_agreement=True)) as checked:
    if size > 1:  # one rank cannot disagree with itself
        expect_error("counts that differ, checked", papcoll.PapcollError,
                     "disagree on the count: rank 0 has 1000, rank 1 has 1001",
                     lambda: checked.allreduce(np.ones(1000 + (rank > 0))))
    sendbuf = data(np.float64, 100, 6)
    check("a good call after the mismatch", agrees(checked.allreduce(sendbuf),
                                                   reference(sendbuf, MPI.SUM), MPI.SUM))

tally.finish()
