"""Settings that must agree across ranks (the front doors' audit): papcoll_comm_create checks
every papcoll_config field that must (src/mpi/config_agreement.c; tests/mpi/agreement.c
shows each one refused on every rank where it differs). Here: the table that says which
fields must agree names every field the struct declares, so a field added later cannot be
left out of the check."""

from __future__ import annotations

import json
import time

import pytest
from conftest import hang_guard, passed_failed, run_under_mpiexec
from papcoll.lab.launcher import mpi_flavor, mpiexec_path
from papcoll.pmpi import load_report
from test_pmpi import BUILD, run_preloaded
from test_python_api import PROGRAMS, run_python_mpi


def test_every_config_field_is_classified_for_agreement():
    result = run_python_mpi(1, PROGRAMS / "config_fields.py")
    assert result.returncode == 0, result.stderr[-3000:]
    fields = json.loads(result.stdout.strip().splitlines()[-1])
    assert fields["declared"] == list(fields["classified"]), fields
    # the ones the audit found unchecked are among those that must agree
    for name in ("max_message_elements", "arrival_source", "grouping", "progress"):
        assert fields["classified"][name]
    assert not fields["classified"]["group_color"]


# An erroneous program ends in seconds (MPICH itself aborts in 0.2 s): a run of one that
# takes longer is a hang, and waits no longer than this (scaled by the load, hang_guard)
MISMATCH_TIMEOUT_SECONDS = 30

# what the mismatch may end in besides papcoll's own words: MPI's truncation error, or
# MPICH's assertion on a truncated shared-memory message (its own, after the error)
MPI_FAILURES = ("Message truncated", "MPI_ERROR field", "Assertion failed")


@pytest.mark.parametrize("ranks", [2, 3])
@pytest.mark.parametrize("delta", [7, -7])
# auto, balanced, would run the MPI's own all-reduce, which under Open MPI 5.0 overruns its
# own buffer on such a call (docs/pmpi.md; ASan shows it without papcoll too): auto's
# decision message carries the call's shape, so the ranks that receive it stop first
@pytest.mark.parametrize("algorithm", ["ring", "recursive_doubling", "rabenseifner",
                                       "straggler", "canonical_scatter", "canonical_gather",
                                       "segmented_ring", "linear_tree", "auto"])
def test_a_count_that_differs_between_ranks_fails_cleanly_under_the_drop_in(
        algorithm, delta, ranks):
    """Erroneous, so it may fail, but no worse than MPI itself (which aborts): it ends
    (the launcher's timeout would say a hang), without a segmentation fault, and no rank
    returns success from the call."""
    result = run_preloaded(ranks, [str(BUILD / "pmpi_count_mismatch"), "100000", str(delta)],
                           {"PAPCOLL_ALGORITHM": algorithm, "PAPCOLL_MIN_BYTES": "0"},
                           timeout_seconds=MISMATCH_TIMEOUT_SECONDS)
    output = result.stdout + result.stderr
    assert "Segmentation fault" not in output and "signal 11" not in output, output[-3000:]
    assert "double free" not in output, output[-3000:]
    assert result.returncode != 0, output[-2000:]
    assert "returned 0" not in result.stdout, output[-2000:]
    if algorithm == "auto":
        # the first call of a shape is decided by one rank and sent (choice_sharing.c):
        # every rank whose count differs from the decider's says so
        assert "elements of 8 bytes, this rank (" in output, output[-3000:]
        return
    assert "its schedule expects" in output or any(
        failure in output for failure in MPI_FAILURES), output[-3000:]


@pytest.mark.parametrize("ranks", [2, 3])
def test_auto_stops_a_rank_whose_count_differs_from_the_deciding_ranks(ranks):
    """The other side of the case above: the deciding rank (rank 0, on a first call) has the
    usual count and the last rank differs; the last rank names both counts and, under the
    fatal handler, ends the job before the MPI's own all-reduce runs with its count."""
    last = ranks - 1
    result = run_preloaded(ranks, [str(BUILD / "pmpi_count_mismatch"), "100000", "7", "fatal",
                                   str(last)], {"PAPCOLL_MIN_BYTES": "0"},
                           timeout_seconds=MISMATCH_TIMEOUT_SECONDS)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output[-2000:]
    assert (f"rank 0 passed 100000 elements of 8 bytes, this rank ({last}) 100007 of 8"
            in output), output[-3000:]
    assert "returned 0" not in result.stdout, output[-2000:]


# what papcoll prints where the rank that finds the difference ends the job (src/mpi/errors.c)
ENDS_THE_JOB = "the other ranks wait inside this all-reduce for a rank whose call differs"


@pytest.mark.parametrize("handler", ["fatal", "return"])
@pytest.mark.parametrize("call", ["blocking", "nonblocking"])
@pytest.mark.parametrize("algorithm", ["auto", "ring", "linear_tree", "recursive_doubling"])
@pytest.mark.parametrize("ranks", [2, 4])
def test_a_count_that_differs_ends_the_job_with_papcolls_message_without_the_check(
        ranks, algorithm, call, handler):
    """Without PAPCOLL_CHECK only some ranks can see that the counts differ (auto's decision
    carries the decider's count to the others; a forced algorithm's receive finds a message
    of the wrong size), and the others are inside the all-reduce already, waiting for them:
    under MPI_ERRORS_RETURN the job hung for ever (the deciding rank in the MPI's all-reduce),
    and a failed MPI_Testsome inside papcoll ended it with MPICH's "See the MPI_ERROR field"
    and no word of papcoll's. Now the rank that finds it prints papcoll's message and ends
    the job, in seconds, whatever the handler, blocking or not."""
    if algorithm == "auto" and call == "nonblocking":
        pytest.skip("auto's MPI_Iallreduce decides on each rank without a message and here "
                    "runs the MPI's own, which sees what it sees (MPICH 5.0: nothing)")
    started = time.monotonic()
    result = run_preloaded(ranks, [str(BUILD / "pmpi_count_mismatch"), "100000", "7", handler,
                                   "0", call],
                           {"PAPCOLL_ALGORITHM": algorithm, "PAPCOLL_MIN_BYTES": "0"},
                           timeout_seconds=20)
    elapsed = time.monotonic() - started
    output = result.stdout + result.stderr
    assert result.returncode != 0, output[-2000:]
    assert "returned 0" not in result.stdout, output[-2000:]
    assert ENDS_THE_JOB in output, output[-3000:]
    assert "its schedule expects" in output or "this rank (" in output, output[-3000:]
    # MPI_Init and papcoll's communicator take about 1 s of it at P = 4 on 2 cores
    assert elapsed < hang_guard(5), (elapsed, output[-2000:])


def test_with_errors_return_the_error_string_says_what_disagreed():
    """PAPCOLL_CHECK=1 and MPI_ERRORS_RETURN: the code the program gets reads, through
    MPI_Error_string, papcoll's words (which field differs), not only its class's text."""
    result = run_preloaded(2, [str(BUILD / "pmpi_count_mismatch"), "100000", "7", "return"],
                           {"PAPCOLL_CHECK": "1", "PAPCOLL_MIN_BYTES": "0"})
    assert result.returncode == 0, result.stderr[-3000:]
    lines = [line for line in result.stdout.splitlines() if line.startswith("count_mismatch:")]
    assert len(lines) == 2, result.stdout
    assert all("papcoll_allreduce: the ranks disagree on the count" in line for line in lines), \
        lines


# past MPICH's 2046, so that running out shows; Open MPI runs out later than this
MOST_COMMUNICATORS = 2100


def communicators_made(preload: bool) -> int:
    result = run_preloaded(2, [str(BUILD / "pmpi_many_communicators"),
                               str(MOST_COMMUNICATORS)], preload=preload)
    lines = [line for line in result.stdout.splitlines()
             if line.startswith("many_communicators:")]
    assert lines, result.stdout[-2000:] + result.stderr[-2000:]
    return int(lines[-1].split()[1])


@pytest.mark.skipif(mpi_flavor(str(mpiexec_path())) != "mpich",
                    reason="Open MPI does not run out of communicators by 2100, and making "
                           "2100 papcoll communicators there takes minutes")
def test_the_drop_in_spends_one_mpi_communicator_for_each_of_the_program():
    """papcoll's monitor and non-blocking calls share its one private communicator's tag
    space (communicator.c: prepare_nonblocking), so a program that never frees its
    communicators runs out no sooner than half as soon as without papcoll (it once ran out
    after a quarter: three of papcoll's for each of its own)."""
    natively = communicators_made(preload=False)
    assert communicators_made(preload=True) >= min(natively // 2 - 2, MOST_COMMUNICATORS), \
        natively


# Threads that post at once (MPI_THREAD_MULTIPLE), each on a communicator of its own. The
# engine is one per process (src/mpi/progress.c: one lock, and whoever holds it advances
# every thread's operations), so a thread's wait runs the others' schedules.
@pytest.mark.parametrize("progress", ["calls", "thread"])
@pytest.mark.parametrize("algorithm", ["auto", "ring", "recursive_doubling"])
@pytest.mark.parametrize("ranks", [2, 3])
def test_threads_posting_papcoll_iallreduce_at_once_get_mpis_results(
        monkeypatch, ranks, algorithm, progress):
    """tests/mpi/threads_posting.c: 4 threads x 30 posts, each compared with MPI_Allreduce,
    completed with MPI_Wait (MPI's progress hook) or papcoll_wait where there is none."""
    monkeypatch.setenv("PAPCOLL_PROGRESS", progress)
    result = run_under_mpiexec(ranks, [str(BUILD / "mpi_threads_posting"), "4", "30",
                                       algorithm, "wait"], timeout=120)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    passed, failed = passed_failed(result.stdout)
    assert failed == 0 and passed >= 4 * 30, result.stdout[-3000:]


@pytest.mark.parametrize("ranks", [2, 4])
def test_threads_posting_mpi_iallreduce_under_the_drop_in_get_mpis_results(tmp_path, ranks):
    """tests/pmpi/threads_posting.c: the main thread's posts run on papcoll, the 2 other
    threads' go to the MPI (other_thread), all at once; every result equals PMPI_Allreduce's
    and the report counts each thread's posts where they went."""
    report_path = tmp_path / "report.json"
    rounds = 15
    result = run_preloaded(ranks, [str(BUILD / "pmpi_threads_posting"), "3", str(rounds)],
                           {"PAPCOLL_MIN_BYTES": "0", "PAPCOLL_REPORT": str(report_path)},
                           timeout_seconds=120)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert f"threads_posting: {3 * rounds * ranks} passed, 0 failed" in result.stdout, \
        result.stdout[-3000:]
    totals = load_report(report_path)["totals"]
    assert totals["papcoll_calls"] > 0, totals
    assert totals["native_reasons"].get("other_thread") == 2 * totals["papcoll_calls"], totals
