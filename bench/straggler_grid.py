"""Issue 20's real-MPI grid: how close to the limit papcoll gets when a process is late.

For each vector size, one `papcoll bench` run with even arrivals measures delta (one
point-to-point transfer of the vector, the bench's "p2p_ms") and the balanced e-bar; a second
run puts the delays at 1, 3, 10, 30 and 100 x delta (one-late: rank 1 late by that much;
rand-late: every rank late by a uniform share of it). Every run interleaves papcoll's auto,
straggler, prr, slt and ring with the MPI library's own all-reduce (its default choice and
each algorithm it offers, native:NAME) iteration by iteration. Each row's e-bar_lo is the
bench's per-iteration bound from the arrivals that happened; excess = e-bar - e-bar_lo.

    .venv/bin/python bench/straggler_grid.py --mode one-late \\
        --json docs/data/straggler_shm_one-late.json
    .venv/bin/python bench/straggler_grid.py --mode one-late --testbed ethernet-1g \\
        --sizes 1K,64K,1M --json docs/data/straggler_testbed_one-late.json

It prints a markdown table per size (excess of each algorithm, the best native, auto's
excess over the best native's, what auto chose, auto against the best papcoll algorithm)
and, with --plot, draws excess against delay per size. --testbed needs root.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from papcoll.lab.bench import NATIVE_CONTENDERS, BenchOptions, run_benchmark
from papcoll.lab.launcher import mpi_flavor
from papcoll.lab.testbed import CpuMeter, temporary
from papcoll.network import load_network

OURS = ["auto", "straggler", "prr", "slt", "ring"]
PAPCOLL_ALGORITHMS = ["straggler", "prr", "slt", "ring"]  # auto is compared with these
DELAY_MULTIPLES = [1.0, 3.0, 10.0, 30.0, 100.0]
SIZES = {"1K": 1 << 10, "64K": 1 << 16, "1M": 1 << 20, "16M": 1 << 24}


def _run(options: BenchOptions, testbed: str | None) -> list[dict[str, Any]]:
    if testbed is None:
        with CpuMeter() as cpu:
            rows = run_benchmark(options)
    else:
        with temporary(testbed, options.ranks) as bed, CpuMeter() as cpu:
            rows = run_benchmark(options, launch=bed.mpiexec_command,
                                 network=load_network(testbed))
    for row in rows:
        row["cpu_busy_percent"] = cpu.busy_percent
    return rows


def measure(size: int, arguments: argparse.Namespace) -> list[dict[str, Any]]:
    """The balanced run, then the delayed one, for one size (bytes per rank, floats)."""
    algorithms = OURS + NATIVE_CONTENDERS[mpi_flavor()]
    count = max(1, size // 4)

    def options(delays_ms: list[float]) -> BenchOptions:
        return BenchOptions(ranks=arguments.ranks, algorithms=algorithms, counts=[count],
                            mode=arguments.mode, max_delays_ms=delays_ms,
                            iterations=arguments.iterations, warmup=arguments.warmup,
                            compute_ms=arguments.compute_ms, baseline="native",
                            timeout=3000)

    balanced = _run(options([0.0]), arguments.testbed)
    delta_ms = min(row["p2p_ms"] for row in balanced)
    delayed = _run(options([round(k * delta_ms, 4) for k in DELAY_MULTIPLES]),
                   arguments.testbed)
    for row in balanced + delayed:
        row["delta_ms"] = delta_ms
        row["delay_multiple"] = round(row["max_delay_ms"] / delta_ms) if delta_ms else 0
        row["setting"] = f"testbed {arguments.testbed}" if arguments.testbed else "shared memory"
    return balanced + delayed


def cells(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One summary per (size, delay multiple): the numbers the issue's targets are about."""
    out = []
    keys = sorted({(row["bytes"], row["delay_multiple"]) for row in rows})
    for size, multiple in keys:
        here = {row["algorithm"]: row for row in rows
                if row["bytes"] == size and row["delay_multiple"] == multiple}
        natives = {name: row for name, row in here.items() if name.startswith("native")}
        best_native = min(natives, key=lambda name: natives[name]["avg_elapsed_ms"])
        lowest_native_excess = min(row["excess_ms"] for row in natives.values())
        auto = here["auto"]
        best_ours = min((here[name] for name in PAPCOLL_ALGORITHMS),
                        key=lambda row: row["avg_elapsed_ms"])
        out.append({
            "bytes": size, "delay_multiple": multiple, "delta_ms": auto["delta_ms"],
            "excess_ms": {name: row["excess_ms"] for name, row in here.items()},
            "ebar_ms": {name: row["avg_elapsed_ms"] for name, row in here.items()},
            "best_native": best_native,
            # the target: auto's excess against the least excess of any native algorithm
            "excess_ratio": (auto["excess_ms"] / lowest_native_excess
                             if lowest_native_excess > 0 else None),
            "auto_over_best_native": (auto["avg_elapsed_ms"]
                                      / natives[best_native]["avg_elapsed_ms"]),
            "best_papcoll": best_ours["algorithm"],
            "auto_over_best_papcoll": (auto["avg_elapsed_ms"]
                                       / best_ours["avg_elapsed_ms"]),
            "auto_chose": auto.get("chosen", {}),
        })
    return out


def markdown(summary: list[dict[str, Any]], mode: str, setting: str) -> str:
    lines = [f"### {setting}, P = {{ranks}}, {mode}", "",
             "Excess over e-bar_lo in ms (e-bar - e-bar_lo, means over the timed calls); "
             "ratio = auto's excess / the least excess of any native algorithm; "
             "auto/native and auto/papcoll = e-bar of auto over the best native's and over "
             "the best of papcoll's other algorithms.", "",
             "| size | delay | auto | straggler | prr | slt | ring | best native | ratio | "
             "auto/native | auto/papcoll | auto chose |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for cell in summary:
        excess = cell["excess_ms"]
        size = cell["bytes"]
        label = f"{size >> 20} MiB" if size >= 1 << 20 else f"{size >> 10} KiB"
        delay = (f"{cell['delay_multiple']} delta" if cell["delay_multiple"] else "0")
        ratio = f"{cell['excess_ratio']:.2f}" if cell["excess_ratio"] is not None else "-"
        chose = ", ".join(f"{name} {n}" for name, n in cell["auto_chose"].items())
        lines.append(
            f"| {label} | {delay} | {excess['auto']:.3f} | {excess['straggler']:.3f} | "
            f"{excess['prr']:.3f} | {excess['slt']:.3f} | {excess['ring']:.3f} | "
            f"{cell['best_native']} {excess[cell['best_native']]:.3f} | {ratio} | "
            f"{cell['auto_over_best_native']:.2f} | {cell['auto_over_best_papcoll']:.2f} | "
            f"{chose} |")
    return "\n".join(lines)


def plot(summary: list[dict[str, Any]], path: str, title: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = sorted({cell["bytes"] for cell in summary})
    figure, axes = plt.subplots(1, len(sizes), figsize=(4 * len(sizes), 3.4), squeeze=False)
    for axis, size in zip(axes[0], sizes, strict=True):
        here = [cell for cell in summary if cell["bytes"] == size and cell["delay_multiple"]]
        multiples = [cell["delay_multiple"] for cell in here]
        for name in ["auto", "straggler", "prr", "slt", "ring"]:
            axis.plot(multiples, [cell["excess_ms"][name] for cell in here], marker="o",
                      label=name)
        axis.plot(multiples, [min(v for k, v in cell["excess_ms"].items()
                                  if k.startswith("native")) for cell in here],
                  marker="s", color="black", label="best native")
        axis.set_xscale("log")
        axis.set_xlabel("delay / delta")
        axis.set_ylabel("excess over e-bar_lo (ms)")
        axis.set_title(f"{size >> 20} MiB" if size >= 1 << 20 else f"{size >> 10} KiB")
    axes[0][0].legend(fontsize=7)
    figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", "-P", type=int, default=4)
    parser.add_argument("--mode", choices=["one-late", "rand-late"], default="one-late")
    parser.add_argument("--sizes", default="1K,64K,1M,16M",
                        help=f"comma list of {', '.join(SIZES)} (bytes per rank)")
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=4)
    parser.add_argument("--compute-ms", type=float, default=2.0)
    parser.add_argument("--testbed", default=None, metavar="NETWORK",
                        help="run on an emulated cluster of this network (needs root)")
    parser.add_argument("--json", default=None, metavar="FILE")
    parser.add_argument("--plot", default=None, metavar="FILE.png")
    arguments = parser.parse_args()
    rows: list[dict[str, Any]] = []
    for name in arguments.sizes.split(","):
        rows += measure(SIZES[name], arguments)
        print(f"measured {name}", file=sys.stderr)
    summary = cells(rows)
    setting = f"testbed {arguments.testbed}" if arguments.testbed else "shared memory"
    print(markdown(summary, arguments.mode, setting).replace("{ranks}", str(arguments.ranks)))
    if arguments.json:
        Path(arguments.json).write_text(json.dumps({"rows": rows, "summary": summary},
                                                   indent=1))
    if arguments.plot:
        plot(summary, arguments.plot, f"{setting}, P = {arguments.ranks}, {arguments.mode}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
