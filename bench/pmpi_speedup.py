"""The drop-in: what an unmodified program gains from libpapcoll_pmpi.so.

The program is the mini-benchmark's loop with no papcoll call in it: `papcoll-bench`'s
"native" contender, a plain MPI_Allreduce (on a duplicate of MPI_COMM_WORLD) after an
emulated compute phase in which rank 1 (one-late) or every rank (rand-late) is late. Two jobs
alternate, A B A B ... (--repeats times each), and every figure is a median:

  A, no preload: native (MPI_Allreduce), the MPI's own algorithms (native:NAME), and
     papcoll's auto through the explicit API (papcoll_allreduce), interleaved iteration by
     iteration;
  B, LD_PRELOAD=libpapcoll_pmpi.so: the same native contender, whose MPI_Allreduce now goes
     through papcoll (auto, arrivals from history), as in an unmodified program.

Three experiments:
  --experiment late      e-bar per size and delay (warm-up calls discarded), with the
                         lower bound e-bar_lo and the best native algorithm beside it;
  --experiment warmup    a fresh job per repeat with no discarded call: e-bar of each of the
                         first calls, to see how many calls history needs;
  --experiment balanced  back-to-back calls (compute 0, no delay): the preload's cost.

    .venv/bin/python bench/pmpi_speedup.py --experiment late --json docs/data/pmpi_late.json
    .venv/bin/python bench/pmpi_speedup.py --experiment warmup --json docs/data/pmpi_warmup.json
    .venv/bin/python bench/pmpi_speedup.py --experiment balanced \\
        --json docs/data/pmpi_balanced.json

Each prints a markdown table for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from papcoll.lab.bench import NATIVE_CONTENDERS, BenchOptions, run_benchmark
from papcoll.lab.launcher import mpi_flavor
from papcoll.lab.testbed import CpuMeter

SIZES = {"8": 8, "64K": 1 << 16, "1M": 1 << 20, "4M": 1 << 22, "16M": 1 << 24}
UNMODIFIED = "unmodified+preload"  # job B's native contender, as the tables name it


def run_job(options: BenchOptions) -> list[dict[str, Any]]:
    with CpuMeter() as cpu:
        rows = run_benchmark(options)
    for row in rows:
        row["cpu_busy_percent"] = cpu.busy_percent
        if options.preload:
            row["algorithm"] = UNMODIFIED
    return rows


def alternate(explicit: BenchOptions, preloaded: BenchOptions,
              repeats: int) -> list[dict[str, Any]]:
    """A B A B ...: every row of every job, tagged with its repeat."""
    rows: list[dict[str, Any]] = []
    for repeat in range(repeats):
        for options in (explicit, preloaded):
            for row in run_job(options):
                row["repeat"] = repeat
                rows.append(row)
            print(f"repeat {repeat + 1}/{repeats}: {'B (preload)' if options.preload else 'A'}"
                  " done", file=sys.stderr)
    return rows


def medians(rows: list[dict[str, Any]]) -> dict[tuple[str, int, float], dict[str, float]]:
    """Per (algorithm, bytes, delay): medians over the repeats of the row medians."""
    groups: dict[tuple[str, int, float], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["algorithm"], row["bytes"], row["max_delay_ms"]), []).append(row)
    return {key: {"median_ms": statistics.median(r["median_ms"] for r in group),
                  "lower_bound_ms": statistics.median(r["lower_bound_ms"] for r in group)}
            for key, group in groups.items()}


def size_name(size: int) -> str:
    return next((name for name, value in SIZES.items() if value == size), str(size))


def late_table(rows: list[dict[str, Any]]) -> str:
    cell = medians(rows)
    natives = sorted({key[0] for key in cell if key[0].startswith("native")})
    lines = ["| size | delay ms | e-bar_lo | unmodified + preload | explicit auto | native | "
             "best native | unmodified / native | unmodified / best native | "
             "unmodified / explicit auto | excess: unmodified / best native |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for size, delay in sorted({(key[1], key[2]) for key in cell}):
        preload = cell[(UNMODIFIED, size, delay)]["median_ms"]
        explicit = cell[("auto", size, delay)]["median_ms"]
        native = cell[("native", size, delay)]["median_ms"]
        best_name = min(natives, key=lambda name: cell[(name, size, delay)]["median_ms"])
        best = cell[(best_name, size, delay)]["median_ms"]
        bound = cell[("native", size, delay)]["lower_bound_ms"]
        excess = (preload - bound) / (best - bound) if best > bound else float("nan")
        lines.append(f"| {size_name(size)} | {delay:g} | {bound:.2f} | {preload:.2f} | "
                     f"{explicit:.2f} | {native:.2f} | {best_name} {best:.2f} | "
                     f"{preload / native:.2f} | {preload / best:.2f} | "
                     f"{preload / explicit:.2f} | {excess:.2f} |")
    return "\n".join(lines)


def warmup_table(rows: list[dict[str, Any]]) -> str:
    """Per call index: median over repeats of e-bar, unmodified+preload against native."""
    series: dict[str, list[list[float]]] = {}
    for row in rows:
        series.setdefault(row["algorithm"], []).append(row["ebar_ms"])
    names = [UNMODIFIED, "native", "auto"]
    calls = min(len(values) for name in names for values in series[name])
    lines = ["| call | " + " | ".join(names) + " | unmodified / native |",
             "|---|" + "---|" * (len(names) + 1)]
    for index in range(calls):
        values = [statistics.median(run[index] for run in series[name]) for name in names]
        lines.append(f"| {index + 1} | " + " | ".join(f"{value:.2f}" for value in values)
                     + f" | {values[0] / values[1]:.2f} |")
    return "\n".join(lines)


def balanced_table(rows: list[dict[str, Any]]) -> str:
    cell = medians(rows)
    lines = ["| size | native | unmodified + preload | ratio |", "|---|---|---|---|"]
    for size in sorted({key[1] for key in cell}):
        native = cell[("native", size, 0.0)]["median_ms"]
        preload = cell[(UNMODIFIED, size, 0.0)]["median_ms"]
        lines.append(f"| {size_name(size)} | {native * 1e3:.1f} us | {preload * 1e3:.1f} us | "
                     f"{preload / native:.3f} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiment", choices=["late", "warmup", "balanced"], required=True)
    parser.add_argument("--ranks", "-P", type=int, default=4)
    parser.add_argument("--mode", choices=["one-late", "rand-late"], default="one-late")
    parser.add_argument("--sizes", default=None,
                        help="comma list of " + ", ".join(SIZES) + " (defaults per experiment)")
    parser.add_argument("--max-delay", default="0,10,30",
                        help="delays in ms, comma list (late; warmup takes the last)")
    parser.add_argument("--iterations", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=3)
    # History learns in periods of up to 32 calls: a series that follows one with another
    # arrival pattern is predicted from the old one until two periods have passed, so the
    # steady state ("late") is measured after 40 discarded calls per series.
    parser.add_argument("--warmup", type=int, default=40,
                        help="calls discarded per size and delay (late, balanced)")
    parser.add_argument("--compute-ms", type=float, default=20.0)
    parser.add_argument("--json", metavar="FILE")
    arguments = parser.parse_args()
    defaults = {"late": ("1M,16M", 10), "warmup": ("16M", 12), "balanced": ("8,64K,1M,4M", 200)}
    sizes_text, iterations = defaults[arguments.experiment]
    sizes = [SIZES[name] for name in (arguments.sizes or sizes_text).split(",")]
    iterations = arguments.iterations or iterations
    delays = [float(delay) for delay in arguments.max_delay.split(",")]
    natives = NATIVE_CONTENDERS[mpi_flavor()]  # "native" and the MPI's algorithms

    def options(algorithms: list[str], preload: bool) -> BenchOptions:
        experiment = arguments.experiment
        return BenchOptions(
            ranks=arguments.ranks, algorithms=algorithms,
            counts=[max(1, size // 4) for size in sizes], mode=arguments.mode,
            max_delays_ms=[0.0] if experiment == "balanced" else
            delays[-1:] if experiment == "warmup" else delays,
            iterations=iterations, warmup=0 if experiment == "warmup" else arguments.warmup,
            compute_ms=0.0 if experiment == "balanced" else arguments.compute_ms,
            baseline="native", preload=preload, timeout=1800)

    explicit = ["native"] if arguments.experiment == "balanced" else [*natives, "auto"]
    if arguments.experiment == "warmup":
        explicit = ["native", "auto"]
    rows = alternate(options(explicit, False), options(["native"], True), arguments.repeats)
    table = {"late": late_table, "warmup": warmup_table,
             "balanced": balanced_table}[arguments.experiment](rows)
    print(table)
    if arguments.json:
        Path(arguments.json).write_text(json.dumps(
            {"experiment": arguments.experiment, "mode": arguments.mode,
             "ranks": arguments.ranks, "table": table, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
