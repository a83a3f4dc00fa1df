"""Counting checks in a test program run under mpiexec: each rank keeps its failures, and
finish() prints them and rank 0 prints the job's "N passed, M failed" line (what
tests/python/conftest.py's passed_failed reads) and exits 1 if any check failed."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from mpi4py import MPI


class Tally:
    def __init__(self, comm: MPI.Intracomm) -> None:
        self.comm = comm
        self.rank = comm.Get_rank()
        self.passed = 0
        self.failures: list[str] = []

    def check(self, label: str, condition: bool, detail: str = "") -> None:
        if condition:
            self.passed += 1
        else:
            self.failures.append(f"rank {self.rank}: {label} {detail}")

    def expect_error(self, label: str, kind: type[BaseException], words: str,
                     action: Callable[[], Any]) -> None:
        """`action` must raise `kind` with `words` in its message."""
        try:
            action()
        except kind as error:
            self.check(label, words in str(error), f"message {str(error)!r} lacks {words!r}")
            return
        except Exception as error:  # noqa: BLE001 - a wrong exception type is the failure
            self.check(label, False, f"raised {type(error).__name__}: {error}")
            return
        self.check(label, False, "raised nothing")

    def finish(self) -> None:
        failed = self.comm.allreduce(len(self.failures), op=MPI.SUM)
        passed = self.comm.allreduce(self.passed, op=MPI.SUM)
        for line in self.failures[:20]:
            print(line, flush=True)
        if self.rank == 0:
            print(f"{passed} passed, {failed} failed", flush=True)
        sys.exit(1 if failed else 0)
