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

import gc
import os
import weakref
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
from .choice import Choice as Choice
from .choice import Prediction as Prediction
from .errors import c_string
from .mpi_binding import check as _check
from .mpi_binding import handle_address as _address
from .mpi_binding import library as _lib
from .nonblocking import PersistentRequest, Request, _complete_orphans
from .nonblocking import mpi_advances_requests as mpi_advances_requests
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
        self._persistents: weakref.WeakSet[PersistentRequest] = weakref.WeakSet()
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
        self._release_dropped_persistents()
        handle = ffi.new("papcoll_comm **", self._handle)
        self._handle = None
        _check(_lib.papcoll_comm_free(handle))

    def _release_dropped_persistents(self) -> None:
        """Frees the persistent requests of this communicator the program dropped (their
        last start waited for), which C would otherwise count as alive: a request only a
        reference cycle holds is collected first, on every rank alike."""
        if self._persistents:
            gc.collect()
        _complete_orphans(finishing=self._handle)

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
        """The recursive_multiplying schedule of later calls (None: the default for P).
        Refused (MPI_ERR_PENDING) while a persistent request of the communicator lives: it
        keeps the parameters it was made with; one the program dropped is freed first."""
        self._release_dropped_persistents()
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
        persistent = PersistentRequest(out[0], result, (sendbuf, receive), handle)
        self._persistents.add(persistent)
        return persistent

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

    def last_own_seconds(self) -> tuple[float, float]:
        """This rank's seconds of papcoll's own work in the last blocking call, before the
        algorithm and after it (the monitor's messages, auto's decision); (0, 0) after an
        algorithm that needs no arrivals."""
        before, after = ffi.new("double *"), ffi.new("double *")
        _check(_lib.papcoll_last_own_seconds(self._live(), before, after))
        return float(before[0]), float(after[0])

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
