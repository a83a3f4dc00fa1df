"""Third-party MPI test suites, unmodified, with and without libpapcoll_pmpi.so preloaded.

Two suites that no one here wrote run as their authors run them, once without the preload
and once with `LD_PRELOAD=libpapcoll_pmpi.so`, and must end the same, test for test:

- mpi4py's own unittest suite (test/ of the sdist of the installed mpi4py version, from
  PyPI by `pip download`), `mpiexec -n P python test/main.py`. Each rank runs every test
  and prints its own unittest summary; each rank's stderr goes to its own file (a shell
  wrapper around the unmodified program: the ranks' lines interleave on one pipe).
  mpi4py 4 calls MPI_Allreduce_c where the MPI has it (MPICH 4+), MPI_Allreduce otherwise
  (Open MPI 5.0): test_cco_buf (intra, in place), test_cco_buf_inter (intercommunicator),
  test_op, test_msgzero, test_ulfm reach it; comm.allreduce (pickled objects) does not.
- MPICH's test/mpi/coll (from Debian's source package of MPICH, the upstream tarball as
  is, fetched by `apt-get source` through this machine's own apt sources turned into
  deb-src in a private list: the machine's apt configuration is left alone), configured by
  its own configure against this venv's mpicc and built by its own
  Makefiles; each line of coll/testlist (program, ranks, arguments, time limit) is run and
  passes when it exits 0 and rank 0 printed " No Errors". Every program reaches
  MPI_Allreduce: util/mtest.c's communicator loop calls it in place on MPI_COMM_WORLD;
  allred*.c, coll12/13, longuser, op_coll call it themselves (predefined ops on every
  basic type through dtpools, user-defined ops commutative and not, in place, every
  communicator of mtest including intercommunicators, 40000 calls in allredmany).

With the preload PAPCOLL_MIN_BYTES=0, so papcoll takes every call it can (these tests move
a few bytes a call; the default leaves calls under 64 KiB to MPI), and the report must show
that it did. `make test` runs the Allreduce subsets (mpi4py's at 2 ranks); `make test-long`
the whole suites.
Fetched and built once under build/third_party/ (downloads ~22 MB, a minute the first time).
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from papcoll.core import algorithms
from papcoll.lab.launcher import mpi_flavor, mpiexec_command
from papcoll.pmpi import load_report, preload_library_path

ROOT = Path(__file__).resolve().parents[2]
THIRD_PARTY = ROOT / "build" / "third_party"
VENV_BIN = Path(sys.executable).parent
FLAVOR = os.environ.get("PAPCOLL_MPI", mpi_flavor())

MPICH_SOURCE = "mpich-4.0.2"  # Debian 12's MPICH source package, 4.0.2-3
MPICH_PACKAGE = "mpich=4.0.2-3"
APT_SOURCES = Path("/etc/apt/sources.list.d")
# test/mpi's own configure: only what coll/ needs (C, no Fortran, C++, ROMIO or spawn)
MPICH_CONFIGURE = ["--disable-fortran", "--disable-cxx", "--disable-romio", "--disable-spawn",
                   "--disable-ft-tests", "--disable-perftest"]
# The programs of coll/testlist that call MPI_Allreduce/MPI_Iallreduce/MPI_Allreduce_init
# themselves (make test: their lines of up to 5 ranks, below); make test-long runs every
# line of coll/testlist.
MPICH_ALLREDUCE_PROGRAMS = ("allred", "allred2", "allred3", "allred4", "allred5", "allred6",
                            "allredmany", "coll12", "coll13", "longuser", "op_coll",
                            "iallred", "icallreduce", "p_allred")
# mpi4py's test modules that reach MPI_Allreduce(_c), and the other buffer collectives
MPI4PY_SUBSET = r"^test_(cco_buf|cco_buf_inter|cco_obj|cco_nb_buf|cco_pr_buf|op|msgzero|ulfm)\.py$"
TIMEOUT_SECONDS = 600          # one mpiexec of the whole mpi4py suite (Open MPI, P = 2: 285 s)
MPICH_TEST_TIMEOUT = 180       # one coll program, unless its testlist line says timeLimit=
RANK_STDERR = 'exec "$0" "$@" 2>"$PAPCOLL_RANK_OUT.${PMI_RANK:-${OMPI_COMM_WORLD_RANK:-0}}"'

long = pytest.mark.long


# --- fetching and building, once ------------------------------------------------------

@contextmanager
def locked(name: str) -> Iterator[Path]:
    """build/third_party/NAME, made by one process at a time (a stamp says it is done)."""
    THIRD_PARTY.mkdir(parents=True, exist_ok=True)
    with open(THIRD_PARTY / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield THIRD_PARTY / name


def extract(archive: Path, inside: str, destination: Path) -> None:
    """The members of `archive` under `inside` (a path prefix) into `destination`."""
    with tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if m.name.startswith(inside)]
        tar.extractall(destination, members=members, filter="data")


@pytest.fixture(scope="session")
def mpi4py_tests() -> Path:
    """test/ of the sdist of the mpi4py installed here (its tests fit that version)."""
    import mpi4py

    version = mpi4py.__version__
    with locked(f"mpi4py-{version}") as folder:
        stamp = folder / ".complete"
        if not stamp.exists():
            shutil.rmtree(folder, ignore_errors=True)
            downloads = THIRD_PARTY / "downloads"
            download = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary",
                        ":all:", f"mpi4py=={version}", "-d", str(downloads)]
            # metadata without an isolated build environment: 1 s, not 2.5 minutes
            if subprocess.run([*download, "--no-build-isolation"], capture_output=True,
                              timeout=600).returncode != 0:
                subprocess.run(download, check=True, capture_output=True, timeout=900)
            extract(downloads / f"mpi4py-{version}.tar.gz", f"mpi4py-{version}/test/",
                    THIRD_PARTY)
            stamp.touch()
        return folder / "test"


@pytest.fixture(scope="session")
def mpich_coll() -> Path:
    """coll/ of MPICH's test/mpi, configured against this MPI's mpicc (not yet built)."""
    with locked(MPICH_SOURCE) as source:
        if not (source / ".complete").exists():
            archive = apt_source(MPICH_PACKAGE, THIRD_PARTY / "downloads")
            shutil.rmtree(source, ignore_errors=True)
            extract(archive, f"{MPICH_SOURCE}/test/mpi/", THIRD_PARTY)
            (source / ".complete").touch()
    with locked(f"mpich-tests-{FLAVOR}") as build:
        if not (build / ".complete").exists():
            shutil.rmtree(build, ignore_errors=True)
            build.mkdir()
            configure = subprocess.run(
                [str(source / "test" / "mpi" / "configure"), f"CC={VENV_BIN / 'mpicc'}",
                 f"--with-mpi={VENV_BIN.parent}", *MPICH_CONFIGURE],
                cwd=build, capture_output=True, text=True, timeout=600)
            assert configure.returncode == 0, configure.stdout[-3000:] + configure.stderr
            (build / ".complete").touch()
        return build / "coll"


def apt_source(package: str, downloads: Path) -> Path:
    """The upstream tarball of a Debian source package, by `apt-get source`: this machine's
    apt sources (deb822 files) turned into deb-src in a private list and state folder, so
    the machine's own apt configuration and lists are left as they are."""
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        pytest.skip("MPICH's tests come from Debian's source package: needs apt-get as root")
    downloads.mkdir(parents=True, exist_ok=True)
    private = downloads / "apt"
    shutil.rmtree(private, ignore_errors=True)
    (private / "sources.list.d").mkdir(parents=True)
    (private / "lists" / "partial").mkdir(parents=True)
    for sources in APT_SOURCES.glob("*.sources"):
        text = re.sub(r"^Types:.*$", "Types: deb-src", sources.read_text(), flags=re.MULTILINE)
        (private / "sources.list.d" / sources.name).write_text(text)
    options = ["-o", "Dir::Etc::SourceList=/dev/null",
               "-o", f"Dir::Etc::SourceParts={private / 'sources.list.d'}",
               "-o", f"Dir::State::Lists={private / 'lists'}",
               "-o", "Dir::Cache::pkgcache=", "-o", "Dir::Cache::srcpkgcache=",
               "-o", "APT::Sandbox::User=root", "-qq"]
    for command in (["update"], ["source", "--download-only", package]):
        result = subprocess.run(["apt-get", *options, *command], cwd=downloads,
                                capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, f"apt-get {' '.join(command)}: {result.stderr[-2000:]}"
    name, version = package.split("=")
    upstream = version.split("-")[0]
    return downloads / f"{name}_{upstream}.orig.tar.xz"


def build_programs(coll: Path, programs: set[str]) -> None:
    """make them (incremental); -k: Open MPI 5.0 has no MPI_*_c, so coll_large and
    uoplong_large do not link there and their testlist lines fail alike both ways."""
    subprocess.run(["make", "-k", "-j2", *sorted(programs)], cwd=coll, capture_output=True,
                   timeout=900)


# --- running --------------------------------------------------------------------------

def launch(ranks: int, program: list[str], preload: Path | None, report: Path | None,
           timeout: int, extra: dict[str, str] | None = None
           ) -> subprocess.CompletedProcess[str]:
    argv, environment = mpiexec_command(ranks, program)
    for variable in ("LD_PRELOAD", "PAPCOLL_REPORT", "PAPCOLL_MIN_BYTES", "PAPCOLL_ALGORITHM"):
        environment.pop(variable, None)
    environment.update(extra or {})
    if preload is not None:
        environment["LD_PRELOAD"] = str(preload)
        environment["PAPCOLL_MIN_BYTES"] = "0"
        if report is not None:
            environment["PAPCOLL_REPORT"] = str(report)
    try:
        return subprocess.run(["timeout", "-k", "10", str(timeout), *argv], env=environment,
                              capture_output=True, text=True, timeout=timeout + 30)
    except subprocess.TimeoutExpired as expired:  # timeout(1) itself stuck: never here
        return subprocess.CompletedProcess(argv, 124, str(expired.stdout), "")


SUMMARY = re.compile(r"^(OK|FAILED)(?: \((.*)\))?$")
PROBLEM = re.compile(r"^(FAIL|ERROR): (.+)$")


def unittest_outcome(text: str) -> dict[str, object]:
    """One rank's unittest stderr: tests run, failures, errors, skips and which failed."""
    ran = re.findall(r"^Ran (\d+) tests? in", text, re.MULTILINE)
    summaries = [SUMMARY.match(line) for line in text.splitlines()]
    summaries = [match for match in summaries if match]
    assert ran and summaries, "no unittest summary:\n" + text[-3000:]
    counts = {"failures": 0, "errors": 0, "skipped": 0, "expected failures": 0,
              "unexpected successes": 0}
    for part in filter(None, (summaries[-1].group(2) or "").split(", ")):
        key, _, value = part.partition("=")
        counts[key.replace("_", " ")] = int(value)
    problems = sorted(match.group(0) for match in map(PROBLEM.match, text.splitlines())
                      if match)
    return {"ran": int(ran[-1]), "status": summaries[-1].group(1), **counts,
            "problems": problems}


def run_mpi4py_suite(tests: Path, ranks: int, preload: Path | None, report: Path | None,
                     out: Path, selection: list[str]) -> list[dict[str, object]]:
    out.mkdir(parents=True, exist_ok=True)
    prefix = out / "rank"
    program = ["sh", "-c", RANK_STDERR, sys.executable, str(tests / "main.py"),
               "--no-builddir", *selection]
    result = launch(ranks, program, preload, report, TIMEOUT_SECONDS,
                    {"PAPCOLL_RANK_OUT": str(prefix)})
    assert result.returncode in (0, 1), (result.returncode, result.stdout[-2000:],
                                         result.stderr[-3000:])
    return [unittest_outcome(Path(f"{prefix}.{rank}").read_text(errors="replace"))
            for rank in range(ranks)]


def coll_testlist(coll: Path) -> list[tuple[str, int, list[str], int]]:
    """coll/testlist (configure writes it from testlist.in): program, ranks, arguments,
    time limit; lines configure left marked (@largetest@ ...) are not run."""
    entries = []
    for line in (coll / "testlist").read_text().splitlines():
        fields = line.split()
        if not fields or fields[0].startswith(("#", "@")):
            continue
        ranks = int(fields[1]) if len(fields) > 1 else 2
        arguments, limit = [], MPICH_TEST_TIMEOUT
        for field in fields[2:]:
            key, _, value = field.partition("=")
            if key == "arg":
                arguments.append(value)
            elif key == "timeLimit":
                limit = int(value)
        entries.append((fields[0], ranks, arguments, limit))
    return entries


def run_mpich_tests(coll: Path, entries, preload: Path | None, reports: Path | None,
                    extra: dict[str, str] | None = None) -> dict[str, bool]:
    outcome = {}
    for index, (program, ranks, arguments, limit) in enumerate(entries):
        name = f"{program} -n {ranks} {' '.join(arguments)}".strip()
        report = reports / f"{index}.json" if reports else None
        result = launch(ranks, [str(coll / program), *arguments], preload, report, limit,
                        extra)
        outcome[name] = result.returncode == 0 and " No Errors" in result.stdout
    return outcome


def papcoll_calls(reports: list[Path]) -> tuple[int, int]:
    """(calls, papcoll_calls) over the reports the preloaded runs left."""
    calls = taken = 0
    for path in reports:
        totals = load_report(path)["totals"]
        assert totals["calls"] == totals["papcoll_calls"] + totals["native_calls"], totals
        calls += totals["calls"]
        taken += totals["papcoll_calls"]
    return calls, taken


# --- the tests ------------------------------------------------------------------------

@pytest.fixture(scope="session")
def pmpi_library() -> Path:
    return preload_library_path()


@pytest.mark.parametrize("suite", ["allreduce", pytest.param("full", marks=long)])
# 1: every call goes to MPI; 3 (the odd count) under `make test-long` with the whole suite,
# as it took a minute of `make test`'s 15; MPICH's suite runs 3 and 5 ranks in make test
@pytest.mark.parametrize("ranks", [pytest.param(1, marks=long), 2, pytest.param(3, marks=long)])
def test_mpi4py_suite_same_with_preload(tmp_path, mpi4py_tests, pmpi_library, ranks, suite):
    selection = ["-i", MPI4PY_SUBSET] if suite == "allreduce" else []
    without = run_mpi4py_suite(mpi4py_tests, ranks, None, None, tmp_path / "without",
                               selection)
    report = tmp_path / "report.json"
    with_preload = run_mpi4py_suite(mpi4py_tests, ranks, pmpi_library, report,
                                    tmp_path / "with", selection)
    assert with_preload == without
    assert without[0]["ran"] > 0
    calls, taken = papcoll_calls([report])
    # one rank: every call is left to MPI ("one_rank")
    assert calls > 0 and (taken > 0) == (ranks > 1), load_report(report)["totals"]


# `make test` runs the all-reduce programs' lines of up to MOST_RANKS_SHORT ranks, and a
# program's smallest line where it has none such (allred3 has only 10 ranks); its other
# lines of 7 and 10 ranks (on 2 cores, half the time) run with the whole suite under
# `make test-long`.
MOST_RANKS_SHORT = 5


def short_allreduce_lines(entries: list) -> list:
    smallest = {}
    for program, ranks, *_ in entries:
        smallest[program] = min(ranks, smallest.get(program, ranks))
    return [entry for entry in entries
            if entry[1] <= MOST_RANKS_SHORT or entry[1] == smallest[entry[0]]]


@pytest.mark.parametrize("suite", ["allreduce", pytest.param("full", marks=long)])
def test_mpich_coll_suite_same_with_preload(tmp_path, mpich_coll, pmpi_library, suite):
    entries = coll_testlist(mpich_coll)
    if suite == "allreduce":
        entries = short_allreduce_lines(
            [entry for entry in entries if entry[0] in MPICH_ALLREDUCE_PROGRAMS])
    build_programs(mpich_coll, {program for program, *_ in entries})
    without = run_mpich_tests(mpich_coll, entries, None, None)
    reports = tmp_path / "reports"
    reports.mkdir()
    with_preload = run_mpich_tests(mpich_coll, entries, pmpi_library, reports)
    changed = {name: (without[name], with_preload[name]) for name in without
               if without[name] != with_preload[name]}
    assert not changed, f"(without, with) preload, where they differ: {changed}"
    assert sum(without.values()) > 0
    calls, taken = papcoll_calls(sorted(reports.glob("*.json")))
    assert calls > 0 and taken > 0


@pytest.fixture(scope="session")
def mpich_allreduce_entries(mpich_coll) -> tuple[list, dict[str, bool]]:
    """The Allreduce programs' testlist lines, built, and how they end without the preload
    (once a session: every forced algorithm compares with it)."""
    entries = [entry for entry in coll_testlist(mpich_coll)
               if entry[0] in MPICH_ALLREDUCE_PROGRAMS]
    build_programs(mpich_coll, {program for program, *_ in entries})
    return entries, run_mpich_tests(mpich_coll, entries, None, None)


@long
@pytest.mark.parametrize("algorithm", [info.name for info in algorithms()
                                       if not info.reduce_scatter])
def test_mpich_allreduce_programs_every_algorithm(tmp_path, mpich_coll, pmpi_library,
                                                  mpich_allreduce_entries, algorithm):
    """The Allreduce programs with each all-reduce forced (PAPCOLL_ALGORITHM): where papcoll
    takes the call, that algorithm computes it; calls it cannot take go to MPI."""
    entries, without = mpich_allreduce_entries
    reports = tmp_path / "reports"
    reports.mkdir()
    forced = run_mpich_tests(mpich_coll, entries, pmpi_library, reports,
                             {"PAPCOLL_ALGORITHM": algorithm})
    assert forced == without
    calls, taken = papcoll_calls(sorted(reports.glob("*.json")))
    assert calls > 0 and taken > 0
