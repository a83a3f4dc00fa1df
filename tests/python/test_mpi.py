"""papcoll over real MPI: `mpiexec -n P` for P in 1..8, each run under a timeout.

The differential program (tests/mpi/differential.c) compares papcoll_allreduce with
MPI_Allreduce for every algorithm and "auto", datatypes, ops (user-defined ones included),
counts {0, 1, P-1, P+1, 1009, 2^20+3} and MPI_IN_PLACE, and checks that every rank's result
is bitwise identical. The full matrix runs at P = 1, 2 (no rank waits for a core), a
representative set of (datatype, op) pairs at P = 3, 4, 6, 7, 8 (the full matrix there,
and all of P = 5, under `make test-long`, with seeded random cases: oversubscribed on 2
cores the full matrix of 22 algorithms takes 1-3 minutes a P, 2.5 at P = 4: make test must
stay within 15 minutes; the executor's datatype handling does not depend on P, and the
schedules do not depend on the datatype); slt
and prr run on made-up arrival predictions that change per case.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import passed_failed, run_under_mpiexec
from papcoll.lab.launcher import mpi_flavor

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "build" / os.environ.get("PAPCOLL_MPI", mpi_flavor())
TIMEOUT_SECONDS = 300


def run_mpi(ranks: int, program: str, *arguments: str) -> subprocess.CompletedProcess[str]:
    return run_under_mpiexec(ranks, [str(BUILD / program), *arguments], TIMEOUT_SECONDS)


def checks_passed(ranks: int, program: str) -> int:
    """Runs one of tests/mpi's check programs; asserts it exited 0 with no failed check, and
    returns how many passed (each program's last line: "N passed, M failed")."""
    result = run_mpi(ranks, program)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    passed, failed = passed_failed(result.stdout)
    assert failed == 0, result.stdout[-3000:]
    return passed


# The full matrix (every algorithm x type x op x count) at these P, the representative one
# elsewhere (the module's docstring says why)
FULL_MATRIX_RANKS = (1, 2)


# P = 5 (a remainder of one rank over a power of two, as at 3) under `make test-long`
@pytest.mark.parametrize("ranks", [1, 2, 3, 4, 6, 7, 8])
def test_differential_against_mpi_allreduce(ranks):
    matrix = "full" if ranks in FULL_MATRIX_RANKS else "representative"
    result = run_mpi(ranks, "mpi_differential", "--matrix", matrix)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    passed, failed = passed_failed(result.stdout)
    assert failed == 0 and passed > 0


def _schedules_to_run(ranks: int) -> list[str]:
    """The first factored, split and merged schedule of P, and one more of each kind
    where there is one (merged ones must refuse the non-commutative op)."""
    from papcoll.multiplying import enumerate_schedules

    chosen: dict[str, list[str]] = {}
    for kind, schedule in enumerate_schedules(ranks):
        if len(chosen.setdefault(kind, [])) < 2:
            chosen[kind].append(schedule)
    return [schedule for schedules in chosen.values() for schedule in schedules]


@pytest.mark.parametrize("ranks", range(1, 9))
def test_recursive_multiplying_schedules_over_mpi(ranks):
    for schedule in _schedules_to_run(ranks):
        result = run_mpi(ranks, "mpi_differential", "--matrix", "representative",
                         "--algorithms", "recursive_multiplying", "--counts", "0,1,1009",
                         "--large-count", "0", *(["--schedule", schedule] if schedule else []))
        assert result.returncode == 0, (schedule, result.stdout[-2000:] + result.stderr[-3000:])
        passed, failed = passed_failed(result.stdout)
        assert failed == 0 and passed > 0, schedule


@pytest.mark.parametrize("ranks", range(1, 9))
def test_hierarchical_and_topology_algorithms_over_mpi(ranks):
    # groups made by color (one machine is one node): blocks of 2, and uneven sizes 1, 2, 3..
    # with other inner / outer algorithms; ring_topology on a two-switch tree;
    # pap_hierarchical with made-up predictions per case (differential.c) on both layouts,
    # after auto (a communicator's first call through the arrival monitor has no prediction
    # yet), and auto itself choosing among them with groups
    runs = [["--algorithms", "hr1,hr2,smp_binomial,smp_butterfly,auto,pap_hierarchical",
             "--color-blocks", "2"],
            ["--algorithms", "hr1,hr2", "--color-blocks", "uneven", "--inner", "rabenseifner",
             "--outer", "ring"],
            ["--algorithms", "auto,pap_hierarchical", "--color-blocks", "uneven"],
            ["--algorithms", "ring_topology", "--tree"]]
    for arguments in runs:
        result = run_mpi(ranks, "mpi_differential", "--matrix", "representative", "--counts",
                         "0,1,1009", "--large-count", "0", *arguments)
        assert result.returncode == 0, (arguments, result.stdout[-2000:] + result.stderr[-3000:])
        passed, failed = passed_failed(result.stdout)
        assert failed == 0 and passed > 0, arguments


@pytest.mark.parametrize("ranks", [2, 3, 5])
def test_long_messages_are_split_and_still_match(ranks):
    # max_message_elements = 1000 makes every long message travel as several MPI messages,
    # the path counts beyond INT_MAX take
    result = run_mpi(ranks, "mpi_differential", "--matrix", "representative",
                     "--counts", "1009,4099", "--large-count", "0",
                     "--max-message-elements", "1000")
    assert result.returncode == 0, result.stderr[-3000:]
    assert passed_failed(result.stdout)[1] == 0


@pytest.mark.parametrize(("program", "ranks", "least_checks"), [
    *[("mpi_errors", ranks, 34) for ranks in (1, 3, 4)],
    # the agreement check (PAPCOLL_CHECK): ranks that disagree all get an error, no hang
    *[("mpi_agreement", ranks, 11) for ranks in (2, 3, 4)],
    # a call that fails with messages in flight: none left posted, later calls refused
    ("mpi_failed_call", 2, 2),
])
def test_bad_input_gets_error_classes_and_messages(program, ranks, least_checks):
    result = run_mpi(ranks, program)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    passed, failed = passed_failed(result.stdout)
    assert failed == 0 and passed >= least_checks


def test_c_example_runs():
    result = run_mpi(4, "allreduce_example")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("matches MPI_Allreduce") == 4


@pytest.mark.long
@pytest.mark.parametrize("ranks", [3, 4, 5, 6, 7, 8])
def test_full_matrix_at_the_other_process_counts(ranks):
    result = run_mpi(ranks, "mpi_differential", "--matrix", "full")
    assert result.returncode == 0, result.stderr[-3000:]
    assert passed_failed(result.stdout)[1] == 0


@pytest.mark.long
@pytest.mark.parametrize("ranks", [2, 3, 4, 7, 8])
def test_randomized_cases(ranks):
    result = run_mpi(ranks, "mpi_differential", "--random", "400", "--seed", str(1000 + ranks))
    assert result.returncode == 0, result.stderr[-3000:]
    assert passed_failed(result.stdout)[1] == 0


@pytest.mark.parametrize("ranks", [2, 3, 4])
def test_monitor_predictions_and_agreed_fallback(ranks):
    # slt, prr, straggler: predictions used when every rank gives one; one rank misbehaving
    # (skips edge, edge twice, fraction 1.5 / 0 / NaN, edge before compute_begin, NaN /
    # negative / absurd prediction) makes every rank fall back to the ring for that call;
    # history and automatic modes learn a late rank; auto sees it and keeps native when
    # arrivals are even; straggler's schedules for 0, 1, 2 and staggered late ranks match
    # MPI_Allreduce bitwise
    assert checks_passed(ranks, "mpi_monitor") >= 100


@pytest.mark.parametrize("ranks", [2, 4])
def test_arrival_source_follows_a_late_rank_that_moves(ranks):
    # AUTOMATIC arrivals: the late rank moves in the middle of a period of 8 calls; the
    # prediction names the new late rank alone from at most 8 calls after the change on
    assert checks_passed(ranks, "mpi_moving_late_rank") == 41


@pytest.mark.parametrize("ranks", [1, 2, 4])
def test_decision_made_by_the_rank_predicted_first(ranks):
    # auto's decision off the late rank's path: a new shape's decision is made by the rank
    # predicted to arrive first and received by the others (decided_by, the same on every
    # rank), then kept by every rank alike, even after one rank alone asked
    # papcoll_resolve_algorithm about more shapes than the cache holds (else: a hang)
    assert checks_passed(ranks, "mpi_decision_sharing") == 25


@pytest.mark.parametrize("ranks", [1, 2, 4])
def test_one_decision_for_every_call_kind(ranks):
    # a blocking call, a non-blocking post and a persistent start of one shape choose the
    # same algorithm, balanced and (P >= 3) with rank 1 late; a post of a shape decided
    # before, by a blocking call or a post, finds the decision kept (no simulation)
    assert checks_passed(ranks, "mpi_decision_kinds") == (55 if ranks >= 3 else 16)


@pytest.mark.parametrize("ranks", [1, 2, 4])
def test_auto_runs_the_mpi_librarys_own_algorithms(ranks):
    # MPICH: auto tries each of MPICH's named all-reduce algorithms where it runs native
    # ("native:NAME" in the report), the same on every rank, results equal to
    # MPI_Allreduce, MPICH's control variable restored after every call; the default only
    # for a non-commutative op, "none", or an algorithm the user forced; clear errors for
    # an unknown name, ranks that differ, a list where the user forced one. One rank: a list
    # is checked as at any size (an unknown name is an error) but only the default runs.
    # Open MPI: the default only, and a list is an error, at every size.
    expected = (5 if ranks == 1 else 12) if mpi_flavor() == "mpich" else 3
    assert checks_passed(ranks, "mpi_native_variants") == expected


@pytest.mark.skipif(mpi_flavor() != "mpich", reason="MPICH's control variable")
def test_an_algorithm_name_runs_that_algorithm(monkeypatch):
    # the name lookup (src/mpi/native_names.c) gives the value MPICH itself took from its
    # environment for the same name: a wrong mapping would run another algorithm silently;
    # auto keeps the algorithm the environment forced, and a list is then an error
    monkeypatch.setenv("MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM", "ring")
    result = run_mpi(2, "mpi_native_variants", "--forced", "ring")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert passed_failed(result.stdout) == (4, 0), result.stdout[-3000:]


def test_auto_keeps_the_default_native_under_thread_multiple():
    # the control variable is the whole process's: under MPI_THREAD_MULTIPLE another
    # thread's all-reduce could see it, so auto runs the default, and a list is an error
    result = run_mpi(2, "mpi_native_variants", "--multiple")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert passed_failed(result.stdout) == (4, 0), result.stdout[-3000:]


@pytest.mark.parametrize("ranks", [1, 2, 4])
def test_closed_loop_measures_and_overrules(ranks):
    # auto's closed loop on a model that cannot tell algorithms apart: the alternative is
    # probed early, both sides' measured times reach every rank and stay below the call's
    # own duration, the side measured faster runs from then on (overruled set exactly when
    # it is not the model's), results match MPI_Allreduce, every rank runs the same
    assert checks_passed(ranks, "mpi_closed_loop") >= 70
