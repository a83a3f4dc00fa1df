"""Starting real MPI jobs: the `mpiexec` of the MPI installed next to this Python, with the
flags that MPI needs here (tests, benchmarks and examples all launch through this).

Open MPI refuses to run as root unless told twice, and refuses more ranks than cores unless
asked to oversubscribe; MPICH's Hydra needs neither. CI runs as root on 2 cores with up to
8 ranks, so both matter.

MPICH (ch4) switches its intra-node collectives to shared-memory "release/gather" algorithms
after a few calls; their waits spin on memory flags without yielding, so with more ranks than
cores a 4 MiB MPI_Allreduce at P = 3 took 3 s instead of 20 ms here (each step waits for
the spinning rank's time slice to end). Oversubscribed, we select MPICH's portable
algorithms instead (`MPIR_CVAR_*_POSIX_INTRA_ALGORITHM=mpir`); the caller can override.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

# How a job is started: (ranks, program argv) -> (mpiexec argv, environment). This machine's
# mpiexec_command below, or an emulated cluster's (papcoll.lab.testbed.Testbed.mpiexec_command);
# the benchmark, the calibration and the validation take either.
Launch = Callable[[int, Sequence[str]], tuple[list[str], dict[str, str]]]

_MPICH_SHARED_MEMORY_COLLECTIVES = ("ALLREDUCE", "BCAST", "BARRIER", "REDUCE", "ALLGATHER",
                                    "ALLGATHERV", "ALLTOALL")


def mpiexec_path() -> Path:
    """The mpiexec beside the running interpreter (the venv's), else the one on PATH."""
    beside = Path(sys.executable).parent / "mpiexec"
    if beside.exists():
        return beside
    from shutil import which

    found = which("mpiexec")
    if found is None:
        raise FileNotFoundError("no mpiexec found: install an MPI (`make setup` does)")
    return Path(found)


def program_path(name: str, variable: str) -> Path:
    """One of papcoll's MPI programs (papcoll-bench, papcoll-calibrate) of this MPI's build:
    $VARIABLE, else build/<mpi>/ in the source tree this package runs from, else the one pip
    installed with the package, else the one on PATH."""
    if variable in os.environ:
        return Path(os.environ[variable])
    package = Path(__file__).resolve().parents[1]  # papcoll/, this module is papcoll/lab/
    built = package.parents[1] / "build" / mpi_flavor() / name
    if built.exists():
        return built
    installed = package / "_lib" / name
    if installed.exists():
        return installed
    from shutil import which

    found = which(name)
    if found is None:
        raise FileNotFoundError(f"{name} not found (looked in {built.parent} and PATH): run "
                                f"`make build` or set {variable}")
    return Path(found)


@functools.cache
def mpi_flavor(mpiexec: str | None = None) -> str:
    """'openmpi' or 'mpich' (Hydra), from `mpiexec --version`."""
    program = mpiexec or str(mpiexec_path())
    text = subprocess.run([program, "--version"], capture_output=True, text=True,
                          timeout=60).stdout
    if "Open MPI" in text or "OpenRTE" in text:
        return "openmpi"
    if "HYDRA" in text or "MPICH" in text:
        return "mpich"
    raise RuntimeError(f"unrecognised MPI launcher {program}: {text.splitlines()[:1]}")


def mpiexec_command(ranks: int, program: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """The argv and environment that run `program` on `ranks` processes on this machine."""
    if ranks < 1:
        raise ValueError(f"ranks must be at least 1, not {ranks}")
    launcher = str(mpiexec_path())
    environment = dict(os.environ)
    argv = [launcher]
    oversubscribed = ranks > (os.cpu_count() or 1)
    if mpi_flavor(launcher) == "mpich" and oversubscribed:
        for collective in _MPICH_SHARED_MEMORY_COLLECTIVES:
            environment.setdefault(f"MPIR_CVAR_{collective}_POSIX_INTRA_ALGORITHM", "mpir")
    if mpi_flavor(launcher) == "openmpi":
        environment.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        environment.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        argv.append("--oversubscribe")
    argv += ["-n", str(ranks), *program]
    return argv, environment
