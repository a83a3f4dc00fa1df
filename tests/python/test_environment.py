"""The set-up `make test` creates: the MPI from PyPI and mpi4py agree and run real ranks."""

from __future__ import annotations

import sys

from conftest import run_under_mpiexec
from papcoll.lab.launcher import mpi_flavor

PROGRAM = (
    "from mpi4py import MPI\n"
    "comm = MPI.COMM_WORLD\n"
    "total = comm.allreduce(comm.rank + 1)\n"
    "assert total == comm.size * (comm.size + 1) // 2, total\n"
    "if comm.rank == 0: print('sum', total, 'size', comm.size, MPI.Get_library_version()[:20])\n"
)


def test_mpiexec_runs_eight_ranks_with_mpi4py():
    # 8 ranks on 2 cores: oversubscribed, as every MPI test in CI is
    result = run_under_mpiexec(8, [sys.executable, "-c", PROGRAM])
    assert result.returncode == 0, result.stderr
    assert "sum 36 size 8" in result.stdout
    expected = "Open MPI" if mpi_flavor() == "openmpi" else "MPICH"
    assert expected in result.stdout
