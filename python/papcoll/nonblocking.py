"""The requests of papcoll's non-blocking and persistent all-reduces in Python (Request,
PersistentRequest; made by Communicator.iallreduce and allreduce_init, communicator.py), and
what keeps a dropped one's buffers alive and frees a dropped persistent request once its last
start completed."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence
from typing import Any, Literal

from mpi4py import MPI

from ._core import ffi
from .choice import Choice
from .mpi_binding import check as _check
from .mpi_binding import library as _lib


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


class _Persistent:
    """What a dropped PersistentRequest leaves to free: its C handle, its Communicator's, and
    the flight of its last start (the C request may be freed only once that completed)."""

    __slots__ = ("handle", "owner", "flight")

    def __init__(self, handle: Any, owner: Any) -> None:
        self.handle, self.owner = handle, owner
        self.flight: _Flight | None = None


_dropped_persistents: list[_Persistent] = []


def _adopt_persistent(persistent: _Persistent) -> None:
    """A PersistentRequest was collected unfreed: freed at a later post, start, wait, test or
    its Communicator's free() (not here: a finalizer may run inside a papcoll call)."""
    if persistent.handle is not None:
        with _orphans_lock:
            _dropped_persistents.append(persistent)


def _complete_orphans(finishing: Any = None) -> int:
    """Completes the dropped requests that finished, and lets their buffers go; frees the
    dropped persistent requests whose last start completed; called at every post, start,
    wait and test. `finishing`: a Communicator's handle about to be freed, whose dropped
    persistent requests' starts are waited for. Only these lists hold them, so no other
    thread tests them. An error of a dropped request has nobody to reach and is not raised.
    Returns how many are still in flight."""
    with _orphans_lock:
        flag = ffi.new("int *")
        for persistent in list(_dropped_persistents):
            flight = persistent.flight
            if persistent.owner == finishing and flight is not None and flight.buffers:
                _lib.papcoll_wait_from_handle(ffi.cast("void *", MPI._addressof(flight.mpi)))
                flight.buffers = None
        for flight in list(_orphans):
            if flight.buffers is not None:
                _lib.papcoll_test_from_handle(ffi.cast("void *", MPI._addressof(flight.mpi)),
                                              flag)
            if flight.buffers is None or flag[0]:
                flight.buffers = None
                _orphans.remove(flight)
        for persistent in list(_dropped_persistents):
            if persistent.flight is None or persistent.flight.buffers is None:
                _lib.papcoll_persistent_free(ffi.new("papcoll_persistent **", persistent.handle))
                _dropped_persistents.remove(persistent)
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

    def __init__(self, handle: Any, result: Any, buffers: tuple[Any, ...], owner: Any) -> None:
        self._result = result
        self._buffers = buffers
        self._active: Request | None = None
        # dropped unfreed, it is freed once its last start completed (_complete_orphans)
        self._state = _Persistent(handle, owner)
        weakref.finalize(self, _adopt_persistent, self._state).atexit = False

    @property
    def _handle(self) -> Any:
        return self._state.handle

    def _live(self) -> Any:
        if self._state.handle is None:
            raise ValueError("this PersistentRequest has been freed")
        return self._state.handle

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
        handle = self._live()
        # not tested here: a start that finished but was not waited for is still active,
        # as in MPI, and papcoll refuses the new start
        _complete_orphans()
        request = MPI.Request()
        _check(_lib.papcoll_start_from_handle(handle,
                                              ffi.cast("void *", MPI._addressof(request))))
        self._active = Request(request, self._result, self._buffers)
        self._state.flight = self._active._flight
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
        _check(_lib.papcoll_persistent_last_choice(self._live(), raw, ffi.NULL))
        return Choice.from_c(raw)

    def free(self) -> None:
        if self._handle is None or MPI.Is_finalized():
            self._state.handle = None
            return
        _complete_orphans()  # a dropped start's request, completed, lets free go ahead
        handle = ffi.new("papcoll_persistent **", self._handle)
        _check(_lib.papcoll_persistent_free(handle))
        self._state.handle = None
