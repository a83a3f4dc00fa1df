"""A papcoll network as a SimGrid SMPI platform: the same description that drives `papcoll
sim` and the testbed drives SMPI too (docs/smpi.md).

SMPI runs an MPI program's real code for every rank and simulates the network and the clock,
so a job at P = 1024 runs on one machine and gives the same times every run. This module
only describes: the platform file (hosts, switches, links and their routes), the host of
every rank, and the `--cfg` settings that make SMPI's network the network papcoll's model
describes. papcoll.lab.smpi_launcher writes them out and runs smpirun.

How the model maps (papcoll.model.SimModel names):
  - a crossbar preset becomes a star: one switch, each host linked to it by a full-duplex
    link of latency L / 2 each way and bandwidth 1 / G, so a message between two hosts takes
    L plus its bytes at 1 / G, and each host's NIC bounds what it sends and receives at once
    (the crossbar's ports). A network with a topology becomes its tree: a host or switch is
    linked to its parent with that link's latency and bandwidth. Ranks on one host meet
    through SMPI's loopback, set to the network's local latency and bandwidth.
  - o and o_r: SMPI's per-message CPU times of MPI_Isend / MPI_Send and MPI_Recv
    (`smpi/ois`, `smpi/os`, `smpi/or`, each "0:o:0": o for any size).
  - the eager limit: `smpi/send-is-detached-thresh`, one more (a send below SMPI's
    threshold completes without its receive; papcoll's limit is the largest that does).
  - not mapped: the gap g (SMPI has none), reduce and copy costs (SMPI charges no time for
    computation: `smpi/simulate-computation:no`, the only repeatable choice), a shaped
    link's bucket. docs/smpi.md says what that changes.
  - SMPI's own calibration is switched off (`smpi/lat-factor` and `smpi/bw-factor` 1 at
    every size, no TCP window bound `network/TCP-gamma:0`, no ACK traffic
    `network/crosstraffic:0`, plain max-min sharing `network/weight-S:0`): papcoll's network
    says what the links do, not a cluster SMPI was once calibrated on.
  - polling: every MPI_Test / MPI_Iprobe costs 1 us of simulated time, not SMPI's growing
    default (papcoll's executor polls; with the default a ring at P = 16 took 6 x longer).
"""

from __future__ import annotations

from dataclasses import dataclass
from xml.sax.saxutils import quoteattr

from .network import Network
from .topology import Topology

# SMPI's all-reduce selectors (--cfg=smpi/coll-selector): each picks among SMPI's copies of
# that MPI's algorithms by size and P; "default" runs SMPI's plain reduce + broadcast.
SELECTORS = ("mpich", "ompi", "default")
# A link of no cost per byte still needs a bandwidth: this one never binds.
_UNBOUNDED_BYTES_PER_SECOND = 1e15
POLL_SECONDS = 1e-6
_SWITCH = "switch"


@dataclass(frozen=True)
class Platform:
    """What smpirun needs for one job: the platform file's text, the host of every rank (the
    hostfile's lines, in rank order) and the --cfg settings (name -> value)."""

    xml: str
    rank_hosts: list[str]
    settings: dict[str, str]

    def cfg_arguments(self) -> list[str]:
        return [f"--cfg={name}:{value}" for name, value in self.settings.items()]


def _bandwidth(seconds_per_byte: float) -> str:
    """A link's bandwidth as SimGrid writes it (bytes a second)."""
    per_second = 1.0 / seconds_per_byte if seconds_per_byte > 0 else _UNBOUNDED_BYTES_PER_SECOND
    return f"{per_second:.9g}Bps"


def _link(name: str, latency: float, seconds_per_byte: float) -> str:
    return (f"    <link id={quoteattr(name)} bandwidth=\"{_bandwidth(seconds_per_byte)}\" "
            f"latency=\"{latency:.9g}s\" sharing_policy=\"SPLITDUPLEX\"/>")


def _routes(child: str, parent: str, link: str) -> list[str]:
    """Child to parent over the link's up direction, back over its down direction."""
    return [f"    <route src={quoteattr(child)} dst={quoteattr(parent)} symmetrical=\"NO\">"
            f"<link_ctn id={quoteattr(link)} direction=\"UP\"/></route>",
            f"    <route src={quoteattr(parent)} dst={quoteattr(child)} symmetrical=\"NO\">"
            f"<link_ctn id={quoteattr(link)} direction=\"DOWN\"/></route>"]


def _star(network: Network, ranks: int) -> tuple[list[str], list[str], list[str]]:
    """A crossbar: a host per rank around one switch, each link half the latency."""
    model = network.model
    hosts = [f"host-{rank}" for rank in range(ranks)]
    elements = [f"    <router id=\"{_SWITCH}\"/>"]
    elements += [f"    <host id=\"{host}\" speed=\"1Gf\"/>" for host in hosts]
    links, routes = [], []
    for host in hosts:
        links.append(_link(f"link-{host}", model.latency / 2, model.seconds_per_byte))
        routes += _routes(host, _SWITCH, f"link-{host}")
    return elements + links, routes, hosts


def _tree(topology: Topology) -> tuple[list[str], list[str], list[str]]:
    """A topology's tree: its hosts and switches, a link from each to its parent."""
    hosts = set(topology.hosts)
    cores = {vertex: topology.rank_vertex.count(vertex) for vertex in hosts}
    elements = [f"    <host id={quoteattr(name)} speed=\"1Gf\" core=\"{max(1, cores[vertex])}\"/>"
                if vertex in hosts else f"    <router id={quoteattr(name)}/>"
                for vertex, name in enumerate(topology.names)]
    links, routes = [], []
    for vertex, up in enumerate(topology.parent):
        if up < 0:
            continue
        name = f"link-{topology.names[vertex]}"
        links.append(_link(name, topology.link_latency[vertex],
                           topology.link_seconds_per_byte[vertex]))
        routes += _routes(topology.names[vertex], topology.names[up], name)
    return elements + links, routes, [topology.names[v] for v in topology.rank_vertex]


def _per_message(seconds: float) -> str:
    return f"0:{seconds:.9g}:0"


def platform(network: Network, ranks: int, selector: str = "mpich",
             allreduce: str | None = None) -> Platform:
    """The SMPI platform of `network` for `ranks` ranks, SMPI's collectives chosen by
    `selector` (SELECTORS) or, for MPI_Allreduce, forced to SMPI's algorithm `allreduce`."""
    if ranks < 1:
        raise ValueError(f"ranks must be at least 1, not {ranks}")
    if selector not in SELECTORS:
        raise ValueError(f"unknown SMPI selector '{selector}' (one of {', '.join(SELECTORS)})")
    topology = network.topology(ranks)
    if topology is None:
        body, routes, rank_hosts = _star(network, ranks)
        local_latency = network.model.latency
        local_seconds_per_byte = network.model.seconds_per_byte
    else:
        body, routes, rank_hosts = _tree(topology)
        local_latency = topology.local_latency
        local_seconds_per_byte = topology.local_seconds_per_byte
    xml = "\n".join([
        "<?xml version='1.0'?>",
        "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">",
        f"<!-- papcoll network {network.name}, {ranks} ranks (papcoll.smpi) -->",
        "<platform version=\"4.1\">",
        "  <zone id=\"papcoll\" routing=\"DijkstraCache\">",
        *body, *routes,
        "  </zone>",
        "</platform>", ""])
    model = network.model
    receive_overhead = model.receive_overhead if model.receive_overhead is not None else 0.0
    settings = {
        "smpi/coll-selector": selector,
        "smpi/simulate-computation": "no",
        "smpi/test": f"{POLL_SECONDS:g}",
        "smpi/iprobe": f"{POLL_SECONDS:g}",
        "smpi/grow-injected-times": "no",
        "smpi/lat-factor": "0:1",
        "smpi/bw-factor": "0:1",
        "smpi/os": _per_message(model.overhead),
        "smpi/ois": _per_message(model.overhead),
        "smpi/or": _per_message(receive_overhead),
        # SMPI detaches sends below the threshold; papcoll's limit is the largest eager one
        "smpi/send-is-detached-thresh": str(model.eager_limit_bytes + 1
                                            if model.eager_limit_bytes >= 0 else 2**31 - 1),
        "network/TCP-gamma": "0",
        "network/crosstraffic": "0",
        "network/weight-S": "0",
        "network/loopback-lat": f"{local_latency:.9g}",
        "network/loopback-bw": _bandwidth(local_seconds_per_byte).removesuffix("Bps"),
    }
    if allreduce is not None:
        settings["smpi/allreduce"] = allreduce
    return Platform(xml, rank_hosts, settings)
