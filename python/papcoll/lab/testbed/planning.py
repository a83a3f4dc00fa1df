"""A testbed's plan (papcoll.lab.testbed): what it is made of (names, addresses, shaped
rates), computed from a network's topology before anything exists, and the checks on this
machine and on the rates a testbed may use. The Plan itself and the state file that records
it are state.py's. Every other part of the testbed starts from a Plan.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from ...network import Network, load_network
from ...topology import Topology
from .state import (
    ADDRESS_PREFIX,
    HOST_NAME_PATTERN,
    MAX_HOSTS,
    ROOT_ADDRESS_HOST,
    Link,
    Plan,
    TestbedError,
    check_name,
    existing,
)

# tbf's bucket: 1 ms of traffic at the rate, and at least a 64 KiB TCP segment (a veth passes
# them whole). Measured at 1 Gb/s: a bucket of 4 / 16 / 64.5 KiB cut a TCP stream to 59 / 70 /
# 86 % of the rate, 125 KB (1 ms) gives 96 %. The price: a message that fits in a full bucket
# leaves at the veth's speed (a 64 KiB ping-pong at 4.2 ns/B, 4 MiB at 8.2 ns/B), which the
# calibration's fit of seconds_per_byte to the large messages sees (docs/testbed.md).
MIN_BURST_BYTES = 64 * 1024 + 1514
MIN_RATE_BITS = 1_000_000          # 1 Mb/s: slower would make a test's 1 MiB take seconds
MAX_RATE_BITS = 100_000_000_000    # 100 Gb/s: beyond what veth moves on this machine


def run_command(argv: Sequence[str], *, check: bool = True) -> subprocess.CompletedProcess[str]:
    try:
        result = subprocess.run(list(argv), capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        raise TestbedError(f"`{' '.join(argv)}` did not finish in 60 s") from None
    if check and result.returncode != 0:
        raise TestbedError(f"`{' '.join(argv)}` failed: {result.stderr.strip()}")
    return result


def missing_support() -> str | None:
    """Why this machine cannot build a testbed, or None when it can."""
    if sys.platform != "linux":
        return "papcoll testbed needs Linux network namespaces (this is " + sys.platform + ")"
    if os.geteuid() != 0:
        return ("papcoll testbed needs root (network namespaces, veth links and tc need "
                "CAP_NET_ADMIN): run it as root")
    for tool in ("ip", "tc"):
        if shutil.which(tool) is None:
            return f"papcoll testbed needs the `{tool}` command (Debian: apt-get install iproute2)"
    if not Path("/proc/self/ns/net").exists():
        return "papcoll testbed needs network namespaces (this kernel has no /proc/self/ns/net)"
    return None


def require_support() -> None:
    why = missing_support()
    if why:
        raise TestbedError(why)


def rate_bits(seconds_per_byte: float, where: str) -> int:
    """A link's tbf rate in bit/s; a rate tbf cannot enforce here is refused."""
    if not seconds_per_byte > 0:
        raise TestbedError(f"{where}: seconds_per_byte {seconds_per_byte:g} is an infinitely "
                           "fast link, which a shaped link cannot emulate (give a bandwidth)")
    bits = round(8 / seconds_per_byte)
    if not MIN_RATE_BITS <= bits <= MAX_RATE_BITS:
        raise TestbedError(f"{where}: {bits / 1e9:g} Gb/s is outside what the testbed shapes "
                           f"({MIN_RATE_BITS / 1e6:g} Mb/s to {MAX_RATE_BITS / 1e9:g} Gb/s)")
    return bits


def bucket_bytes(bits: int) -> int:
    """The token bucket of a link shaped to `bits` per second (see MIN_BURST_BYTES)."""
    return max(MIN_BURST_BYTES, bits // 8 // 1000)


def _used_subnets() -> set[int]:
    """K of every 10.213.K.0/24 that a testbed or an interface of this machine uses."""
    used = {plan.subnet for plan in existing()}
    text = run_command(["ip", "-4", "-o", "addr", "show"], check=False).stdout
    used.update(int(k) for k in re.findall(rf"inet {ADDRESS_PREFIX.replace('.', '[.]')}[.](\d+)[.]",
                                          text))
    return used


def _hosts_of(network: Network, hosts: int, ranks: int | None) -> tuple[Topology, list[int]]:
    """The network's topology for the testbed and the host vertices it builds: enough of the
    file's hosts, in placement order, for `ranks` ranks (or `hosts` hosts)."""
    if network.layout is None:  # a crossbar preset: one switch, a single-core host per rank
        count = hosts if ranks is None else ranks
        per_byte = network.model.seconds_per_byte
        names = ["switch"] + [f"host{k}" for k in range(count)]
        topology = Topology(names, [-1] + [0] * count, [network.model.latency / 2] * (count + 1),
                            [per_byte] * (count + 1), list(range(1, count + 1)),
                            network.model.latency, per_byte, list(range(1, count + 1)))
        return topology, list(range(1, count + 1))
    layout = network.layout(ranks or hosts)
    if layout.placement != "block":
        # mpiexec_command fills hosts in order; another placement would put the ranks
        # elsewhere than the simulator does
        raise TestbedError(f"network {network.name}: the testbed places ranks in blocks, host "
                           f"by host; this file asks for placement {layout.placement!r}")
    host_vertices = [v for v, cores in enumerate(layout.cores) if cores > 0]
    if ranks is None:
        if hosts > len(host_vertices):
            raise TestbedError(f"network {network.name} has {len(host_vertices)} hosts, not "
                               f"{hosts}")
        ranks = sum(layout.cores[v] for v in host_vertices[:hosts])
    topology = layout.place(ranks)
    used = sorted(set(topology.rank_vertex), key=topology.rank_vertex.index)
    return topology, used


def plan(network_name: str, name: str, hosts: int = 0, ranks: int | None = None) -> Plan:
    """The testbed for `hosts` hosts of the network (or as many as `ranks` ranks need, one
    per core of each host, placed as the network file says)."""
    check_name(name)
    if ranks is None and not 1 <= hosts <= MAX_HOSTS:
        raise TestbedError(f"hosts must be in 1..{MAX_HOSTS} (each is a network namespace on "
                           f"this machine's {os.cpu_count()} cores), not {hosts}")
    if ranks is not None and ranks < 1:
        raise TestbedError(f"ranks must be at least 1, not {ranks}")
    network = load_network(network_name)
    topology, used = _hosts_of(network, hosts, ranks)
    if len(used) > MAX_HOSTS:
        raise TestbedError(f"{len(used)} hosts: at most {MAX_HOSTS} (each is a network "
                           f"namespace on this machine's {os.cpu_count()} cores)")
    # Build only the switches on the used hosts' paths to the root.
    switches: list[int] = []
    for vertex in used:
        above = topology.parent[vertex]
        while above >= 0 and above not in switches:
            switches.append(above)
            above = topology.parent[above]
    root = next(v for v in switches if topology.parent[v] < 0) if switches else None
    if root is None:
        raise TestbedError(f"network {network.name}: a host without a switch above it; a "
                           "testbed needs the hosts under a switch")
    switches.remove(root)
    switches.insert(0, root)
    used_subnets = _used_subnets()
    subnet = next((k for k in range(256) if k not in used_subnets), None)
    if subnet is None:
        raise TestbedError(f"every {ADDRESS_PREFIX}.K.0/24 is in use: remove a testbed "
                           "(papcoll testbed down)")
    bridges = [f"pc{name}s{i}" for i in range(len(switches))]
    bridge_of = dict(zip(switches, bridges, strict=True))
    links: list[Link] = []
    for i, vertex in enumerate(switches[1:], start=1):
        links.append(Link(f"pc{name}u{i}", f"pc{name}d{i}", None,
                          bridge_of[topology.parent[vertex]],
                          rate_bits(topology.link_seconds_per_byte[vertex],
                                    f"the link of switch {topology.names[vertex]}"),
                          inner_bridge=bridges[i]))
    for vertex in used:  # a host's name becomes a namespace's and a hostname
        if not re.fullmatch(HOST_NAME_PATTERN, topology.names[vertex]):
            raise TestbedError(f"network {network.name}: host name {topology.names[vertex]!r} "
                               "cannot name a namespace (letters, digits, '_', '.', '-', "
                               "at most 40)")
    namespaces = [f"papcoll-{name}-{topology.names[v]}" for v in used]
    addresses = [f"{ADDRESS_PREFIX}.{subnet}.{k + 1}" for k in range(len(used))]
    for k, vertex in enumerate(used):
        links.append(Link("eth0", f"pc{name}h{k}", namespaces[k],
                          bridge_of[topology.parent[vertex]],
                          rate_bits(topology.link_seconds_per_byte[vertex],
                                    f"the link of host {topology.names[vertex]}"),
                          addresses[k]))
    cores = [topology.rank_vertex.count(v) for v in used]
    return Plan(name, network_name, subnet, [topology.names[v] for v in used], namespaces,
                addresses, cores, bridges, links,
                f"{ADDRESS_PREFIX}.{subnet}.{ROOT_ADDRESS_HOST}")
