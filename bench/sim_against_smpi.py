"""papcoll's simulator against SimGrid's SMPI: how far apart, per algorithm, over sizes?

auto decides with papcoll's simulator, so the simulator must not grade itself: here SMPI
runs papcoll's real library (docs/smpi.md) and the simulator predicts the same calls on the
same network, arrivals (each timed call's, as SMPI recorded them), papcoll's own work before
and after the algorithm in each call (the monitor's messages, as the library recorded
them) and groups (blocks of --group-size ranks), without the reduce and copy costs SMPI
does not charge (bench/smpi_scale.py's simulated_ms). For each network and P, two
`papcoll bench --smpi` jobs (nobody late; rank 1 --delay late), every algorithm and size
interleaved in each; SMPI's median over the timed calls (a first call may carry one-off
costs) against the median of the simulated calls.

Distance: per point, the factor between the two, max(sim, SMPI) / min(sim, SMPI) - 1 (a
prediction 2 x too high and one 2 x too low are equally wrong; |sim - SMPI| / SMPI would
call the first 100 % and the second 50 %); per algorithm, the geometric mean of the factors
over its points, minus 1 (the target: <= 10 %), and its worst point.

    PYTHONPATH=python:bench .venv/bin/python bench/sim_against_smpi.py --ranks 16 \\
        --networks ethernet-1g,infiniband-fdr --json docs/data/sim_against_smpi.json \\
        --markdown docs/data/sim_against_smpi.md
    PYTHONPATH=python:bench .venv/bin/python bench/sim_against_smpi.py \\
        --from-json docs/data/sim_against_smpi.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

from papcoll.lab.bench import readable_bytes
from rich.console import Console
from rich.table import Table
from smpi_scale import bench_rows, simulated_ms

ALGORITHMS = ("ring,recursive_doubling,rabenseifner,segmented_ring,slt,prr,straggler,hr1,hr2,"
              "pap_hierarchical")
SIZES = "1K,16K,256K,1M,4M,16M"


def run_job(ranks: int, network: str, algorithms: str, sizes: str, delay_ms: float,
            iterations: int, group_size: int) -> list[dict[str, Any]]:
    return bench_rows("--smpi", network, "--ranks", str(ranks), "--algorithms", algorithms,
                      "--baseline", "none", "--sizes", sizes, "--max-delay", f"{delay_ms:g}ms",
                      "--iterations", str(iterations), "--warmup", "1", "--compute-ms", "1",
                      "--groups", f"blocks:{min(group_size, ranks)}")


def factor(row: dict[str, Any]) -> float:
    smpi, sim = row["median_ms"], row["simulated_ms"]
    return max(smpi, sim) / min(smpi, sim) - 1


def per_algorithm(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    lines = []
    for name in dict.fromkeys(row["algorithm"] for row in rows):
        mine = [row for row in rows if row["algorithm"] == name and row.get("simulated_ms")]
        if not mine:
            continue
        worst = max(mine, key=factor)
        mean = math.exp(sum(math.log1p(factor(row)) for row in mine) / len(mine)) - 1
        high = sum(row["simulated_ms"] > row["median_ms"] for row in mine)
        lines.append({"algorithm": name, "points": len(mine), "geometric_mean": mean,
                      "sim_above": high, "worst": worst})
    return lines


def describe(row: dict[str, Any]) -> str:
    return (f"{row['smpi']['network']}, P = {row['ranks']}, {readable_bytes(row['bytes'])}, "
            f"{'late' if row['max_delay_ms'] else 'on time'}: sim {row['simulated_ms']:.3f}"
            f" / SMPI {row['median_ms']:.3f} ms")


def show(console: Console, rows: list[dict[str, Any]]) -> str:
    lines = per_algorithm(rows)
    table = Table(title="papcoll's simulator against SMPI (geometric mean of the factor apart)")
    for column in ("algorithm", "points", "geometric mean", "sim above SMPI", "worst point"):
        table.add_column(column, justify="left" if column in ("algorithm", "worst point")
                         else "right")
    text = ["| algorithm | points | geometric mean | sim above SMPI | worst point |",
            "|---|---|---|---|---|"]
    for line in lines:
        worst = line["worst"]
        cells = (line["algorithm"], str(line["points"]), f"{line['geometric_mean']:.1%}",
                 f"{line['sim_above']} of {line['points']}",
                 f"{factor(worst):.0%}: {describe(worst)}")
        table.add_row(*cells)
        text.append("| " + " | ".join(cells) + " |")
    console.print(table)
    within = sum(line["geometric_mean"] <= 0.10 for line in lines)
    summary = f"within 10 %: {within} of {len(lines)} algorithms"
    console.print(summary)
    return "\n".join([*text, "", summary, ""])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", default="16", help="P values (default 16)")
    parser.add_argument("--networks", default="ethernet-1g,infiniband-fdr")
    parser.add_argument("--sizes", default=SIZES, help=f"bytes a rank (default {SIZES})")
    parser.add_argument("--algorithms", default=ALGORITHMS)
    parser.add_argument("--delay", type=float, default=10.0,
                        help="rank 1's lateness in the late job, ms (default 10)")
    parser.add_argument("--iterations", type=int, default=3,
                        help="timed calls a point; SMPI's median is compared (default 3)")
    parser.add_argument("--group-size", type=int, default=4,
                        help="ranks a group of the hierarchical algorithms (default 4)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--from-json", type=Path, nargs="+",
                        help="tables from earlier runs' JSON, several joined (a grid run "
                             "as jobs of their own, e.g. one per half of the algorithms)")
    parser.add_argument("--resimulate", action="store_true",
                        help="with --from-json: papcoll's simulator again, as this checkout "
                             "has it, against the SMPI times the rows hold")
    parser.add_argument("--markdown", type=Path)
    arguments = parser.parse_args()
    console = Console(width=200)
    if arguments.from_json:
        rows = [row for path in arguments.from_json for row in json.loads(path.read_text())]
        if arguments.resimulate:
            for row in rows:
                row["simulated_ms"] = simulated_ms(row, row["smpi"]["network"])
        if arguments.json:
            arguments.json.write_text(json.dumps(rows, indent=1) + "\n")
    else:
        rows = []
        for network in arguments.networks.split(","):
            for ranks in (int(text) for text in arguments.ranks.split(",")):
                for delay in (0.0, arguments.delay):
                    started = time.monotonic()
                    job = run_job(ranks, network, arguments.algorithms, arguments.sizes,
                                  delay, arguments.iterations, arguments.group_size)
                    for row in job:
                        row["simulated_ms"] = simulated_ms(row, network)
                    rows += job
                    console.print(f"{network}, P = {ranks}, delay {delay:g} ms: "
                                  f"{time.monotonic() - started:.0f} s")
        if arguments.json:
            arguments.json.write_text(json.dumps(rows, indent=1) + "\n")
    text = show(console, rows)
    if arguments.markdown:
        arguments.markdown.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
