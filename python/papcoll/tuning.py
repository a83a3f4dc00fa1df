"""auto's tuning constants (C: papcoll_tuning), read from the one table that declares them in
the MPI-free core (src/core/tuning_table.c) through its cffi binding: their names, defaults,
ranges, the file that reads each and what it does. PAPCOLL_TUNING ("margin=0.1,...") or
papcoll_config.tuning sets them; `papcoll settings` and docs/settings.md list them from here.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._core import ffi, lib
from .errors import _ERROR_SIZE, PapcollError, _text, c_string

REAL = "real"
WHOLE_NUMBER = "whole number"


@dataclass(frozen=True)
class TuningConstant:
    """One row of the core's tuning table."""

    name: str
    kind: str            # REAL or WHOLE_NUMBER
    default: float
    minimum: float
    maximum: float
    read_in: str         # the source file that reads it
    help: str

    def shown(self, value: float) -> str:
        """value as the constant's kind writes it (a whole number without a fraction)."""
        return str(int(value)) if self.kind == WHOLE_NUMBER else f"{value:g}"


def tuning_constants() -> list[TuningConstant]:
    """Every constant, in the table's order."""
    constants = []
    for index in range(lib.papcoll_tuning_count()):
        raw = ffi.new("papcoll_tuning_info *")
        lib.papcoll_tuning_get(index, raw)
        constants.append(TuningConstant(
            name=_text(raw.name),
            kind=WHOLE_NUMBER if raw.kind == lib.PAPCOLL_TUNING_WHOLE_NUMBER else REAL,
            default=raw.default_value, minimum=raw.minimum, maximum=raw.maximum,
            read_in=_text(raw.read_in), help=_text(raw.help)))
    return constants


def parse_tuning(text: str) -> dict[str, float]:
    """PAPCOLL_TUNING's text checked as the C library checks it: every constant's value after
    it (the defaults where it names none); PapcollError naming what is wrong."""
    raw = ffi.new("papcoll_tuning *")
    lib.papcoll_tuning_defaults(raw)
    error = ffi.new("char[]", _ERROR_SIZE)
    status = lib.papcoll_tuning_parse(c_string(text, "PAPCOLL_TUNING"), raw, error, _ERROR_SIZE)
    if status != lib.PAPCOLL_OK:
        raise PapcollError(status, f"PAPCOLL_TUNING: {_text(error)}")
    return {constant.name: getattr(raw, constant.name) for constant in tuning_constants()}
