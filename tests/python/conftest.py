"""Shared fixtures: the `papcoll` command run as a user runs it, under a timeout."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from papcoll.launcher import mpiexec_command

VENV_BIN = Path(sys.executable).parent
# No test may hang CI: every external command runs under this many seconds.
COMMAND_TIMEOUT_SECONDS = 120


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--long", action="store_true", help="run the long sweeps too")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "long: a sweep that only `make test-long` runs")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--long"):
        return
    skip = pytest.mark.skip(reason="long sweep: run with `make test-long`")
    for item in items:
        if "long" in item.keywords:
            item.add_marker(skip)


def run_papcoll(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(VENV_BIN / "papcoll"), *arguments],
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT_SECONDS,
    )


@pytest.fixture
def papcoll_command():  # noqa: ANN201 - returns the helper above
    return run_papcoll


def passed_failed(output: str) -> tuple[int, int]:
    """The counts of the last "N passed, M failed" line a test program printed."""
    last = [line for line in output.splitlines() if line.endswith("failed")][-1]
    passed, failed = (int(part.split()[0]) for part in last.split(","))
    return passed, failed


def run_python_within(code: str, seconds: float) -> subprocess.CompletedProcess[str]:
    """`code` in a fresh interpreter (this one's, same environment), killed after `seconds`:
    for sizes at which a quadratic engine would take minutes, where a wall-clock assertion
    on a loaded machine would flake and a call into C cannot be interrupted in-process."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=seconds, check=True)


def run_under_mpiexec(ranks: int, program: list[str],
                      timeout: float = COMMAND_TIMEOUT_SECONDS) -> subprocess.CompletedProcess[str]:
    """`program` on `ranks` processes through papcoll's launcher, killed after `timeout` s."""
    argv, environment = mpiexec_command(ranks, program)
    return subprocess.run(argv, env=environment, capture_output=True, text=True,
                          timeout=timeout)
