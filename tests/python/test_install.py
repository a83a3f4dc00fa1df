"""A C user's view: install papcoll into a prefix, then build the example against it the two
documented ways (pkg-config, and CMake's find_package) and run it over mpiexec."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from papcoll.launcher import mpi_flavor, mpiexec_command

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "build" / os.environ.get("PAPCOLL_MPI", mpi_flavor())
MPICC = Path(sys.executable).parent / "mpicc"
EXAMPLE = ROOT / "examples" / "allreduce_example.c"
TIMEOUT_SECONDS = 300


def run(argv: list[str], **keywords: object) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_SECONDS,
                            **keywords)  # type: ignore[call-overload]
    assert result.returncode == 0, f"{argv}\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
    return result


@pytest.fixture(scope="module")
def prefix(tmp_path_factory) -> Path:
    installed = tmp_path_factory.mktemp("prefix")
    run(["cmake", "--install", str(BUILD), "--prefix", str(installed)])
    return installed


def library_directory(prefix: Path) -> Path:
    return next(path.parent for path in prefix.rglob("libpapcoll.so"))


def assert_example_runs(program: Path, prefix: Path) -> None:
    argv, environment = mpiexec_command(2, [str(program)])
    environment["LD_LIBRARY_PATH"] = str(library_directory(prefix))
    result = run(argv, env=environment)
    assert result.stdout.count("matches MPI_Allreduce") == 4, result.stdout


@pytest.mark.skipif(shutil.which("pkg-config") is None, reason="no pkg-config on this machine")
def test_pkg_config_builds_the_example(prefix, tmp_path):
    environment = dict(os.environ, PKG_CONFIG_PATH=str(library_directory(prefix) / "pkgconfig"))
    flags = run(["pkg-config", "--cflags", "--libs", "papcoll"], env=environment).stdout.split()
    program = tmp_path / "allreduce_example"
    run([str(MPICC), str(EXAMPLE), *flags, "-o", str(program)])
    assert_example_runs(program, prefix)


def test_find_package_builds_the_example(prefix, tmp_path):
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.18)\n"
        "project(user C)\n"
        "find_package(papcoll REQUIRED)\n"
        f"add_executable(allreduce_example {EXAMPLE})\n"
        "target_link_libraries(allreduce_example PRIVATE papcoll::papcoll)\n")
    build = tmp_path / "build"
    run(["cmake", "-S", str(tmp_path), "-B", str(build), f"-DCMAKE_PREFIX_PATH={prefix}",
         f"-DMPI_C_COMPILER={MPICC}"])
    run(["cmake", "--build", str(build)])
    assert_example_runs(build / "allreduce_example", prefix)
