"""The set-up `make test` creates: the MPI from PyPI and mpi4py agree and run real ranks."""

from __future__ import annotations

import subprocess

from conftest import COMMAND_TIMEOUT_SECONDS, VENV_BIN

PROGRAM = (
    "from mpi4py import MPI\n"
    "comm = MPI.COMM_WORLD\n"
    "total = comm.allreduce(comm.rank + 1)\n"
    "assert total == comm.size * (comm.size + 1) // 2, total\n"
    "if comm.rank == 0: print('sum', total, 'size', comm.size)\n"
)


def test_mpiexec_runs_four_ranks_with_mpi4py():
    result = subprocess.run(
        [str(VENV_BIN / "mpiexec"), "-n", "4", str(VENV_BIN / "python"), "-c", PROGRAM],
        capture_output=True, text=True, timeout=COMMAND_TIMEOUT_SECONDS,
    )
    assert result.returncode == 0, result.stderr
    assert "sum 10 size 4" in result.stdout
