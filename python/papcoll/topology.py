"""A network's tree as the simulator and the C engine take it: Topology (the ranks placed on
switches and hosts, papcoll_sim_topology), TreeLayout (the tree before placement) and the one
rule of what a site holds (nearest_sites).

A leaf below both the loader (papcoll.network: presets and network files, which make these)
and the simulator (papcoll.sim, papcoll.core's Parameters.tree, which take them), so that
neither has to import the other for the types they share.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ._core import ffi, lib
from .errors import _ERROR_SIZE, _raise


class NetworkError(ValueError):
    """A network preset or file that cannot be used; the message names the problem."""


@dataclass(frozen=True)
class Topology:
    """A tree with the ranks placed on it, as the C engine takes it (papcoll_sim_topology)."""

    names: list[str]
    parent: list[int]
    link_latency: list[float]
    link_seconds_per_byte: list[float]
    rank_vertex: list[int]
    local_latency: float
    local_seconds_per_byte: float
    hosts: list[int] = field(default_factory=list)
    # the switches marked as sites (TreeLayout.site_switches); empty: the network has none
    site_switches: list[int] = field(default_factory=list)

    @cached_property
    def _vertex_sites(self) -> list[int]:
        return nearest_sites(self.parent, self.site_switches)

    @cached_property
    def sites(self) -> list[int]:
        """The site of every rank (an index into site_names), the sites numbered in the
        order of their first rank; [] when the network marks no sites."""
        if not self.site_switches:
            return []
        number: dict[int, int] = {}
        return [number.setdefault(self._vertex_sites[vertex], len(number))
                for vertex in self.rank_vertex]

    @cached_property
    def site_names(self) -> list[str]:
        """The name of the switch of each site of `sites`, in their order."""
        first = dict.fromkeys(self._vertex_sites[vertex] for vertex in self.rank_vertex)
        return [self.names[switch] for switch in first] if self.site_switches else []

    @cached_property
    def _depths(self) -> list[int]:
        depth = [0] * len(self.parent)
        for vertex in range(len(self.parent)):
            above = vertex
            while self.parent[above] >= 0:
                above, depth[vertex] = self.parent[above], depth[vertex] + 1
        return depth

    def link_name(self, index: int) -> str:
        """The directed link of result.link_bytes[index]: [2v] up from v, [2v + 1] down."""
        vertex = index // 2
        above = self.names[self.parent[vertex]]
        return (f"{self.names[vertex]}->{above}" if index % 2 == 0
                else f"{above}->{self.names[vertex]}")

    def c_struct(self, keep: list[Any]) -> Any:
        """This tree as a papcoll_sim_topology; the cffi objects it points to go to `keep`,
        which must outlive it."""
        raw = ffi.new("papcoll_sim_topology *")
        arrays = {
            "parent": ffi.new("int32_t[]", self.parent),
            "link_latency": ffi.new("double[]", self.link_latency),
            "link_seconds_per_byte": ffi.new("double[]", self.link_seconds_per_byte),
            "rank_vertex": ffi.new("int32_t[]", self.rank_vertex),
        }
        keep.extend([raw, *arrays.values()])
        for name, array in arrays.items():
            setattr(raw, name, array)
        raw.vertex_count = len(self.parent)
        raw.rank_count = len(self.rank_vertex)
        raw.local_latency = self.local_latency
        raw.local_seconds_per_byte = self.local_seconds_per_byte
        return raw

    def ring_order(self) -> list[int]:
        """Patarasuk & Yuan 2009's contention-free ring on this tree (C:
        papcoll_tree_ring_order)."""
        keep: list[Any] = []
        raw = self.c_struct(keep)
        order = ffi.new("int32_t[]", max(1, len(self.rank_vertex)))
        error = ffi.new("char[]", _ERROR_SIZE)
        _raise(lib.papcoll_tree_ring_order(raw, order, error, _ERROR_SIZE), error)
        return [order[i] for i in range(len(self.rank_vertex))]

    def path(self, source: int, destination: int) -> list[int]:
        """The directed links (2v up from v, 2v + 1 down to v) between two ranks."""
        return self.vertex_path(self.rank_vertex[source], self.rank_vertex[destination])

    def vertex_path(self, up: int, down: int) -> list[int]:
        """The directed links between two vertices, as the simulator routes a message."""
        depth = self._depths
        links: list[int] = []
        while up != down:
            if depth[up] >= depth[down]:
                links.append(2 * up)
                up = self.parent[up]
            else:
                links.append(2 * down + 1)
                down = self.parent[down]
        return links

    def groups(self, layout: str | None = None) -> list[int]:
        """The group of every rank by the tree: "host" (the vertex it runs on), "switch"
        (the vertex above it), "site" (its site; NetworkError when none is marked). None:
        the sites where the network marks some (the groups Proficz et al.'s hierarchical
        algorithms are about), else the host when some host runs several ranks, else the
        switch."""
        if layout is None:
            shared = len(set(self.rank_vertex)) < len(self.rank_vertex)
            layout = "site" if self.sites else "host" if shared else "switch"
        if layout == "host":
            return list(self.rank_vertex)
        if layout == "site":
            if not self.sites:
                raise NetworkError("grouping by site needs a network that marks sites (a switch "
                                   "with \"site\": true, as geo-2site and geo-3site do)")
            return list(self.sites)
        if layout == "switch":
            return [self.parent[vertex] for vertex in self.rank_vertex]
        raise NetworkError(f"unknown grouping '{layout}' (host, switch or site)")

    def describe(self) -> dict[str, Any]:
        """The tree as `papcoll sim --show` prints it; with sites, the site switches carry
        "site": true and "sites" gives the site of every rank by name."""
        marked = set(self.site_switches)
        described: dict[str, Any] = {
            "vertices": [{"name": name, "parent": self.names[up] if up >= 0 else None,
                          "latency": latency, "seconds_per_byte": per_byte,
                          **({"site": True} if vertex in marked else {})}
                         for vertex, (name, up, latency, per_byte) in enumerate(zip(
                             self.names, self.parent, self.link_latency,
                             self.link_seconds_per_byte, strict=True))],
            "local": {"latency": self.local_latency,
                      "seconds_per_byte": self.local_seconds_per_byte},
            "placement": [self.names[v] for v in self.rank_vertex],
        }
        if marked:
            described["sites"] = [self.site_names[site] for site in self.sites]
        return described


@dataclass(frozen=True)
class TreeLayout:
    """A topology before placement: vertices (switches and hosts) and how ranks go on hosts."""

    names: list[str]
    parent: list[int]
    link_latency: list[float]
    link_seconds_per_byte: list[float]
    cores: list[int]              # 0 for a switch
    local_latency: float
    local_seconds_per_byte: float
    placement: str | list[str] = "block"
    site_switches: list[int] = field(default_factory=list)  # switches marked as sites

    def place(self, ranks: int) -> Topology:
        hosts = [v for v, cores in enumerate(self.cores) if cores > 0]
        if isinstance(self.placement, list):
            if len(self.placement) != ranks:
                raise NetworkError(f"topology: the placement lists {len(self.placement)} "
                                   f"ranks, but the simulation has {ranks}")
            index = {self.names[v]: v for v in hosts}
            unknown = [name for name in self.placement if name not in index]
            if unknown:
                raise NetworkError(f"topology: placement names unknown host '{unknown[0]}'")
            rank_vertex = [index[name] for name in self.placement]
        else:
            capacity = sum(self.cores[v] for v in hosts)
            if ranks > capacity:
                raise NetworkError(f"topology: {ranks} ranks do not fit on {len(hosts)} hosts "
                                   f"with {capacity} cores in all")
            # Both walk only as far as the ranks go: a host's cores may far outnumber them.
            rank_vertex = []
            if self.placement == "block":
                for v in hosts:
                    rank_vertex.extend([v] * min(self.cores[v], ranks - len(rank_vertex)))
            else:  # cyclic: core 0 of every host, then core 1 of those that have one, ...
                core, open_hosts = 0, hosts
                while len(rank_vertex) < ranks:
                    rank_vertex.extend(open_hosts[:ranks - len(rank_vertex)])
                    core += 1
                    open_hosts = [v for v in open_hosts if self.cores[v] > core]
        return Topology(self.names, self.parent, self.link_latency, self.link_seconds_per_byte,
                        rank_vertex, self.local_latency, self.local_seconds_per_byte, hosts,
                        self.site_switches)


def nearest_sites(parent: list[int], site_switches: list[int]) -> list[int]:
    """For every vertex, the nearest site switch at or above it (-1: none), the one rule of
    what a site holds; linear in the vertices, each found once by walking up to the first
    vertex whose site is known."""
    unknown = -2
    site = [unknown] * len(parent)
    for switch in site_switches:
        site[switch] = switch
    for start in range(len(parent)):
        path: list[int] = []
        vertex = start
        while site[vertex] == unknown and parent[vertex] >= 0:
            path.append(vertex)
            vertex = parent[vertex]
        found = site[vertex] if site[vertex] != unknown else -1
        for below in [vertex, *path]:
            if site[below] == unknown:
                site[below] = found
    return site
