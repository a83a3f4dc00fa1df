"""auto's tuning constants (papcoll_tuning, declared once in src/core/tuning_table.c): the
table held to the struct and to the listing, PAPCOLL_TUNING's refusals, a changed constant
changing auto's decision, and ranks with different constants refused at
papcoll_comm_create (MPI_COMM_WORLD's, made in MPI_Init under the drop-in)."""

from __future__ import annotations

import sys

import pytest
from conftest import run_under_mpiexec
from papcoll._core import ffi
from papcoll.core import Context
from papcoll.errors import PapcollError
from papcoll.settings import SETTINGS, tuning_markdown
from papcoll.sim import choose, preset
from papcoll.tuning import WHOLE_NUMBER, parse_tuning, tuning_constants
from test_pmpi import run_preloaded
from test_pmpi_settings import PROGRAM, on_rank_zero, refused

CONSTANTS = tuning_constants()


def test_the_table_declares_every_field_of_the_struct_in_order_with_its_kind():
    fields = ffi.typeof("papcoll_tuning").fields
    assert [name for name, _ in fields] == [constant.name for constant in CONSTANTS]
    for (name, field), constant in zip(fields, CONSTANTS, strict=True):
        whole = field.type.cname == "int64_t"
        assert whole == (constant.kind == WHOLE_NUMBER), name
        assert constant.minimum <= constant.default <= constant.maximum, name
        assert constant.help and constant.read_in, name


def test_the_defaults_are_the_table_s():
    assert parse_tuning("") == {constant.name: constant.default for constant in CONSTANTS}


@pytest.mark.parametrize(("text", "message"), [
    ("probe_often=3", "unknown tuning constant 'probe_often'"),
    ("margin=0.1,,", "unknown tuning constant ''"),
    ("margin=abc", "tuning constant margin: 'abc' is not a number"),
    ("margin=", "tuning constant margin: '' is not a number"),
    ("margin=nan", "tuning constant margin: 'nan' is not a number"),
    ("margin=1", "tuning constant margin = 1 is out of its range 0 .. 0.99"),
    ("calls_per_decision=0", "calls_per_decision = 0 is out of its range 1 .. 1e+09"),
    ("budget_floor=-1", "budget_floor = -1 is out of its range 0 .. 1e+12"),
    ("budget_floor=1.5", "tuning constant budget_floor = 1.5 is not a whole number"),
    ("samples_to_compare=6", "samples_to_compare = 6 is out of its range 1 .. 5"),
    ("probe_every=4", "probe_phase = 8 must be below probe_every = 4"),
    ("samples_to_compare=2", "switch_significance = 0.05 is below 0.1667, the least p of "
                             "samples_to_compare = 2 times against as many"),
    ("switch_significance=0.001", "switch_significance = 0.001 is out of its range")])
def test_a_bad_tuning_text_is_refused_naming_the_constant(text, message):
    with pytest.raises(PapcollError, match="PAPCOLL_TUNING: ") as refusal:
        parse_tuning(text)
    assert message in str(refusal.value)


def test_a_tuning_text_sets_only_the_constants_it_names():
    values = parse_tuning("margin=0.1,budget_floor=65536")
    assert values["margin"] == 0.1
    assert values["budget_floor"] == 65536
    assert values["alternative_share"] == 0.25


@pytest.mark.parametrize(("ranks", "count"), [(8, 1 << 16), (8, 1 << 18), (16, 1 << 20)])
def test_a_huge_margin_keeps_auto_on_native_where_the_default_takes_straggler(ranks, count):
    """One rank 5 ms late on a Hockney crossbar: straggler's predicted time after the wait is
    well under native's (by more than 5 %), so the default margin takes it; a margin of 99 %
    takes native, the decision the model's e-bar alone cannot overturn."""
    context = Context(arrivals=[0.0] * (ranks - 1) + [0.005], tau=1e-5)
    model = preset("hockney")
    default = choose(ranks, count, 4, model, context)
    assert default.algorithm == "straggler"
    assert default.predicted_seconds < default.native_seconds
    assert choose(ranks, count, 4, model, context, tuning="") == default
    cautious = choose(ranks, count, 4, model, context, tuning="margin=0.99")
    assert cautious.algorithm == "native"
    assert cautious.native_seconds == default.native_seconds


def test_settings_list_every_constant_from_the_table():
    row = next(setting for setting in SETTINGS if setting.environment == "PAPCOLL_TUNING")
    assert row.c == "tuning"
    section = "\n".join(tuning_markdown())
    for constant in CONSTANTS:
        assert f"{constant.name} (" in row.accepted
        assert f"| `{constant.name}` | {constant.shown(constant.default)} |" in section


@pytest.mark.parametrize(("value", "message"), [
    ("nope=1", "PAPCOLL_TUNING='nope=1': unknown tuning constant 'nope'"),
    ("margin=2", "PAPCOLL_TUNING='margin=2': tuning constant margin = 2 is out of its range")])
def test_a_bad_tuning_stops_the_program_at_mpi_init(value, message):
    refused(run_preloaded(2, [PROGRAM], {"PAPCOLL_TUNING": value}), message)


def test_ranks_with_different_tuning_are_refused_at_create():
    """Ranks with different constants would decide differently for one call (a hang): the
    digest of every constant is compared where the communicator is made."""
    refused(run_preloaded(3, on_rank_zero("PAPCOLL_TUNING", "margin=0.5"),
                          {"PAPCOLL_MIN_BYTES": "0"}),
            "the tuning constants' digest (config.tuning and PAPCOLL_TUNING) differs between "
            "ranks")


def test_python_s_config_refuses_a_bad_tuning_naming_it():
    from papcoll.communicator import Config

    with pytest.raises(PapcollError, match="unknown tuning constant 'margn'"):
        Config(tuning="margn=0.1")


def test_the_same_tuning_on_every_rank_runs():
    result = run_preloaded(2, [PROGRAM], {"PAPCOLL_TUNING": "margin=0.5,budget_floor=1000"})
    assert result.returncode == 0, (result.stdout + result.stderr)[-2000:]


CONFIG_PROGRAM = """
import sys
import numpy as np
import papcoll
from mpi4py import MPI
rank = MPI.COMM_WORLD.rank
tuning = sys.argv[1] if rank == 0 else ""
try:
    communicator = papcoll.Communicator(MPI.COMM_WORLD, config=papcoll.Config(tuning=tuning))
except papcoll.PapcollError as error:
    print(f"refused: {error}")
else:
    data = np.arange(1009, dtype=np.float64) * (rank + 1)
    result = communicator.allreduce(data)
    print("equal" if np.array_equal(result, MPI.COMM_WORLD.allreduce(data)) else "differ")
"""


@pytest.mark.parametrize(("tuning", "printed"), [
    ("", "equal"), ("budget_floor=262144", "equal"),
    ("margin=0.5", "refused: papcoll_comm_create: the tuning constants' digest")])
def test_python_s_config_tuning_reaches_the_agreement(tmp_path, tuning, printed):
    """Config.tuning on rank 0 only: its defaults written out agree with the others' (the
    digest is of the values), a changed constant fails every rank at create."""
    script = tmp_path / "config_tuning.py"
    script.write_text(CONFIG_PROGRAM)
    result = run_under_mpiexec(2, [sys.executable, str(script), tuning], 240)
    # counted, not split into lines: the ranks' lines may reach mpiexec interleaved
    assert result.stdout.count(printed) == 2, result.stdout[-2000:] + result.stderr[-2000:]
    assert ("refused" in printed) == (result.stdout.count("refused") == 2)
