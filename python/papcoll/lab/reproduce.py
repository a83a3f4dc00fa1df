"""The papers' tables that take more than one `papcoll sim` run, computed in the simulator
(printed by `papcoll reproduce NAME`, papcoll.cli.reproduce).

seed003-table1: Proficz et al., Table 1 on the geo-2site preset (10 + 10 hosts, 13 ms between the
sites), P = 20, 512 K floats, balanced; its scalability curve P = 2..20; and the imbalanced
case (rand-late, maximum delay 0..500 ms, mean over seeds). Groups for hr1 / hr2 /
pap_hierarchical (papcoll's answer to the paper's open problem, no paper number): the
sites. Beside each row the bound that knows the network (sim.network_lower_bound), so the
tables say how far each algorithm stays from what the network allows.

seed001-crossover: Patarasuk & Yuan 2009, Sect. 5 on 32 hosts under two leaf switches (1 Gb/s):
ring_topology against recursive_doubling (the butterfly) and rabenseifner, 1 KB to 4 MB.

seed002-tables: Gavahi, Tables 1-2: priority_rabenseifner against rabenseifner (the naive
reduce-scatter + all-gather), 4 B to 64 MB, P = 128 on 8 nodes x 16 cores, over 10 Gb/s
Ethernet (MPICH's table) and 100 Gb/s InfiniBand (MVAPICH's table).

seed004-table2: Ruefenacht et al. 2017, Table 2 in the simulator: for each process count, MPICH's
recursive doubling, the paper's recursive multiplying schedule and the best schedule the search
finds, 8-byte all-reduce on the `aries` preset (alpha_p 1.34 us, alpha_r 0.34 us, the paper's
Table 1), with the reduction next to the paper's (measured on ARCHER, minimum and median).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..core import Context, Parameters
from ..multiplying import enumerate_schedules, recursive_doubling_schedule, simulate_schedule
from ..network import Network, load_network, parse_topology
from ..sim import arrival_pattern, network_lower_bound, simulate, tau

_NETWORKS = Path(__file__).resolve().parents[3] / "docs" / "networks"  # python/papcoll/lab/

# Ruefenacht et al. 2017, Table 2: P, schedule, min RD/RM (us), min %, median RD/RM (us), median %
SEED_004_TABLE_2 = [
    (4, "a4", 2.36, 1.87, 21.1, 4.55, 3.65, 19.7),
    (6, "a6", 4.76, 2.87, 40.0, 8.72, 5.75, 34.1),
    (8, "a2,a4", 4.37, 3.54, 18.9, 9.38, 7.23, 23.0),
    (12, "a3,a4", 7.03, 4.43, 37.0, 15.3, 11.6, 24.4),
    (16, "a4,a4", 6.85, 4.98, 27.3, 19.1, 13.8, 27.6),
    (24, "a4,a6", 9.99, 6.91, 30.8, 29.7, 25.5, 14.2),
    (32, "a8,a4", 12.9, 8.95, 30.8, 30.9, 25.2, 18.4),
    (48, "a8,a6", 19.8, 13.3, 33.2, 38.7, 32.1, 17.1),
    (64, "a8,a8", 24.2, 16.5, 31.9, 47.4, 39.9, 15.9),
    (96, "a8,a3,a4", 25.3, 20.7, 18.1, 51.7, 47.6, 7.96),
    (128, "a8,a4,a4", 25.1, 17.9, 28.9, 101.0, 88.4, 12.5),
]


def _elapsed(ranks: int, schedule: str, network: Any, count: int) -> float:
    return simulate_schedule(schedule, ranks, count, 4, network.model)


def seed004_table2(network_name: str = "aries", count: int = 2) -> list[dict[str, Any]]:
    network = load_network(network_name)
    rows = []
    for ranks, paper_schedule, *paper in SEED_004_TABLE_2:
        baseline = _elapsed(ranks, recursive_doubling_schedule(ranks), network, count)
        ours = _elapsed(ranks, paper_schedule, network, count)
        best_time, best = min((_elapsed(ranks, schedule, network, count), schedule)
                              for _, schedule in enumerate_schedules(ranks))
        rows.append({
            "ranks": ranks, "recursive_doubling_us": baseline * 1e6,
            "paper_schedule": paper_schedule, "paper_schedule_us": ours * 1e6,
            "paper_schedule_reduction_percent": 100 * (baseline - ours) / baseline,
            "best_schedule": best, "best_us": best_time * 1e6,
            "best_reduction_percent": 100 * (baseline - best_time) / baseline,
            "paper_min_reduction_percent": paper[2], "paper_median_reduction_percent": paper[5],
            "paper_min_us": [paper[0], paper[1]], "paper_median_us": [paper[3], paper[4]],
        })
    return rows


SEED_003_ALGORITHMS = ["ring", "prr", "rabenseifner", "recursive_doubling", "hr1", "hr2",
                       "pap_hierarchical"]
# pap_hierarchical is papcoll's (the paper's Section 6 asks for it): no paper number
SEED_003_TABLE_1_MS: dict[str, int | None] = {
    "ring": 468, "prr": 339, "rabenseifner": 162, "recursive_doubling": 91, "hr1": 44,
    "hr2": 47, "pap_hierarchical": None}


def _elapsed_ms(name: str, ranks: int, count: int, network: Any,
                arrivals: list[float] | None = None, by_site: bool = False) -> float:
    """e-bar in ms; groups (for the hierarchical algorithms) by the switch above each host,
    or with by_site the network's sites."""
    topology = network.topology(ranks)
    groups = topology.groups("site" if by_site else "switch") if topology is not None else None
    arrivals = arrivals or [0.0] * ranks
    context = Context(parameters=Parameters(tree=topology), arrivals=arrivals,
                      tau=tau(network.model, ranks, count, 4), groups=groups)
    return simulate(name, ranks, count, 4, network.model, arrivals, context,
                    topology=topology).average_elapsed * 1e3


def _bound_ms(ranks: int, count: int, network: Any, arrivals: list[float] | None = None) -> float:
    """The bound that knows the network (sim.network_lower_bound), in ms."""
    return network_lower_bound(arrivals or [0.0] * ranks, network.model,
                               network.topology(ranks), count * 4) * 1e3


def seed003_table1() -> dict[str, Any]:
    """Table 1 (P = 20, balanced), the scaling curve (P = 2..20) and the imbalanced case
    (rand-late, mean of seeds 1-5), each with `network_bound_ms`: the bound that knows the
    network for the same arrivals (for rand-late the mean of the seeds' bounds)."""
    network = load_network("geo-2site")
    count = 512 * 1024
    ranks = 20

    def ms(name: str, places: int, arrivals: list[float] | None = None) -> float:
        return _elapsed_ms(name, places, count, network, arrivals, by_site=True)

    balanced_bound = _bound_ms(ranks, count, network)
    table = [{"algorithm": name, "avg_elapsed_ms": ms(name, ranks),
              "paper_ms": SEED_003_TABLE_1_MS[name], "network_bound_ms": balanced_bound}
             for name in SEED_003_ALGORITHMS]
    scaling = [{"ranks": places, **{name: ms(name, places) for name in SEED_003_ALGORITHMS},
                "network_bound_ms": _bound_ms(places, count, network)}
               for places in range(2, ranks + 1, 2)]
    imbalanced = []
    seeds = range(1, 6)
    for delay_ms in (0, 100, 250, 500):
        patterns = [arrival_pattern("rand-late", ranks, delay_ms / 1e3, seed) for seed in seeds]
        imbalanced.append({
            "max_delay_ms": delay_ms,
            **{name: sum(ms(name, ranks, arrivals) for arrivals in patterns) / len(patterns)
               for name in SEED_003_ALGORITHMS},
            "network_bound_ms": sum(_bound_ms(ranks, count, network, arrivals)
                                    for arrivals in patterns) / len(patterns)})
    return {"table": table, "scaling": scaling, "imbalanced": imbalanced}


def seed001_crossover() -> list[dict[str, Any]]:
    """Block placement (consecutive ranks on one leaf switch: the rank order is already
    contention-free, Lemma 6) and interleaved placement (ranks alternate between the leaf
    switches, so the plain ring crosses the root link on every hop and only ring_topology
    reorders it)."""
    path = _NETWORKS / "two-switch-32.json"
    block = load_network(str(path))
    data = json.loads(path.read_text())
    interleaved_hosts = [f"{side}{k}" for k in range(16) for side in "ab"]
    layout = parse_topology({**data["topology"], "placement": interleaved_hosts}, block.model)
    interleaved = Network("two-switch-32, interleaved", block.model, lambda ranks: layout)
    rows = []
    for kib in (1, 4, 16, 64, 256, 1024, 4096):
        count = kib * 256  # 4-byte floats
        row: dict[str, Any] = {"bytes": kib * 1024}
        for name in ("ring_topology", "ring", "recursive_doubling", "rabenseifner"):
            row[name] = _elapsed_ms(name, 32, count, block)
        for name in ("ring_topology", "ring"):
            row[f"{name} (interleaved)"] = _elapsed_ms(name, 32, count, interleaved)
        rows.append(row)
    return rows


SEED_002_TABLE_1 = {4: 0.5, 16: -0.2, 64: 0.2, 256: 10.7, 1 << 10: 8.6, 4 << 10: 6.2,
                    16 << 10: 10.0, 128 << 10: 0.3, 256 << 10: -6.4, 512 << 10: -7.1,
                    4 << 20: -5.1, 8 << 20: -7.2, 16 << 20: -2.1}
SEED_002_TABLE_2 = {4: 2.1, 16: 0.7, 64: 1.0, 256: 1.0, 1 << 10: 1.6, 4 << 10: 308.4,
                    16 << 10: 201.5, 64 << 10: 117.9, 256 << 10: 33.6, 1 << 20: 24.7,
                    8 << 20: 6.0, 16 << 20: -0.2, 32 << 20: -3.5, 64 << 20: -5.3}


def seed002_tables() -> list[dict[str, Any]]:
    rows = []
    for label, file, paper in (("10 Gb/s Ethernet (Table 1, MPICH)", "smp-8x16-10gbe.json",
                                SEED_002_TABLE_1),
                               ("100 Gb/s InfiniBand (Table 2, MVAPICH)", "smp-8x16-ib100.json",
                                SEED_002_TABLE_2)):
        network = load_network(str(_NETWORKS / file))
        for nbytes in sorted(set(paper) | {64 << 20}):
            count = max(1, nbytes // 4)
            naive = _elapsed_ms("rabenseifner", 128, count, network)
            priority = _elapsed_ms("priority_rabenseifner", 128, count, network)
            rows.append({"network": label, "bytes": nbytes, "naive_us": naive * 1e3,
                         "priority_us": priority * 1e3,
                         "overhead_percent": 100 * (priority - naive) / naive,
                         "paper_overhead_percent": paper.get(nbytes)})
    return rows
