"""The drop-in's settings at MPI_Init (the front doors' audit): a report path that is not a
regular file, settings that differ between ranks, a malformed PAPCOLL_TAU_MODEL or
PAPCOLL_CHECK: each stops every rank at MPI_Init with a message naming it, never a hang, a
clobbered file or a failure at every later call (src/pmpi/settings.c, intercept.c)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest
from conftest import VENV_BIN, hang_guard
from papcoll.lab.launcher import mpi_flavor, mpiexec_command
from papcoll.pmpi import preload_library_path
from test_pmpi import BUILD, TIMEOUT_SECONDS, run_preloaded

PROGRAM = str(BUILD / "pmpi_reproducible_unmodified")
FINISHED = "reproducible_unmodified:"


def on_rank_zero(variable: str, value: str, elsewhere: str | None = None,
                 program: tuple[str, ...] = (PROGRAM,)) -> list[str]:
    """The program, with variable=value on world rank 0 only, and =elsewhere on the other
    ranks where given (MPICH's hydra sets PMI_RANK, Open MPI OMPI_COMM_WORLD_RANK)."""
    otherwise = f'else export {variable}="{elsewhere}"; ' if elsewhere is not None else ""
    script = (f'if [ "${{PMI_RANK:-$OMPI_COMM_WORLD_RANK}}" = 0 ]; then '
              f'export {variable}="{value}"; {otherwise}fi; exec "$0" "$@"')
    return ["sh", "-c", script, *program]


def refused(result: subprocess.CompletedProcess[str], message: str) -> None:
    output = result.stdout + result.stderr
    assert result.returncode != 0, output[-2000:]
    assert message in output, output[-2000:]
    assert FINISHED not in result.stdout


@pytest.mark.parametrize("kind", ["symbolic link", "fifo", "directory", "device"])
def test_a_report_path_that_is_not_a_regular_file_is_refused_and_left_alone(tmp_path, kind):
    target = tmp_path / "target"
    path = tmp_path / "report.json"
    if kind == "symbolic link":
        path.symlink_to(target)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:
        path = Path("/dev/null")
    result = run_preloaded(2, [PROGRAM], {"PAPCOLL_REPORT": str(path)})
    refused(result, f"PAPCOLL_REPORT='{path}'")
    assert not target.exists()
    if kind == "fifo":
        assert stat.S_ISFIFO(path.lstat().st_mode)
    if kind == "device":
        assert stat.S_ISCHR(path.stat().st_mode)


@pytest.mark.parametrize(("kind", "why"), [
    ("missing folder", "which cannot be used: No such file or directory"),
    ("folder is a file", "cannot be examined: Not a directory"),
    ("trailing slash", "ends in '/'")])
def test_a_report_path_that_cannot_be_created_is_refused_at_mpi_init(tmp_path, kind, why):
    """Found where a new file's folder was missing: the run went on and its report was lost
    at MPI_Finalize with one line on stderr and exit 0."""
    if kind == "missing folder":
        path = f"{tmp_path}/absent/report.json"
    elif kind == "folder is a file":
        (tmp_path / "file").write_text("")
        path = f"{tmp_path}/file/report.json"
    else:
        path = f"{tmp_path}/report.json/"
    refused(run_preloaded(2, [PROGRAM], {"PAPCOLL_REPORT": path}), why)


def test_a_report_asked_for_on_some_ranks_only_stops_every_rank_at_mpi_init(tmp_path):
    """Rank 0 alone asking for a report hung MPI_Finalize: writing it gathers from every
    rank, and the ranks without the setting never came."""
    result = run_preloaded(3, on_rank_zero("PAPCOLL_REPORT", str(tmp_path / "report.json")))
    refused(result, "PAPCOLL_REPORT (set or not) differs between ranks")


def test_only_world_rank_zero_checks_the_report_path_it_alone_writes(tmp_path):
    """Rank 0 writes the report at its own path; on a cluster another node may have no such
    folder, which once stopped the job at MPI_Init. Here the other ranks' path names a
    missing folder (as it would there), and the run ends with rank 0's report."""
    path = tmp_path / "report.json"
    elsewhere = tmp_path / "absent" / "report.json"
    result = run_preloaded(3, on_rank_zero("PAPCOLL_REPORT", str(path), str(elsewhere)))
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(path.read_text())["complete"] is True
    assert not elsewhere.parent.exists()


def test_a_report_is_written_over_a_regular_file(tmp_path):
    path = tmp_path / "report.json"
    path.write_text("old")
    result = run_preloaded(2, [PROGRAM], {"PAPCOLL_REPORT": str(path)})
    assert result.returncode == 0, result.stderr[-2000:]
    assert path.read_text().startswith("{")
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]  # no partial file left


@pytest.mark.parametrize(("variable", "value"), [
    ("PAPCOLL_MIN_BYTES", "0"), ("PAPCOLL_ALGORITHM", "native"),
    ("PAPCOLL_ALGORITHM", "ring"), ("PAPCOLL_REPRODUCIBLE", "1")])
def test_settings_that_differ_between_ranks_stop_every_rank_at_mpi_init(variable, value):
    result = run_preloaded(2, on_rank_zero(variable, value))
    refused(result, f"{variable} differs between ranks")


@pytest.mark.parametrize(("variable", "value", "message"), [
    ("PAPCOLL_TAG_LIMIT", "32767", "PAPCOLL_TAG_LIMIT differs between ranks"),
    ("PAPCOLL_PROGRESS", "thread", "the ranks disagree on config.progress")])
def test_settings_read_at_the_first_papcoll_call_that_differ_stop_every_rank(variable, value,
                                                                             message):
    """Read where papcoll makes a communicator (MPI_COMM_WORLD's in MPI_Init): a post
    takes its tags below the tag limit, so ranks with different limits would hang in
    their first non-blocking call; every rank fails there, naming the setting."""
    # a program that asks for MPI_THREAD_MULTIPLE, which the progress thread needs
    program = (str(BUILD / "pmpi_unmodified"), "multiple")
    result = run_preloaded(3, on_rank_zero(variable, value, program=program),
                           {"PAPCOLL_MIN_BYTES": "0"})
    output = result.stdout + result.stderr
    assert result.returncode != 0, output[-2000:]
    assert message in output, output[-2000:]
    assert "checks passed" not in result.stdout


@pytest.mark.parametrize(("variable", "value", "message"), [
    ("PAPCOLL_TAU_MODEL", "latency=1e-6,bogus=2", "PAPCOLL_TAU_MODEL='latency=1e-6,bogus=2'"),
    ("PAPCOLL_CHECK", "maybe", "PAPCOLL_CHECK='maybe' is not 1/0"),
    ("PAPCOLL_MIN_BYTES", "64QB", "PAPCOLL_MIN_BYTES='64QB' is not a byte count")])
def test_a_malformed_setting_stops_the_program_at_mpi_init(variable, value, message):
    refused(run_preloaded(2, [PROGRAM], {variable: value}), message)


@pytest.mark.parametrize(("variable", "value", "message"), [
    # MPICH names the unknown algorithm; Open MPI has no variable to choose one by
    ("PAPCOLL_NATIVE_VARIANTS", "bogus",
     "PAPCOLL_NATIVE_VARIANTS names 'bogus'" if mpi_flavor() == "mpich"
     else "PAPCOLL_NATIVE_VARIANTS is set, but this MPI library has no"),
    ("PAPCOLL_TAG_LIMIT", "100", "PAPCOLL_TAG_LIMIT='100' is not a whole number from 32767"),
    ("PAPCOLL_PROGRESS", "thread", "needs MPI_THREAD_MULTIPLE")])
def test_a_setting_papcoll_comm_create_refuses_stops_the_program_at_mpi_init(variable, value,
                                                                           message):
    """MPI_COMM_WORLD's papcoll communicator is made in MPI_Init (so that a first
    MPI_Iallreduce finds one): a setting papcoll_comm_create refuses stops every rank there,
    said once, even in a program with no all-reduce papcoll takes (papcoll-setup-cost's
    only one moves 8 bytes)."""
    result = run_preloaded(2, [str(BUILD / "papcoll-setup-cost"), "1"], {variable: value})
    output = result.stdout + result.stderr
    assert result.returncode != 0, output[-2000:]
    assert output.count(message) == 1, output[-2000:]
    assert "setup_cost:" not in result.stdout


def a_core_this_process_may_not_run_on() -> str:
    """The lowest core number (below glibc's CPU_SETSIZE, 1024) outside this process's
    affinity mask: beyond the machine's cores where the mask holds them all."""
    allowed = os.sched_getaffinity(0)
    return str(min(set(range(1024)) - allowed))


# the drop-in's settings, every one of them: papcoll_comm_create reads some (PAPCOLL_PROGRESS,
# PAPCOLL_TAG_LIMIT, PAPCOLL_TUNING, ...), which made them refused at MPI_Init only where
# MPI_Init made MPI_COMM_WORLD's papcoll communicator (P > 1, PAPCOLL_ALGORITHM not native);
# one setting, one parser (src/core/environment_table.c): no value is taken with spaces
# around it where another setting's is refused for them
MALFORMED_SETTINGS = [
    ("PAPCOLL_PROGRESS", "bogus", "PAPCOLL_PROGRESS='bogus' is neither 'calls' nor 'thread'"),
    ("PAPCOLL_PROGRESS", "thread ", "PAPCOLL_PROGRESS='thread ' is neither 'calls' nor"),
    ("PAPCOLL_TAG_LIMIT", "bogus", "PAPCOLL_TAG_LIMIT='bogus' is not a whole number from 32767"),
    ("PAPCOLL_TAG_LIMIT", " 40000", "PAPCOLL_TAG_LIMIT=' 40000' is not a whole number from"),
    ("PAPCOLL_TAG_LIMIT", "+40000", "PAPCOLL_TAG_LIMIT='+40000' is not a whole number from"),
    ("PAPCOLL_TUNING", "bogus=1", "PAPCOLL_TUNING='bogus=1': unknown tuning constant 'bogus'"),
    ("PAPCOLL_TUNING", "margin= 0.1", "PAPCOLL_TUNING='margin= 0.1': tuning constant margin"),
    ("PAPCOLL_CHECK", " 1", "PAPCOLL_CHECK=' 1' is not 1/0, true/false"),
    ("PAPCOLL_REPRODUCIBLE", "1 ", "PAPCOLL_REPRODUCIBLE='1 ' is not 1/0, true/false"),
    ("PAPCOLL_MIN_BYTES", " 64K", "PAPCOLL_MIN_BYTES=' 64K' is not a byte count"),
    ("PAPCOLL_PROGRESS_CPU", "4096", "PAPCOLL_PROGRESS_CPU='4096' is not a core number from 0"),
    ("PAPCOLL_PROGRESS_CPU", "0", "PAPCOLL_PROGRESS_CPU='0' pins the progress thread, and "
                                  "PAPCOLL_PROGRESS is not 'thread'"),
]


@pytest.mark.parametrize("algorithm", ["auto", "native"])
@pytest.mark.parametrize("ranks", [1, 2])
@pytest.mark.parametrize(("variable", "value", "message"), MALFORMED_SETTINGS)
def test_every_setting_is_refused_at_mpi_init_in_one_line_naming_it(variable, value, message,
                                                                    ranks, algorithm):
    result = run_preloaded(ranks, [PROGRAM], {variable: value, "PAPCOLL_ALGORITHM": algorithm})
    output = result.stdout + result.stderr
    assert result.returncode != 0, output[-2000:]
    assert output.count(message) == 1, output[-2000:]
    assert len([line for line in result.stderr.splitlines() if "papcoll" in line]) == 1, \
        result.stderr[-2000:]
    assert FINISHED not in result.stdout


@pytest.mark.parametrize("ranks", [1, 2])
def test_the_progress_thread_without_mpi_thread_multiple_is_refused_at_mpi_init(ranks):
    """The drop-in cannot change the program's MPI_Init, so it refuses there rather than
    run without the thread asked for (at P = 1 it went on, the setting ignored)."""
    result = run_preloaded(ranks, [PROGRAM], {"PAPCOLL_PROGRESS": "thread"})
    refused(result, "needs MPI_THREAD_MULTIPLE")
    assert (result.stdout + result.stderr).count("needs MPI_THREAD_MULTIPLE") == 1


@pytest.mark.parametrize("ranks", [1, 2])
def test_a_progress_cpu_this_process_may_not_run_on_is_refused_at_mpi_init(ranks):
    """The thread pinned itself to a core outside the process's affinity mask (beyond the
    machine's cores, say), failed, and ran unpinned without a word."""
    core = a_core_this_process_may_not_run_on()
    result = run_preloaded(ranks, [str(BUILD / "pmpi_unmodified"), "multiple"],
                           {"PAPCOLL_PROGRESS": "thread", "PAPCOLL_PROGRESS_CPU": core})
    message = f"PAPCOLL_PROGRESS_CPU='{core}' is not a core this process may run on"
    output = result.stdout + result.stderr
    assert result.returncode != 0, output[-2000:]
    assert output.count(message) == 1, output[-2000:]
    assert "checks passed" not in result.stdout


@pytest.mark.parametrize("value", ["64K", "64KB", "64KiB", "65536B"])
def test_min_bytes_takes_the_size_forms_of_the_command_line(value):
    result = run_preloaded(2, [PROGRAM], {"PAPCOLL_MIN_BYTES": value, "PAPCOLL_CHECK": "off"})
    assert result.returncode == 0, result.stderr[-2000:]
    assert FINISHED in result.stdout


def test_the_report_says_where_it_ran_and_which_native_tuning_was_in_force(tmp_path):
    """A native MPI_Allreduce on a node with more ranks than cores depends on the MPI's
    tuning (MPICH's default: 650 ms a 512 KiB call where 'mpir' took 9.4 ms), so the report
    names both, and `papcoll report` says it where the node was oversubscribed."""
    path = tmp_path / "report.json"
    result = run_preloaded(4, [PROGRAM], {"PAPCOLL_REPORT": str(path),
                                          "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM": "auto"})
    assert result.returncode == 0, result.stderr[-2000:]
    node = json.loads(path.read_text())["node"]
    cores = len(os.sched_getaffinity(0))
    assert node["ranks"] == 4 and node["cores"] == cores
    assert node["oversubscribed"] == (4 > cores)
    assert "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=auto" in node["native_tuning"]
    shown = subprocess.run([str(VENV_BIN / "papcoll"), "report", str(path)],
                           capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert ("(oversubscribed)" in shown.stdout) == node["oversubscribed"]


def test_the_report_counts_the_cores_the_ranks_may_use_not_the_machines(tmp_path):
    """A cpuset (a container, a batch job) allows fewer cores than the machine has: two ranks
    started on one allowed core are oversubscribed, whatever sysconf says."""
    path = tmp_path / "report.json"
    argv, environment = mpiexec_command(2, [PROGRAM])
    environment.update(LD_PRELOAD=str(preload_library_path()), PAPCOLL_REPORT=str(path))
    first_core = min(os.sched_getaffinity(0))
    result = subprocess.run(argv, env=environment, capture_output=True, text=True,
                            timeout=hang_guard(TIMEOUT_SECONDS),
                            preexec_fn=lambda: os.sched_setaffinity(0, {first_core}))
    assert result.returncode == 0, result.stderr[-2000:]
    node = json.loads(path.read_text())["node"]
    assert node["ranks"] == 2 and node["cores"] == 1 and node["oversubscribed"] is True, node
