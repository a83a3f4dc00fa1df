"""The Python API over mpi4py (papcoll.Communicator), the PyTorch DDP hook and the SGD
example, each run under real mpiexec with a timeout (programs in tests/python/programs)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import hang_guard, passed_failed, run_under_mpiexec
from papcoll._core import check_same_mpi

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = Path(__file__).resolve().parent / "programs"
TIMEOUT_SECONDS = 240


def run_python_mpi(ranks: int, script: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    return run_under_mpiexec(ranks, [sys.executable, str(script), *arguments],
                             TIMEOUT_SECONDS)


@pytest.mark.parametrize("ranks", [1, 2, 3, 4])
def test_communicator_agrees_with_mpi4py_allreduce(ranks):
    result = run_python_mpi(ranks, PROGRAMS / "communicator_check.py")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    passed, failed = passed_failed(result.stdout)
    assert failed == 0 and passed > 1000 * ranks


@pytest.mark.parametrize(("ranks", "progress"), [(1, "calls"), (2, "calls"), (3, "calls"),
                                                 (2, "thread")])
def test_iallreduce_and_allreduce_init_agree_with_mpi4py(ranks, progress, monkeypatch):
    # completed by wait(), test() and MPI.Request.Waitall beside mpi4py's own
    # requests; persistent starts; two outstanding completed in opposite orders; refusals
    monkeypatch.setenv("PAPCOLL_PROGRESS", progress)
    result = run_python_mpi(ranks, PROGRAMS / "nonblocking_check.py")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    passed, failed = passed_failed(result.stdout)
    assert failed == 0 and passed >= 150 * ranks


@pytest.mark.parametrize(("ranks", "progress"), [(1, "calls"), (2, "calls"), (3, "calls"),
                                                 (2, "thread")])
def test_mpi4py_names_and_persistent_request_agree_with_mpi4py(ranks, progress, monkeypatch):
    """Allreduce, Iallreduce and Allreduce_init with mpi4py's buffer specifications, each
    result against mpi4py's Comm.Allreduce of the same specification; one persistent
    request started again and again (Start, then Wait, Test or MPI.Request.Waitall; two
    by Startall; Free), as mpi4py's Prequest; and what the upper-case names refuse."""
    monkeypatch.setenv("PAPCOLL_PROGRESS", progress)
    result = run_python_mpi(ranks, PROGRAMS / "mpi4py_shape_check.py")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    passed, failed = passed_failed(result.stdout)
    assert failed == 0 and passed >= 300 * ranks


@pytest.mark.parametrize("ranks", [1, 2, 3])
def test_the_monitor_takes_tau_from_papcoll_tau_model(ranks):
    # rank 0's PAPCOLL_TAU_MODEL on every rank (tau = latency + segment x
    # (G + gamma), to the bit of papcoll.lab.calibrate.MonitorModel.tau); malformed text on any
    # rank fails every rank's slt/prr call with MPI_ERR_ARG naming the problem
    result = run_python_mpi(ranks, PROGRAMS / "tau_model_check.py")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    passed, failed = passed_failed(result.stdout)
    assert failed == 0 and passed >= 100 * ranks


@pytest.mark.parametrize(("ranks", "progress"), [(1, "calls"), (2, "calls"), (3, "calls"),
                                                 (2, "thread")])
def test_a_dropped_persistent_request_lets_its_communicator_be_freed(ranks, progress,
                                                                     monkeypatch):
    """A PersistentRequest dropped (inactive, started and not waited for, or in a cycle)
    left its Communicator impossible to free ("1 persistent all-reduces ... not freed"): it
    had no finalizer. And its last_choice() after free() raised cffi's TypeError."""
    monkeypatch.setenv("PAPCOLL_PROGRESS", progress)
    result = run_python_mpi(ranks, PROGRAMS / "persistent_lifetime_check.py")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    passed, failed = passed_failed(result.stdout)
    assert failed == 0 and passed >= 14, result.stdout[-3000:]


# P = 4 under `make test-long`: four processes importing torch on 2 cores take 35 s
@pytest.mark.parametrize("ranks", [2, pytest.param(4, marks=pytest.mark.long)])
def test_ddp_hook_averages_gradients(ranks):
    result = run_python_mpi(ranks, PROGRAMS / "ddp_check.py")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    passed, failed = passed_failed(result.stdout)
    assert failed == 0 and passed > 40 * ranks


def test_ddp_hooks_misused_end_with_a_clear_message_on_every_rank():
    """Each misuse of papcoll.torch's hooks ends on every rank with an exception that names
    it, never a hang or a wrong mean (programs/ddp_misuse_check.py lists them): bfloat16
    gradients said only "numpy cannot view this DLPack object"."""
    result = run_python_mpi(2, PROGRAMS / "ddp_misuse_check.py")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    passed, failed = passed_failed(result.stdout)
    assert failed == 0 and passed >= 30, result.stdout[-3000:]


def test_sgd_example_trains_and_prints_table_5(tmp_path):
    output = tmp_path / "train.json"
    result = run_python_mpi(2, ROOT / "examples" / "train_sgd.py", "--epochs", "3",
                            "--algorithm", "prr,auto,native", "--straggler", "1:2",
                            "--json", str(output))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    for column in ("e-bar / ring", "time / ring", "test accuracy"):
        assert column in result.stdout
    assert "Verdict, with rank 1 2 ms late a step: papcoll's auto against MPI_Allreduce: " \
        "training " in " ".join(result.stdout.split())
    runs = json.loads(output.read_text())["runs"]
    # ring: always the baseline; native: MPI_Allreduce itself through mpi4py
    assert [run["algorithm"] for run in runs] == ["ring", "prr", "auto", "native"]
    for run in runs:
        assert run["test_accuracy"] > 0.6  # 10 classes: chance is 0.1
        assert run["identical_weights"]
        assert run["ebar_seconds"] > 0 and run["training_seconds"] > 0
    steps = runs[1]["steps"]
    assert runs[1]["predicted_calls"] >= steps - 1  # all but the first step predicted
    assert sum(runs[2]["ran"].values()) == steps  # auto: what each step's call ran
    assert f"of {steps} steps" in result.stdout and runs[3]["predicted_calls"] == 0


@pytest.mark.parametrize(("arguments", "message"), [
    (["--straggler", "5:10"], "the rank must be in 0..0"),
    (["--straggler", "1:x"], "RANK:MS"),
    (["--algorithm", "nope"], "unknown algorithm 'nope'"),
    (["--algorithm", "rs_halving"], "'rs_halving' is a reduce-scatter"),
    (["--batch-size", "2000"], "exceeds the 1437 training images"),
])
def test_sgd_example_bad_input_names_the_problem(arguments, message):
    result = run_python_mpi(1, ROOT / "examples" / "train_sgd.py", "--epochs", "1", *arguments)
    assert result.returncode != 0
    assert message in result.stderr


def test_different_mpi_libraries_are_refused_with_both_names():
    mpich = "MPICH Version:      5.0.2\nMPICH Release date: ..."
    open_mpi = "Open MPI v5.0.8, package: Open MPI ..."
    check_same_mpi(mpich, mpich + "  ", Path("/lib/libpapcoll.so"))  # same: no error
    check_same_mpi(open_mpi, open_mpi + "\0", Path("/lib/libpapcoll.so"))  # Open MPI's NUL
    with pytest.raises(ImportError) as caught:
        check_same_mpi(mpich, open_mpi, Path("/lib/libpapcoll.so"))
    text = str(caught.value)
    assert "MPICH Version: 5.0.2" in text and "Open MPI v5.0.8" in text
    assert "/lib/libpapcoll.so" in text and "make build MPI=" in text


def test_import_papcoll_neither_needs_mpi4py_nor_starts_mpi():
    code = ("import sys, papcoll; papcoll.algorithms(); "
            "assert 'mpi4py' not in sys.modules, 'mpi4py imported'; "
            "assert papcoll.Communicator.__name__ == 'Communicator'")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=hang_guard(TIMEOUT_SECONDS))
    assert result.returncode == 0, result.stderr


def test_docs_example_is_the_example_file_and_runs():
    example = ROOT / "examples" / "python_allreduce.py"
    docs = (ROOT / "docs" / "python.md").read_text()
    code = example.read_text()
    body = code[code.index("import numpy"):]
    assert body.strip() in docs, "docs/python.md's example differs from " + example.name
    result = run_python_mpi(3, example)
    assert result.returncode == 0, result.stderr[-3000:]
    # one line a rank, whole and in rank order: rank, algorithm, the right sum, predicted
    printed = [line for line in result.stdout.splitlines() if " prr " in line]
    assert printed == [f"{rank} prr True True" for rank in range(3)], result.stdout


def test_straggler_choice_is_one_seeded_rank_per_step():
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import train_sgd
    finally:
        sys.path.pop(0)
    fixed = train_sgd.Straggler.parse("2:10", 4)
    assert [fixed.delay(rank, 7, seed=1) for rank in range(4)] == [0, 0, 0.01, 0]
    randomly = train_sgd.Straggler.parse("random:5", 4)
    late = []
    for step in range(40):
        delays = [randomly.delay(rank, step, seed=3) for rank in range(4)]
        assert sorted(delays) == [0, 0, 0, 0.005]  # exactly one rank late, by 5 ms
        late.append(delays.index(0.005))
        assert [randomly.delay(rank, step, seed=3) for rank in range(4)] == delays  # seeded
    assert len(set(late)) == 4  # every rank is the late one at some step
    assert train_sgd.Straggler.parse("none", 4) is None


def test_sgd_example_ends_in_a_verdict_that_names_an_overlap():
    """`make demo-train` ended without a verdict, beside two columns headed "weights"."""
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import train_sgd
    finally:
        sys.path.pop(0)

    def runs(name, seconds, ebars):
        return [train_sgd.RunResult(name, repeat, ebar, [ebar], total, 0.9, True, 10, 0)
                for repeat, (total, ebar) in enumerate(zip(seconds, ebars, strict=True))]

    line = train_sgd.verdict({"auto": runs("auto", [1.0, 1.1, 1.2], [0.010, 0.011, 0.030]),
                              "native": runs("native", [1.5, 1.6, 1.7], [0.012, 0.013, 0.014])},
                             "1:10")
    assert line == ("Verdict, with rank 1 10 ms late a step: papcoll's auto against "
                    "MPI_Allreduce: training faster, 0.69 x MPI_Allreduce's (0.67-0.71 over 3 "
                    "repeats); all-reduce no clear difference, 0.85 x MPI_Allreduce's (0.83-2.14 "
                    "over 3 repeats) (faster or slower only where the repeats' ranges do not "
                    "overlap).")
    assert train_sgd.verdict({"auto": runs("auto", [1.0], [0.01])}, "none") is None
