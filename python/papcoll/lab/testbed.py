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

The plan (names, addresses, rates) is written to /run/papcoll/testbeds/<name>.json before
anything is made, so `down` finds and removes every piece even when `up` died half-way;
`down` is idempotent. Building needs root (CAP_NET_ADMIN), `ip` and `tc` (iproute2), and
network namespaces, veth, bridge and tbf support in the kernel; without one of them every
command stops with a message that names what is missing.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..network import Network, load_network
from ..topology import Topology
from .launcher import mpi_flavor, mpiexec_path

STATE_DIRECTORY = Path(os.environ.get("PAPCOLL_TESTBED_STATE", "/run/papcoll/testbeds"))
# namespaces on a 2-core machine; well inside one /24 (hosts .1 .. .64, mpiexec at .254)
MAX_HOSTS = 64
ADDRESS_PREFIX = "10.213"   # 10.213.K.0/24 per testbed
ROOT_ADDRESS_HOST = 254     # the root namespace's address on the root switch
NAME_PATTERN = re.compile(r"[a-z0-9]{1,6}")
# tbf's bucket: 1 ms of traffic at the rate, and at least a 64 KiB TCP segment (a veth passes
# them whole). Measured at 1 Gb/s: a bucket of 4 / 16 / 64.5 KiB cut a TCP stream to 59 / 70 /
# 86 % of the rate, 125 KB (1 ms) gives 96 %. The price: a message that fits in a full bucket
# leaves at the veth's speed (a 64 KiB ping-pong at 4.2 ns/B, 4 MiB at 8.2 ns/B), which the
# calibration's fit of seconds_per_byte to the large messages sees (docs/testbed.md).
MIN_BURST_BYTES = 64 * 1024 + 1514
MIN_RATE_BITS = 1_000_000          # 1 Mb/s: slower would make a test's 1 MiB take seconds
MAX_RATE_BITS = 100_000_000_000    # 100 Gb/s: beyond what veth moves on this machine


class TestbedError(RuntimeError):
    """A testbed that cannot be made, found or used; the message says why."""


@dataclass(frozen=True)
class Link:
    """One shaped veth pair: `inner` in namespace `namespace` (None: the root namespace)
    joined to bridge `bridge` through `outer`; both ends limited to rate_bits. A host's link
    gives `inner` an address; a switch's link puts `inner` on the switch's own bridge."""

    inner: str
    outer: str
    namespace: str | None
    bridge: str
    rate_bits: int
    address: str | None = None
    inner_bridge: str | None = None


@dataclass(frozen=True)
class Plan:
    """Everything a testbed is made of, as written to its state file."""

    name: str
    network: str
    subnet: int                  # K of 10.213.K.0/24
    hosts: list[str]             # the network's host names, in rank order
    namespaces: list[str]        # one per host
    addresses: list[str]
    cores: list[int]             # ranks each host holds
    bridges: list[str]           # one per switch; bridges[0] is the root
    links: list[Link]
    root_address: str

    @property
    def ranks(self) -> int:
        return sum(self.cores)


def _run(argv: Sequence[str], *, check: bool = True) -> subprocess.CompletedProcess[str]:
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


def check_name(name: str) -> str:
    if not NAME_PATTERN.fullmatch(name):
        raise TestbedError(f"testbed name '{name}' must be 1 to 6 lower-case letters or digits "
                           "(it goes into interface names, which Linux limits to 15 bytes)")
    return name


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


def _used_subnets() -> set[int]:
    """K of every 10.213.K.0/24 that a testbed or an interface of this machine uses."""
    used = {plan.subnet for plan in existing()}
    text = _run(["ip", "-4", "-o", "addr", "show"], check=False).stdout
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
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}", topology.names[vertex]):
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


def _state_file(name: str) -> Path:
    return STATE_DIRECTORY / f"{name}.json"


def bucket_bytes(bits: int) -> int:
    """The token bucket of a link shaped to `bits` per second (see MIN_BURST_BYTES)."""
    return max(MIN_BURST_BYTES, bits // 8 // 1000)


def _tbf(device: str, namespace: str | None, bits: int) -> None:
    burst = bucket_bytes(bits)
    # a queue of 50 ms at the rate: TCP's window, not tbf, should set the pace (a drop costs
    # a retransmission time-out, which no model of the network has)
    limit = max(4 * burst, bits // 8 // 20)
    prefix = ["ip", "netns", "exec", namespace] if namespace else []
    result = _run([*prefix, "tc", "qdisc", "replace", "dev", device, "root", "tbf",
                   "rate", f"{bits}bit", "burst", str(burst), "limit", str(limit)], check=False)
    if result.returncode != 0:
        raise TestbedError(f"cannot shape {device} with tc tbf ({result.stderr.strip()}): the "
                           "kernel needs the sch_tbf module")


def up(network_name: str, hosts: int = 0, *, name: str | None = None,
       ranks: int | None = None) -> Plan:
    """Builds a testbed and returns its plan; on any failure removes what it made."""
    require_support()
    if Path(network_name).suffix in (".json", ".toml"):  # the state outlives the directory
        network_name = str(Path(network_name).resolve())
    STATE_DIRECTORY.mkdir(parents=True, exist_ok=True)
    # Two papcoll processes may make testbeds at once: choosing a name and a subnet and
    # writing the state that claims them happen under one lock.
    with (STATE_DIRECTORY / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        name = name or _free_name()
        if _state_file(name).exists():
            raise TestbedError(f"a testbed named '{name}' exists: `papcoll testbed down "
                               f"--name {name}` first, or give another --name")
        testbed = plan(network_name, name, hosts, ranks)
        in_the_way = [device for device in
                      testbed.bridges + [link.outer for link in testbed.links]
                      + [link.inner for link in testbed.links if link.namespace is None]
                      if Path(f"/sys/class/net/{device}").exists()]
        present = set(_run(["ip", "netns", "list"], check=False).stdout.split())
        in_the_way += [namespace for namespace in testbed.namespaces if namespace in present]
        if in_the_way:  # not ours: `down` would remove it
            raise TestbedError(f"{in_the_way[0]} exists already (not made by a testbed "
                               "papcoll knows of): remove it or give another --name")
        _state_file(name).write_text(json.dumps(asdict(testbed), indent=1))
    try:
        for bridge in testbed.bridges:
            _run(["ip", "link", "add", bridge, "type", "bridge"])
            _run(["ip", "link", "set", bridge, "up"])
        _run(["ip", "addr", "add", f"{testbed.root_address}/24", "dev", testbed.bridges[0]])
        for namespace in testbed.namespaces:
            _run(["ip", "netns", "add", namespace])
            _run(["ip", "-n", namespace, "link", "set", "lo", "up"])
        for link in testbed.links:
            if link.namespace is None:  # a switch's link: both ends in the root namespace
                _run(["ip", "link", "add", link.inner, "type", "veth", "peer", "name",
                      link.outer])
                _run(["ip", "link", "set", link.inner, "master", str(link.inner_bridge),
                      "up"])
            else:
                _run(["ip", "link", "add", link.outer, "type", "veth", "peer", "name",
                      link.inner, "netns", link.namespace])
                _run(["ip", "-n", link.namespace, "addr", "add", f"{link.address}/24", "dev",
                      link.inner])
                _run(["ip", "-n", link.namespace, "link", "set", link.inner, "up"])
            _run(["ip", "link", "set", link.outer, "master", link.bridge, "up"])
            _tbf(link.outer, None, link.rate_bits)
            _tbf(link.inner, link.namespace, link.rate_bits)
        _write_launch_wrapper(testbed)
    except BaseException:
        down(name)
        raise
    return testbed


def _free_name() -> str:
    taken = {plan.name for plan in existing()}
    return next(f"t{k}" for k in range(1000) if f"t{k}" not in taken)


def down(name: str) -> bool:
    """Removes testbed `name` (namespaces, bridges, links, its state); True if it existed.
    Safe to call again, and on a testbed that `up` left half-made."""
    check_name(name)
    state = _state_file(name)
    if not state.exists():
        return False
    present = set(_run(["ip", "netns", "list"], check=False).stdout.split())
    try:
        testbed = load(name)
        namespaces = testbed.namespaces
        devices = [link.inner for link in testbed.links if link.namespace is None] + [
            link.outer for link in testbed.links] + testbed.bridges
    except TestbedError:  # a damaged state file: remove what the testbed's names cover
        namespaces = [n for n in present if n.startswith(f"papcoll-{name}-")]
        devices = [d.name for d in Path("/sys/class/net").iterdir()
                   if re.fullmatch(rf"pc{name}[shud]\d+", d.name)]
    for namespace in namespaces:
        if namespace in present:
            # a rank or daemon still inside would keep the namespace (and its links) alive
            pids = _run(["ip", "netns", "pids", namespace], check=False).stdout.split()
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, ValueError):
                    os.kill(int(pid), signal.SIGKILL)
            # Deleting a namespace deletes the veth ends in it, and with them their peers.
            _run(["ip", "netns", "delete", namespace], check=False)
    for device in devices:
        if Path(f"/sys/class/net/{device}").exists():
            _run(["ip", "link", "delete", device], check=False)
    shutil.rmtree(_wrapper_directory(name), ignore_errors=True)
    state.unlink(missing_ok=True)
    return True


def load(name: str) -> Plan:
    check_name(name)
    try:
        data = json.loads(_state_file(name).read_text())
        data["links"] = [Link(**link) for link in data["links"]]
        return Plan(**data)
    except FileNotFoundError:
        raise TestbedError(f"no testbed named '{name}' (papcoll testbed status lists them)") \
            from None
    except (ValueError, TypeError, KeyError) as error:
        raise TestbedError(f"the state file of testbed '{name}' is damaged ({error}); "
                           f"remove it with `papcoll testbed down --name {name}`") from None


def existing() -> list[Plan]:
    """Every testbed whose state file exists (made by this machine since its last boot)."""
    if not STATE_DIRECTORY.is_dir():
        return []
    plans = []
    for path in sorted(STATE_DIRECTORY.glob("*.json")):
        try:
            plans.append(load(path.stem))
        except TestbedError:
            continue
    return plans


def missing_pieces(testbed: Plan) -> list[str]:
    """The namespaces and interfaces of the plan that do not exist (empty: complete)."""
    present = set(_run(["ip", "netns", "list"], check=False).stdout.split())
    missing = [n for n in testbed.namespaces if n not in present]
    missing += [d for d in testbed.bridges + [link.outer for link in testbed.links]
                if not Path(f"/sys/class/net/{d}").exists()]
    return missing


def link_bytes(testbed: Plan) -> dict[str, tuple[int, int]]:
    """Bytes each host's link carried so far: host -> (sent up, sent down), from the tbf
    counters at both ends (`tc -s`); what proves traffic crossed the shaped links."""
    counters: dict[str, tuple[int, int]] = {}
    host_links = [link for link in testbed.links if link.namespace is not None]
    for host, link in zip(testbed.hosts, host_links, strict=True):
        up_bytes = _tbf_bytes(link.inner, link.namespace)
        down_bytes = _tbf_bytes(link.outer, None)
        counters[host] = (up_bytes, down_bytes)
    return counters


def _tbf_bytes(device: str, namespace: str | None) -> int:
    prefix = ["ip", "netns", "exec", namespace] if namespace else []
    text = _run([*prefix, "tc", "-s", "qdisc", "show", "dev", device]).stdout
    match = re.search(r"Sent (\d+) bytes", text)
    return int(match.group(1)) if match else 0


# --- running programs inside it ------------------------------------------------------------

def _wrapper_directory(name: str) -> Path:
    return STATE_DIRECTORY / name


def _write_launch_wrapper(testbed: Plan) -> Path:
    """The 'remote shell' the MPI launchers use to start their daemons on a host: called as
    ssh would be (options, then the host, then the command), it runs the command inside the
    host's namespace. Hosts are named by their namespace."""
    directory = _wrapper_directory(testbed.name)
    directory.mkdir(parents=True, exist_ok=True)
    wrapper = directory / "enter-host"
    wrapper.write_text(
        "#!/bin/sh\n"
        "# ssh-like: skip the launcher's options (-x, -o X, ...), then HOST COMMAND...\n"
        'while [ "${1#-}" != "$1" ]; do\n'
        '  case "$1" in -o|-p|-l|-i) shift ;; esac\n'
        "  shift\n"
        "done\n"
        'host="$1"; shift\n'
        f'case "$host" in papcoll-{testbed.name}-*) ;; '
        '*) echo "enter-host: $host is not a host of this testbed" >&2; exit 255 ;; esac\n'
        '# its own hostname too (a UTS namespace): Open MPI tells hosts apart by name\n'
        'exec ip netns exec "$host" unshare --uts /bin/sh -c "hostname $host; $*"\n')
    wrapper.chmod(0o755)
    return wrapper


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
        wrapper = str(_wrapper_directory(self.plan.name) / "enter-host")
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


# --- checking a link -----------------------------------------------------------------------

# A TCP stream from one host to another, timed at the receiver from the first byte to the
# last (so the connection's set-up is not counted): the bandwidth a host's link gives a bulk
# transfer, which must come within 10 % of the shaped rate (TCP/IP headers take 4.4 % of
# a 1500-byte frame).
_RECEIVER = r"""
import socket, sys, time
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind((sys.argv[1], 5213)); server.listen(1)
print("listening", flush=True)
server.settimeout(30)
connection, _ = server.accept()
connection.settimeout(30)
received, first = 0, None
while True:
    data = connection.recv(1 << 20)
    if first is None:
        first = time.perf_counter()
    if not data:
        break
    received += len(data)
print(received, time.perf_counter() - first, flush=True)
"""
_SENDER = r"""
import socket, sys
connection = socket.create_connection((sys.argv[1], 5213), timeout=30)
block = bytes(1 << 20)
for _ in range(int(sys.argv[2])):
    connection.sendall(block)
connection.close()
"""


def stream_bandwidth(testbed: Plan, source: int, destination: int,
                     mebibytes: int = 64) -> float:
    """Bytes per second of a `mebibytes` MiB TCP stream from host `source` to host
    `destination` (indices into testbed.hosts)."""
    for host in (source, destination):
        if not 0 <= host < len(testbed.hosts):
            raise TestbedError(f"host {host}: testbed '{testbed.name}' has hosts 0.."
                               f"{len(testbed.hosts) - 1}")
    if source == destination:
        raise TestbedError("a stream needs two different hosts")
    address = testbed.addresses[destination]
    receiver = run_in_host(testbed, destination, [sys.executable, "-c", _RECEIVER, address],
                           stdout=subprocess.PIPE)
    try:
        assert receiver.stdout is not None
        if receiver.stdout.readline().strip() != "listening":
            raise TestbedError("the receiver of the stream did not start")
        sender = run_in_host(testbed, source, [sys.executable, "-c", _SENDER, address,
                                               str(mebibytes)])
        try:
            if sender.wait(timeout=120) != 0:
                raise TestbedError(f"the stream from host {source} to host {destination} "
                                   "failed")
        except subprocess.TimeoutExpired:
            raise TestbedError(f"the stream from host {source} to host {destination} did "
                               "not end in 120 s") from None
        finally:
            sender.kill()
            sender.wait()
        received, seconds = receiver.communicate(timeout=60)[0].split()
    finally:
        receiver.kill()
        receiver.wait()
    if int(received) != mebibytes << 20:
        raise TestbedError(f"the stream delivered {received} of {mebibytes << 20} bytes")
    return int(received) / float(seconds)


class CpuMeter:
    """How busy this machine's cores were during a `with` block (from /proc/stat): a
    testbed's timings measure the network only while the cores have time to spare."""

    def __init__(self) -> None:
        self.cores = os.cpu_count() or 1
        self.busy_percent = 0.0

    @staticmethod
    def _times() -> tuple[int, int]:
        try:
            fields = [int(x) for x in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
        except (OSError, ValueError):
            return 0, 0
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + waiting for I/O
        return sum(fields[:8]), idle

    def __enter__(self) -> CpuMeter:
        self._start = self._times()
        return self

    def __exit__(self, *_: object) -> None:
        total, idle = self._times()
        elapsed = total - self._start[0]
        if elapsed > 0:
            self.busy_percent = 100.0 * (elapsed - (idle - self._start[1])) / elapsed
