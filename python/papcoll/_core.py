"""cffi bindings (ABI mode) of libpapcoll_core.

The cdef is read from the C header itself (the part between the cffi markers), so the
bindings cannot drift from the C API. The library and the header are placed next to this
file by the CMake build; PAPCOLL_LIBRARY overrides the library's path.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from cffi import FFI

_LIB_DIR = Path(__file__).resolve().parent / "_lib"


def _read_cdef(header: Path) -> str:
    text = header.read_text()
    begin, end = "/* cffi-begin */", "/* cffi-end */"
    return text[text.index(begin) + len(begin) : text.index(end)]


def _load() -> tuple[FFI, Any]:
    header = _LIB_DIR / "papcoll_core.h"
    library = Path(os.environ.get("PAPCOLL_LIBRARY", _LIB_DIR / "libpapcoll_core.so"))
    if not header.exists() or not library.exists():
        raise ImportError(
            f"papcoll's C core is not built ({library} or {header} is missing): "
            "run `make build` in the papcoll checkout"
        )
    ffi = FFI()
    ffi.cdef(_read_cdef(header))
    return ffi, ffi.dlopen(str(library))


ffi, lib = _load()
