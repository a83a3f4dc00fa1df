"""cffi bindings (ABI mode) of libpapcoll_core and, on demand, of libpapcoll (the MPI side).

The cdef is read from the C headers themselves (the parts between the cffi markers), so the
bindings cannot drift from the C API. The libraries and the headers are placed next to this
file by the CMake build (`pip install`, or `make build` in a checkout); PAPCOLL_LIBRARY
overrides the core library's path and PAPCOLL_MPI_LIBRARY the MPI one's.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

from cffi import FFI

_LIB_DIR = Path(__file__).resolve().parent / "_lib"


def _read_cdef(header: Path) -> str:
    """Every part of `header` between a cffi-begin and the next cffi-end marker."""
    text = header.read_text()
    begin, end = "/* cffi-begin */", "/* cffi-end */"
    parts, position = [], text.find(begin)
    while position >= 0:
        stop = text.index(end, position)
        parts.append(text[position + len(begin) : stop])
        position = text.find(begin, stop)
    return "\n".join(parts)


def _paths(library_name: str, header_name: str, variable: str) -> tuple[Path, Path]:
    header = _LIB_DIR / header_name
    library = Path(os.environ.get(variable, _LIB_DIR / library_name))
    if not header.exists() or not library.exists():
        raise ImportError(
            f"papcoll's C library is not built ({library} or {header} is missing): "
            "`pip install` papcoll (it builds them), or run `make build` in a checkout"
        )
    return library, header


def _load() -> tuple[FFI, Any]:
    library, header = _paths("libpapcoll_core.so", "papcoll_core.h", "PAPCOLL_LIBRARY")
    ffi = FFI()
    ffi.cdef(_read_cdef(header))
    return ffi, ffi.dlopen(str(library))


ffi, lib = _load()


def mpi_library_path() -> Path:
    """Where libpapcoll (the MPI side) is loaded from."""
    return _paths("libpapcoll.so", "papcoll.h", "PAPCOLL_MPI_LIBRARY")[0]


@functools.cache
def load_mpi_library() -> Any:
    """libpapcoll, which links the MPI it was built with (load mpi4py's MPI first)."""
    library, header = _paths("libpapcoll.so", "papcoll.h", "PAPCOLL_MPI_LIBRARY")
    ffi.cdef(_read_cdef(header))
    return ffi.dlopen(str(library))


def check_same_mpi(papcoll_version: str, mpi4py_version: str, library: Path) -> None:
    """Refuses two different MPI libraries in one process: papcoll's C library hands
    mpi4py's handles to the MPI it was linked with, which must be the same one."""

    def first_line(text: str) -> str:
        return " ".join(text.strip().splitlines()[0].split()) if text.strip() else "(empty)"

    def normalized(text: str) -> str:
        # Open MPI counts the terminating NUL in the version's length, so mpi4py's string
        # ends with one; whitespace may differ too.
        return " ".join(text.replace("\0", " ").split())

    if normalized(papcoll_version) == normalized(mpi4py_version):
        return
    raise ImportError(
        "papcoll and mpi4py use different MPI libraries:\n"
        f"  papcoll ({library}) was built with: {first_line(papcoll_version)}\n"
        f"  mpi4py runs on:                    {first_line(mpi4py_version)}\n"
        "Both must be the same MPI. Rebuild papcoll with mpi4py's MPI (in a checkout: "
        "`make build MPI=mpich` or `make build MPI=openmpi`; elsewhere point CMake's "
        "MPI_C_COMPILER at that MPI's mpicc), or make mpi4py load papcoll's MPI (the "
        "generic mpi4py wheel picks the MPI named by MPI4PY_LIBMPI or found first on the "
        "library path)."
    )
