"""Proficz 2018, Table 3 on the testbed: 1 M floats on P emulated hosts joined
by 1 Gb/s links (papcoll.lab.testbed), one-late and rand-late, the paper's delays up to 100 ms;
papcoll's ring, rabenseifner, slt and prr beside the MPI's own all-reduce (its default
choice and its algorithms one by one), each measured e-bar with +-2 sigma, the lower bound
e-bar_lo, the speedup against the ring, and the simulator's e-bar for the same measured
arrivals on the calibrated testbed model (docs/networks/testbed-1g.json).

    .venv/bin/python bench/testbed_table3.py --ranks 4,6,8 --iterations 10 \
        --json docs/data/testbed_table3.json > table3.md

Needs root (the testbed). Takes about 2.5 minutes per P and mode on 2 cores.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path
from typing import Any

from papcoll.lab.bench import NATIVE_CONTENDERS, BenchOptions, run_benchmark
from papcoll.lab.launcher import mpi_flavor
from papcoll.lab.testbed import CpuMeter, temporary
from papcoll.lab.validate import simulated_ebars_ms
from papcoll.network import load_network

ROOT = Path(__file__).resolve().parents[1]
PAPER = ROOT.parent / "shared" / "paper-results" / "000-table3.csv"
DELAYS_MS = [0.0, 1.0, 5.0, 10.0, 50.0, 100.0]
OURS = ["ring", "rabenseifner", "slt", "prr"]


def measure(ranks: int, mode: str, iterations: int, network: str) -> list[dict[str, Any]]:
    algorithms = OURS + NATIVE_CONTENDERS[mpi_flavor()]
    options = BenchOptions(ranks=ranks, algorithms=algorithms, counts=[1 << 20], mode=mode,
                           max_delays_ms=DELAYS_MS, iterations=iterations, warmup=2,
                           compute_ms=100.0, baseline="ring", timeout=3000)
    with temporary("ethernet-1g", ranks) as testbed, CpuMeter() as cpu:
        rows = run_benchmark(options, launch=testbed.mpiexec_command,
                             network=load_network("ethernet-1g"))
    model = load_network(network)
    for row in rows:
        row["mode"], row["cpu_busy_percent"] = mode, cpu.busy_percent
        if row["algorithm"].startswith("native"):
            row["simulated_ms"] = None
            continue
        ebars = simulated_ebars_ms(row["algorithm"], ranks, row["count"], model,
                                   row["arrival_offsets_ms"])
        row["simulated_ms"] = sum(ebars) / len(ebars)
    return rows


def paper() -> dict[tuple[str, float], tuple[float, float]]:
    with PAPER.open() as file:
        return {(row["algorithm"], float(row["max_delay_ms"])):
                (float(row["avg_elapsed_ms"]), float(row["speedup_vs_ring"]))
                for row in csv.DictReader(file)}


def markdown(rows: list[dict[str, Any]], ranks: int, mode: str) -> str:
    published = paper() if mode == "one-late" else {}
    lines = [f"### P = {ranks}, {mode}", "",
             "Each cell: measured e-bar +-2 sigma (ms) / speedup against the ring"
             + (" / the paper's speedup (P = 48)" if published else "")
             + "; sim: the simulator's e-bar for the same arrivals.", "",
             "| algorithm | " + " | ".join(f"{d:g} ms" for d in DELAYS_MS) + " |",
             "|---|" + "---|" * len(DELAYS_MS)]
    by = {(row["algorithm"], row["max_delay_ms"]): row for row in rows}
    algorithms = list(dict.fromkeys(row["algorithm"] for row in rows))
    for name in algorithms:
        cells, simulated = [], []
        for delay in DELAYS_MS:
            row = by[(name, delay)]
            cell = (f"{row['avg_elapsed_ms']:.1f} +-{2 * row['stddev_ms']:.1f} / "
                    f"{row['speedup_vs_baseline']:.2f}")
            if (name, delay) in published:
                cell += f" / {published[(name, delay)][1]:.2f}"
            if row["speedup_vs_baseline"] > 1 + row["speedup_2sigma"]:
                cell = f"**{cell}**"
            cells.append(cell)
            if row.get("simulated_ms") is not None:
                simulated.append(f"{row['simulated_ms']:.1f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
        if simulated:
            lines.append("| (sim) | " + " | ".join(simulated) + " |")
    lines.append("| e-bar_lo | " + " | ".join(
        f"{by[('ring', delay)]['lower_bound_ms']:.1f}" for delay in DELAYS_MS) + " |")
    cpu = rows[0]["cpu_busy_percent"]
    lines += ["", f"CPU busy during the run: {cpu:.0f} % of the 2 cores.", ""]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", default="4,6,8")
    parser.add_argument("--modes", default="one-late,rand-late")
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--network", default=str(ROOT / "docs/networks/testbed-1g.json"),
                        help="the calibrated model the simulator uses")
    parser.add_argument("--json", help="write every row here")
    arguments = parser.parse_args()
    everything = []
    for ranks in (int(p) for p in arguments.ranks.split(",")):
        for mode in arguments.modes.split(","):
            rows = measure(ranks, mode, arguments.iterations, arguments.network)
            everything += rows
            print(markdown(rows, ranks, mode), flush=True)
            if arguments.json:
                Path(arguments.json).write_text(json.dumps(everything, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
