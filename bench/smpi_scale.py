"""papcoll's real library at scale in SimGrid's SMPI: one point of the grid at each P.

For each P and network, `papcoll bench --smpi` jobs (docs/smpi.md): rank 1 on time, then
in jobs of their own 10 ms late, one size, every contender of the P's list, beside SMPI's
MPI_Allreduce as the MPICH selector picks it and SMPI's ring (`native:lr`). Prints a table
per network of e-bar (simulated ms, papcoll's simulator's in brackets; the e-bar_lo row is
the bound), the wall time and the peak memory of each P's jobs, and writes every row to
--json. The hierarchical algorithms
get groups of 16 consecutive ranks (SMPI puts every rank on a host of its own, so MPI's
shared-memory nodes would be single ranks).

    PYTHONPATH=python .venv/bin/python bench/smpi_scale.py --ranks 16,64,256 \\
        --json docs/data/smpi_scale.json

P = 1024 takes minutes a contender: give it few (--at-1024).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from late_ranks_sim_table import arrival_classes
from papcoll.core import Context, algorithms
from papcoll.model import with_values
from papcoll.network import load_network
from papcoll.sim import simulate, tau
from rich.console import Console
from rich.table import Table

# every all-reduce but the canonical ones (reproducible mode's); not the reduce-scatters
EVERY = [info.name for info in algorithms()
         if not info.name.startswith("canonical") and not info.reduce_scatter]
NATIVES = ["native", "native:lr"]
AT_1024 = "ring,straggler,auto,native,native:lr"
GROUP_SIZE = 16


def bench_rows(*options: str) -> list[dict[str, Any]]:
    """The rows of one `papcoll bench` job with these options (its --json is added here);
    a failed job raises with the end of its output. bench/sim_against_smpi.py and
    bench/loop_settles.py run their jobs through it too."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rows.json"
        command = [sys.executable, "-m", "papcoll", "bench", *options, "--json", str(path)]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed:\n"
                               f"{result.stdout[-2000:]}{result.stderr[-3000:]}")
        return list(json.loads(path.read_text()))


def run_point(ranks: int, network: str, contenders: list[str], size: str,
              delay_ms: float, iterations: int) -> tuple[list[dict[str, Any]], float, float]:
    """The rows of one point, on time and late, each in jobs of its own (so the monitor
    does not carry one pattern into the other's calls: docs/smpi.md); their wall seconds
    and the peak memory (GiB) of any job so far."""
    rows: list[dict[str, Any]] = []
    started = time.monotonic()
    for delay in (0.0, delay_ms):
        rows += bench_rows("--smpi", network, "--ranks", str(ranks),
                           "--algorithms", ",".join(contenders), "--baseline", "native",
                           "--sizes", size, "--max-delay", f"{delay:g}ms",
                           "--iterations", str(iterations), "--warmup", "1", "--compute-ms", "1",
                           "--groups", f"blocks:{min(GROUP_SIZE, ranks)}")
    wall = time.monotonic() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20
    return rows, wall, peak


def simulated_ms(row: dict[str, Any], network_name: str) -> float | None:
    """papcoll's simulator on the row's network and groups, without the reduce and copy
    costs SMPI does not charge: each timed call on its own arrivals and, where the row
    has them (own_before_ms, own_after_ms), each rank's time in papcoll's own work before
    and after the algorithm in that call (the monitor's receives of predictions or of a
    period's messages, and a period's messages sent at its end, which fall on some calls
    and not others; the work after delays only its own rank, so it adds to e-bar), and
    the median of those, as SMPI's median_ms. The
    schedules are built on the true arrivals rounded to their class, as the library builds
    them from the monitor's predictions (late_rank_predicted says where it predicted): a
    rank late by less than the on-time unit counts as on time there too. The unit here is
    the network model's tau and the default jitter; the library's is its calibrated tau, so
    near a class boundary the two may still round apart.
    None for the MPI's own contenders and auto, which the simulator does not run here."""
    if row["algorithm"].startswith("native") or row["algorithm"] == "auto":
        return None
    network = load_network(network_name)
    model = with_values(network.model, {"reduce_seconds_per_byte": 0, "copy_seconds_per_byte": 0})
    ranks, count = row["ranks"], row["count"]
    element = row["bytes"] // count
    groups = row.get("group_colors") or [rank // min(GROUP_SIZE, ranks) for rank in range(ranks)]
    step = tau(model, ranks, count, element)
    calls = row["arrival_offsets_ms"]
    before = row.get("own_before_ms") or [None] * len(calls)
    after = row.get("own_after_ms") or [[0.0] * ranks] * len(calls)
    simulated = []
    for offsets, own_before, own_after in zip(calls, before, after, strict=True):
        arrivals = [offset / 1e3 for offset in offsets]
        context = Context(arrivals=arrival_classes(arrivals, step), tau=step, groups=groups)
        result = simulate(row["algorithm"], ranks, count, element, model, arrivals, context,
                          topology=network.topology(ranks),
                          own_work=[ms / 1e3 for ms in own_before] if own_before else None)
        simulated.append(result.average_elapsed * 1e3 + statistics.fmean(own_after))
    return statistics.median(simulated)


def print_table(console: Console, rows: list[dict[str, Any]], title: str,
                markdown: bool = False) -> None:
    """A row per contender, a column per P: e-bar on time / late, the median of the timed
    calls, and papcoll's simulator's median in brackets ("!": a wrong result), then
    e-bar_lo and each P's wall time and peak memory; as markdown where asked."""
    table = Table(title=title)
    table.add_column("algorithm")
    points = sorted({row["ranks"] for row in rows})
    for ranks in points:
        table.add_column(f"P = {ranks}", justify="right")
    found = {(row["ranks"], row["algorithm"], row["max_delay_ms"]): row for row in rows}
    delays = sorted({row["max_delay_ms"] for row in rows})

    def cell(ranks: int, name: str, value: str) -> str:
        chosen = [found.get((ranks, name, delay)) for delay in delays]
        if None in chosen:
            return "-"
        texts = []
        for row in chosen:
            assert row is not None
            text = f"{row[value]:.2f}" + ("" if row["correct"] else "!")
            if value == "median_ms" and row.get("simulated_ms") is not None:
                text += f" ({row['simulated_ms']:.2f})"
            texts.append(text)
        return " / ".join(texts)

    names = list(dict.fromkeys(row["algorithm"] for row in rows))
    for name in names:
        table.add_row(name, *(cell(ranks, name, "median_ms") for ranks in points))
    table.add_row("e-bar_lo", *(cell(ranks, "native", "lower_bound_ms") for ranks in points))
    table.add_row("wall s / peak GiB", *(
        f"{found[ranks, 'native', delays[0]]['wall_seconds']:.0f} / "
        f"{found[ranks, 'native', delays[0]]['peak_gib']:.1f}" for ranks in points))
    if not markdown:
        console.print(table)
        return
    print(f"\n{title}:\n")
    print("| " + " | ".join(column.header for column in table.columns) + " |")
    print("|" + "---|" * len(table.columns))
    for index in range(table.row_count):
        print("| " + " | ".join(str(column._cells[index]) for column in table.columns) + " |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", default="16,64,256", help="P values (default 16,64,256)")
    parser.add_argument("--networks", default="ethernet-1g", help="networks (default ethernet-1g)")
    parser.add_argument("--size", default="1M", help="bytes a rank (default 1M)")
    parser.add_argument("--delay-ms", type=float, default=10.0, help="rank 1's lateness")
    parser.add_argument("--iterations", type=int, default=2)
    parser.add_argument("--contenders", default=",".join(EVERY + ["auto"]),
                        help="papcoll's contenders below P = 1024 (default: every "
                             "algorithm but the canonical ones, and auto)")
    parser.add_argument("--at-1024", default=AT_1024, help=f"at P = 1024 (default {AT_1024})")
    parser.add_argument("--json", help="write every row here")
    parser.add_argument("--markdown", action="store_true", help="print the tables as markdown")
    parser.add_argument("--from-json", metavar="FILE",
                        help="run nothing: print the tables of a --json file written before")
    arguments = parser.parse_args()
    console = Console()
    rows: list[dict[str, Any]] = []
    if arguments.from_json:
        rows = json.loads(Path(arguments.from_json).read_text())
        for row in rows:
            if "simulated_ms" not in row:
                row["simulated_ms"] = simulated_ms(row, row["smpi"]["network"])
        arguments.networks = ",".join(dict.fromkeys(row["smpi"]["network"] for row in rows))
    for network in [] if arguments.from_json else arguments.networks.split(","):
        for ranks in (int(text) for text in arguments.ranks.split(",")):
            chosen = arguments.at_1024 if ranks >= 1024 else arguments.contenders
            contenders = [name for name in chosen.split(",") if name not in NATIVES]
            contenders += NATIVES
            console.print(f"[dim]{network}, P = {ranks}: {len(contenders)} contenders[/]")
            point, wall, peak = run_point(ranks, network, contenders, arguments.size,
                                          arguments.delay_ms, arguments.iterations)
            for row in point:
                row["wall_seconds"], row["peak_gib"] = wall, peak
                row["simulated_ms"] = simulated_ms(row, network)
            rows += point
    for network in arguments.networks.split(","):
        print_table(console, [row for row in rows if row["smpi"]["network"] == network],
                    f"e-bar in SMPI, {network}, {arguments.size} a rank, simulated ms (rank 1 "
                    f"on time / {arguments.delay_ms:g} ms late)", arguments.markdown)
    if arguments.json:
        Path(arguments.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0 if all(row["correct"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
