"""An emulated cluster on this machine: the hosts of a network (papcoll.network: the presets
and files `papcoll sim` reads) become Linux network namespaces, its switches Linux bridges,
its links veth pairs shaped to their bandwidth with tc's token bucket (tbf), and MPI jobs
run one rank set per namespace, over TCP across those links (`papcoll testbed`, `papcoll
bench --testbed`).

    host0 (netns)        host1 (netns)        the root namespace
    eth0 10.213.K.1      eth0 10.213.K.2
      |  tbf up            |  tbf up
      |  tbf down          |  tbf down
    <name>h0 ----------- <name>h1 ----- bridge <name>s0 (root switch, 10.213.K.254:
                                        the address mpiexec listens on)

A switch below the root is its own bridge, joined to its parent's by a veth pair shaped both
ways. Every testbed has its own /24 (10.213.K.0, K from 0 to 255, the first that no other
testbed and no interface of this machine uses), its own name (1 to 6 letters or digits), and
its own interfaces `pc<name>...` and namespaces `papcoll-<name>-<host>`; so two testbeds
never collide and traffic goes only to addresses inside the namespaces a testbed made.

What is emulated and what is not:
  - bandwidth: each link's seconds_per_byte, enforced in both directions by tbf (rate =
    8 / seconds_per_byte bit/s, a burst of 1 ms of traffic and at least 64 KiB, since the
    veth hands tbf TCP segments of up to 64 KiB);
  - latency: NOT added. Adding delay needs the netem qdisc, which this kernel lacks; the
    latency between two hosts is what the kernel's TCP stack costs (tens of microseconds),
    and the calibration (papcoll calibrate --testbed) measures it;
  - CPU: the namespaces share this machine's cores and memory. MPI is told not to use
    shared memory between them (MPICH: MPIR_CVAR_NOLOCAL, libfabric's tcp provider; Open
    MPI: the tcp BTL only), so every byte crosses the shaped links, which the links'
    counters prove.

The plan (names, addresses, rates) is written to /run/papcoll/testbeds/<name>.json
($PAPCOLL_TESTBED_STATE/<name>.json where that is set) before anything is made, so `down`
finds and removes every piece even when `up` died half-way; `down` is idempotent, and
removes only the testbed's own pieces. A state file that cannot be trusted (cut short, not
a plan, naming what is not the testbed's) is refused with one message that names it, what
is wrong and how to recover. Building needs root (CAP_NET_ADMIN), `ip` and `tc`
(iproute2), and network namespaces, veth, bridge and tbf support in the kernel; without one
of them every command stops with a message that names what is missing.

The parts, each built on the ones before it: state.py (the Plan and its state file, read
as untrusted input; which names are a testbed's own), planning.py (a network's Plan, the
checks), links.py (making and removing the namespaces, bridges and shaped links, and the
launch wrapper enter_host.sh), launch.py (running programs and MPI jobs on a testbed),
measure.py (link counters, a TCP stream's bandwidth with stream.py, CPU load). This package
gives the names the command line, the benchmarks and the tests use.
"""

from __future__ import annotations

from .launch import Testbed, temporary
from .links import down, missing_pieces, up
from .measure import CpuMeter, link_bytes, stream_bandwidth
from .planning import bucket_bytes, missing_support, plan, require_support
from .state import (
    MAX_HOSTS,
    DamagedStateError,
    Plan,
    StrayStateError,
    TestbedError,
    check_state_name,
    existing,
    load,
    state_directory,
    state_file,
    state_names,
    survey,
)

__all__ = [
    "CpuMeter",
    "DamagedStateError",
    "MAX_HOSTS",
    "Plan",
    "StrayStateError",
    "Testbed",
    "TestbedError",
    "bucket_bytes",
    "check_state_name",
    "down",
    "existing",
    "link_bytes",
    "load",
    "missing_pieces",
    "missing_support",
    "plan",
    "require_support",
    "state_directory",
    "state_file",
    "state_names",
    "stream_bandwidth",
    "survey",
    "temporary",
    "up",
]
