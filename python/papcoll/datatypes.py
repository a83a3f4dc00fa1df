"""MPI's predefined numeric types as papcoll names them (MPI's name without MPI_ and _T,
lower case), with their sizes on this platform and the reduction ops MPI defines on each.

One table for every command that takes --datatype: `bench` and `calibrate` run them, `sim`
needs only their sizes."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

OPS = ("sum", "prod", "min", "max", "band", "bor", "bxor")
BITWISE_OPS = ("band", "bor", "bxor")


@dataclass(frozen=True)
class Datatype:
    """One of MPI's predefined numeric types as papcoll-bench names it: MPI's name without
    MPI_ (and _T), lower case. `kind`: signed, unsigned, real or complex."""

    name: str
    size: int
    kind: str

    def ops(self) -> tuple[str, ...]:
        """The ops MPI defines on it: bitwise ones on integers only, min/max not on complex."""
        if self.kind == "complex":
            return ("sum", "prod")
        return OPS if self.kind in ("signed", "unsigned") else OPS[:4]


def _datatypes() -> dict[str, Datatype]:
    # sizes from this platform's C ABI (ctypes), as papcoll-bench's MPI sees them
    c = ctypes
    table = [("int8", c.c_int8, "signed"), ("int16", c.c_int16, "signed"),
             ("int32", c.c_int32, "signed"), ("int64", c.c_int64, "signed"),
             ("uint8", c.c_uint8, "unsigned"), ("uint16", c.c_uint16, "unsigned"),
             ("uint32", c.c_uint32, "unsigned"), ("uint64", c.c_uint64, "unsigned"),
             ("signed_char", c.c_byte, "signed"), ("short", c.c_short, "signed"),
             ("int", c.c_int, "signed"), ("long", c.c_long, "signed"),
             ("long_long", c.c_longlong, "signed"),
             ("unsigned_char", c.c_ubyte, "unsigned"),
             ("unsigned_short", c.c_ushort, "unsigned"), ("unsigned", c.c_uint, "unsigned"),
             ("unsigned_long", c.c_ulong, "unsigned"),
             ("unsigned_long_long", c.c_ulonglong, "unsigned"),
             ("float", c.c_float, "real"), ("double", c.c_double, "real"),
             ("long_double", c.c_longdouble, "real")]
    types = {name: Datatype(name, c.sizeof(ctype), kind) for name, ctype, kind in table}
    types["c_float_complex"] = Datatype("c_float_complex", 2 * c.sizeof(c.c_float), "complex")
    types["c_double_complex"] = Datatype("c_double_complex", 2 * c.sizeof(c.c_double),
                                         "complex")
    return types


DATATYPES = _datatypes()
