"""Each parameter declared once (src/core/parameter_table.c): the table agrees with the C
struct it describes and with the algorithms that read it, and everything made from it (the
C checks, Python's Parameters and its checks, the command line's options, `papcoll
parameters`) follows each row."""

from __future__ import annotations

import json
import re
from pathlib import Path

import papcoll
import pytest
from papcoll._core import ffi
from papcoll.core import Context, PapcollError, Parameters
from papcoll.parameters import (
    ALGORITHM,
    PARAMETER_TABLE,
    RANK_LIST,
    TEXT,
    TREE,
    WHOLE_NUMBER,
    parameter,
)

ROOT = Path(__file__).resolve().parents[2]
ALGORITHM_SOURCES = ROOT / "src" / "core" / "algorithms"
ROWS = [pytest.param(row, id=row.name) for row in PARAMETER_TABLE]
WHOLE_NUMBERS = [pytest.param(row, id=row.name) for row in PARAMETER_TABLE
                 if row.kind == WHOLE_NUMBER]


def test_every_field_of_the_struct_is_a_row_and_every_row_a_field():
    struct = dict(ffi.typeof("papcoll_parameters").fields)
    names = {row.name for row in PARAMETER_TABLE}
    counts = {row.count_name for row in PARAMETER_TABLE if row.kind == RANK_LIST}
    assert set(struct) == names | counts
    for row in PARAMETER_TABLE:
        field = struct[row.name]
        assert row.offset == field.offset
        assert row.width == ffi.sizeof(field.type)
        if row.kind == RANK_LIST:
            assert row.count_offset == struct[row.count_name].offset
        expected = {WHOLE_NUMBER: "primitive", TEXT: "pointer", ALGORITHM: "pointer",
                    RANK_LIST: "pointer", TREE: "pointer"}[row.kind]
        assert field.type.kind == expected, row.name
        assert row.help and row.unset and row.algorithms


def _reads(source: Path, name: str) -> bool:
    return re.search(rf"parameters(\.|->){name}\b", source.read_text()) is not None


@pytest.mark.parametrize("row", ROWS)
def test_the_algorithms_a_row_names_are_those_that_read_it(row):
    known = {info.name for info in papcoll.algorithms()} | {"auto"}
    assert set(row.algorithms) <= known, f"{row.name} names an algorithm that does not exist"
    readers = {source.stem for source in ALGORITHM_SOURCES.glob("*.c") if _reads(source, row.name)}
    if _reads(ROOT / "src" / "core" / "select.c", row.name):
        readers.add("auto")
    assert readers == set(row.algorithms), (
        f"{row.name}: read by {sorted(readers)}, the table says {sorted(row.algorithms)}")


def test_python_parameters_have_the_rows_fields_and_defaults():
    from dataclasses import fields
    assert [field.name for field in fields(Parameters)] == [row.name for row in PARAMETER_TABLE]
    defaults = Parameters()
    for row in PARAMETER_TABLE:
        assert getattr(defaults, row.name) == (0 if row.kind == WHOLE_NUMBER else None)
        assert row.name in (Parameters.__doc__ or "")


@pytest.mark.parametrize("row", WHOLE_NUMBERS)
def test_a_whole_number_is_checked_against_its_rows_range_in_python_and_in_c(row):
    Parameters(**{row.name: row.maximum})
    with pytest.raises(ValueError, match=rf"Parameters.{row.name} must be from {row.minimum}"):
        Parameters(**{row.name: row.minimum - 1})
    # past Python's check, C's check (the C API's door) names the field and the range
    below = Parameters()
    object.__setattr__(below, row.name, row.minimum - 1)
    with pytest.raises(PapcollError, match=rf"{row.name} must not be negative"):
        papcoll.check_parameters(below, 4)
    if row.maximum < 2 ** (8 * row.width - 1) - 1:  # a value above it fits the field
        above = Parameters()
        object.__setattr__(above, row.name, row.maximum + 1)
        with pytest.raises(PapcollError, match=rf"{row.name} must be at most {row.maximum}, "):
            papcoll.check_parameters(above, 4)


def test_a_rank_list_is_checked_by_its_kind():
    row = next(row for row in PARAMETER_TABLE if row.kind == RANK_LIST)
    with pytest.raises(PapcollError, match=f"{row.name} must list every rank once"):
        papcoll.check_parameters(Parameters(**{row.name: [0, 1]}), 3)
    with pytest.raises(PapcollError, match=f"{row.name} is not a permutation of 0..2: entry 1"):
        papcoll.check_parameters(Parameters(**{row.name: [2, 2, 0]}), 3)
    papcoll.check_parameters(Parameters(**{row.name: [2, 1, 0]}), 3)


@pytest.mark.parametrize("row", [row for row in ROWS if row.values[0].kind == ALGORITHM])
def test_an_algorithm_parameter_must_name_a_flat_all_reduce(row):
    with pytest.raises(PapcollError, match=f"parameter {row.name}"):
        papcoll.check_parameters(Parameters(**{row.name: "teleport"}), 4)
    with pytest.raises(PapcollError, match=f"parameter {row.name}.*flat all-reduce"):
        papcoll.check_parameters(Parameters(**{row.name: "prr"}), 4)


# a text's grammar is its own: the one value of each text parameter to try
TEXT_VALUES = {"schedule": "a2,a2"}


def _not_default(row) -> object:
    """A value of the row's kind that is not its default, chosen by the kind alone."""
    if row.kind == WHOLE_NUMBER:
        return row.minimum + 1
    if row.kind == RANK_LIST:
        return [3, 2, 1, 0]
    if row.kind == ALGORITHM:  # a flat all-reduce other than the one unset means
        return next(name for name in ("ring", "recursive_doubling") if name != row.unset)
    return TEXT_VALUES[row.name]


@pytest.mark.parametrize("row", [row for row in ROWS if row.values[0].option])
def test_every_row_shapes_the_schedules_of_the_algorithms_that_read_it(row):
    # a value set through the table reaches each algorithm the row names: its schedule
    # differs from the default one (the tree is a network's, tested in test_topology);
    # 64 K elements, so that straggler is past its latency-bound rule, which has no segments
    for algorithm in row.algorithms:
        if algorithm == "auto":
            continue
        shaped, default = (
            papcoll.schedule_text(algorithm, 4, 0, 1 << 16, 4, Context(
                parameters=parameters, groups=[0, 0, 1, 1], arrivals=[0.0, 0.0, 0.0, 0.01],
                tau=1e-4))
            for parameters in (Parameters(**{row.name: _not_default(row)}), Parameters()))
        assert shaped != default, (row.name, algorithm)


def test_papcoll_parameters_lists_every_row(papcoll_command):
    result = papcoll_command("parameters", "--json", "-")
    assert result.returncode == 0, result.stderr
    listed = json.loads(result.stdout)
    assert [row["name"] for row in listed] == [row.name for row in PARAMETER_TABLE]
    for shown, row in zip(listed, PARAMETER_TABLE, strict=True):
        assert shown["algorithms"] == list(row.algorithms) and shown["option"] == row.option
        assert shown["default"] == row.unset and shown["help"] == row.help
        if row.kind == WHOLE_NUMBER:
            assert (shown["minimum"], shown["maximum"]) == (row.minimum, row.maximum)
    table = papcoll_command("parameters")
    assert table.returncode == 0 and all(row.name in table.stdout for row in PARAMETER_TABLE)
    algorithms = json.loads(papcoll_command("algorithms", "--json", "-").stdout)
    reads = {entry["name"]: set(entry["parameters"]) for entry in algorithms}
    assert reads["straggler"] == {"segment_count"} and reads["hr2"] >= {"inner_algorithm"}


@pytest.mark.parametrize("command", ["verify", "schedule", "sim"])
def test_every_option_of_the_table_is_offered_with_its_rows_help(papcoll_command, command):
    shown = " ".join(papcoll_command(command, "--help").stdout.split())
    for row in PARAMETER_TABLE:
        if row.option:
            assert row.option in shown, (command, row.option)
            assert row.help in shown, (command, row.help)


def test_an_option_refuses_a_value_outside_its_rows_range(papcoll_command):
    row = parameter("segment_count")
    result = papcoll_command("verify", "--algorithm", "linear_tree", "--ranks", "4", "--count",
                             "64", row.option, str(row.maximum + 1))
    assert result.returncode == 2
    assert f"must be in {row.minimum}..{row.maximum}" in result.stderr


def test_rank_order_option_orders_the_ring(papcoll_command):
    ordered = papcoll_command("verify", "--algorithm", "ring", "--ranks", "4", "--count", "64",
                              "--rank-order", "3,1,2,0", "--json", "-")
    assert ordered.returncode == 0, ordered.stderr
    assert json.loads(ordered.stdout)["ok"] is True
    refused = papcoll_command("verify", "--algorithm", "ring", "--ranks", "4", "--count", "64",
                              "--rank-order", "0,0,1,2")
    assert refused.returncode == 2 and "not a permutation" in refused.stderr
