"""The simulator on topologies (trees of switches, SMP nodes, two sites), link contention,
noise, timelines, per-rank results, arrival files and the GOAL export."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from papcoll import Context, PapcollError, Parameters
from papcoll.lab.goal import goal_text
from papcoll.model import SimModel, with_parameters
from papcoll.network import NetworkError, load_network, parse_topology
from papcoll.sim import simulate
from papcoll.topology import Topology

ROOT = Path(__file__).resolve().parents[2]
NETWORKS = ROOT / "docs" / "networks"
ALPHA, BETA, GAMMA = 1e-6, 1e-10, 2.5e-10
HOCKNEY = SimModel(latency=ALPHA, seconds_per_byte=BETA, reduce_seconds_per_byte=GAMMA)


def star(ranks: int, latency: float, per_byte: float) -> Topology:
    """One switch, one host per rank: the crossbar drawn as a tree."""
    layout = parse_topology({
        "link": {"latency": latency, "seconds_per_byte": per_byte},
        "switches": [{"name": "switch"}],
        "hosts": [{"name": "h", "count": ranks, "parent": "switch"}]}, HOCKNEY)
    return layout.place(ranks)


def two_switches(per_leaf: int, root_per_byte: float, host_per_byte: float = 0.0,
                 placement: str | list[str] = "block") -> Topology:
    """Hosts a0.. under switch 'left', b0.. under 'right', both under 'root'; no latency,
    so times are pure bandwidth."""
    layout = parse_topology({
        "link": {"latency": 0.0, "seconds_per_byte": host_per_byte},
        "switches": [{"name": "root"},
                     {"name": "left", "parent": "root", "seconds_per_byte": root_per_byte},
                     {"name": "right", "parent": "root", "seconds_per_byte": root_per_byte}],
        "hosts": [{"name": "a", "count": per_leaf, "parent": "left"},
                  {"name": "b", "count": per_leaf, "parent": "right"}],
        "placement": placement}, HOCKNEY)
    return layout.place(2 * per_leaf)


@pytest.mark.parametrize("name", ["ring", "recursive_doubling", "rabenseifner"])
@pytest.mark.parametrize("ranks", [2, 8, 32])
def test_a_star_topology_gives_the_crossbar_closed_forms(name, ranks):
    # host -> switch -> host: two links of alpha/2 each; no two messages of these
    # algorithms share a directed link in a step, so Hockney's closed forms hold exactly.
    count = 1024 * ranks
    crossbar = simulate(name, ranks, count, 4, HOCKNEY)
    tree = simulate(name, ranks, count, 4, HOCKNEY, topology=star(ranks, ALPHA / 2, BETA))
    assert tree.makespan == pytest.approx(crossbar.makespan, rel=1e-12)


def ring_on(topology: Topology, order: list[int], count: int = 4096) -> float:
    model = SimModel(eager_limit_bytes=-1)  # pure bandwidth: only the links cost time
    result = simulate("ring", len(order), count, 1, model, topology=topology,
                      context=Context(parameters=Parameters(rank_order=order)))
    return result.makespan, result.link_bytes


def test_two_messages_on_one_link_take_twice_as_long_as_one():
    # P = 4: a0 a1 | b0 b1. The order a0 a1 b0 b1 sends one message each way over the
    # root per step (a1 -> b0, b1 -> a0); the order a0 b0 a1 b1 sends two each way (every
    # hop crosses). Only the root links cost time, so the second takes exactly twice as long.
    topology = two_switches(2, root_per_byte=1e-9)
    free, free_bytes = ring_on(topology, [0, 1, 2, 3])
    crossing, crossing_bytes = ring_on(topology, [0, 2, 1, 3])
    assert crossing == pytest.approx(2 * free, rel=1e-12)
    left_up = 2 * topology.names.index("left")
    assert crossing_bytes[left_up] == 2 * free_bytes[left_up] > 0
    # the control: make the root links free and the two orders take the same time
    fast = two_switches(2, root_per_byte=0.0, host_per_byte=1e-9)
    assert ring_on(fast, [0, 1, 2, 3])[0] == pytest.approx(ring_on(fast, [0, 2, 1, 3])[0])


def test_a_contention_free_ring_order_beats_a_crossing_one_on_the_32_host_file():
    network = load_network(str(NETWORKS / "two-switch-32.json"))
    topology = network.topology(32)
    depth_first = list(range(32))                               # a0..a15, b0..b15
    alternating = [r for pair in zip(range(16), range(16, 32), strict=True) for r in pair]
    times = {}
    for label, order in (("depth-first", depth_first), ("alternating", alternating)):
        times[label] = simulate("ring", 32, 1 << 20, 4, network.model, topology=topology,
                                context=Context(parameters=Parameters(rank_order=order))).makespan
    assert times["alternating"] > 1.5 * times["depth-first"]


def test_ranks_on_one_smp_node_use_shared_memory():
    network = load_network(str(NETWORKS / "smp-4x8.json"))
    layout = network.layout(4)
    one_node = layout.place(4)                                  # block: all on node0
    spread = parse_topology(json.loads((NETWORKS / "smp-4x8.json").read_text())["topology"]
                            | {"placement": "cyclic"}, network.model).place(4)
    assert set(one_node.rank_vertex) == {one_node.names.index("node0")}
    assert len(set(spread.rank_vertex)) == 4
    inside = simulate("ring", 4, 1 << 18, 4, network.model, topology=one_node)
    across = simulate("ring", 4, 1 << 18, 4, network.model, topology=spread)
    assert sum(inside.link_bytes) == 0 < sum(across.link_bytes)
    assert inside.makespan < across.makespan


def test_geo_two_site_splits_the_ranks_and_the_wan_dominates():
    network = load_network("geo-2site")
    topology = network.topology(20)
    sites = [topology.names[topology.parent[v]] for v in topology.rank_vertex]
    assert sites == ["site-a"] * 10 + ["site-b"] * 10
    ring = simulate("ring", 20, 1 << 19, 4, network.model, topology=topology)
    tree = simulate("rabenseifner", 20, 1 << 19, 4, network.model, topology=topology)
    assert ring.average_elapsed > tree.average_elapsed > 13e-3  # at least one WAN crossing
    file_network = load_network(str(NETWORKS / "geo-2site.toml"))
    assert simulate("ring", 20, 1 << 19, 4, file_network.model,
                    topology=file_network.topology(20)).makespan == \
        pytest.approx(ring.makespan, rel=1e-12)


def test_noise_is_seeded_and_only_delays():
    quiet = simulate("ring", 8, 8192, 4, HOCKNEY)
    first = simulate("ring", 8, 8192, 4, HOCKNEY, noise_mean=1e-6, noise_seed=7)
    again = simulate("ring", 8, 8192, 4, HOCKNEY, noise_mean=1e-6, noise_seed=7)
    other = simulate("ring", 8, 8192, 4, HOCKNEY, noise_mean=1e-6, noise_seed=8)
    assert first.finish == again.finish != other.finish
    assert min(first.average_elapsed, other.average_elapsed) > quiet.average_elapsed
    with pytest.raises(PapcollError, match="noise_mean must be a finite number"):
        simulate("ring", 8, 8192, 4, HOCKNEY, noise_mean=-1.0)


@pytest.mark.parametrize("name", ["ring", "prr", "recursive_doubling"])
def test_the_timeline_accounts_for_every_op(name):
    arrivals = [0.0, 3e-5, 0.0, 1e-5, 0.0, 0.0]
    result = simulate(name, 6, 6000, 4, HOCKNEY, arrivals, timeline=True)
    assert len(result.timeline) == result.operations
    for rank in range(6):
        spans = [span for span in result.timeline if span.rank == rank]
        assert min(span.start for span in spans) >= arrivals[rank]
        assert max(span.end for span in spans) == result.finish[rank]
        assert all(span.end >= span.start for span in spans)
    sent = sum(span.bytes for span in result.timeline if span.kind == "send")
    received = sum(span.bytes for span in result.timeline if span.kind == "recv")
    assert sent == received > 0


def test_bad_topologies_are_named(tmp_path):
    def check(data: object, message: str, suffix: str = ".json") -> None:
        path = tmp_path / f"network{suffix}"
        path.write_text(data if isinstance(data, str) else json.dumps(data))
        with pytest.raises(NetworkError, match=message):
            network = load_network(str(path))
            network.topology(4)

    hosts = [{"name": "h", "count": 4, "parent": "s"}]
    check("{", "not valid JSON")
    check("a = [", "not valid TOML", ".toml")
    check({"topology": {"switches": [{"name": "s"}], "hosts": hosts, "wires": 1}},
          "unknown key 'wires'")
    check({"topology": {"switches": [{"name": "s"}, {"name": "t"}], "hosts": hosts}},
          "exactly one vertex without a parent")
    check({"topology": {"switches": [{"name": "s", "parent": "t"}, {"name": "t", "parent": "s"},
                                     {"name": "r"}], "hosts": hosts}}, "form a cycle")
    check({"topology": {"switches": [{"name": "s"}], "hosts": [{"name": "h", "parent": "x"}]}},
          "parent 'x'")
    check({"topology": {"switches": [{"name": "s"}], "hosts": [{"name": "h", "parent": "s"}]}},
          "4 ranks do not fit")
    check({"topology": {"switches": [{"name": "s", "latency": "fast"}], "hosts": hosts}},
          "latency must be a finite number")
    check({"topology": {"switches": [{"name": "s"}], "hosts": hosts,
                        "placement": ["h0", "h1", "h2", "z"]}}, "unknown host 'z'")
    check({"base": "token-ring"}, "not a crossbar preset")
    # each of these was once a traceback, a silent misreading or a memory blow-up
    check({"base": []}, "base \\[\\] is not a crossbar preset")
    check({"topology": {"switches": [{"name": "s"}],
                        "hosts": [{"name": "h", "parent": ["r"]}]}}, "must be a name")
    check({"topology": {"switches": [{"name": "s"}],
                        "hosts": [{"name": "h", "parent": "s", "cores": 1e18}]}},
          "cores must be a whole number from 1 to 65536")
    check({"topology": {"switches": [{"name": "s"}],
                        "hosts": [{"name": "h", "parent": "s", "count": 10**9}]}},
          "count must be a whole number from 1 to 100000")
    check("[" * 200_000 + "]" * 200_000, "nested too deeply")
    check({"model": {"latency": "1e-6,overhead=5"}}, "latency must be a number")
    check({"model": {"eager": float("inf")}}, "eager must be a finite number")
    check("", "sets none of base, model and topology", ".toml")
    check({"description": "only words"}, "sets none of base, model and topology")
    chain = [{"name": "s0"}] + [{"name": f"s{k}", "parent": f"s{k - 1}"} for k in range(1, 80)]
    check({"topology": {"switches": chain, "hosts": [{"name": "h", "count": 4,
                                                      "parent": "s79"}]}},
          "deeper than 64|at most 64")
    (tmp_path / "latin1.json").write_bytes(b'{"description": "caf\xe9"}')
    with pytest.raises(NetworkError, match="latin1.json: not UTF-8"):
        load_network(str(tmp_path / "latin1.json"))
    with pytest.raises(ValueError, match="eager must be a whole number"):
        with_parameters(HOCKNEY, "eager=1e300")
    with pytest.raises(ValueError, match="needs a value"):
        with_parameters(HOCKNEY, "latency")
    with pytest.raises(NetworkError, match="unknown network"):
        load_network("token-ring")
    with pytest.raises(PapcollError, match="places 3 ranks, but there are 4"):
        simulate("ring", 4, 16, 4, HOCKNEY, topology=star(3, 1e-6, 1e-9))


def test_sim_command_per_rank_links_and_arrivals_file(papcoll_command, tmp_path):
    arrivals = tmp_path / "arrivals.json"
    arrivals.write_text(json.dumps([0.0, 0.002, 0.0, 0.001]))
    result = papcoll_command("sim", "--network", str(NETWORKS / "smp-4x8.json"), "--ranks",
                             "4", "--algorithms", "ring,prr", "--count", "16K",
                             "--arrivals", str(arrivals), "--per-rank", "--links",
                             "--json", "-")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout[result.stdout.index("["):])
    for row in rows:
        assert row["mode"] == "file" and row["max_delay_ms"] == 2.0
        per_rank = row["per_rank"]
        assert [item["arrival_ms"] for item in per_rank] == [0.0, 2.0, 0.0, 1.0]
        for item in per_rank:
            assert item["elapsed_ms"] == pytest.approx(item["finish_ms"] - item["arrival_ms"])
        mean = sum(item["elapsed_ms"] for item in per_rank) / 4
        assert mean == pytest.approx(row["avg_elapsed_ms"])
        assert row["link_bytes"] == {}  # block placement: all four ranks on node0
    arrivals.write_text("[0, 1]")
    bad = papcoll_command("sim", "--ranks", "4", "--arrivals", str(arrivals))
    assert bad.returncode == 2 and "gives 2 times for 4 ranks" in bad.stderr


def test_sim_command_draws_a_timeline(papcoll_command, tmp_path):
    picture = tmp_path / "timeline.png"
    result = papcoll_command("sim", "--ranks", "8", "--algorithms", "ring,prr", "--count",
                             "8K", "--mode", "one-late", "--max-delay", "0.05ms",
                             "--timeline", str(picture), "--profile")
    assert result.returncode == 0, result.stderr
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "M ops/s" in result.stdout
    too_many = papcoll_command("sim", "--ranks", "128", "--timeline", str(picture))
    assert too_many.returncode == 2 and "at most 64 ranks" in too_many.stderr


@pytest.mark.parametrize("name", ["ring", "rabenseifner", "prr", "linear"])
def test_goal_export_matches_every_send_with_a_receive(name):
    model = SimModel(reduce_seconds_per_byte=1e-9, copy_seconds_per_byte=1e-10)
    text = goal_text(name, 5, 1000, 4, model, Context(arrivals=[0.0] * 5, tau=1e-6))
    assert text.startswith("num_ranks 5\n")
    sends, receives = [], []
    for block in re.findall(r"rank (\d+) \{\n(.*?)\n\}", text, flags=re.S):
        rank, body = int(block[0]), block[1].splitlines()
        labels = {line.split(":")[0] for line in body if ":" in line}
        for line in body:
            if " requires " in line:
                later, earlier = line.split(" requires ")
                assert later in labels and earlier in labels
            elif match := re.fullmatch(r"l\d+: send (\d+)b to (\d+) tag (\d+)", line):
                sends.append((rank, int(match[2]), int(match[3]), int(match[1])))
            elif match := re.fullmatch(r"l\d+: recv (\d+)b from (\d+) tag (\d+)", line):
                receives.append((int(match[2]), rank, int(match[3]), int(match[1])))
            else:
                assert re.fullmatch(r"l\d+: calc \d+", line), line
    assert sorted(sends) == sorted(receives) and sends
    assert len(re.findall(r"^rank \d+ \{", text, flags=re.M)) == 5


def test_sim_command_exports_goal(papcoll_command, tmp_path):
    target = tmp_path / "ring.goal"
    result = papcoll_command("sim", "--ranks", "4", "--algorithms", "ring", "--count", "64",
                             "--export-goal", str(target))
    assert result.returncode == 0, result.stderr
    assert target.read_text().count("rank ") == 4
    two = papcoll_command("sim", "--ranks", "4", "--algorithms", "ring,prr",
                          "--export-goal", str(target))
    assert two.returncode == 2 and "one algorithm" in two.stderr


def test_show_prints_the_topology(papcoll_command):
    result = papcoll_command("sim", "--network", "geo-2site", "--ranks", "6", "--show")
    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout)
    assert shown["topology"]["placement"] == ["a0", "a1", "a2", "b0", "b1", "b2"]
    wan = next(v for v in shown["topology"]["vertices"] if v["name"] == "site-b")
    assert math.isclose(wan["latency"], 13e-3)


@pytest.mark.parametrize(("placement", "expected"), [("block", "aaabcc"), ("cyclic", "abcaca")])
def test_placement_fills_hosts_of_unequal_cores(placement, expected):
    hosts = [{"name": name, "parent": "s", "cores": cores}
             for name, cores in (("a", 3), ("b", 1), ("c", 2))]
    layout = parse_topology({"switches": [{"name": "s"}], "hosts": hosts,
                             "placement": placement}, HOCKNEY)
    placed = layout.place(6)
    assert "".join(placed.names[v] for v in placed.rank_vertex) == expected
    # hosts far larger than the job: placing 4 ranks walks 4 cores, not 65536 x 1000
    big = parse_topology({"switches": [{"name": "s"}], "placement": placement,
                          "hosts": [{"name": "h", "count": 1000, "parent": "s",
                                     "cores": 65536}]}, HOCKNEY).place(4)
    assert len(big.rank_vertex) == 4


# --- sites ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("network", "ranks", "sizes", "names"), [
    ("geo-2site", 20, [10, 10], ["site-a", "site-b"]),
    (str(NETWORKS / "geo-2site.toml"), 20, [10, 10], ["site-a", "site-b"]),
    ("geo-2site", 7, [4, 3], ["site-a", "site-b"]),
    ("geo-3site", 20, [7, 7, 6], ["site-a", "site-b", "site-c"]),
    ("geo-3site", 21, [7, 7, 7], ["site-a", "site-b", "site-c"]),
    ("geo-3site", 1024, [342, 341, 341], ["site-a", "site-b", "site-c"]),
    ("geo-3site", 1, [1], ["site-a"]),
    (str(NETWORKS / "geo-3site-unequal.toml"), 18, [8, 6, 4], ["site-a", "site-b", "site-c"]),
    (str(NETWORKS / "testbed-2site.json"), 6, [3, 3], ["site-a", "site-b"]),
])
def test_sites_are_blocks_of_ranks_numbered_by_their_first_rank(network, ranks, sizes, names):
    topology = load_network(network).topology(ranks)
    assert topology.sites == [site for site, size in enumerate(sizes) for _ in range(size)]
    assert topology.site_names == names
    # a rank's site is the nearest site switch above its host
    for rank, vertex in enumerate(topology.rank_vertex):
        above = vertex
        while topology.names[above] not in names:
            above = topology.parent[above]
        assert topology.names[above] == names[topology.sites[rank]]


def test_a_network_without_sites_has_none():
    assert load_network(str(NETWORKS / "two-switch-32.json")).topology(32).sites == []
    assert load_network("hockney").topology(4) is None


@pytest.mark.parametrize("ranks", [20, 21, 1024])
def test_geo_three_site_sites_are_13_ms_and_4_gb_s_apart_like_geo_two_site(ranks):
    three = load_network("geo-3site").topology(ranks)
    two = load_network("geo-2site").topology(20)
    assert load_network("geo-3site").model == load_network("geo-2site").model

    def crossing(topology, first, second):
        links = [link // 2 for link in topology.path(first, second)]
        return (sum(topology.link_latency[v] for v in links),
                max(topology.link_seconds_per_byte[v] for v in links))

    per_site = [three.sites.count(site) for site in range(3)]
    firsts = [three.sites.index(site) for site in range(3)]
    for first in firsts:
        for second in firsts:
            if first != second:
                latency, per_byte = crossing(three, first, second)
                assert latency == pytest.approx(13.01e-3, rel=1e-12)
                assert per_byte == 2.5e-10
    assert crossing(two, 0, 10) == pytest.approx(crossing(three, firsts[0], firsts[1]))
    # within a site: host -> switch -> host as geo-2site, ranks in blocks on 10 hosts
    neighbour = next(r for r in range(ranks) if three.rank_vertex[r] != three.rank_vertex[0])
    assert three.sites[neighbour] == 0
    assert crossing(three, 0, neighbour) == crossing(two, 0, 1) == (10e-6, 2e-10)
    assert (three.local_latency, three.local_seconds_per_byte) == (0.5e-6, 1e-10)
    for site, size in enumerate(per_site):
        hosts = [three.rank_vertex[r] for r in range(ranks) if three.sites[r] == site]
        assert hosts == sorted(hosts) and len(set(hosts)) == min(10, size)


def _two_leaves(**marks: object) -> dict:
    """A root over switches left (hosts a0, a1) and right (b0, b1), `marks` their site keys."""
    return {"topology": {
        "switches": [{"name": "root", **({"site": marks["root"]} if "root" in marks else {})},
                     {"name": "left", "parent": "root",
                      **({"site": marks["left"]} if "left" in marks else {})},
                     {"name": "right", "parent": "root",
                      **({"site": marks["right"]} if "right" in marks else {})}],
        "hosts": [{"name": "a", "count": 2, "parent": "left"},
                  {"name": "b", "count": 2, "parent": "right"}]}}


@pytest.mark.parametrize(("document", "message"), [
    (_two_leaves(root=True, left=True, right=True), "sites 'root' and 'left' nest"),
    (_two_leaves(left=True), "host 'b0' is below no site switch"),
    (_two_leaves(left="yes", right=True), "site must be true or false, not 'yes'"),
    (_two_leaves(left=1, right=True), "site must be true or false, not 1"),
    ({"topology": {"switches": [{"name": "s", "site": True}, {"name": "t", "parent": "s",
                                                             "site": True}],
                   "hosts": [{"name": "h", "count": 4, "parent": "s"}]}},
     "site 't' has no hosts"),
    ({"topology": {"switches": [{"name": "s", "site": True}],
                   "hosts": [{"name": "h", "count": 4, "parent": "s", "site": True}]}},
     "unknown key 'site'"),
])
def test_bad_sites_are_named(tmp_path, document, message):
    for suffix in (".json", ".toml"):
        path = tmp_path / f"sites{suffix}"
        if suffix == ".json":
            path.write_text(json.dumps(document))
        else:
            topology = document["topology"]
            entries = {kind: ", ".join("{" + ", ".join(f"{key} = {json.dumps(value)}"
                                                       for key, value in entry.items()) + "}"
                                       for entry in topology[kind])
                       for kind in ("switches", "hosts")}
            path.write_text(f"[topology]\nswitches = [{entries['switches']}]\n"
                            f"hosts = [{entries['hosts']}]\n")
        with pytest.raises(NetworkError, match=message):
            load_network(str(path))


def test_a_site_below_a_site_with_hosts_of_its_own_is_a_site_of_its_own():
    # geo-2site's shape: root 'left-site' holds a0, a1 and the site 'right' below it
    layout = parse_topology({
        "switches": [{"name": "root", "site": True},
                     {"name": "rack", "parent": "root"},
                     {"name": "far", "parent": "rack", "site": True}],
        "hosts": [{"name": "a", "count": 2, "parent": "root"},
                  {"name": "r", "count": 2, "parent": "rack"},
                  {"name": "f", "count": 2, "parent": "far"}]}, HOCKNEY)
    topology = layout.place(6)
    assert topology.sites == [0, 0, 0, 0, 1, 1]
    assert topology.site_names == ["root", "far"]


@pytest.mark.parametrize(("network", "ranks", "groups", "expected"), [
    ("geo-2site", 1024, None, [0] * 512 + [1] * 512),
    ("geo-2site", 1024, "site", [0] * 512 + [1] * 512),
    ("geo-3site", 20, None, [0] * 7 + [1] * 7 + [2] * 6),
    ("geo-3site", 20, "switch", [1] * 7 + [2] * 7 + [3] * 6),    # the vertex above the host
    ("geo-2site", 4, "host", [2, 3, 12, 13]),
    (str(NETWORKS / "smp-4x8.json"), 12, None, [1] * 8 + [2] * 4),  # no sites: the host
])
def test_groups_default_to_the_sites_where_the_network_marks_them(network, ranks, groups,
                                                                    expected):
    from papcoll.cli.context_options import groups_for
    assert groups_for(groups, ranks, load_network(network).topology(ranks)) == expected


@pytest.mark.parametrize(("groups", "wan_bytes"), [([], 4096), (["--groups", "site"], 4096),
                                                   (["--groups", "host"], None)])
def test_sim_command_runs_hr1_across_the_sites(papcoll_command, groups, wan_bytes):
    # hr1 with site groups: the two site leaders exchange the vector once over the WAN
    # (outer recursive doubling of 2), 1 K floats each way; host groups cross it more
    result = papcoll_command("sim", "--network", "geo-2site", "--ranks", "1024",
                             "--algorithms", "hr1", "--count", "1K", "--baseline", "none",
                             *groups, "--json", "-")
    assert result.returncode == 0, result.stderr
    row = json.loads(result.stdout[result.stdout.index("["):])[0]
    crossing = (row["link_bytes"]["site-b->site-a"], row["link_bytes"]["site-a->site-b"])
    if wan_bytes is None:
        assert min(crossing) > 4096
    else:
        assert crossing == (wan_bytes, wan_bytes)


@pytest.mark.parametrize(("network", "message"), [
    ("hockney", "--groups site needs a network with a topology"),
    (str(NETWORKS / "smp-4x8.json"),
     "--groups site: grouping by site needs a network that marks sites"),
])
def test_groups_site_needs_sites(papcoll_command, network, message):
    result = papcoll_command("sim", "--network", network, "--ranks", "4", "--algorithms",
                             "hr1", "--groups", "site", "--count", "16")
    assert result.returncode == 2 and message in result.stderr


@pytest.mark.parametrize(("network", "ranks"), [("geo-2site", 20), ("geo-3site", 30),
                                               (str(NETWORKS / "smp-4x8.json"), 32)])
def test_show_without_ranks_places_one_rank_a_core(papcoll_command, network, ranks):
    result = papcoll_command("sim", "--network", network, "--show")
    assert result.returncode == 0, result.stderr
    assert len(json.loads(result.stdout)["topology"]["placement"]) == ranks


def test_show_names_the_site_of_every_rank(papcoll_command):
    result = papcoll_command("sim", "--network", str(NETWORKS / "testbed-2site.json"),
                             "--ranks", "6", "--show")
    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout)["topology"]
    assert shown["sites"] == ["site-a"] * 3 + ["site-b"] * 3
    marked = {v["name"]: v for v in shown["vertices"] if v.get("site")}
    assert sorted(marked) == ["site-a", "site-b"]
    assert marked["site-b"]["seconds_per_byte"] == 10 * 8e-9  # 100 Mb/s against 1 Gb/s
    hosts = [v for v in shown["vertices"] if v["name"] not in marked]
    assert {(v["latency"], v["seconds_per_byte"]) for v in hosts} == {(0.0, 8e-9)}
