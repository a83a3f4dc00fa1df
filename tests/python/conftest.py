"""Shared fixtures: the `papcoll` command run as a user runs it, under a timeout."""

from __future__ import annotations

import os
import random
import resource
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.configuration import set_hypothesis_home_dir
from papcoll.lab.launcher import mpiexec_command

VENV_BIN = Path(sys.executable).parent
# No test may hang CI: every external command runs under this many seconds.
COMMAND_TIMEOUT_SECONDS = 120

# Fuzzing (test_fuzz*.py): hypothesis keeps no example database, and its other caches go to
# .pytest_cache/hypothesis (ignored by git), not .hypothesis in the tree; `short` runs in
# `make test`, `long` (10x the examples) with --long. Each run draws a seed, printed in the
# summary: PAPCOLL_FUZZ_SEED=N repeats it. An example slower than the deadline fails (a hang;
# fuzzing.py's watchdog ends one that never returns). The deadline is generous because CI
# shares 2 cores: the largest inputs the command line admits take a few seconds there.
set_hypothesis_home_dir(Path(__file__).parents[2] / ".pytest_cache" / "hypothesis")
FUZZ_SEED = int(os.environ.get("PAPCOLL_FUZZ_SEED") or random.SystemRandom().getrandbits(32))
FUZZ_EXAMPLES = {"short": 1000, "long": 10000}
for _profile, _examples in FUZZ_EXAMPLES.items():
    settings.register_profile(
        _profile, database=None, max_examples=_examples, print_blob=True,
        deadline=timedelta(seconds=30),
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile("short")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--long", action="store_true", help="run the long sweeps too")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "long: a sweep that only `make test-long` runs")
    settings.load_profile("long" if config.getoption("--long") else "short")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter,
                            config: pytest.Config) -> None:
    """The fuzzing's profile and seed, after the results (shown under -q too)."""
    if not any("test_fuzz" in report.nodeid
               for reports in terminalreporter.stats.values() for report in reports
               if hasattr(report, "nodeid")):
        return
    profile = "long" if config.getoption("--long") else "short"
    terminalreporter.write_line(
        f"papcoll fuzz: hypothesis profile '{profile}' ({FUZZ_EXAMPLES[profile]} examples a "
        f"property), seed {FUZZ_SEED} (PAPCOLL_FUZZ_SEED={FUZZ_SEED} repeats it)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--long"):
        return
    skip = pytest.mark.skip(reason="long sweep: run with `make test-long`")
    for item in items:
        # the marker, not the keyword: a parameter id "long" (a datatype) is a keyword too
        if item.get_closest_marker("long") is not None:
            item.add_marker(skip)


def hang_guard(seconds: float) -> float:
    """A timeout that catches a hang, not a busy machine: `seconds` where the cores are free,
    up to 4 x that where the load average says other work shares them (a run beside two busy
    loops took 2-3 x as long, and 300 s hang guards fired on legitimate runs)."""
    cores = os.cpu_count() or 1
    return seconds * min(4.0, max(1.0, os.getloadavg()[0] / cores))


def run_papcoll(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(VENV_BIN / "papcoll"), *arguments],
        capture_output=True,
        text=True,
        timeout=hang_guard(COMMAND_TIMEOUT_SECONDS),
    )


@pytest.fixture
def papcoll_command():  # noqa: ANN201 - returns the helper above
    return run_papcoll


def passed_failed(output: str) -> tuple[int, int]:
    """The counts of the last "N passed, M failed" line a test program printed."""
    last = [line for line in output.splitlines() if line.endswith("failed")][-1]
    passed, failed = (int(part.split()[0]) for part in last.split(","))
    return passed, failed


# how many times its CPU limit run_python_within lets a run take on the wall clock: a
# machine busy with other work stretches the wall clock, not the work
WALL_CLOCK_SLACK = 4


def run_python_within(code: str, seconds: float) -> subprocess.CompletedProcess[str]:
    """`code` in a fresh interpreter (this one's, same environment), which must finish on at
    most `seconds` of CPU time: for sizes at which a quadratic engine would take minutes. The
    limit is on CPU time, which other work on the machine barely changes, where a wall-clock
    limit on a loaded machine would flake; the run is killed after WALL_CLOCK_SLACK times
    `seconds` on the wall clock (a call into C cannot be interrupted in-process)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=WALL_CLOCK_SLACK * seconds, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    assert used <= seconds, f"took {used:.1f} s of CPU time, over its {seconds:g} s"
    return result


def run_under_mpiexec(ranks: int, program: list[str],
                      timeout: float = COMMAND_TIMEOUT_SECONDS) -> subprocess.CompletedProcess[str]:
    """`program` on `ranks` processes through papcoll's launcher, killed after `timeout` s."""
    argv, environment = mpiexec_command(ranks, program)
    return subprocess.run(argv, env=environment, capture_output=True, text=True,
                          timeout=hang_guard(timeout))
