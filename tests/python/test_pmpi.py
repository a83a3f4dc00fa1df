"""libpapcoll_pmpi.so: an MPI program that knows nothing of papcoll, run with it preloaded.

tests/pmpi/unmodified.c checks every MPI_Allreduce against closed forms and every rank's
bytes against rank 0's (split, dup, free, MPI_COMM_SELF, an intercommunicator, in place,
count 0, user-defined ops commutative and not, a contiguous derived datatype,
MPI_THREAD_MULTIPLE, a run without MPI_Finalize). Here it runs with and without the
preload, under every all-reduce algorithm forced by PAPCOLL_ALGORITHM, and the report must
count every call where it went and why. Third-party suites: test_pmpi_third_party.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import hang_guard, run_papcoll
from papcoll.core import algorithms
from papcoll.lab.launcher import mpi_flavor, mpiexec_command
from papcoll.pmpi import load_report, preload_library_path

ROOT = Path(__file__).resolve().parents[2]
FLAVOR = os.environ.get("PAPCOLL_MPI", mpi_flavor())
BUILD = ROOT / "build" / FLAVOR
PROGRAM = BUILD / "pmpi_unmodified"
TIMEOUT_SECONDS = 180
ALL_REDUCES = [info for info in algorithms() if not info.reduce_scatter]
# Calls of unmodified.c that papcoll must leave to MPI whatever the ranks: counts 0, 1 and
# 1000 on MPI_COMM_WORLD (3 calls each, below 64 KiB), and in "multiple" mode the worker
# threads' 2 x 5 x 3 calls.
BELOW_MIN_BYTES_CALLS = 9
OTHER_THREAD_CALLS = 30


def run_preloaded(ranks: int, program: list[str], environment: dict[str, str] | None = None,
                  preload: bool = True,
                  timeout_seconds: float = TIMEOUT_SECONDS) -> subprocess.CompletedProcess[str]:
    argv, launch_environment = mpiexec_command(ranks, program)
    if preload:
        launch_environment["LD_PRELOAD"] = str(preload_library_path())
    launch_environment.update(environment or {})
    return subprocess.run(argv, env=launch_environment, capture_output=True, text=True,
                          timeout=hang_guard(timeout_seconds))


def checks_passed(result: subprocess.CompletedProcess[str], finalized: bool = True) -> int:
    # without MPI_Finalize the MPI itself may end the job as a bad termination (MPICH's
    # hydra kills the other ranks): there only the checks and a finished job count
    assert result.returncode == 0 or not finalized, \
        result.stdout[-2000:] + result.stderr[-3000:]
    lines = [line for line in result.stdout.splitlines() if line.startswith("unmodified:")]
    assert lines, result.stdout
    return int(lines[-1].split()[1])


@pytest.mark.parametrize("mode", ["single", "multiple", "no-finalize"])
@pytest.mark.parametrize("ranks", [2, 3, 4])
def test_unmodified_program_same_with_and_without_preload(tmp_path, ranks, mode):
    report_path = tmp_path / "report.json"
    finalized = mode != "no-finalize"
    without = checks_passed(run_preloaded(ranks, [str(PROGRAM), mode], preload=False),
                            finalized)
    with_preload = checks_passed(run_preloaded(ranks, [str(PROGRAM), mode],
                                               {"PAPCOLL_REPORT": str(report_path)}),
                                 finalized)
    assert with_preload == without
    report = load_report(report_path)
    totals = report["totals"]
    assert report["complete"] == (mode != "no-finalize")
    assert report["ranks_reporting"] == (ranks if mode != "no-finalize" else 1)
    assert totals["papcoll_calls"] > 0
    assert totals["calls"] == totals["papcoll_calls"] + totals["native_calls"]
    reasons = totals["native_reasons"]
    assert reasons["below_min_bytes"] == BELOW_MIN_BYTES_CALLS
    assert reasons["one_rank"] > 0 and reasons["intercommunicator"] > 0
    assert reasons.get("other_thread", 0) == (OTHER_THREAD_CALLS if mode == "multiple" else 0)
    world = [site for site in report["sites"] if site["communicator"] == "MPI_COMM_WORLD"]
    assert world and all(site["ranks_reporting"] == report["ranks_reporting"] for site in world)
    freed = {site["communicator"] for site in report["sites"] if site["freed"]}
    assert "MPI_COMM_WORLD" not in freed and (mode == "no-finalize" or freed)


NONBLOCKING_PROGRAM = BUILD / "pmpi_nonblocking_unmodified"


# MPI_Iallreduce, MPI_Allreduce_init, MPI_Start(all), MPI_Request_free
@pytest.mark.parametrize("mode", ["single", "multiple"])
@pytest.mark.parametrize("ranks", [2, 3])
def test_nonblocking_program_same_with_and_without_preload(tmp_path, ranks, mode):
    def run(preload: bool) -> int:
        result = run_preloaded(ranks, [str(NONBLOCKING_PROGRAM), mode], environment,
                               preload=preload)
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
        lines = [line for line in result.stdout.splitlines()
                 if line.startswith("nonblocking_unmodified:")]
        assert lines, result.stdout
        return int(lines[-1].split()[1])

    report_path = tmp_path / "report.json"
    # MPI's calls advance papcoll under both MPIs (their progress hooks), with or without
    # papcoll's progress thread
    environment = {"PAPCOLL_REPORT": str(report_path), "PAPCOLL_MIN_BYTES": "0",
                   **({"PAPCOLL_PROGRESS": "thread"} if mode == "multiple" else {})}
    # Open MPI skips the calls on freed communicators (its own crash, see the program)
    assert run(preload=True) == run(preload=False) == (22 if FLAVOR == "mpich" else 18)
    report = load_report(report_path)
    totals = report["totals"]
    nonblocking = sum(site["nonblocking_calls"] for site in report["sites"])
    if FLAVOR == "mpich":
        # 2 blocking calls; 5 posts, 3 inits and 15 starts, all papcoll's
        assert (totals["calls"], nonblocking, totals["native_calls"]) == (25, 23, 0), totals
    else:  # Open MPI: 1 blocking call, 4 posts, 2 inits, 12 starts, all papcoll's
        assert (totals["calls"], nonblocking, totals["native_calls"]) == (19, 18, 0), totals


FIRST_CALLS_PROGRAM = BUILD / "pmpi_first_calls_unmodified"
# on MPI_COMM_WORLD, a duplicate and a reversed split: one MPI_Iallreduce, and one
# MPI_Allreduce_init started three times, each result compared with the MPI's
FIRST_CALLS_CHECKS = 3 * (1 + 3)


def first_calls_passed(result: subprocess.CompletedProcess[str]) -> int:
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    lines = [line for line in result.stdout.splitlines()
             if line.startswith("first_calls_unmodified:")]
    assert lines, result.stdout
    return int(lines[-1].split()[1])


@pytest.mark.parametrize("ranks", [2, 3])
def test_first_collectives_non_blocking_and_persistent_are_taken_by_papcoll(tmp_path, ranks):
    """Tried as a new user would, with the default settings: a program whose first
    collectives on MPI_COMM_WORLD and on the communicators it makes are MPI_Iallreduce and
    MPI_Allreduce_init. papcoll made its communicators at MPI_Init and in the constructors,
    so it takes every call, and the results are the MPI's."""
    report_path = tmp_path / "report.json"
    program = [str(FIRST_CALLS_PROGRAM)]
    assert first_calls_passed(run_preloaded(ranks, program, preload=False)) == \
        FIRST_CALLS_CHECKS
    assert first_calls_passed(run_preloaded(ranks, program,
                                            {"PAPCOLL_REPORT": str(report_path)})) == \
        FIRST_CALLS_CHECKS
    report = load_report(report_path)
    totals = report["totals"]
    assert totals["native_calls"] == 0 and totals["papcoll_calls"] == totals["calls"], totals
    calls: dict[str, dict[str, int]] = {}
    for site in report["sites"]:
        assert site["nonblocking_calls"] == site["calls"], site
        kinds = calls.setdefault(site["communicator"], {})
        kinds[site["call"]] = kinds.get(site["call"], 0) + site["calls"]
    # per communicator one post, and one init with its three starts
    assert "MPI_COMM_WORLD" in calls and len(calls) == 3, calls
    assert all(kinds == {"MPI_Iallreduce": 1, "persistent": 4} for kinds in calls.values()), \
        calls
    shown = run_papcoll("report", str(report_path))
    assert shown.returncode == 0, shown.stderr
    assert "MPI_Iallreduce" in shown.stdout and "persistent" in shown.stdout, shown.stdout


def test_a_communicator_papcoll_cannot_prepare_is_said_once_and_counted(tmp_path):
    """MPI_Comm_idup's communicator exists only once its request completes, where papcoll
    cannot make its own: the post goes to the MPI, said once on stderr, counted."""
    report_path = tmp_path / "report.json"
    result = run_preloaded(2, [str(FIRST_CALLS_PROGRAM), "idup"],
                           {"PAPCOLL_REPORT": str(report_path)})
    assert first_calls_passed(result) == FIRST_CALLS_CHECKS + 1
    assert result.stderr.count("has no communicator for") == 1, result.stderr
    assert result.stderr.count("went to the MPI;") == 1, result.stderr
    totals = load_report(report_path)["totals"]
    assert totals["native_reasons"] == {"no_papcoll_communicator": 1}, totals


@pytest.mark.parametrize("algorithm", [info.name for info in ALL_REDUCES] + ["native"])
def test_every_algorithm_forced(tmp_path, algorithm):
    """PAPCOLL_ALGORITHM=NAME runs NAME wherever papcoll takes the call; an algorithm that
    reorders operands leaves the non-commutative op to MPI (reason "op")."""
    report_path = tmp_path / "report.json"
    checks_passed(run_preloaded(3, [str(PROGRAM)], {"PAPCOLL_REPORT": str(report_path),
                                                    "PAPCOLL_ALGORITHM": algorithm}))
    report = load_report(report_path)
    reasons = report["totals"]["native_reasons"]
    if algorithm == "native":
        assert report["totals"]["papcoll_calls"] == 0
        assert reasons["interception_off"] == report["totals"]["calls"]
        return
    ran = {name for site in report["sites"] for name in site["algorithms"]}
    info = next(info for info in ALL_REDUCES if info.name == algorithm)
    # the PAP-aware ones run (and report) the ring until their first predictions
    assert algorithm in ran
    assert ran == {algorithm} or (info.needs_arrivals and ran == {algorithm, "ring"}), ran
    assert ("op" in reasons) == info.commutative_only


@pytest.mark.parametrize("variable, value, message", [
    ("PAPCOLL_ALGORITHM", "rnig", "PAPCOLL_ALGORITHM='rnig' is not an all-reduce"),
    ("PAPCOLL_ALGORITHM", next(info.name for info in algorithms() if info.reduce_scatter),
     "is not an all-reduce"),
    ("PAPCOLL_MIN_BYTES", "lots", "PAPCOLL_MIN_BYTES='lots' is not a byte count"),
    ("PAPCOLL_MIN_BYTES", "-5", "is not a byte count"),
])
def test_bad_setting_stops_at_start_with_a_message(variable, value, message):
    result = run_preloaded(2, [str(PROGRAM)], {variable: value})
    assert result.returncode != 0
    assert message in result.stderr
    assert "checks passed" not in result.stdout


def test_min_bytes_suffix_sends_everything_to_papcoll(tmp_path):
    report_path = tmp_path / "report.json"
    checks_passed(run_preloaded(2, [str(PROGRAM)], {"PAPCOLL_REPORT": str(report_path),
                                                    "PAPCOLL_MIN_BYTES": "0K"}))
    assert "below_min_bytes" not in load_report(report_path)["totals"]["native_reasons"]


PYTHON_PROGRAM = """
import numpy as np
from mpi4py import MPI
comm = MPI.COMM_WORLD
x = np.arange(100000, dtype=np.float64) * (comm.rank + 1)
y = np.empty_like(x)
for _ in range(10):
    comm.Allreduce(x, y, op=MPI.SUM)
assert np.array_equal(y, np.arange(100000) * comm.size * (comm.size + 1) / 2)
z = x.copy()
comm.Allreduce(MPI.IN_PLACE, z, op=MPI.MAX)
assert np.array_equal(z, x / (comm.rank + 1) * comm.size)
every = comm.gather(y.tobytes())
assert comm.rank != 0 or all(other == every[0] for other in every)
print("python program: ok")
"""


def test_python_program_through_preload(tmp_path):
    """mpi4py's Allreduce reaches MPI_Allreduce: `mpiexec python app.py` is covered too."""
    script = tmp_path / "app.py"
    script.write_text(PYTHON_PROGRAM)
    report_path = tmp_path / "report.json"
    result = run_preloaded(2, [sys.executable, str(script)],
                           {"PAPCOLL_REPORT": str(report_path)})
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.count("python program: ok") == 2
    report = load_report(report_path)
    assert report["totals"]["papcoll_calls"] == 11
    assert all(site["site"].startswith("MPI.") for site in report["sites"])


def test_report_command(tmp_path):
    report_path = tmp_path / "report.json"
    checks_passed(run_preloaded(2, [str(PROGRAM)], {"PAPCOLL_REPORT": str(report_path)}))
    shown = run_papcoll("report", str(report_path))
    assert shown.returncode == 0, shown.stderr
    assert "MPI_COMM_WORLD" in shown.stdout and "below_min_bytes" in shown.stdout
    rows = run_papcoll("report", str(report_path), "--json", "-")
    assert rows.returncode == 0, rows.stderr
    parsed = json.loads(rows.stdout)
    assert sum(row["calls"] for row in parsed) == load_report(report_path)["totals"]["calls"]
    broken = tmp_path / "broken.json"
    broken.write_text('{"papcoll_report": 1, "complete": true}')
    refused = run_papcoll("report", str(broken))
    assert refused.returncode == 2 and "has no \"ranks\"" in refused.stderr
    assert run_papcoll("preload").stdout.strip() == str(preload_library_path())
