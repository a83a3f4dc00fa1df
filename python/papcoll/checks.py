"""Checks of values handed to the library from Python: a wrong type or range is a
TypeError or ValueError that names the parameter, raised before anything reaches C (where
cffi would raise OverflowError or AttributeError without saying which field)."""

from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Sequence
from typing import Any

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1


def whole_number(value: Any, name: str, low: int, high: int) -> int:
    """`value` (an int or anything with __index__, numpy's integers too; not bool) as an
    int in [low, high]."""
    try:
        if isinstance(value, bool):
            raise TypeError
        number = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be a whole number, not {type(value).__name__} "
                        f"{value!r}") from None
    if not low <= number <= high:
        raise ValueError(f"{name} must be from {low} to {high}, not {number}")
    return number


def finite(value: float) -> bool:
    """math.isfinite for any int or float: an int beyond a float's range (a JSON or TOML
    10**400) is not finite, where math.isfinite raises OverflowError."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def real_number(value: Any, name: str, low: float = -math.inf) -> float:
    """`value` as a finite float >= low."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, not {type(value).__name__} {value!r}")
    try:
        number = float(value)
    except OverflowError:  # an int beyond a float's range
        number = math.inf if value > 0 else -math.inf
    if not (math.isfinite(number) and number >= low):
        bound = f" >= {low:g}" if low > -math.inf else ""
        raise ValueError(f"{name} must be a finite number{bound}, not {number:g}")
    return number


def arrival_times(values: Any, name: str, ranks: int | None = None) -> list[float] | None:
    """None, or finite arrival times in seconds (one per rank where `ranks` is given) whose
    spread, latest minus earliest, is finite too: 1e308 and -1e308 are each finite, but every
    wait between them would be infinite."""
    checked = optional_sequence(values, name)
    if checked is None:
        return None
    times = [real_number(value, f"every entry of {name}") for value in checked]
    if ranks is not None and len(times) != ranks:
        raise ValueError(f"{name} gives {len(times)} times for {ranks} ranks: give one per rank")
    if times and not math.isfinite(max(times) - min(times)):
        raise ValueError(f"{name} spans {min(times):g} to {max(times):g} s, more than a float "
                         "holds")
    return times


def optional_text(value: Any, name: str) -> None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{name} must be text or None, not {type(value).__name__} {value!r}")


def optional_sequence(values: Any, name: str) -> Sequence[Any] | None:
    """None, or a sequence (not text) whose items the caller checks one by one."""
    if values is None:
        return None
    if isinstance(values, str | bytes) or not isinstance(values, Sequence | range) and not (
            hasattr(values, "__len__") and hasattr(values, "__iter__")):
        raise TypeError(f"{name} must be a sequence or None, not {type(values).__name__}")
    return values


def read_small_file(path: Any, most_bytes: int, what: str, error: type[Exception]) -> bytes:
    """The bytes of the file at `path`, which `what` names in messages ("network file x");
    one larger than most_bytes (/dev/zero, a wrong file) is refused before it fills memory.
    A failure raises `error`, the caller's kind of refusal."""
    try:
        with open(path, "rb") as file:
            raw = file.read(most_bytes + 1)
    except OSError as failure:
        raise error(f"cannot read {what}: {failure.strerror}") from None
    if len(raw) > most_bytes:
        raise error(f"{what}: larger than {most_bytes >> 20} MiB")
    return raw
