"""libpapcoll for mpi4py programs, loaded once: the check that papcoll and mpi4py run on one
MPI library, and what every module that calls it shares (the error of a call, the address
of an mpi4py handle). communicator.py, buffers.py and requests.py call the library through
it, so none of them loads it or imports another to reach it."""

from __future__ import annotations

from typing import Any

from mpi4py import MPI

from ._core import check_same_mpi, ffi, load_mpi_library, mpi_library_path
from .errors import PapcollError

_VERSION_SIZE = 8192


def _papcoll_mpi_version(library: Any) -> str:
    text = ffi.new("char[]", _VERSION_SIZE)
    library.papcoll_mpi_library_version(text, _VERSION_SIZE)
    return ffi.string(text).decode(errors="replace")


library = load_mpi_library()
check_same_mpi(_papcoll_mpi_version(library), MPI.Get_library_version(), mpi_library_path())


def check(code: int) -> None:
    """Raises the C call's error, with the message papcoll recorded for it."""
    if code != 0:
        raise PapcollError(code, ffi.string(library.papcoll_error_string(code)).decode())


def handle_address(handle: Any) -> Any:
    """The address where mpi4py stores an MPI handle, as the C side reads it."""
    return ffi.cast("const void *", MPI._addressof(handle))


def request_address(request: MPI.Request) -> Any:
    """The address of an mpi4py request's handle, which the C side writes or completes."""
    return ffi.cast("void *", MPI._addressof(request))
