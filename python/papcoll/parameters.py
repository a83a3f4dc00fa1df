"""The algorithms' parameters, made from the C core's parameter table (papcoll_parameter_get,
src/core/parameter_table.c), where each is declared once: `Parameters` (its fields, their
defaults and their checks), the filling of the C struct, and the rows the command line makes
its options from (`papcoll.cli.context_options`) and `papcoll parameters` lists. A new
parameter is a field of papcoll_parameters and a row of the table; nothing here names one.

Choice: `Parameters` is made at import with dataclasses.make_dataclass rather than written
out, so a row needs no second declaration here; its fields are typed from the row's kind
(a static type checker sees only a dataclass, which is the price of declaring once).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ._core import ffi, lib
from .checks import INT32_MAX, optional_sequence, optional_text, whole_number
from .errors import _text, c_string
from .topology import Topology

WHOLE_NUMBER = lib.PAPCOLL_PARAMETER_WHOLE_NUMBER
TEXT = lib.PAPCOLL_PARAMETER_TEXT
ALGORITHM = lib.PAPCOLL_PARAMETER_ALGORITHM
RANK_LIST = lib.PAPCOLL_PARAMETER_RANK_LIST
TREE = lib.PAPCOLL_PARAMETER_TREE
KIND_NAMES = {WHOLE_NUMBER: "whole number", TEXT: "text", ALGORITHM: "algorithm",
              RANK_LIST: "rank list", TREE: "tree"}


@dataclass(frozen=True)
class ParameterInfo:
    """One row of the C parameter table (papcoll_parameter_info)."""

    name: str
    kind: int
    width: int
    offset: int
    count_offset: int
    minimum: int
    maximum: int
    option: str | None
    metavar: str
    unset: str
    algorithms: tuple[str, ...]
    help: str

    @property
    def kind_name(self) -> str:
        return KIND_NAMES[self.kind]

    @property
    def count_name(self) -> str:
        """A rank list's count field in C (the table's convention: NAME_count)."""
        return f"{self.name}_count"

    def describe(self) -> dict[str, Any]:
        """The row as JSON may hold it (`papcoll parameters --json`)."""
        row: dict[str, Any] = {"name": self.name, "kind": self.kind_name,
                               "option": self.option, "default": self.unset,
                               "algorithms": list(self.algorithms), "help": self.help}
        if self.kind == WHOLE_NUMBER:
            row.update(minimum=self.minimum, maximum=self.maximum)
        return row


def _read_table() -> tuple[ParameterInfo, ...]:
    rows = []
    raw = ffi.new("papcoll_parameter_info *")
    for index in range(lib.papcoll_parameter_count()):
        lib.papcoll_parameter_get(index, raw)
        rows.append(ParameterInfo(
            name=_text(raw.name), kind=raw.kind, width=raw.width, offset=raw.offset,
            count_offset=raw.count_offset, minimum=raw.minimum, maximum=raw.maximum,
            option=_text(raw.option) or None, metavar=_text(raw.metavar),
            unset=_text(raw.unset), algorithms=tuple(_text(raw.algorithms).split(",")),
            help=_text(raw.help)))
    return tuple(rows)


PARAMETER_TABLE: tuple[ParameterInfo, ...] = _read_table()
_DEFAULTS = {WHOLE_NUMBER: 0}
_TYPES: dict[int, Any] = {WHOLE_NUMBER: int, TEXT: str | None, ALGORITHM: str | None,
                          RANK_LIST: Sequence[int] | None, TREE: Topology | None}


def parameter(name: str) -> ParameterInfo:
    """The row of the parameter `name` (KeyError if there is none)."""
    for row in PARAMETER_TABLE:
        if row.name == name:
            return row
    raise KeyError(name)


def _check(row: ParameterInfo, value: Any) -> None:
    """Python's check of one field, by its row: a TypeError or ValueError naming it."""
    name = f"Parameters.{row.name}"
    if row.kind == WHOLE_NUMBER:
        whole_number(value, name, row.minimum, row.maximum)
    elif row.kind in (TEXT, ALGORITHM):
        optional_text(value, name)
    elif row.kind == RANK_LIST:
        for rank in optional_sequence(value, name) or ():
            whole_number(rank, f"every entry of {name}", 0, INT32_MAX)
    elif row.kind == TREE and value is not None and not isinstance(value, Topology):
        raise TypeError(f"{name} must be a network.Topology or None, not "
                        f"{type(value).__name__}")


def _post_init(self: Any) -> None:
    for row in PARAMETER_TABLE:
        _check(row, getattr(self, row.name))


def _documentation() -> str:
    lines = ["The parameters a user chooses for an algorithm (C: papcoll_parameters), the one",
             "home of every tunable: Context and communicator.Config both hold one. Fields an",
             "algorithm does not use are ignored; the defaults are the algorithms' own.",
             "Identical on every rank. Made from the C parameter table:", ""]
    lines += [f"{row.name} ({', '.join(row.algorithms)}): {row.help}; unset: {row.unset}"
              for row in PARAMETER_TABLE]
    return "\n".join(lines)


Parameters: Any = dataclasses.make_dataclass(
    "Parameters",
    [(row.name, _TYPES[row.kind], dataclasses.field(default=_DEFAULTS.get(row.kind)))
     for row in PARAMETER_TABLE],
    namespace={"__post_init__": _post_init, "__doc__": _documentation(),
               "__module__": __name__},
    frozen=True)


def c_parameters(parameters: Any, raw: Any, keep: list[Any]) -> None:
    """Fills the papcoll_parameters `raw` (embedded in a context or a config) row by row; the
    cffi objects it points to are appended to `keep`, which must outlive it."""

    def array(kind: str, values: Any) -> Any:
        pointer = ffi.new(f"{kind}[]", values)
        keep.append(pointer)
        return pointer

    for row in PARAMETER_TABLE:
        value = getattr(parameters, row.name)
        if value is None:
            continue
        if row.kind == RANK_LIST:
            setattr(raw, row.name, array("int32_t", [int(rank) for rank in value]))
            setattr(raw, row.count_name, len(value))
        elif row.kind == TREE:
            setattr(raw, row.name, value.c_struct(keep))
        elif row.kind in (TEXT, ALGORITHM):
            setattr(raw, row.name, array("char", c_string(value, f"Parameters.{row.name}")))
        else:
            setattr(raw, row.name, value)


