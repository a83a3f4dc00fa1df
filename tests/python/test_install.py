"""A C user's view: build papcoll, install it into a prefix, move the prefix elsewhere and
delete the build, then build the example against the moved prefix the two documented ways
(pkg-config, and CMake's find_package) and run it over mpiexec with no LD_LIBRARY_PATH. Also
the core-only build (PAPCOLL_MPI=OFF), which must need no MPI at all."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from papcoll.lab.launcher import mpiexec_command

ROOT = Path(__file__).resolve().parents[2]
MPICC = Path(sys.executable).parent / "mpicc"
EXAMPLE = ROOT / "examples" / "allreduce_example.c"
TIMEOUT_SECONDS = 600
PKG_CONFIG = shutil.which("pkg-config")


def run(argv: list[str], **keywords: object) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_SECONDS,
                            **keywords)  # type: ignore[call-overload]
    assert result.returncode == 0, f"{argv}\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
    return result


def without_library_path() -> dict[str, str]:
    environment = dict(os.environ)
    environment.pop("LD_LIBRARY_PATH", None)
    return environment


def build_install_and_move(folder: Path, *options: str) -> Path:
    """Configures and builds papcoll in folder/build (its libraries in folder/lib, not the
    Python package's), installs into folder/prefix, moves that to folder/moved and deletes
    the build and the original prefix: what is left must work on its own."""
    build, prefix, moved = folder / "build", folder / "prefix", folder / "moved"
    run(["cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
         "-DBUILD_TESTING=OFF", f"-DPAPCOLL_LIBRARY_FOLDER={folder / 'lib'}", *options])
    run(["cmake", "--build", str(build), "--parallel", "2"])
    run(["cmake", "--install", str(build), "--prefix", str(prefix)])
    shutil.copytree(prefix, moved, symlinks=True)
    for gone in (build, prefix, folder / "lib"):
        shutil.rmtree(gone)
    return moved


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    return build_install_and_move(tmp_path_factory.mktemp("mpi"),
                                  f"-DMPI_C_COMPILER={MPICC}")


def library_directory(prefix: Path) -> Path:
    return next(path.parent for path in prefix.rglob("libpapcoll_core.so"))


def run_paths(binary: Path) -> list[str]:
    dynamic = run(["readelf", "-d", str(binary)]).stdout
    return [entry for line in dynamic.splitlines() if "RUNPATH" in line or "RPATH" in line
            for entry in line.split("[", 1)[1].rstrip("]").split(":") if entry]


def exported_names(library: Path) -> list[str]:
    table = run(["nm", "-D", "--defined-only", str(library)]).stdout
    return [line.split()[-1] for line in table.splitlines() if line.strip()]


def assert_example_runs(program: Path) -> None:
    argv, environment = mpiexec_command(2, [str(program)])
    environment.pop("LD_LIBRARY_PATH", None)
    result = run(argv, env=environment)
    assert result.stdout.count("matches MPI_Allreduce") == 4, result.stdout


def test_installed_libraries_are_versioned_relocatable_and_export_only_papcoll(installed):
    libraries = library_directory(installed)
    for name in ("libpapcoll", "libpapcoll_core"):
        assert (libraries / f"{name}.so").resolve().name == f"{name}.so.0.1.0"
        assert (libraries / f"{name}.so.0").is_symlink()
        library = libraries / f"{name}.so.0.1.0"
        # the sibling through $ORIGIN; never the build tree, the venv or the MPI
        assert run_paths(library) == ["$ORIGIN"]
        names = exported_names(library)
        assert names and all(name.startswith("papcoll_") for name in names), names
    for program in ("papcoll-bench", "papcoll-calibrate"):
        paths = run_paths(installed / "bin" / program)
        assert "$ORIGIN/../lib" in paths, program
        assert not any(str(ROOT / "build") in entry or "_lib" in entry for entry in paths), paths


# What libpapcoll_pmpi.so exports (cmake/pmpi_exports.map): the MPI calls it stands in for.
PRELOAD_EXPORTS = {"MPI_Init", "MPI_Init_thread", "MPI_Finalize", "MPI_Allreduce",
                   "MPI_Allreduce_c",
                   # the non-blocking and persistent all-reduce
                   "MPI_Iallreduce", "MPI_Iallreduce_c", "MPI_Allreduce_init",
                   "MPI_Allreduce_init_c", "MPI_Start", "MPI_Startall", "MPI_Request_free",
                   # completion calls: a papcoll request's error comes back through them,
                   # and MPI_Cancel of a started persistent all-reduce is refused
                   "MPI_Cancel", "MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Waitsome",
                   "MPI_Test", "MPI_Testall", "MPI_Testany", "MPI_Testsome",
                   # communicators get their papcoll one as they are made
                   "MPI_Comm_dup", "MPI_Comm_dup_with_info", "MPI_Comm_split",
                   "MPI_Comm_split_type", "MPI_Comm_create", "MPI_Comm_create_group",
                   "MPI_Intercomm_merge", "MPI_Cart_create", "MPI_Cart_sub", "MPI_Graph_create",
                   "MPI_Dist_graph_create", "MPI_Dist_graph_create_adjacent",
                   "MPI_Comm_create_from_group"}


def test_installed_preload_library_serves_an_unmodified_program(installed, tmp_path):
    library = library_directory(installed) / "libpapcoll_pmpi.so.0.1.0"
    assert (library.parent / "libpapcoll_pmpi.so").resolve() == library
    names = set(exported_names(library))
    assert "MPI_Allreduce" in names and names <= PRELOAD_EXPORTS, names
    # its sibling libpapcoll through $ORIGIN, the MPI's folder (Python loads libmpi late and
    # privately), never the build tree
    paths = run_paths(library)
    assert paths[0] == "$ORIGIN" and not any(str(ROOT / "build") in entry or "_lib" in entry
                                             for entry in paths), paths
    program = tmp_path / "unmodified"
    run([str(MPICC), str(ROOT / "tests" / "pmpi" / "unmodified.c"), "-pthread", "-o",
         str(program)])
    argv, environment = mpiexec_command(2, [str(program)])
    environment.pop("LD_LIBRARY_PATH", None)
    environment["LD_PRELOAD"] = str(library.parent / "libpapcoll_pmpi.so")
    environment["PAPCOLL_REPORT"] = str(tmp_path / "report.json")
    assert "checks passed" in run(argv, env=environment).stdout
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["totals"]["papcoll_calls"] > 0


@pytest.mark.skipif(PKG_CONFIG is None, reason="no pkg-config on this machine")
def test_pkg_config_builds_the_example(installed, tmp_path):
    environment = dict(os.environ, PKG_CONFIG_PATH=str(library_directory(installed) / "pkgconfig"))
    flags = run([str(PKG_CONFIG), "--cflags", "--libs", "papcoll"], env=environment).stdout.split()
    # the .pc file's -Wl,-rpath lets the program find the libraries where the prefix is now
    program = tmp_path / "allreduce_example"
    run([str(MPICC), str(EXAMPLE), *flags, "-o", str(program)])
    assert_example_runs(program)


def test_find_package_builds_the_example(installed, tmp_path):
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.18)\n"
        "project(user C)\n"
        "find_package(papcoll REQUIRED)\n"
        f"add_executable(allreduce_example {EXAMPLE})\n"
        "target_link_libraries(allreduce_example PRIVATE papcoll::papcoll)\n")
    build = tmp_path / "build"
    # no MPI_C_COMPILER, and no mpicc on PATH (pip puts none there): papcollConfig.cmake
    # names the MPI papcoll was built with, so the project finds that one
    environment = dict(os.environ)
    environment["PATH"] = os.pathsep.join(
        folder for folder in environment.get("PATH", "").split(os.pathsep)
        if not (Path(folder) / "mpicc").exists())
    run(["cmake", "-S", str(tmp_path), "-B", str(build), f"-DCMAKE_PREFIX_PATH={installed}"],
        env=environment)
    run(["cmake", "--build", str(build)], env=environment)
    assert_example_runs(build / "allreduce_example")


def test_configure_without_an_mpi_says_what_to_install_or_set(tmp_path):
    result = subprocess.run(["cmake", "-S", str(ROOT), "-B", str(tmp_path / "build"),
                             "-DMPI_C_COMPILER=/nonexistent/mpicc", "-DBUILD_TESTING=OFF",
                             f"-DPAPCOLL_LIBRARY_FOLDER={tmp_path / 'lib'}"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode != 0
    message = result.stdout + result.stderr
    assert "papcoll's MPI library needs an MPI" in message, message[-3000:]
    assert "pip install mpich" in message and "PAPCOLL_MPI=OFF" in message


def test_installed_benchmark_runs_from_the_moved_prefix(installed):
    argv, environment = mpiexec_command(2, [str(installed / "bin" / "papcoll-bench"),
                                            "--algorithms", "ring", "--counts", "16",
                                            "--mode", "one-late", "--max-delays-ms", "0",
                                            "--iterations", "2", "--compute-ms", "0"])
    environment.pop("LD_LIBRARY_PATH", None)
    assert "ring" in run(argv, env=environment).stdout


def core_program() -> str:
    """README's MPI-free C sample, whole, inside a main: the sample a reader copies is the one
    this test compiles and runs."""
    readme = (ROOT / "README.md").read_text()
    after = readme.index("Without MPI, the core")
    start = readme.index("```c\n", after) + len("```c\n")
    sample = readme[start:readme.index("```", start)]
    return ("#include <stdio.h>\n#include <papcoll_core.h>\nint main(void) {\n" + sample
            + "    return report.ok ? 0 : 1;\n}\n")


@pytest.mark.skipif(PKG_CONFIG is None, reason="no pkg-config on this machine")
def test_core_only_build_needs_no_mpi(tmp_path):
    # No MPI anywhere on PATH and no MPI_C_COMPILER: CMake must not look for one.
    environment = without_library_path()
    environment["PATH"] = os.pathsep.join(
        folder for folder in environment["PATH"].split(os.pathsep)
        if not (Path(folder) / "mpicc").exists())
    folder = tmp_path / "core"
    folder.mkdir()
    build, prefix = folder / "build", folder / "prefix"
    run(["cmake", "-S", str(ROOT), "-B", str(build), "-DPAPCOLL_MPI=OFF",
         "-DCMAKE_BUILD_TYPE=Release", f"-DPAPCOLL_LIBRARY_FOLDER={folder / 'lib'}"],
        env=environment)
    run(["cmake", "--build", str(build), "--parallel", "2", "--target", "papcoll_core"],
        env=environment)
    run(["cmake", "--install", str(build), "--prefix", str(prefix)], env=environment)
    assert not list(prefix.rglob("libpapcoll.so*"))
    assert not (prefix / "include" / "papcoll.h").exists()
    source = tmp_path / "core_example.c"
    source.write_text(core_program())
    pkgconfig = dict(environment, PKG_CONFIG_PATH=str(library_directory(prefix) / "pkgconfig"))
    flags = run([str(PKG_CONFIG), "--cflags", "--libs", "papcoll_core"], env=pkgconfig).stdout
    program = tmp_path / "core_example"
    run(["cc", str(source), *flags.split(), "-o", str(program)], env=environment)
    printed = run([str(program)], env=environment).stdout
    # ring at P = 13: 2 (P - 1) rounds; the busiest rank sends at least the lower bound
    assert printed.startswith("proved: 24 rounds, the busiest rank sends "), printed
    sent, bound = (int(number) for number in re.findall(r"\d+", printed)[1:])
    assert sent >= bound > 0, printed
