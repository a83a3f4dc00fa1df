"""Networks for the simulator: a cost model (SimModel) and, optionally, a tree topology of
switches and hosts on which the ranks are placed.

A network is a named preset (`hockney`, `ethernet-1g`, `infiniband-fdr`, `aries`: crossbars;
`geo-2site`: two sites of 10 hosts joined by a WAN link; `geo-3site`: three sites of 10 hosts
under a WAN vertex) or a JSON / TOML file:

    {
      "description": "two leaf switches of 16 hosts under a root switch",
      "base": "ethernet-1g",                       # preset giving the model's defaults
      "model": {"overhead": 5e-6},                 # overrides, names as in --param
      "calibration": {...},                        # optional: what `papcoll calibrate`
                                                   # measured; a record, not read
      "topology": {
        "link": {"latency": 25e-6, "seconds_per_byte": 8e-9},  # default for every link
        "local": {"latency": 1e-6, "seconds_per_byte": 1e-10}, # two ranks on one host
        "switches": [{"name": "root"},
                     {"name": "left", "parent": "root", "latency": 1e-6,
                      "site": true}],          # optional: a site (below)
        "hosts": [{"name": "a", "count": 16, "parent": "left", "cores": 1}],
        "placement": "block"                       # or "cyclic", or a host name per rank
      }
    }

Every switch and host except the root has a link to its parent; a switch or host entry may
set that link's latency and seconds_per_byte. `count: n` makes hosts name0 .. name(n-1).
A switch marked `"site": true` starts a site, a group of hosts behind the slow links between
sites: a host belongs to the nearest site switch above it, so a site is its switch's hosts
and those of the switches below it that are not sites themselves (geo-2site's site-a is
the root, and site-b, below it, is a site of its own). When any switch is a site, every
host must belong to one, and every site must hold a host: a site switch all of whose hosts
belong to sites below it (a "wan" root marked as a site over its sites) would nest them.
Placement `block` fills each host's cores in order (consecutive ranks share a host, the
layout Patarasuk & Yuan 2009, Lemma 6 assumes); `cyclic` deals ranks to hosts round-robin.
Without a "link" entry, links take half the model's latency (host -> switch -> host is then L)
and its seconds_per_byte; without "local", ranks on one host use the model's L and G.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import tomllib

from .checks import finite, read_small_file
from .model import PRESETS, SimModel, with_parameters, with_values
from .topology import NetworkError, Topology, TreeLayout, nearest_sites

# Bounds on what a network file may describe: well beyond any machine a simulation of
# papcoll's size models, and small enough that a file cannot make the loader or the engine
# run out of memory or time (a host with 1e18 cores, a million-deep chain of switches).
MAX_VERTICES = 100_000     # switches and hosts, after `count` is expanded
MAX_CORES = 65_536         # ranks one host may hold
MAX_DEPTH = 64             # links from the deepest vertex to the root
MAX_FILE_BYTES = 64 << 20


@dataclass(frozen=True)
class Network:
    name: str
    model: SimModel
    layout: Callable[[int], TreeLayout] | None = None  # ranks -> layout; None: crossbar
    description: str = ""

    def topology(self, ranks: int) -> Topology | None:
        return self.layout(ranks).place(ranks) if self.layout else None

    def with_parameters(self, text: str) -> Network:
        return replace(self, model=with_parameters(self.model, text))


def _number(entry: dict[str, Any], key: str, default: float, where: str) -> float:
    value = entry.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not (
            finite(value) and value >= 0):
        raise NetworkError(f"{where}: {key} must be a finite number >= 0, not {value!r}")
    return float(value)


def _check_keys(entry: Any, allowed: set[str], where: str) -> dict[str, Any]:
    if not isinstance(entry, dict):
        raise NetworkError(f"{where}: expected a table / object, not {entry!r}")
    unknown = sorted(set(entry) - allowed)
    if unknown:
        raise NetworkError(f"{where}: unknown key '{unknown[0]}' (known: "
                           f"{', '.join(sorted(allowed))})")
    return entry


def _whole_number(entry: dict[str, Any], key: str, default: int, largest: int,
                  where: str) -> int:
    value = entry.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= largest:
        raise NetworkError(f"{where}: {key} must be a whole number from 1 to {largest}, "
                           f"not {value!r}")
    return value


def _check_depths(names: list[str], parent: list[int]) -> None:
    """Refuses a cycle and a tree deeper than MAX_DEPTH, in time linear in the vertices: each
    vertex's depth is found once, by walking up to the first vertex whose depth is known."""
    depth = [-1] * len(parent)
    for start in range(len(parent)):
        path: list[int] = []
        vertex = start
        while depth[vertex] < 0 and parent[vertex] >= 0:
            path.append(vertex)
            if len(path) > MAX_DEPTH + 1:
                raise NetworkError(f"topology: the parents of '{names[start]}' form a cycle "
                                   f"or a chain deeper than {MAX_DEPTH} links")
            vertex = parent[vertex]
        known = depth[vertex] if depth[vertex] >= 0 else 0
        for step, below in enumerate(reversed(path), start=1):
            depth[below] = known + step
            if depth[below] > MAX_DEPTH:
                raise NetworkError(f"topology: '{names[below]}' lies {depth[below]} links "
                                   f"below the root; at most {MAX_DEPTH}")
        if parent[vertex] < 0:
            depth[vertex] = 0


def _check_sites(names: list[str], parent: list[int], cores: list[int],
                 site_switches: list[int]) -> None:
    """With any site marked: every host belongs to a site, and every site holds a host of
    its own (one whose hosts all belong to sites below it would nest them)."""
    if not site_switches:
        return
    site = nearest_sites(parent, site_switches)
    hosts = [vertex for vertex, count in enumerate(cores) if count > 0]
    outside = [vertex for vertex in hosts if site[vertex] < 0]
    if outside:
        raise NetworkError(f"topology: host '{names[outside[0]]}' is below no site switch; "
                           "when a switch is marked as a site, every host must be in a site "
                           "(the nearest site switch above it)")
    owning = {site[vertex] for vertex in hosts}
    for switch in site_switches:
        if switch in owning:
            continue
        below = next((other for other in site_switches if other != switch
                      and parent[other] >= 0 and site[parent[other]] == switch), None)
        if below is not None:
            raise NetworkError(f"topology: sites '{names[switch]}' and '{names[below]}' nest: "
                               f"every host below '{names[switch]}' is in a site below it; "
                               "sites must not nest (a host belongs to the nearest site "
                               "switch above it, so mark only the switches of the sites)")
        raise NetworkError(f"topology: site '{names[switch]}' has no hosts")


def parse_topology(data: Any, model: SimModel) -> TreeLayout:
    """The "topology" table of a network file; errors name the entry at fault."""
    data = _check_keys(data, {"link", "local", "switches", "hosts", "placement"}, "topology")
    link = _check_keys(data.get("link", {}), {"latency", "seconds_per_byte"}, "topology.link")
    local = _check_keys(data.get("local", {}), {"latency", "seconds_per_byte"},
                        "topology.local")
    link_latency = _number(link, "latency", model.latency / 2, "topology.link")
    link_per_byte = _number(link, "seconds_per_byte", model.seconds_per_byte, "topology.link")
    entries: list[tuple[str, dict[str, Any], int]] = []  # name, entry, cores
    for kind in ("switches", "hosts"):
        listed = data.get(kind, [])
        if not isinstance(listed, list):
            raise NetworkError(f"topology.{kind} must be a list")
        for i, entry in enumerate(listed):
            where = f"topology.{kind}[{i}]"
            keys = {"name", "parent", "latency", "seconds_per_byte"}
            entry = _check_keys(entry, keys | ({"count", "cores"} if kind == "hosts"
                                               else {"site"}), where)
            if not isinstance(entry.get("site", False), bool):
                raise NetworkError(f"{where}: site must be true or false, not "
                                   f"{entry['site']!r}")
            if not isinstance(entry.get("name"), str) or not entry["name"]:
                raise NetworkError(f"{where}: needs a name")
            cores = (_whole_number(entry, "cores", 1, MAX_CORES, where)
                     if kind == "hosts" else 0)
            if "count" not in entry:
                entries.append((entry["name"], entry, cores))
            else:
                count = _whole_number(entry, "count", 1, MAX_VERTICES, where)
                if len(entries) + count > MAX_VERTICES:
                    raise NetworkError(f"{where}: more than {MAX_VERTICES} switches and hosts "
                                       "in all")
                entries.extend((f"{entry['name']}{k}", entry, cores) for k in range(count))
            if len(entries) > MAX_VERTICES:
                raise NetworkError(f"topology: more than {MAX_VERTICES} switches and hosts")
    names = [name for name, _, _ in entries]
    if not any(cores for _, _, cores in entries):
        raise NetworkError("topology: no hosts")
    index: dict[str, int] = {}
    for v, name in enumerate(names):
        if name in index:
            raise NetworkError(f"topology: two vertices are named '{name}'")
        index[name] = v
    parent: list[int] = []
    for name, entry, _ in entries:
        above = entry.get("parent")
        if above is None:
            parent.append(-1)
        elif not isinstance(above, str):
            raise NetworkError(f"topology: the parent of '{name}' must be a name, not {above!r}")
        elif above not in index:
            raise NetworkError(f"topology: '{name}' has parent '{above}', which is not a "
                               "switch or host of the file")
        else:
            parent.append(index[above])
    roots = [names[v] for v, up in enumerate(parent) if up < 0]
    if len(roots) != 1:
        raise NetworkError(f"topology: a tree needs exactly one vertex without a parent, "
                           f"found {len(roots)} ({', '.join(roots[:4])})")
    _check_depths(names, parent)
    cores = [cores for _, _, cores in entries]
    site_switches = [v for v, (_, entry, _) in enumerate(entries) if entry.get("site") is True]
    _check_sites(names, parent, cores, site_switches)
    placement = data.get("placement", "block")
    if not (placement in ("block", "cyclic") or (
            isinstance(placement, list) and all(isinstance(p, str) for p in placement))):
        raise NetworkError("topology.placement must be 'block', 'cyclic' or a list of host "
                           f"names, not {placement!r}")
    return TreeLayout(
        names, parent,
        [_number(entry, "latency", link_latency, f"topology '{name}'")
         for name, entry, _ in entries],
        [_number(entry, "seconds_per_byte", link_per_byte, f"topology '{name}'")
         for name, entry, _ in entries],
        cores,
        _number(local, "latency", model.latency, "topology.local"),
        _number(local, "seconds_per_byte", model.seconds_per_byte, "topology.local"),
        placement, site_switches)


GEO_HOSTS_PER_SITE = 10


def _site_hosts(ranks: int, sites: str) -> tuple[list[int], list[str]]:
    """The hosts of Proficz et al.'s sites (10 a site, named a0 .. a9, b0 ..) with the ranks
    split as evenly as the count allows, the first sites taking the extra ranks, and placed in
    blocks within a site: the cores of every host, site by site, and the host of every rank. More
    than 10 ranks in a site share its hosts."""
    per_site = [ranks // len(sites) + (index < ranks % len(sites))
                for index in range(len(sites))]
    per_host = [max(1, math.ceil(count / GEO_HOSTS_PER_SITE)) for count in per_site]
    cores = [per_host[index] for index in range(len(sites)) for _ in range(GEO_HOSTS_PER_SITE)]
    placement = [f"{site}{k // per_host[index]}" for index, site in enumerate(sites)
                 for k in range(per_site[index])]
    return cores, placement


def _geo_two_site(ranks: int) -> TreeLayout:
    """Proficz et al.'s testbed: two sites of 10 hosts (InfiniBand FDR, ~10 us between local
    hosts) joined by a long WAN circuit (~13 ms one way with MPI overheads, about the same
    bandwidth). Ranks are split equally between the sites, as in the paper; more than 10 per site
    share hosts (block placement within a site). Site-a's switch is the root and site-b's hangs
    below it by the WAN link: both are sites."""
    hosts = GEO_HOSTS_PER_SITE
    names = ["site-a", "site-b"] + [f"{site}{k}" for site in "ab" for k in range(hosts)]
    parent = [-1, 0] + [0] * hosts + [1] * hosts
    # host links: 5 us each (host -> switch -> host = 10 us), 5 GB/s; WAN: 13 ms, 4 GB/s
    latency = [0.0, 13e-3] + [5e-6] * (2 * hosts)
    per_byte = [0.0, 2.5e-10] + [2e-10] * (2 * hosts)
    cores, placement = _site_hosts(ranks, "ab")
    return TreeLayout(names, parent, latency, per_byte, [0, 0] + cores, 0.5e-6, 1e-10,
                      placement, [0, 1])


def _geo_three_site(ranks: int) -> TreeLayout:
    """Three of Proficz et al.'s sites (10 hosts each, the host links and local numbers of
    geo-2site) below a WAN vertex, each 6.5 ms and 4 GB/s from it: site to site is 13 ms at
    4 GB/s, as in geo-2site. Ranks split as evenly as possible (the first sites take the
    extra ones), blocks within a site."""
    hosts = GEO_HOSTS_PER_SITE
    names = ["wan", "site-a", "site-b", "site-c"] + [f"{site}{k}" for site in "abc"
                                                     for k in range(hosts)]
    parent = [-1, 0, 0, 0] + [1] * hosts + [2] * hosts + [3] * hosts
    latency = [0.0] + [6.5e-3] * 3 + [5e-6] * (3 * hosts)
    per_byte = [0.0] + [2.5e-10] * 3 + [2e-10] * (3 * hosts)
    cores, placement = _site_hosts(ranks, "abc")
    return TreeLayout(names, parent, latency, per_byte, [0] * 4 + cores, 0.5e-6, 1e-10,
                      placement, [1, 2, 3])


_FDR = PRESETS["infiniband-fdr"]
NETWORKS: dict[str, Network] = {
    **{name: Network(name, model, None, "crossbar") for name, model in PRESETS.items()},
    "geo-2site": Network("geo-2site", _FDR, _geo_two_site,
                         "Proficz et al.: 10 + 10 hosts, ~10 us local, 13 ms between the sites"),
    "geo-3site": Network("geo-3site", _FDR, _geo_three_site,
                         "three sites of Proficz et al. (10 hosts each) under a WAN vertex, "
                         "6.5 ms to it (13 ms, 4 GB/s site to site), ~10 us local"),
}


def load_network(name_or_file: str) -> Network:
    """A preset by name, or a JSON (.json) / TOML (.toml) network file."""
    if name_or_file in NETWORKS:
        return NETWORKS[name_or_file]
    path = Path(name_or_file)
    if not path.suffix:
        raise NetworkError(f"unknown network '{name_or_file}' (presets: "
                           f"{', '.join(NETWORKS)}; or a .json / .toml network file)")
    if path.suffix not in (".json", ".toml"):
        raise NetworkError(f"network file {path}: a network file ends in .json or .toml")
    data = _read_network_file(path)
    try:
        data = _check_keys(data, {"description", "base", "model", "topology", "calibration"},
                           "the file")
        # "calibration": what `papcoll calibrate` measured (papcoll.lab.calibrate), a record for
        # people; the model above already holds its result, so it is checked, not read.
        if not isinstance(data.get("calibration", {}), dict):
            raise NetworkError("calibration must be a table / object (the record "
                               "`papcoll calibrate` writes)")
        if not data.keys() & {"base", "model", "topology"}:
            raise NetworkError("it sets none of base, model and topology (for a preset, give "
                               "its name instead of a file)")
        base = data.get("base", "hockney")
        if not isinstance(base, str) or base not in PRESETS:
            raise NetworkError(f"base {base!r} is not a crossbar preset ({', '.join(PRESETS)})")
        overrides = data.get("model", {})
        if not isinstance(overrides, dict):
            raise NetworkError("model must be a table / object of parameters")
        description = data.get("description", "")
        if not isinstance(description, str):
            raise NetworkError(f"description must be text, not {description!r}")
        model = with_values(PRESETS[base], overrides)
        layout = parse_topology(data["topology"], model) if "topology" in data else None
    except ValueError as error:  # NetworkError too: say which file
        raise NetworkError(f"{path}: {error}") from None
    return Network(path.stem, model, (lambda ranks: layout) if layout else None, description)


def _read_network_file(path: Path) -> Any:
    """The parsed JSON or TOML of a network file; every failure names the file."""
    raw = read_small_file(path, MAX_FILE_BYTES, f"network file {path}", NetworkError)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise NetworkError(f"{path}: not UTF-8 text (byte {error.start})") from None
    kind = path.suffix[1:].upper()
    try:
        data = tomllib.loads(text) if kind == "TOML" else json.loads(
            text, parse_int=_integer_or_overlong)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as error:
        raise NetworkError(f"{path}: not valid {kind}: {error}") from None
    except RecursionError:
        raise NetworkError(f"{path}: not valid {kind}: nested too deeply") from None
    except ValueError:  # tomllib's int() of more digits than Python converts
        raise NetworkError(f"{path}: {_overlong_toml_number(text)}") from None
    overlong = _first_overlong(data)
    if overlong is not None:
        field, number = overlong
        raise NetworkError(f"{path}: {field} is a number of {number.digits} digits, far "
                           "beyond any a network file holds") from None
    return data


@dataclass(frozen=True)
class _OverlongNumber:
    """A JSON integer of more digits than int() converts (Python's limit, 4300): kept in
    its place, so that the message can name its field, where int() named neither it nor
    the file."""

    digits: int


def _integer_or_overlong(text: str) -> int | _OverlongNumber:
    try:
        return int(text)
    except ValueError:
        return _OverlongNumber(len(text.lstrip("-")))


def _first_overlong(document: Any) -> tuple[str, _OverlongNumber] | None:
    """(its field, e.g. 'topology.hosts[0].count', and the number) of an overlong number in
    a parsed JSON document; a loop, not recursion: a document nested as deep as json reads
    would take Python's recursion past its limit."""
    pending: list[tuple[str, Any]] = [("", document)]
    while pending:
        field, value = pending.pop()
        if isinstance(value, _OverlongNumber):
            return field or "the file", value
        if isinstance(value, dict):
            pending.extend((f"{field}.{key}" if field else str(key), item)
                           for key, item in value.items())
        elif isinstance(value, list):
            pending.extend((f"{field}[{index}]", item) for index, item in enumerate(value))
    return None


def _overlong_toml_number(text: str) -> str:
    """What tomllib's ValueError was: the line and key of a number longer than int()
    converts (tomllib names neither)."""
    limit = sys.get_int_max_str_digits()
    for number, line in enumerate(text.splitlines(), start=1):
        found = re.search(rf"\d[\d_]{{{limit},}}", line) if limit else None
        if found is not None:
            key = re.match(r"\s*([^=]+?)\s*=", line)
            where = f"line {number}" + (f" ({key.group(1)})" if key else "")
            return (f"{where}: a number of {len(found.group().replace('_', ''))} digits, "
                    "far beyond any a network file holds")
    return "not valid TOML: a number too long to read"
