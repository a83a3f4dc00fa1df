"""Running programs on a testbed (papcoll.lab.testbed): a process inside one host's
namespace, and MPI jobs across the hosts (Testbed.mpiexec_command, a papcoll.lab.launcher.Launch,
with the settings that keep every byte on the shaped links); `temporary` makes a testbed for
a `with` block and removes it after, whatever happens.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ..launcher import mpi_flavor, mpiexec_path
from .links import down, up, wrapper_directory
from .planning import ADDRESS_PREFIX, Plan, TestbedError, bucket_bytes


def run_in_host(testbed: Plan, host: int, argv: Sequence[str],
                **kwargs: Any) -> subprocess.Popen[str]:
    """Starts argv inside host number `host`'s namespace."""
    return subprocess.Popen(["ip", "netns", "exec", testbed.namespaces[host], *argv],
                            text=True, **kwargs)


@dataclass(frozen=True)
class Testbed:
    """A testbed that exists, as the code that runs jobs on it sees it."""

    plan: Plan

    @property
    def bucket_bytes(self) -> int:
        """The smallest token bucket of its links (the simulator's burst_bytes)."""
        return min(bucket_bytes(link.rate_bits) for link in self.plan.links)

    def rank_hosts(self, ranks: int) -> list[int]:
        """The host (an index into plan.hosts) of every rank of a `ranks`-rank job, as
        mpiexec_command places them: block, filling each host's cores in turn (the
        simulator's block placement on the network's topology, which plan() built)."""
        if not 1 <= ranks <= self.plan.ranks:
            raise TestbedError(f"testbed '{self.plan.name}' holds {self.plan.ranks} ranks "
                               f"({len(self.plan.hosts)} hosts), not {ranks}")
        placed: list[int] = []
        for host, cores in enumerate(self.plan.cores):
            placed.extend([host] * min(cores, ranks - len(placed)))
        return placed

    def mpiexec_command(self, ranks: int, program: Sequence[str]) -> tuple[list[str],
                                                                          dict[str, str]]:
        """A papcoll.lab.launcher.Launch: `ranks` ranks, block-placed host by host
        (rank_hosts)."""
        placed = self.rank_hosts(ranks)
        hosts = [(self.plan.namespaces[host], placed.count(host))
                 for host in dict.fromkeys(placed)]
        launcher = str(mpiexec_path())
        wrapper = str(wrapper_directory(self.plan.name) / "enter-host")
        environment = dict(os.environ)
        subnet = f"{ADDRESS_PREFIX}.{self.plan.subnet}.0/24"
        if mpi_flavor(launcher) == "mpich":
            # No shared memory between namespaces (they share /dev/shm): every byte goes over
            # libfabric's tcp provider on the host's eth0, through the shaped link. Measured
            # at P = 4 on 2 cores (docs/testbed.md): as fast as UCX's TCP transport (ring
            # 54.0 against 54.1 ms) at 40 % of the cores, where UCX's polling took 93 %.
            environment.update(MPIR_CVAR_NOLOCAL="1", MPIR_CVAR_CH4_NETMOD="ofi",
                               FI_PROVIDER="tcp", FI_TCP_IFACE="eth0")
            argv = [launcher, "-launcher", "ssh", "-launcher-exec", wrapper,
                    "-hosts", ",".join(f"{h}:{n}" for h, n in hosts),
                    # the proxies call back to mpiexec on the root bridge: inside a
                    # namespace this machine's own name is 127.0.0.1, which is not it
                    "-iface", self.plan.bridges[0], "-n", str(ranks), *program]
        else:
            environment.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
            # the tcp BTL only (no shared memory), daemons and ranks on the testbed's subnet;
            # unbound (by default every daemon pins its ranks to core 0) and yielding when
            # idle: P = 4 ring 66 ms, against 83 ms pinned and spinning (docs/testbed.md)
            argv = [launcher, "--prtemca", "plm_ssh_agent", wrapper,
                    "--prtemca", "oob_tcp_if_include", subnet,
                    "--host", ",".join(f"{h}:{n}" for h, n in hosts),
                    "--mca", "pml", "ob1", "--mca", "btl", "tcp,self",
                    "--mca", "btl_tcp_if_include", subnet, "--bind-to", "none",
                    "--mca", "mpi_yield_when_idle", "1", "-n", str(ranks), *program]
        return argv, environment


@contextmanager
def temporary(network_name: str, ranks: int) -> Iterator[Testbed]:
    """A testbed for `ranks` ranks that exists for the `with` block and is removed after it,
    also when the block raises or the process gets SIGTERM or SIGINT."""
    def terminate(signal_number: int, _frame: Any) -> None:
        raise KeyboardInterrupt(f"signal {signal_number}")

    previous = signal.signal(signal.SIGTERM, terminate)
    testbed: Plan | None = None
    try:
        testbed = up(network_name, ranks=ranks)  # removes what it made if it fails
        yield Testbed(testbed)
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM must not cut this
        try:
            if testbed is not None:
                down(testbed.name)
        finally:
            signal.signal(signal.SIGTERM, previous)
