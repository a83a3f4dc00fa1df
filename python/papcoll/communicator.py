"""papcoll for mpi4py programs: `Communicator` runs papcoll's all-reduce on an mpi4py
communicator, on numpy arrays, buffer-protocol objects and CPU DLPack tensors (torch).

    from mpi4py import MPI
    import numpy as np
    import papcoll

    with papcoll.Communicator(MPI.COMM_WORLD, algorithm="prr") as communicator:
        for step in range(steps):
            communicator.compute_begin()
            ...half of the step's work...
            communicator.edge(0.5)   # predicts this rank's arrival (Proficz 2018, Sect. 3)
            ...the rest...
            total = communicator.allreduce(np.asarray(local), op=MPI.SUM)

It calls the C library (libpapcoll) through cffi, handing it mpi4py's MPI handles by
address (papcoll_*_from_handle), so papcoll and mpi4py must run on one MPI library: this
module checks that at import and refuses a mismatch with a message that names both.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np
from mpi4py import MPI

from ._core import ffi
from .buffers import allreduce_buffers as _buffers
from .buffers import checked_op as _checked_op
from .buffers import mpi_datatype as _mpi_datatype
from .buffers import specified_buffer
from .checks import INT32_MAX, INT64_MAX, whole_number
from .errors import c_string
from .mpi_binding import check as _check
from .mpi_binding import handle_address as _address
from .mpi_binding import library as _lib
from .parameters import Parameters, c_parameters
from .tuning import parse_tuning

_ARRIVAL_SOURCES = {"edge": 0, "history": 1, "automatic": 2}
_GROUPINGS = {"shared_memory": 0, "color": 1}
_PROGRESS = {"calls": 0, "thread": 1}


@dataclass(frozen=True)
class Config:
    """Options of a Communicator (C: papcoll_config); the defaults suit most programs.

    The algorithms' parameters are a papcoll.parameters.Parameters (the one home they share
    with the simulator and the verifier); the rest is what needs MPI. Every field must be the
    same on every rank, except `group_color`.
    """

    parameters: Parameters = Parameters()  # segments, rank order, schedule, inner/outer, tree
    max_message_elements: int = 0    # longer messages are split; 0 = 2^30
    # auto and slt, prr, straggler: predictions from earlier calls' waits, and from edge()
    # where every rank calls it ("automatic"); from edge() only ("edge", a message round per
    # call), or from earlier calls' arrival times only ("history")
    arrival_source: Literal["automatic", "edge", "history"] = "automatic"
    # hr1, hr2, smp_*: one group per shared-memory node, or by group_color
    grouping: Literal["shared_memory", "color"] = "shared_memory"
    group_color: int = 0             # grouping="color": this rank's group, >= 0
    # every call first checks that all ranks make the same call (one small MPI_Allreduce);
    # a mismatch is then an error on every rank, not a hang. PAPCOLL_CHECK=1 does the same.
    check_agreement: bool = False
    # non-blocking and persistent calls: advanced inside MPI and papcoll calls ("calls"), or
    # also by a progress thread ("thread": MPI must be initialised with
    # MPI_THREAD_MULTIPLE); PAPCOLL_PROGRESS overrides it (docs/nonblocking.md)
    progress: Literal["calls", "thread"] = "calls"
    # reproducible mode (docs/reproducible.md): every result is the canonical order's value,
    # the rank-order left fold ((x0 op x1) op x2) ..., whatever the algorithm or arrivals;
    # PAPCOLL_REPRODUCIBLE=1 does the same. The same on every rank.
    reproducible: bool = False
    # a rules file (docs/rules.md): the algorithm per call shape, consulted by auto before its
    # model; "" for PAPCOLL_RULES, where set. Its contents must be the same on every rank.
    rules_file: str | os.PathLike[str] = ""
    # auto's tuning constants in PAPCOLL_TUNING's form ("margin=0.1,probe_every=32"; the
    # names and ranges: papcoll.tuning, `papcoll settings`), over their defaults;
    # PAPCOLL_TUNING overrides them field by field. The same on every rank.
    tuning: str = ""

    def __post_init__(self) -> None:
        # a string such as 'no' would be true in C: the switches take only True or False
        for switch in ("check_agreement", "reproducible"):
            if not isinstance(getattr(self, switch), bool):
                raise TypeError(f"Config.{switch} must be True or False, not "
                                f"{getattr(self, switch)!r}")
        if not isinstance(self.parameters, Parameters):
            raise TypeError("Config.parameters must be a Parameters, not "
                            f"{type(self.parameters).__name__}")
        if not isinstance(self.rules_file, (str, os.PathLike)):
            raise TypeError("Config.rules_file must be a path (str or os.PathLike), not "
                            f"{type(self.rules_file).__name__}")
        if not isinstance(self.tuning, str):
            raise TypeError(f"Config.tuning must be text, not {type(self.tuning).__name__}")
        parse_tuning(self.tuning)  # a bad name or value is refused here, naming it
        whole_number(self.max_message_elements, "Config.max_message_elements", 0, INT64_MAX)
        whole_number(self.group_color, "Config.group_color", 0, INT32_MAX)
        for name, table in (("arrival_source", _ARRIVAL_SOURCES), ("grouping", _GROUPINGS),
                            ("progress", _PROGRESS)):
            if getattr(self, name) not in table:
                raise ValueError(f"Config.{name} must be one of {sorted(table)}, not "
                                 f"{getattr(self, name)!r}")


def _c_config(algorithm: str, config: Config) -> tuple[Any, list[Any]]:
    """A papcoll_config and the cffi objects that must live as long as the create call."""
    raw = ffi.new("papcoll_config *")
    _lib.papcoll_config_init(raw)
    keep: list[Any] = [raw]

    def text(value: str, what: str = "algorithm name") -> Any:
        pointer = ffi.new("char[]", c_string(value, what))
        keep.append(pointer)
        return pointer

    raw.arrival_source = _ARRIVAL_SOURCES[config.arrival_source]
    raw.grouping = _GROUPINGS[config.grouping]
    raw.algorithm = text(algorithm)
    c_parameters(config.parameters, raw.parameters, keep)
    raw.max_message_elements = config.max_message_elements
    raw.group_color = config.group_color
    raw.check_agreement = int(config.check_agreement)
    raw.progress = _PROGRESS[config.progress]
    raw.reproducible = int(config.reproducible)
    if os.fspath(config.rules_file):
        raw.rules_file = text(os.fspath(config.rules_file), "Config.rules_file")
    for name, value in parse_tuning(config.tuning).items():
        setattr(raw.tuning, name, value)
    return raw, keep


@dataclass(frozen=True)
class Prediction:
    """What the last call of auto or a PAP-aware algorithm (slt, prr, straggler) ran on
    (C: papcoll_last_prediction)."""

    predicted: bool          # False: no usable prediction: the plain ring (auto: native) ran
    arrivals: list[float]    # seconds after the earliest predicted arrival, per rank
    tau: float               # seconds to move and reduce one segment, as used


@dataclass(frozen=True)
class Choice:
    """What the last "auto" call ran, and why (C: papcoll_last_choice)."""

    algorithm: str             # a registered name, "native" (MPI_Allreduce itself) or
    #                            "native:NAME" (one of the MPI library's own algorithms)
    from_arrivals: bool        # the cost model compared algorithms on predicted arrivals
    from_groups: bool          # the groups formed a hierarchy: hierarchical ones weighed too
    predicted_seconds: float   # the model's e-bar for its choice (model_algorithm)
    native_seconds: float      # the model's e-bar for MPI_Allreduce
    # auto's closed loop (docs/mpi.md): the model's time after the last arrival is
    # its e-bar less wait_seconds; the measured one is from the last arrival to completion
    wait_seconds: float = 0.0          # the model's mean wait for the last arrival
    model_algorithm: str = ""          # the model's choice (algorithm may be the alternative)
    alternative: str = ""              # what the loop measures it against ("": nothing)
    alternative_seconds: float = 0.0   # the model's e-bar for the alternative
    observed_seconds: float = 0.0      # measured median, last arrival to completion: model's
    alternative_observed_seconds: float = 0.0  # ... and the alternative's
    observed_calls: int = 0            # calls each median counts (<= 5; 0: an old variant's)
    alternative_observed_calls: int = 0
    probe: bool = False                # this call ran the alternative to measure it
    overruled: bool = False            # measurements overruled the model
    path_seconds: float = 0.0          # this rank's time in auto's own path this call
    decided_by: int = -1               # the rank that simulated this decision and sent it
                                       # to the others (-1: kept from an earlier call)
    decision_seconds: float = 0.0      # this rank's time on the decision: simulating,
                                       # waiting for the decider, or a lookup
    rule: str = ""                     # "FILE:LINE" of the rules file's rule that decided
                                       # ("": the model did; docs/rules.md)

    @property
    def predicted_gain(self) -> float:
        """native_seconds / predicted_seconds (1.0 when nothing was simulated)."""
        if self.predicted_seconds <= 0:
            return 1.0
        return self.native_seconds / self.predicted_seconds

    @classmethod
    def from_c(cls, raw: Any) -> Choice:
        """From a papcoll_choice (cffi)."""
        return cls(ffi.string(raw.algorithm).decode(), bool(raw.from_arrivals),
                   bool(raw.from_groups), float(raw.predicted_seconds),
                   float(raw.native_seconds), float(raw.wait_seconds),
                   ffi.string(raw.model_algorithm).decode(),
                   ffi.string(raw.alternative).decode(), float(raw.alternative_seconds),
                   float(raw.observed_seconds), float(raw.alternative_observed_seconds),
                   int(raw.observed_calls), int(raw.alternative_observed_calls),
                   bool(raw.probe), bool(raw.overruled), float(raw.path_seconds),
                   int(raw.decided_by), float(raw.decision_seconds),
                   ffi.string(raw.rule).decode())


class Communicator:
    """papcoll's all-reduce over an mpi4py intra-communicator (a private duplicate of it).

    Creating and freeing are collective over `comm`. Use it as a context manager, or call
    `free()` before MPI is finalized: it is not freed by the garbage collector, whose order
    differs between ranks (freeing is collective).
    """

    def __init__(self, comm: MPI.Intracomm | None = None, algorithm: str = "auto",
                 config: Config | None = None, reproducible: bool | None = None) -> None:
        """reproducible: reproducible mode, overriding config.reproducible where given."""
        if reproducible is not None:
            config = replace(config or Config(), reproducible=reproducible)
        comm = MPI.COMM_WORLD if comm is None else comm
        if not isinstance(comm, MPI.Intracomm) or comm == MPI.COMM_NULL:
            raise TypeError(f"comm must be an mpi4py intra-communicator (such as "
                            f"MPI.COMM_WORLD), not {comm!r}")
        if not isinstance(algorithm, str):
            raise TypeError(f"algorithm must be a string, not {type(algorithm).__name__}")
        raw_config, _keep = _c_config(algorithm, config or Config())
        out = ffi.new("papcoll_comm **")
        _check(_lib.papcoll_comm_create_from_handle(_address(comm), raw_config, out))
        self._handle: Any = out[0]
        self.comm = comm
        self.size: int = comm.Get_size()
        self.rank: int = comm.Get_rank()

    # ---- life cycle ----------------------------------------------------------------------

    def _live(self) -> Any:
        if self._handle is None:
            raise ValueError("this papcoll Communicator has been freed")
        return self._handle

    def free(self) -> None:
        """Frees the C communicator (collective). Calling it again does nothing."""
        if self._handle is None or MPI.Is_finalized():
            self._handle = None
            return
        handle = ffi.new("papcoll_comm **", self._handle)
        self._handle = None
        _check(_lib.papcoll_comm_free(handle))

    def __enter__(self) -> Communicator:
        return self

    def __exit__(self, *exception: object) -> None:
        self.free()

    # ---- the algorithm -------------------------------------------------------------------

    @property
    def algorithm(self) -> str:
        """The algorithm of later calls: a name from `papcoll algorithms`, or "auto"."""
        return ffi.string(_lib.papcoll_get_algorithm(self._live())).decode()

    @algorithm.setter
    def algorithm(self, name: str) -> None:
        _check(_lib.papcoll_set_algorithm(self._live(), c_string(str(name), "algorithm name")))

    def set_schedule(self, schedule: str | None) -> None:
        """The recursive_multiplying schedule of later calls (None: the default for P)."""
        _check(_lib.papcoll_set_schedule(self._live(),
                                         c_string(schedule, "schedule") if schedule
                                         else ffi.NULL))

    def resolve(self, count: int, dtype: Any = np.float64, op: MPI.Op = MPI.SUM) -> str:
        """The algorithm an all-reduce of `count` elements of `dtype` with `op` would run."""
        whole_number(count, "count", 0, INT64_MAX)
        datatype = _mpi_datatype(np.dtype(dtype), "dtype")
        name = ffi.new("const char **")
        _check(_lib.papcoll_resolve_algorithm_from_handles(
            self._live(), int(count), _address(datatype), _address(_checked_op(op)), name))
        return ffi.string(name[0]).decode()

    # ---- all-reduce ----------------------------------------------------------------------

    def allreduce(self, sendbuf: Any, recvbuf: Any = None, op: MPI.Op = MPI.SUM) -> Any:
        """MPI_Allreduce through papcoll: every rank gets the bitwise identical reduction.

        sendbuf: a numpy array, a buffer-protocol object or a CPU DLPack tensor, or
        MPI.IN_PLACE (then recvbuf holds the input and receives the result). recvbuf: the
        same dtype and number of elements, writable, not overlapping sendbuf; None makes a
        new array. Returns the result: recvbuf as given, or the new array.
        """
        handle = self._live()
        send_pointer, receive, datatype = _buffers(sendbuf, recvbuf)
        _check(_lib.papcoll_allreduce_from_handles(
            handle, send_pointer, ffi.cast("void *", receive.ctypes.data), receive.size,
            _address(datatype), _address(_checked_op(op))))
        return receive if recvbuf is None else recvbuf

    def iallreduce(self, sendbuf: Any, recvbuf: Any = None, op: MPI.Op = MPI.SUM) -> Request:
        """MPI_Iallreduce through papcoll: starts the all-reduce and returns at once.

        The buffers as for allreduce(); neither may be touched until the request completes.
        Returns a papcoll.Request: wait() gives the result; its `.mpi` is an mpi4py
        MPI.Request for MPI.Request.Waitall and friends, which complete it where MPI advances
        papcoll (docs/nonblocking.md: MPICH, or the progress thread)."""
        handle = self._live()
        _complete_orphans()
        send_pointer, receive, datatype = _buffers(sendbuf, recvbuf)
        request = MPI.Request()
        _check(_lib.papcoll_iallreduce_from_handles(
            handle, send_pointer, ffi.cast("void *", receive.ctypes.data), receive.size,
            _address(datatype), _address(_checked_op(op)),
            ffi.cast("void *", MPI._addressof(request))))
        result = receive if recvbuf is None else recvbuf
        return Request(request, result, (sendbuf, receive))

    def allreduce_init(self, sendbuf: Any, recvbuf: Any = None,
                       op: MPI.Op = MPI.SUM) -> PersistentRequest:
        """MPI_Allreduce_init through papcoll (collective): a persistent all-reduce of these
        buffers, built once; each start() posts one and returns its Request. auto decides
        each start from the arrivals of this request's earlier starts."""
        handle = self._live()
        send_pointer, receive, datatype = _buffers(sendbuf, recvbuf)
        out = ffi.new("papcoll_persistent **")
        _check(_lib.papcoll_allreduce_init_from_handles(
            handle, send_pointer, ffi.cast("void *", receive.ctypes.data), receive.size,
            _address(datatype), _address(_checked_op(op)), out))
        result = receive if recvbuf is None else recvbuf
        return PersistentRequest(out[0], result, (sendbuf, receive))

    # ---- the arrival monitor (Proficz 2018, Sect. 3) ----------------------------------------

    def compute_begin(self) -> None:
        """Marks the start of a compute phase (before edge() and the next all-reduce)."""
        _check(_lib.papcoll_compute_begin(self._live()))

    def edge(self, fraction: float) -> None:
        """Says `fraction` (0 < fraction <= 1) of this compute phase is done: predicts this
        rank's arrival at the next all-reduce and sends the prediction to every rank."""
        _check(_lib.papcoll_edge(self._live(), float(fraction)))

    def predict_arrival(self, seconds: float) -> None:
        """A prediction made by the caller: the next all-reduce comes in `seconds`."""
        _check(_lib.papcoll_predict_arrival(self._live(), float(seconds)))

    def last_prediction(self) -> Prediction:
        """What the last call of auto or a PAP-aware algorithm ran on."""
        predicted = ffi.new("int *")
        arrivals = ffi.new("double[]", self.size)
        tau = ffi.new("double *")
        _check(_lib.papcoll_last_prediction(self._live(), predicted, arrivals, tau))
        return Prediction(bool(predicted[0]), list(arrivals), float(tau[0]))

    def last_choice(self) -> Choice:
        """What the last "auto" call ran, and the cost model's reason."""
        raw = ffi.new("papcoll_choice *")
        _check(_lib.papcoll_last_choice(self._live(), raw))
        return Choice.from_c(raw)

    # ---- mpi4py's names: Comm.Allreduce, Iallreduce, Allreduce_init ----------------------

    def Allreduce(self, sendbuf: Any, recvbuf: Any,  # noqa: N802 - mpi4py's name
                  op: MPI.Op = MPI.SUM) -> None:
        """mpi4py's Comm.Allreduce through papcoll. The buffers as mpi4py's upper-case
        methods take them: a buffer (numpy array, buffer-protocol object, CPU DLPack
        tensor), `[buffer, datatype]` or `[buffer, count, datatype]` with a predefined
        datatype; sendbuf may be MPI.IN_PLACE. The result goes into recvbuf."""
        self.allreduce(*_specified_buffers(sendbuf, recvbuf), op)

    def Iallreduce(self, sendbuf: Any, recvbuf: Any,  # noqa: N802 - mpi4py's name
                   op: MPI.Op = MPI.SUM) -> Request:
        """mpi4py's Comm.Iallreduce through papcoll: buffers as for Allreduce(); returns a
        Request to Wait() or Test()."""
        return self.iallreduce(*_specified_buffers(sendbuf, recvbuf), op)

    def Allreduce_init(self, sendbuf: Any, recvbuf: Any,  # noqa: N802 - mpi4py's name
                       op: MPI.Op = MPI.SUM,
                       info: MPI.Info = MPI.INFO_NULL) -> PersistentRequest:
        """mpi4py's Comm.Allreduce_init through papcoll (collective): buffers as for
        Allreduce(); returns a PersistentRequest to Start() and Wait() as often as
        needed. `info` is taken as MPI takes it, as hints: papcoll reads none."""
        if not isinstance(info, MPI.Info):
            raise TypeError(f"info must be an mpi4py MPI.Info, not {info!r}")
        return self.allreduce_init(*_specified_buffers(sendbuf, recvbuf), op)


def _specified_buffers(sendbuf: Any, recvbuf: Any) -> tuple[Any, Any]:
    """The upper-case methods' buffers as the lower-case ones take them; recvbuf is
    required, as mpi4py's Comm.Allreduce requires it."""
    if recvbuf is None:
        raise TypeError("recvbuf is None: the upper-case methods write the result into "
                        "recvbuf, as mpi4py's do (allreduce() returns a new array instead)")
    return (specified_buffer(sendbuf, "sendbuf", writable=False),
            specified_buffer(recvbuf, "recvbuf", writable=True))


def mpi_advances_requests() -> bool:
    """True where MPI's own completion calls (MPI.Request.Waitall over `Request.mpi` and
    the program's requests) advance papcoll's operations: MPI's progress hook (MPICH >= 4.3,
    Open MPI >= 4) or a running progress thread (papcoll_mpi_advances_requests). Elsewhere
    complete papcoll's requests with their wait() or test()."""
    return bool(_lib.papcoll_mpi_advances_requests())


class _Flight:
    """What a posted all-reduce keeps alive until it completes: its mpi4py request and its
    buffers (None once completed). Its Request holds it; a Request dropped unfinished hands
    it to _orphans, so that Python does not free memory MPI may still write."""

    __slots__ = ("mpi", "buffers")

    def __init__(self, mpi: MPI.Request, buffers: tuple[Any, ...]) -> None:
        self.mpi = mpi
        self.buffers: tuple[Any, ...] | None = buffers


_orphans: list[_Flight] = []
# re-entrant: a garbage collection inside _complete_orphans may finalize a dropped Request
# of a reference cycle, whose _adopt then takes the lock again in the same thread
_orphans_lock = threading.RLock()


def _adopt(flight: _Flight) -> None:
    """A Request was collected: keeps its buffers until the all-reduce completes."""
    if flight.buffers is not None:
        with _orphans_lock:
            _orphans.append(flight)


def _complete_orphans() -> int:
    """Completes the dropped requests that finished, and lets their buffers go; called at
    every post, start, wait and test. Only the orphans list holds them, so no other thread
    tests them. An error of a dropped request has nobody to reach and is not raised.
    Returns how many are still in flight."""
    with _orphans_lock:
        flag = ffi.new("int *")
        for flight in list(_orphans):
            _lib.papcoll_test_from_handle(ffi.cast("void *", MPI._addressof(flight.mpi)), flag)
            if flag[0]:
                flight.buffers = None
                _orphans.remove(flight)
        return len(_orphans)


class Request:
    """A non-blocking all-reduce in flight (Communicator.iallreduce and Iallreduce,
    PersistentRequest.start).

    `mpi` is the mpi4py MPI.Request (a generalized request); wait() and test(), or Wait()
    and Test() as mpi4py names them, advance papcoll's operations whatever the progress
    setting. The buffers are kept alive until it completes, even if this Request is dropped
    without wait() (then papcoll completes it at a later post, start, wait or test)."""

    def __init__(self, request: MPI.Request, result: Any, buffers: tuple[Any, ...]) -> None:
        self.mpi = request
        self._result = result
        self._flight = _Flight(request, buffers)
        weakref.finalize(self, _adopt, self._flight)

    def wait(self) -> Any:
        """Completes the all-reduce (papcoll_wait) and returns its result."""
        if self._flight.buffers is not None:
            _check(_lib.papcoll_wait_from_handle(ffi.cast("void *",
                                                          MPI._addressof(self.mpi))))
            self._flight.buffers = None
        _complete_orphans()
        return self._result

    def test(self) -> bool:
        """True once the all-reduce completed (papcoll_test); then wait() returns at once."""
        _complete_orphans()
        if self._flight.buffers is None:
            return True
        flag = ffi.new("int *")
        _check(_lib.papcoll_test_from_handle(ffi.cast("void *", MPI._addressof(self.mpi)),
                                             flag))
        if flag[0]:
            self._flight.buffers = None
        return bool(flag[0])

    def Wait(self) -> Literal[True]:  # noqa: N802 - mpi4py's name
        """mpi4py's Request.Wait(): completes the all-reduce (the result is in recvbuf)."""
        self.wait()
        return True

    def Test(self) -> bool:  # noqa: N802 - mpi4py's name
        """mpi4py's Request.Test(): True once the all-reduce completed."""
        return self.test()


class PersistentRequest:
    """A persistent all-reduce (Communicator.allreduce_init, Allreduce_init) in the shape of
    mpi4py's Prequest: one request, started again and again with the buffers given at init
    (their contents at each start): Start(), then Wait() or Test(); Free() when done (local;
    refused while a start is active). Inactive, Wait() and Test() return at once, as MPI's
    do. `mpi` is the active start's mpi4py MPI.Request (a generalized request, for
    MPI.Request.Waitall beside the program's own), MPI.REQUEST_NULL while inactive, which
    MPI's completion calls take as done. start() is the older form: it starts and returns
    that start's Request."""

    def __init__(self, handle: Any, result: Any, buffers: tuple[Any, ...]) -> None:
        self._handle: Any = handle
        self._result = result
        self._buffers = buffers
        self._active: Request | None = None

    @property
    def mpi(self) -> MPI.Request:
        return MPI.REQUEST_NULL if self._active is None else self._active.mpi

    def Start(self) -> None:  # noqa: N802 - mpi4py's name
        """Starts the all-reduce (MPI_Start) with the buffers' contents now. Refused
        (PapcollError) while the last start is active: a persistent request runs one
        operation at a time (MPI-4.1 Sect. 3.9)."""
        self.start()

    def start(self) -> Request:
        """Starts the all-reduce and returns this start's Request (wait() gives the result):
        the older form of Start(), which Wait() and Test() complete as well."""
        if self._handle is None:
            raise ValueError("this PersistentRequest has been freed")
        # not tested here: a start that finished but was not waited for is still active,
        # as in MPI, and papcoll refuses the new start
        _complete_orphans()
        request = MPI.Request()
        _check(_lib.papcoll_start_from_handle(self._handle,
                                              ffi.cast("void *", MPI._addressof(request))))
        self._active = Request(request, self._result, self._buffers)
        return self._active

    @staticmethod
    def Startall(requests: Sequence[PersistentRequest]) -> None:  # noqa: N802
        """mpi4py's Prequest.Startall: Start() each, in order."""
        for request in requests:
            request.Start()

    def Wait(self) -> Literal[True]:  # noqa: N802 - mpi4py's name
        """Completes the active start (MPI_Wait): the result is in recvbuf. At once when
        inactive."""
        if self._active is not None:
            self._active.wait()
            self._active = None
        return True

    def Test(self) -> bool:  # noqa: N802 - mpi4py's name
        """True when inactive or once the active start completed (then inactive)."""
        if self._active is not None and self._active.test():
            self._active = None
        return self._active is None

    def Free(self) -> None:  # noqa: N802 - mpi4py's name
        """Frees the request (local). Refused (PapcollError) while a start is active: Wait()
        it first."""
        self.free()

    def last_choice(self) -> Choice:
        """What auto chose for the last start."""
        raw = ffi.new("papcoll_choice *")
        _check(_lib.papcoll_persistent_last_choice(self._handle, raw, ffi.NULL))
        return Choice.from_c(raw)

    def free(self) -> None:
        if self._handle is None or MPI.Is_finalized():
            self._handle = None
            return
        _complete_orphans()  # a dropped start's request, completed, lets free go ahead
        handle = ffi.new("papcoll_persistent **", self._handle)
        _check(_lib.papcoll_persistent_free(handle))
        self._handle = None
