"""The simulator target: pap_hierarchical against both families on sites.

Proficz et al. (Fig. 8-9) measured all-reduce between InfiniBand sites joined by a 13 ms link;
this sweep repeats its grid in the simulator on geo-2site and geo-3site (papcoll.network),
512 K floats, P = 20 to 1024, balanced, one-late (rank 1 late) and rand-late (every rank late
by a seeded uniform share) with delays up to 500 ms, and compares

    pap_hierarchical    the PAP-aware hierarchical all-reduce (papcoll's)
    hr1, hr2            Proficz et al.'s hierarchical algorithms (groups: the sites)
    prr, straggler      the arrival-aware ones (Proficz 2018; straggler)
    best native         the least of ring, rabenseifner, recursive_doubling (what
                        MPI_Allreduce chooses between)
    auto                what `auto` chooses (papcoll.sim.choose, on the network's tree, with
                        the sites as groups) and its e-bar

by their excess over e-bar_lo (papcoll.sim.lower_bound: the mean wait for the last arrival
plus one transfer on the fastest path) and over the bound that knows the network
(papcoll.sim.network_lower_bound: per rank, the last rank's data must reach it over the
narrowest link of its path). The figures of merit:

    late ratio      = excess(pap_hierarchical) / min excess(hr1, hr2, prr, straggler)
                      target <= 0.5, one-late and rand-late
    balanced ratio  = e-bar(pap_hierarchical) / min e-bar(hr1, hr2)
                      target <= 1.05

    PYTHONPATH=python .venv/bin/python bench/site_sweep.py \
        --json docs/data/site_sweep.json > site_sweep.md

Progress goes to stderr, the markdown tables to stdout. The whole default grid (2 networks
x 4 P x 5 arrival cases x 9 algorithms) takes a few minutes of one core, most of it at
P = 1024 (prr, straggler and the native ring build about a million operations each).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from papcoll import Context, Parameters
from papcoll.cli.options import comma_list, integer_in_range
from papcoll.network import load_network
from papcoll.sim import (
    NATIVE_STAND_INS,
    arrival_pattern,
    choose,
    lower_bound,
    network_lower_bound,
    simulate,
    tau,
    transfer_time,
)
from rich.console import Console
from sim_sweep import markdown_head, progress_bar

NEW = "pap_hierarchical"
FAMILIES = ("hr1", "hr2", "prr", "straggler")
HIERARCHICAL = ("hr1", "hr2")
SHOWN = (NEW, *FAMILIES, "best native", "auto")
CASES = (("balanced", 0.0), ("one-late", 100.0), ("one-late", 500.0),
         ("rand-late", 100.0), ("rand-late", 500.0))
COUNT = 512 * 1024
ELEM_SIZE = 4
LATE_TARGET = 0.5
BALANCED_TARGET = 1.05


def run_cell(network_name: str, ranks: int, mode: str, delay_ms: float,
             seed: int) -> dict[str, Any]:
    network = load_network(network_name)
    model, topology = network.model, network.topology(ranks)
    assert topology is not None, f"{network_name} has no topology"
    arrivals = arrival_pattern(mode, ranks, delay_ms / 1e3, seed)
    context = Context(parameters=Parameters(tree=topology), arrivals=arrivals,
                      tau=tau(model, ranks, COUNT, ELEM_SIZE), groups=topology.groups("site"))
    names = (NEW, *FAMILIES, *NATIVE_STAND_INS)
    ebar_ms = {name: simulate(name, ranks, COUNT, ELEM_SIZE, model, arrivals, context,
                              topology=topology).average_elapsed * 1e3 for name in names}
    native = min(NATIVE_STAND_INS, key=lambda name: ebar_ms[name])
    ebar_ms["best native"] = ebar_ms[native]
    decided = choose(ranks, COUNT, ELEM_SIZE, model, context)
    ran = native if decided.algorithm == "native" else decided.algorithm
    if ran not in ebar_ms:
        ebar_ms[ran] = simulate(ran, ranks, COUNT, ELEM_SIZE, model, arrivals, context,
                                topology=topology).average_elapsed * 1e3
    ebar_ms["auto"] = ebar_ms[ran]
    bound_ms = lower_bound(arrivals, transfer_time(model, topology, COUNT * ELEM_SIZE)) * 1e3
    network_bound_ms = network_lower_bound(arrivals, model, topology, COUNT * ELEM_SIZE) * 1e3
    excess = {name: ebar_ms[name] - bound_ms for name in SHOWN}
    best_family = min(excess[name] for name in FAMILIES)
    best_hierarchical = min(ebar_ms[name] for name in HIERARCHICAL)
    return {
        "network": network_name, "ranks": ranks, "count": COUNT, "elem_size": ELEM_SIZE,
        "mode": mode, "max_delay_ms": delay_ms, "seed": seed,
        "lower_bound_ms": bound_ms, "network_bound_ms": network_bound_ms,
        "avg_elapsed_ms": {name: ebar_ms[name] for name in SHOWN},
        "excess_ms": excess,
        "network_excess_ms": {name: ebar_ms[name] - network_bound_ms for name in SHOWN},
        "best_native": native, "best_family": min(FAMILIES, key=lambda name: excess[name]),
        "late_ratio": excess[NEW] / best_family if mode != "balanced" else None,
        # the least late ratio any algorithm could reach: one at the network's bound
        "bound_ratio": ((network_bound_ms - bound_ms) / best_family
                        if mode != "balanced" else None),
        "balanced_ratio": ebar_ms[NEW] / best_hierarchical if mode == "balanced" else None,
        "auto_chose": decided.algorithm, "auto_ran": ran,
    }


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = ["Excess over e-bar_lo, ms (e-bar - e-bar_lo; balanced: e-bar itself, e-bar_lo "
             "being one local transfer). ratio: late rows excess(pap_hierarchical) / the least "
             "of hr1, hr2, prr, straggler (target <= 0.5); balanced rows e-bar(pap_hierarchical)"
             " / the least of hr1, hr2 (target <= 1.05); at bound: the late ratio of an "
             "algorithm that met the network bound (the least possible). pap_h. net: "
             "pap_hierarchical's e-bar - the network bound.", "",
             *markdown_head(["network", "P>", "mode", "delay ms>", "e-bar_lo>", "net bound>",
                             *(f"{name}>" for name in SHOWN), "ratio>", "at bound>",
                             "pap_h. net>", "auto chose"])]
    for row in rows:
        balanced = row["mode"] == "balanced"
        values = row["avg_elapsed_ms"] if balanced else row["excess_ms"]
        ratio = row["balanced_ratio"] if balanced else row["late_ratio"]
        target = BALANCED_TARGET if balanced else LATE_TARGET
        ratio_text = f"{ratio:.2f}" if ratio is not None else "-"
        if ratio is not None and ratio <= target:
            ratio_text = f"**{ratio_text}**"
        lines.append(
            f"| {row['network']} | {row['ranks']} | {row['mode']} | {row['max_delay_ms']:g} | "
            f"{row['lower_bound_ms']:.2f} | {row['network_bound_ms']:.2f} | "
            + " | ".join(f"{values[name]:.2f}" for name in SHOWN)
            + f" | {ratio_text} | "
            + (f"{row['bound_ratio']:.2f}" if row["bound_ratio"] is not None else "-")
            + f" | {row['network_excess_ms'][NEW]:.2f} | {row['auto_chose']} |")
    return "\n".join(lines)


def summaries(rows: list[dict[str, Any]]) -> list[str]:
    lines = []
    for network in dict.fromkeys(row["network"] for row in rows):
        for mode in ("balanced", "one-late", "rand-late"):
            cells = [row for row in rows if row["network"] == network and row["mode"] == mode]
            if not cells:
                continue
            key, target = (("balanced_ratio", BALANCED_TARGET) if mode == "balanced"
                           else ("late_ratio", LATE_TARGET))
            ratios = [row[key] for row in cells]
            met = sum(ratio <= target for ratio in ratios)
            feasible = ("" if mode == "balanced" else
                        f" (at the network bound it would be met in "
                        f"{sum(row['bound_ratio'] <= target for row in cells)})")
            chose = sorted(set(row["auto_chose"] for row in cells))
            lines.append(f"- {network}, {mode}: target met in {met} of {len(cells)} cells"
                         f"{feasible}; "
                         f"ratio median {statistics.median(ratios):.2f}, worst "
                         f"{max(ratios):.2f}; auto chose {', '.join(chose)}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--networks", type=comma_list(str), default=["geo-2site", "geo-3site"],
                        help="networks with sites (default geo-2site,geo-3site)")
    parser.add_argument("--ranks", type=comma_list(integer_in_range("ranks", 2, 4096)),
                        default=[20, 64, 256, 1024], help="default 20,64,256,1024")
    parser.add_argument("--seed", type=integer_in_range("seed", 0, 2**31 - 1), default=1,
                        help="rand-late's seed (default 1)")
    parser.add_argument("--json", metavar="FILE", help="write the rows as JSON")
    arguments = parser.parse_args(argv)
    cells = [(network, ranks, mode, delay) for network in arguments.networks
             for ranks in arguments.ranks for mode, delay in CASES]
    rows = []
    console = Console(stderr=True)
    with progress_bar(console) as progress:
        task = progress.add_task("site sweep", total=len(cells))
        for network, ranks, mode, delay in cells:
            progress.update(task, description=f"{network} P={ranks} {mode} {delay:g} ms")
            rows.append(run_cell(network, ranks, mode, delay, arguments.seed))
            progress.advance(task)
    print(markdown(rows))
    print()
    print("\n".join(summaries(rows)))
    if arguments.json:
        Path(arguments.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
