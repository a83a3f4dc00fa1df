"""Non-blocking and persistent all-reduce (docs/nonblocking.md), under mpiexec.

The differential program (tests/mpi/differential.c) with `--call nonblocking` posts every
case with papcoll_iallreduce beside the program's own point-to-point messages and completes
them in one MPI_Waitall; with `--call persistent` it runs papcoll_allreduce_init and two
starts. Each result must equal MPI_Allreduce's and be bitwise identical on every rank, for
every algorithm, a representative datatype x op set, counts 0 .. 1009 and a large count,
in place or not. tests/mpi/nonblocking.c checks the rest of the semantics against closed
forms: several outstanding operations completed in different orders on different ranks, a
post that must not wait for other ranks, count 0, refusals, a persistent request that
learns its late rank. Both run with each progress setting (PAPCOLL_PROGRESS): `calls`
(MPICH's progress hook, or papcoll_wait) and `thread` (MPI_THREAD_MULTIPLE).

P = 4 oversubscribes the 2-core test machine (every message waits for a time slice), so the
differential runs at P <= 3 here and at P = 4 under `make test-long`.
"""
import os
import sys

import pytest
from conftest import passed_failed, run_under_mpiexec
from test_mpi import TIMEOUT_SECONDS, checks_passed, run_mpi


@pytest.mark.parametrize("call", ["nonblocking", "persistent"])
@pytest.mark.parametrize("ranks", [1, 2])
def test_nonblocking_and_persistent_match_mpi_allreduce(ranks, call):
    result = run_mpi(ranks, "mpi_differential", "--matrix", "representative", "--call", call)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    passed, failed = passed_failed(result.stdout)
    assert failed == 0 and passed >= 1786 * ranks


@pytest.mark.parametrize("call", ["nonblocking", "persistent"])
def test_the_progress_thread_matches_mpi_allreduce(call, monkeypatch):
    # the thread advances the same schedules: the small counts suffice (make test's time)
    monkeypatch.setenv("PAPCOLL_PROGRESS", "thread")
    result = run_mpi(2, "mpi_differential", "--matrix", "representative", "--call", call,
                     "--counts", "0,1,1009", "--large-count", "0")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert passed_failed(result.stdout)[1] == 0


@pytest.mark.parametrize("call", ["nonblocking", "persistent"])
def test_nonblocking_at_three_ranks_for_the_arrival_aware_algorithms(call):
    # P = 3: a remainder over a power of two; the PAP-aware algorithms and auto, which
    # decide from arrivals, and the ring they fall back to
    result = run_mpi(3, "mpi_differential", "--matrix", "representative", "--call", call,
                     "--algorithms", "auto,ring,slt,prr,straggler", "--counts", "0,2,1009",
                     "--large-count", "0")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert passed_failed(result.stdout)[1] == 0


@pytest.mark.long
@pytest.mark.parametrize("call", ["nonblocking", "persistent"])
def test_nonblocking_and_persistent_at_four_ranks(call):
    result = run_mpi(4, "mpi_differential", "--matrix", "representative", "--call", call)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert passed_failed(result.stdout)[1] == 0


@pytest.mark.parametrize(("ranks", "progress", "tag_limit"), [
    (1, "calls", ""), (2, "calls", ""), (3, "calls", ""), (2, "thread", ""),
    (3, "thread", "32767"), (2, "calls", "32767")])
def test_nonblocking_semantics(ranks, progress, tag_limit, monkeypatch):
    monkeypatch.setenv("PAPCOLL_PROGRESS", progress)
    # PAPCOLL_TAG_LIMIT=32767 (the least MPI_TAG_UB MPI allows): the posts share one duplicate's
    # 32768 tags, and persistent requests need a duplicate each again
    monkeypatch.setenv("PAPCOLL_TAG_LIMIT", tag_limit)
    # 29 checks per rank on one rank, 31 elsewhere (the late-rank checks need two ranks, the
    # moving one three); the refusal of the thread without MPI_THREAD_MULTIPLE only where
    # the thread is not asked for
    per_rank = {1: 29, 2: 30}.get(ranks, 31) - (progress == "thread")
    assert checks_passed(ranks, "mpi_nonblocking") == per_rank * ranks


PINNED_PROGRAM = """
import numpy as np
import papcoll
from mpi4py import MPI
try:
    communicator = papcoll.Communicator(MPI.COMM_WORLD)
except papcoll.PapcollError as error:
    print(error)
else:
    data = np.arange(1009, dtype=np.float64) * (MPI.COMM_WORLD.rank + 1)
    result = communicator.iallreduce(data).wait()
    print("equal" if np.array_equal(result, MPI.COMM_WORLD.allreduce(data)) else "differ")
"""


OUTSIDE_AFFINITY = str(min(set(range(1024)) - os.sched_getaffinity(0)))


@pytest.mark.parametrize(("cpu", "progress", "printed"), [
    ("0", "thread", "equal"),
    ("1x", "thread", "PAPCOLL_PROGRESS_CPU='1x' is not a core number from 0 to 1023"),
    ("-1", "thread", "PAPCOLL_PROGRESS_CPU='-1' is not a core number from 0 to 1023"),
    (OUTSIDE_AFFINITY, "thread",
     f"PAPCOLL_PROGRESS_CPU='{OUTSIDE_AFFINITY}' is not a core this process may run on"),
    ("0", "calls", "PAPCOLL_PROGRESS_CPU='0' pins the progress thread, and this "
                   "communicator runs without it")])
def test_the_progress_thread_runs_on_the_core_papcoll_progress_cpu_names(cpu, progress, printed,
                                                                         monkeypatch):
    # the variable is read and checked where a communicator is made, before the ranks
    # compare their settings, and the thread pins itself to the core that was checked; a
    # value that is not a core, one outside the process's affinity mask (where pinning
    # failed and the thread ran unpinned) or one without the thread is refused by name
    monkeypatch.setenv("PAPCOLL_PROGRESS", progress)
    monkeypatch.setenv("PAPCOLL_PROGRESS_CPU", cpu)
    result = run_under_mpiexec(2, [sys.executable, "-c", PINNED_PROGRAM], TIMEOUT_SECONDS)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    # each rank prints one line: "equal", or its refusal (papcoll_comm_create's, which may
    # go on after `printed`); mpiexec may run the two lines together
    assert result.stdout.count(printed) == 2, result.stdout
    others = {"equal", "differ", "papcoll_comm_create"} - {printed}
    assert printed == "equal" or not any(other in result.stdout.replace(
        f"papcoll_comm_create: {printed}", "") for other in others), result.stdout
    assert printed != "equal" or result.stdout.replace("equal", "").strip() == "", \
        result.stdout


@pytest.mark.parametrize(("ranks", "progress", "tag_limit"), [
    (1, "calls", ""), (2, "calls", ""), (3, "calls", ""), (2, "thread", ""),
    (2, "calls", "32767"), (2, "thread", "32767")])
def test_tags_from_a_counter(ranks, progress, tag_limit, monkeypatch):
    # 16 posts outstanding at once, none waiting for another's tags, completed in reverse and
    # shuffled order, results equal to MPI_Allreduce's; 3000 persistent requests alive on
    # one communicator, none duplicating a communicator (500 under the limit, where each
    # needs a duplicate, and does): 10 checks a rank,
    # and rank 0's "all 16 hold their tags at once" where it has a peer. Under the limit the
    # counter comes round: 16400 posts outstanding, the last 16 waiting for the first 16 on
    # rank 0 (3 checks a rank and rank 0's count of waits; about 1 min at P = 3 on 2 cores,
    # so P = 2 here)
    monkeypatch.setenv("PAPCOLL_PROGRESS", progress)
    monkeypatch.setenv("PAPCOLL_TAG_LIMIT", tag_limit)
    per_rank = 10 + (3 if tag_limit else 0)
    rank_zero_extra = (1 + (1 if tag_limit else 0)) if ranks > 1 else 0
    assert checks_passed(ranks, "mpi_tag_counter") == per_rank * ranks + rank_zero_extra


@pytest.mark.parametrize("ranks", [2, 5])
def test_posts_take_tags_alike_where_schedules_use_different_counts(ranks):
    # priority_rabenseifner at P = 5 uses 5 tags on rank 0 and 6 on the others: each post
    # takes the most any rank's schedule uses, so the ranks' counters move alike (with
    # their own counts they drifted apart and the third post hung); 6 posts outstanding,
    # alternating it with ring, completed in reverse, results equal to MPI_Allreduce's
    assert checks_passed(ranks, "mpi_tag_counts_alike") == 13


@pytest.mark.parametrize(("case", "ranks", "expected_checks"), [
    ("persistent", 3, 8), ("hook", 2, 5), ("unstarted", 2, 10), ("unstarted", 3, 15),
    ("refusals", 2, 14)])
def test_failures_leave_nothing_in_flight(case, ranks, expected_checks):
    # tests/mpi/failure_paths.c: a failed start settles its start-time receives, a failure
    # found inside MPI's progress hook still reaches MPI_Wait, a post or start refused
    # before the engine took it frees cleanly (the sanitizer build, make test-sanitizers,
    # adds the use-after-free and locking checks); a post of INT64_MAX elements is refused
    # naming the count, and MPI_Cancel of a post is a no-op that leaves its result right
    result = run_mpi(ranks, "mpi_failure_paths", case)
    # the persistent case leaves with _exit (its all-reduce cannot complete), which Open
    # MPI's launcher reports as a failed job: there the checks' line says what happened
    if case != "persistent":
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert passed_failed(result.stdout) == (expected_checks, 0), \
        result.stdout[-2000:] + result.stderr[-3000:]


SCHEDULE_PROGRAM = """
import numpy as np
import papcoll
from mpi4py import MPI
communicator = papcoll.Communicator(MPI.COMM_WORLD)
data = np.arange(1009, dtype=np.float64)
kept = communicator.allreduce_init(data)
kept.start().wait()
refused = False
try:
    communicator.set_schedule(None)
except papcoll.PapcollError as error:
    refused = "persistent all-reduces of this communicator are not freed" in str(error)
dropped = communicator.allreduce_init(data)
dropped.start().wait()
kept.free()
del dropped  # the program lets it go: set_schedule frees it first, and goes on
communicator.set_schedule(None)
communicator.free()
# one line, from rank 0 (mpiexec may run the ranks' lines together): every rank's outcome
refused = MPI.COMM_WORLD.allreduce(refused, op=MPI.LAND)
if MPI.COMM_WORLD.rank == 0:
    print(f"refused on every rank: {refused}; set after the drop: True")
"""


def test_set_schedule_waits_for_no_dropped_persistent_request_and_refuses_a_live_one():
    # a live persistent request keeps the parameters it was made with: set_schedule is
    # refused naming it; one the program dropped is freed first, so the call goes on
    result = run_under_mpiexec(2, [sys.executable, "-c", SCHEDULE_PROGRAM], TIMEOUT_SECONDS)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert "refused on every rank: True; set after the drop: True" in result.stdout, \
        result.stdout
