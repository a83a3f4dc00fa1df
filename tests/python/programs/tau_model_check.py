"""Run under mpiexec: the arrival monitor's tau from PAPCOLL_TAU_MODEL.

Each case sets the variable in this process's environment (the library reads it at the
first slt/prr call of a communicator), makes an slt or prr call and checks what
papcoll_last_prediction reports: with a valid model, tau = latency + ceil(count / P) x
element size x (seconds_per_byte + reduce_seconds_per_byte) of rank 0's numbers on every
rank, whatever the other ranks' environment says, and equal to papcoll.lab.calibrate's
MonitorModel.tau bit for bit; with malformed text (here or on one rank only), every rank's
call fails with MPI_ERR_ARG and a message naming the problem, and the communicator works
once the text is fixed. Prints "N passed, M failed" and exits 1 if any failed.
"""

from __future__ import annotations

import os

import numpy as np
import papcoll
from mpi4py import MPI
from papcoll.lab.calibrate import MONITOR_ENVIRONMENT, MonitorModel
from tally import Tally

world = MPI.COMM_WORLD
rank, size = world.Get_rank(), world.Get_size()
tally = Tally(world)
check, expect_error = tally.check, tally.expect_error

RANK_0_MODEL = MonitorModel(8.4e-06, 8.37e-09, 6.4e-11)
# what the other ranks' environment says: ignored, rank 0's numbers are broadcast
OTHER_MODEL = MonitorModel(1e-3, 1e-6, 1e-6)


def set_model(text: str | None) -> None:
    if text is None:
        os.environ.pop(MONITOR_ENVIRONMENT, None)
    else:
        os.environ[MONITOR_ENVIRONMENT] = text


def call(communicator: papcoll.Communicator, count: int, dtype: type) -> None:
    """One predicted slt/prr call, its result checked against mpi4py's."""
    sendbuf = np.arange(count, dtype=dtype) + rank
    communicator.predict_arrival(0.0)
    result = communicator.allreduce(sendbuf)
    expected = np.empty_like(sendbuf)
    world.Allreduce(sendbuf, expected)
    check(f"{communicator.algorithm} count {count} result", np.allclose(result, expected))


def check_tau(label: str, communicator: papcoll.Communicator, count: int,
              dtype: type, model: MonitorModel) -> None:
    tau = communicator.last_prediction().tau
    segment = -(-count // size) * np.dtype(dtype).itemsize
    formula = model.latency + segment * (model.seconds_per_byte + model.reduce_seconds_per_byte)
    check(f"{label}: tau {tau!r} vs the formula {formula!r}",
          abs(tau - formula) <= 1e-12 * formula)
    check(f"{label}: tau {tau!r} is MonitorModel.tau", tau == model.tau(size, count,
                                                                      np.dtype(dtype).itemsize))
    taus = world.allgather(tau)
    check(f"{label}: tau the same on every rank", all(t == taus[0] for t in taus), str(taus))


# ---- a valid model: rank 0's numbers on every rank ------------------------------------------
for algorithm in ("slt", "prr"):
    for count, dtype in ((1000, np.float32), (1001, np.float64), (3, np.int32)):
        set_model(RANK_0_MODEL.text() if rank == 0 else OTHER_MODEL.text())
        with papcoll.Communicator(world, algorithm) as communicator:
            call(communicator, count, dtype)
            check_tau(f"{algorithm} count {count}", communicator, count, dtype, RANK_0_MODEL)
            # the model is read once per communicator, at its first slt/prr call
            set_model("bogus")
            call(communicator, count * 2, dtype)
            check_tau(f"{algorithm} count {count * 2}, second call", communicator, count * 2,
                      dtype, RANK_0_MODEL)

# the names in any order; zero is a value
set_model("reduce_seconds_per_byte=0,latency=2.5e-05,seconds_per_byte=1e-9")
with papcoll.Communicator(world, "prr") as communicator:
    call(communicator, 4096, np.float32)
    check_tau("names in any order", communicator, 4096, np.float32,
              MonitorModel(2.5e-05, 1e-9, 0.0))

# ---- malformed text: every rank fails with the problem named --------------------------------
MALFORMED = [
    ("latency=1e-6,seconds_per_byte=1e-9,reduce_seconds_per_byte=1e-10,gap=0",
     "unknown name 'gap'"),
    ("latency=,seconds_per_byte=1e-9,reduce_seconds_per_byte=1e-10", "latency has no value"),
    ("latency=1e-6,seconds_per_byte,reduce_seconds_per_byte=1e-10",
     "seconds_per_byte has no value"),
    ("latency=1e-6,seconds_per_byte=-1e-9,reduce_seconds_per_byte=1e-10",
     "seconds_per_byte=-1e-9 is negative"),
    ("latency=nan,seconds_per_byte=1e-9,reduce_seconds_per_byte=1e-10",
     "latency=nan is not a finite number"),
    ("latency=1e-6,seconds_per_byte=1e-9", "reduce_seconds_per_byte is missing"),
    ("latency=1us,seconds_per_byte=1e-9,reduce_seconds_per_byte=1e-10",
     "latency=1us is not a number"),
    ("latency=1e-6,latency=1e-6,seconds_per_byte=1e-9,reduce_seconds_per_byte=1e-10",
     "latency is given twice"),
]
for text, words in MALFORMED:
    set_model(text)
    with papcoll.Communicator(world, "slt") as communicator:
        sendbuf = np.ones(100, dtype=np.float32)
        expect_error(f"{text!r}", papcoll.PapcollError, words,
                     lambda c=communicator, b=sendbuf: c.allreduce(b))
        expect_error(f"{text!r} names the variable", papcoll.PapcollError,
                     "PAPCOLL_TAU_MODEL", lambda c=communicator, b=sendbuf: c.allreduce(b))
        try:
            communicator.allreduce(sendbuf)
        except papcoll.PapcollError as error:
            check(f"{text!r}: MPI_ERR_ARG", error.status == MPI.ERR_ARG, str(error.status))
        # fixed, the same communicator calibrates at its next call
        set_model(RANK_0_MODEL.text())
        call(communicator, 100, np.float32)
        check_tau(f"fixed after {text!r}", communicator, 100, np.float32, RANK_0_MODEL)

# malformed on the last rank only: it names the problem, the others name the rank
if size > 1:
    set_model("latency=-1,seconds_per_byte=1e-9,reduce_seconds_per_byte=1e-10"
              if rank == size - 1 else RANK_0_MODEL.text())
    with papcoll.Communicator(world, "prr") as communicator:
        words = ("latency=-1 is negative" if rank == size - 1
                 else f"malformed on rank {size - 1}")
        expect_error("malformed on one rank", papcoll.PapcollError, words,
                     lambda c=communicator: c.allreduce(np.ones(64, dtype=np.float32)))

# an empty value is unset: the monitor measures, as without the variable
set_model("")
with papcoll.Communicator(world, "slt") as communicator:
    call(communicator, 256, np.float32)
    tau = communicator.last_prediction().tau
    taus = world.allgather(tau)
    check("empty: measured tau, the same on every rank",
          tau > 0 and all(t == taus[0] for t in taus), str(taus))

tally.finish()
