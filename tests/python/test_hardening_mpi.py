"""Settings that must agree across ranks (the front doors' audit): papcoll_comm_create checks
every papcoll_config field that must (src/mpi/config_agreement.c; tests/mpi/agreement.c
shows each one refused on every rank where it differs). Here: the table that says which
fields must agree names every field the struct declares, so a field added later cannot be
left out of the check."""

from __future__ import annotations

import json
import time
from pathlib import Path

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
# The drop-in's non-blocking and persistent requests where the program errs or an operation
# fails (tests/pmpi/request_errors.c says what each case does): never a wrong result, never
# an abort where MPI_ERRORS_RETURN is set, and papcoll's own words through MPI_Error_string.
REQUEST_ERRORS = BUILD / "pmpi_request_errors"
PROGRESS_MODES = {"calls": ({}, "single"), "thread": ({"PAPCOLL_PROGRESS": "thread"}, "multiple")}


def request_error_lines(case: str, progress: str, ranks: int = 2, algorithm: str = "auto",
                        check: str = "0", report: Path | None = None,
                        ) -> tuple[list[str], str, int]:
    environment, threading = PROGRESS_MODES[progress]
    if report is not None:
        environment = {**environment, "PAPCOLL_REPORT": str(report)}
    result = run_preloaded(ranks, [str(REQUEST_ERRORS), case, threading],
                           {"PAPCOLL_MIN_BYTES": "0", "PAPCOLL_ALGORITHM": algorithm,
                            "PAPCOLL_CHECK": check, **environment})
    output = result.stdout + result.stderr
    lines = [line for line in result.stdout.splitlines()
             if line.startswith("request_errors: rank ")]
    return lines, output, result.returncode


def fields(line: str) -> dict[str, str]:
    words = line.split()
    return {"class": words[5], "refused": words[7], "wrong": words[9],
            "text": " ".join(words[11:])}


@pytest.mark.parametrize("progress", ["calls", "thread"])
@pytest.mark.parametrize("case", ["cancel-persistent", "cancel-post", "start-active"])
def test_cancel_and_start_of_an_active_request_are_refused_and_results_stay_right(
        case, progress):
    """MPI_Cancel of a started persistent all-reduce was accepted: the program's handle was
    cancelled while papcoll's operation went on, and every later MPI_Wait returned before
    its all-reduce had finished (wrong results, exit 0). MPI_Cancel of a posted one ended
    the job ("cancel function returned error code 19"), as did MPI_Start of an active
    request under MPICH. Each is refused with MPI_ERR_REQUEST (Open MPI's own answer to
    both), papcoll's words in MPI_Error_string, and every result after it is right."""
    lines, output, returncode = request_error_lines(case, progress)
    assert returncode == 0, output[-3000:]
    assert len(lines) == 2, output[-3000:]
    for line in lines:
        seen = fields(line)
        assert seen["refused"] == "1", line
        assert seen["wrong"] == "0", line
        assert seen["text"].startswith("papcoll (libpapcoll_pmpi): MPI_"), line


# recursive doubling exchanges whole vectors: under Open MPI 5.0 the rank with fewer elements
# receives the longer message into its shorter buffer and Open MPI itself corrupts the heap
# ("double free or corruption", with papcoll's old code too; docs/pmpi.md says so of its own
# all-reduce on such a call), so there only ring, whose pieces papcoll checks itself
FAILING_ALGORITHMS = (["ring", "recursive_doubling"]
                      if mpi_flavor(str(mpiexec_path())) == "mpich" else ["ring"])


@pytest.mark.parametrize("progress", ["calls", "thread"])
@pytest.mark.parametrize("case", ["failed-post", "failed-persistent"])
@pytest.mark.parametrize("algorithm", FAILING_ALGORITHMS)
def test_a_failed_non_blocking_or_persistent_operation_ends_the_job_with_papcolls_message(
        case, progress, algorithm):
    """Ranks that pass different counts (erroneous) make the operation fail. Its MPI_Wait
    returned MPI_SUCCESS with the buffer unfinished (persistent: the error came only at the
    next start or free), or MPICH's "user request free function returned error code 14"
    with no word of papcoll's. Under the drop-in the rank that finds the difference now ends
    the job with papcoll's message, even under MPI_ERRORS_RETURN (src/mpi/errors.c says why:
    the ranks that did not find it wait inside the operation for ever); no rank's MPI_Wait
    returns success. The C API's return of the error through MPI_Wait is
    tests/mpi/failure_paths.c's."""
    started = time.monotonic()
    lines, output, returncode = request_error_lines(case, progress, algorithm=algorithm)
    elapsed = time.monotonic() - started
    assert returncode != 0, output[-3000:]
    assert not any(fields(line)["class"] == "0" for line in lines), output[-3000:]
    assert ENDS_THE_JOB in output, output[-3000:]
    assert "the ranks' calls differ" in output, output[-3000:]
    assert elapsed < hang_guard(10), (elapsed, output[-2000:])


@pytest.mark.parametrize("progress", ["calls", "thread"])
def test_statuses_of_completed_requests_read_alike(progress):
    """A collective's source and tag are undefined (MPI-4.1 6.12; MPICH leaves whatever its
    last message had), but the count is 0 and the request not cancelled. A persistent start
    gave the status of the drop-in's private 0-byte receive from the process itself, with a
    tag of its own; it now reads as a post's does."""
    lines, output, returncode = request_error_lines("status", progress)
    assert returncode == 0, output[-3000:]
    assert len(lines) == 4, output[-3000:]
    # "request_errors: rank R status post|start source S tag T count C cancelled X"
    statuses = [line.split()[5:] for line in lines]
    for words in statuses:
        assert words[words.index("count") + 1] == "0", lines
        assert words[words.index("cancelled") + 1] == "0", lines
    assert len({tuple(words) for words in statuses}) == 1, lines


@pytest.mark.skipif(mpi_flavor(str(mpiexec_path())) != "mpich",
                    reason="Open MPI's MPI_Waitall returns at the failure, leaving the start "
                           "(whose all-reduce ends later) pending, MPI_ERR_PENDING, as MPI "
                           "allows: the program must wait for it again, and the drop-in then "
                           "completes it as MPI would its own")
@pytest.mark.parametrize("progress", ["calls", "thread"])
def test_a_persistent_start_completed_beside_a_failed_request_can_start_again(tmp_path,
                                                                              progress):
    """MPI_Waitall(MPI_STATUSES_IGNORE) of a started persistent all-reduce and a receive
    that fails returns MPI_ERR_IN_STATUS: the drop-in read from the statuses whether the
    start's request completed, had none, and left it active, so every later MPI_Start was
    refused as a start of an active request. Now it passes statuses of its own."""
    report = tmp_path / "report.json"
    lines, output, returncode = request_error_lines("neighbour-failed", progress,
                                                    report=report)
    assert returncode == 0, output[-3000:]
    assert len(lines) == 2, output[-3000:]
    for line in lines:
        seen = fields(line)
        assert (seen["class"], seen["wrong"]) == ("0", "0"), line
    # the persistent request was papcoll's (its init and 6 starts), not passed to MPI
    totals = load_report(report)["totals"]
    assert totals["papcoll_calls"] == 7 and totals["native_calls"] == 0, totals


@pytest.mark.parametrize("progress", ["calls", "thread"])
def test_hundreds_of_requests_outstanding_complete_right(progress):
    """200 posts outstanding at once in one MPI_Waitall in reverse order, 100 through
    MPI_Testsome, 20 persistent all-reduces in MPI_Startall / MPI_Waitall: every result
    right, under the completion calls' table of papcoll's requests."""
    lines, output, returncode = request_error_lines("many", progress)
    assert returncode == 0, output[-3000:]
    assert len(lines) == 2, output[-3000:]
    for line in lines:
        seen = fields(line)
        assert (seen["class"], seen["wrong"]) == ("0", "0"), line


def test_a_start_after_a_refused_init_returns_mpi_err_request():
    """PAPCOLL_CHECK=1 refuses an MPI_Allreduce_init whose counts differ; MPI_Start of the
    request it left ended the job under MPICH ("Invalid MPI_Request", whatever the
    handlers). It is MPI_REQUEST_NULL, and its start returns MPI_ERR_REQUEST with papcoll's
    words through MPI_COMM_WORLD's handler."""
    lines, output, returncode = request_error_lines("refused-init", "calls", check="1")
    assert returncode == 0, output[-3000:]
    assert len(lines) == 2, output[-3000:]
    for line in lines:
        seen = fields(line)
        assert seen["refused"] == "1", line
        assert "MPI_Start of MPI_REQUEST_NULL" in seen["text"], line


# MPI 4's large-count posts and persistent inits (tests/pmpi/large_count.c): above 2^31 - 1
# elements they went to the MPI unseen (not counted, not papcoll's); now papcoll takes them
# like any other. 2^31 + 7 bytes a rank in place: 2 GiB a rank plus the algorithm's scratch,
# about 25 s at P = 2 here, so only `make test-long` runs it; the small count checks the
# same calls' route in `make test`.
LARGE_COUNT = BUILD / "pmpi_large_count"
LARGE_COUNTS = [100_003, pytest.param(2**31 + 7, marks=pytest.mark.long, id="2^31+7")]


@pytest.mark.skipif(mpi_flavor(str(mpiexec_path())) != "mpich",
                    reason="Open MPI 5.0 has no large-count calls")
@pytest.mark.parametrize("progress", ["calls", "thread"])
@pytest.mark.parametrize("algorithm", ["ring", "auto", "native-rule"])
@pytest.mark.parametrize("count", LARGE_COUNTS)
def test_large_count_posts_and_starts_are_papcolls_and_right(tmp_path, count, algorithm,
                                                             progress):
    """native-rule: a rules file that sends every call to the MPI's own all-reduce, which
    above INT_MAX was refused ("MPI's all-reduce takes at most INT_MAX elements") though
    posts and starts run MPI 4's large-count calls."""
    report_path = tmp_path / "report.json"
    environment, threading = PROGRESS_MODES[progress]
    if algorithm == "native-rule":
        rules = tmp_path / "rules.json"
        rules.write_text('{"papcoll_rules": 1, "rules": [{"algorithm": "native"}]}\n')
        environment = {**environment, "PAPCOLL_RULES": str(rules)}
        algorithm = "auto"
    result = run_preloaded(2, [str(LARGE_COUNT), str(count), threading],
                           {"PAPCOLL_ALGORITHM": algorithm, "PAPCOLL_MIN_BYTES": "0",
                            "PAPCOLL_REPORT": str(report_path), **environment},
                           timeout_seconds=300)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    lines = [line.split() for line in result.stdout.splitlines()
             if line.startswith("large_count: rank ")]
    assert len(lines) == 6, output[-3000:]  # a post and two starts, on each rank
    for words in lines:
        assert words[words.index("count") + 1] == str(count), words
        assert (words[words.index("code") + 1], words[words.index("wrong") + 1]) == ("0", "0"), \
            words
    totals = load_report(report_path)["totals"]
    # the post, the init and its two starts: each papcoll's (auto may run the MPI's own
    # inside papcoll's call, which still counts as papcoll's decision)
    assert (totals["calls"], totals["papcoll_calls"]) == (4, 4), totals
