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


def real_number(value: Any, name: str, low: float = -math.inf) -> float:
    """`value` as a finite float >= low."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, not {type(value).__name__} {value!r}")
    if not (math.isfinite(value) and value >= low):
        bound = f" >= {low:g}" if low > -math.inf else ""
        raise ValueError(f"{name} must be a finite number{bound}, not {value}")
    return float(value)


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
