"""Starting real MPI jobs: the `mpiexec` of the MPI installed next to this Python, with the
flags that MPI needs here (tests, benchmarks and examples all launch through this).

Open MPI refuses to run as root unless told twice, and refuses more ranks than cores unless
asked to oversubscribe; MPICH's Hydra needs neither. CI runs as root on 2 cores with up to
8 ranks, so both matter.

MPICH (ch4) switches its intra-node collectives to shared-memory "release/gather" algorithms
after a few calls; their waits spin on memory flags without yielding, so with more ranks than
cores a 4 MiB MPI_Allreduce at P = 3 took 3 s instead of 20 ms here (each step waits for
the spinning rank's time slice to end), and at P = 4 on 2 cores a 512 KiB call 650 ms
instead of 9.4 ms. Oversubscribed, we select MPICH's portable algorithms instead
(`MPIR_CVAR_*_POSIX_INTRA_ALGORITHM=mpir`); the caller can override. native_tuning says
what a job ran with, so that every benchmark row can say it: a comparison against native
MPI is only as fair as the native settings it ran with.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
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


def cores() -> int:
    """The cores this process may run on (its cpuset: a container or a batch job may allow
    fewer than the machine has), as the launcher counts them to decide oversubscription.
    The ranks it starts inherit the same set."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def oversubscribed(ranks: int) -> bool:
    """More ranks than cores: every job of papcoll runs its ranks on this machine (a
    testbed's hosts are namespaces of it), so they share its cores."""
    return ranks > cores()


def mpiexec_command(ranks: int, program: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """The argv and environment that run `program` on `ranks` processes on this machine."""
    if ranks < 1:
        raise ValueError(f"ranks must be at least 1, not {ranks}")
    launcher = str(mpiexec_path())
    environment = dict(os.environ)
    argv = [launcher]
    if mpi_flavor(launcher) == "mpich" and oversubscribed(ranks):
        for collective in _MPICH_SHARED_MEMORY_COLLECTIVES:
            environment.setdefault(f"MPIR_CVAR_{collective}_POSIX_INTRA_ALGORITHM", "mpir")
    if mpi_flavor(launcher) == "openmpi":
        environment.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        environment.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        argv.append("--oversubscribe")
    argv += ["-n", str(ranks), *program]
    return argv, environment


def _tunes_allreduce(name: str, flavor: str) -> bool:
    """An MPI setting that tunes MPI_Allreduce in an MPI of `flavor`: MPICH's control
    variables with ALLREDUCE in their name, Open MPI's collective components' parameters
    (each MPI ignores the other's). The drop-in's report picks them by the same names
    (src/pmpi/settings.c), so a bench row and a report say it alike."""
    if flavor == "mpich":
        return name.startswith("MPIR_CVAR_") and "ALLREDUCE" in name
    return name.startswith("OMPI_MCA_coll")


@dataclass(frozen=True)
class NativeTuning:
    """What native MPI_Allreduce ran with in an MPI job: the settings that tune it
    (_tunes_allreduce: from the job's environment, and Open MPI's `--mca NAME VALUE` on
    mpiexec's command line as OMPI_MCA_NAME), `by_papcoll` the names of those papcoll's
    launchers added (the user's environment did not have them), and the `ranks`, this
    machine's `cores` and whether the ranks outnumber them (`oversubscribed`), the reason
    mpiexec_command adds what it adds."""

    settings: dict[str, str]
    by_papcoll: tuple[str, ...]
    ranks: int
    cores: int
    oversubscribed: bool

    def summary(self) -> str:
        """NAME=VALUE joined by ';' as the drop-in's report writes its node's native_tuning
        ('': the MPI's defaults)."""
        return ";".join(f"{name}={value}" for name, value in self.settings.items())


def native_tuning(ranks: int, argv: Sequence[str], environment: dict[str, str]) -> NativeTuning:
    """What MPI_Allreduce is tuned by in a job started with (argv, environment) from a
    papcoll.lab Launch (NativeTuning)."""
    flavor = mpi_flavor()
    settings = {name: value for name, value in environment.items()
                if _tunes_allreduce(name, flavor)}
    added = [name for name, value in settings.items() if os.environ.get(name) != value]
    for index, word in enumerate(argv[:-2]):
        name = f"OMPI_MCA_{argv[index + 1]}"
        if word == "--mca" and _tunes_allreduce(name, flavor):
            settings[name] = argv[index + 2]
            added.append(name)
    return NativeTuning(settings=dict(sorted(settings.items())), by_papcoll=tuple(sorted(added)),
                        ranks=ranks, cores=cores(), oversubscribed=oversubscribed(ranks))
