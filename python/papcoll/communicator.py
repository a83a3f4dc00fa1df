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
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np
from mpi4py import MPI

from ._core import check_same_mpi, ffi, load_mpi_library, mpi_library_path
from .checks import INT32_MAX, INT64_MAX, whole_number
from .errors import PapcollError, c_string
from .parameters import Parameters, c_parameters

_VERSION_SIZE = 8192


def _papcoll_mpi_version(library: Any) -> str:
    text = ffi.new("char[]", _VERSION_SIZE)
    library.papcoll_mpi_library_version(text, _VERSION_SIZE)
    return ffi.string(text).decode(errors="replace")


_lib = load_mpi_library()
check_same_mpi(_papcoll_mpi_version(_lib), MPI.Get_library_version(), mpi_library_path())


def _check(code: int) -> None:
    """Raises the C call's error, with the message papcoll recorded for it."""
    if code != 0:
        raise PapcollError(code, ffi.string(_lib.papcoll_error_string(code)).decode())


def _address(handle: Any) -> Any:
    """The address where mpi4py stores an MPI handle, as the C side reads it."""
    return ffi.cast("const void *", MPI._addressof(handle))


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
    return raw, keep


# DLPack device types in host memory: CPU, CUDA host-pinned, ROCm host-pinned.
_DLPACK_HOST_DEVICES = (1, 3, 11)


def _as_array(buffer: Any, name: str, writable: bool) -> np.ndarray:
    """A numpy view of `buffer` (no copy): an ndarray, a DLPack tensor, or a buffer."""
    if isinstance(buffer, np.ndarray):
        array = buffer
    elif hasattr(buffer, "__dlpack__"):
        device = buffer.__dlpack_device__() if hasattr(buffer, "__dlpack_device__") else None
        if device is not None and int(device[0]) not in _DLPACK_HOST_DEVICES:
            raise TypeError(f"{name} is in device memory (DLPack device {tuple(device)}); "
                            "papcoll reduces host memory: move the tensor to the CPU first")
        try:
            array = np.from_dlpack(buffer)
        except (BufferError, TypeError, RuntimeError, ValueError) as error:
            raise TypeError(f"{name}: numpy cannot view this DLPack object ({error})"
                            ) from error
    else:
        try:
            array = np.asarray(memoryview(buffer))
        except TypeError:
            raise TypeError(
                f"{name} must be a numpy array, an object with the buffer protocol or a "
                f"CPU DLPack tensor, not {type(buffer).__name__}"
            ) from None
    if not array.flags.c_contiguous:
        raise ValueError(f"{name} is not contiguous: pass numpy.ascontiguousarray({name}) "
                         "(or .contiguous() for a tensor)")
    if writable and not array.flags.writeable:
        raise ValueError(f"{name} is read-only: the result is written into it")
    return array


def _mpi_datatype(dtype: np.dtype, name: str) -> MPI.Datatype:
    """The predefined MPI datatype of a numpy dtype (mpi4py's own table)."""
    if dtype.kind not in "biufc" or dtype.fields is not None:
        raise TypeError(f"{name} has dtype {dtype}, which no predefined MPI datatype "
                        "describes: use booleans, integers, floats or complex numbers")
    if not dtype.isnative:
        raise TypeError(f"{name} has dtype {dtype}, not in native byte order: convert it "
                        "with .astype(dtype.newbyteorder('='))")
    datatype = MPI._typedict.get(dtype.char)
    if datatype is None:
        raise TypeError(f"{name} has dtype {dtype}, for which this MPI has no predefined "
                        "datatype")
    return datatype


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


def _buffers(sendbuf: Any, recvbuf: Any) -> tuple[Any, np.ndarray, MPI.Datatype]:
    """The send pointer (or MPI_IN_PLACE), the receive array (new where recvbuf is None)
    and their MPI datatype, checked as allreduce() documents."""
    if sendbuf is MPI.IN_PLACE:
        if recvbuf is None:
            raise ValueError("with MPI.IN_PLACE as sendbuf, recvbuf holds the input and "
                             "receives the result: pass it")
        receive = _as_array(recvbuf, "recvbuf", writable=True)
        send_pointer = _lib.papcoll_in_place()
    else:
        send = _as_array(sendbuf, "sendbuf", writable=False)
        if recvbuf is None:
            receive = np.empty_like(send, order="C")
        else:
            receive = _as_array(recvbuf, "recvbuf", writable=True)
            if receive.dtype != send.dtype or receive.size != send.size:
                raise ValueError(
                    f"recvbuf ({receive.size} x {receive.dtype}) does not match sendbuf "
                    f"({send.size} x {send.dtype})")
            # Both are contiguous, so overlapping bounds mean shared elements.
            if send.size and np.may_share_memory(send, receive):
                raise ValueError("sendbuf and recvbuf overlap: pass MPI.IN_PLACE as "
                                 "sendbuf to reduce in place")
        send_pointer = ffi.cast("const void *", send.ctypes.data)
    datatype = _mpi_datatype(receive.dtype, "recvbuf" if recvbuf is not None else "sendbuf")
    return send_pointer, receive, datatype


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
    """A non-blocking all-reduce in flight (Communicator.iallreduce, PersistentRequest.start).

    `mpi` is the mpi4py MPI.Request (a generalized request); wait() and test() advance
    papcoll's operations whatever the progress setting. The buffers are kept alive until
    it completes, even if this Request is dropped without wait() (then papcoll completes
    it at a later post, start, wait or test)."""

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


class PersistentRequest:
    """A persistent all-reduce (Communicator.allreduce_init): start() posts one, with the
    buffers given at init; free() when done (local; refused while a start is active)."""

    def __init__(self, handle: Any, result: Any, buffers: tuple[Any, ...]) -> None:
        self._handle: Any = handle
        self._result = result
        self._buffers = buffers

    def start(self) -> Request:
        if self._handle is None:
            raise ValueError("this PersistentRequest has been freed")
        _complete_orphans()
        request = MPI.Request()
        _check(_lib.papcoll_start_from_handle(self._handle,
                                              ffi.cast("void *", MPI._addressof(request))))
        return Request(request, self._result, self._buffers)

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


def _checked_op(op: Any) -> MPI.Op:
    if not isinstance(op, MPI.Op) or op == MPI.OP_NULL:
        raise TypeError(f"op must be an mpi4py MPI.Op such as MPI.SUM, not {op!r}")
    return op
