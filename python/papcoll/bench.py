"""`papcoll bench`: the seed 000 mini-benchmark (Fig. 9) over real MPI, papcoll's algorithms
side by side with the MPI library's own (`native`, `native:NAME`).

It launches `papcoll-bench` (bench/papcoll_bench.c) under mpiexec, turns its progress lines
into a bar, reads its JSON, adds `speedup_vs_ring` (e-bar of papcoll's ring / e-bar of the
algorithm, as in seed 000 Tables 3-4: above 1 means faster than ring), prints the table,
and can write the rows as JSON and plot e-bar against the maximum delay (seed 000 Fig. 10).

Terms: e-bar is the mean over ranks of the time each rank spends inside the all-reduce,
averaged over iterations; +-2 sigma is twice the standard deviation of e-bar across
iterations.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn
from rich.table import Table

from .launcher import mpi_flavor, mpiexec_command

BASELINE = "ring"
_ROOT = Path(__file__).resolve().parents[2]
_UNITS_MS = {"us": 1e-3, "ms": 1.0, "s": 1e3}


def parse_delays(text: str) -> list[float]:
    """'0,1,5,10,50ms' or '0ms,1.5ms,2s' -> milliseconds. A unit on the last item alone
    applies to all; with none, milliseconds."""
    items = [item.strip() for item in text.split(",")]
    shared_unit = re.fullmatch(r"[\d.]+\s*(us|ms|s)", items[-1])
    delays = []
    for item in items:
        match = re.fullmatch(r"(\d+(?:\.\d*)?)\s*(us|ms|s)?", item)
        if match is None:
            raise argparse.ArgumentTypeError(
                f"'{item}' is not a delay (a number with an optional unit us, ms or s)")
        unit = match.group(2) or (shared_unit.group(1) if shared_unit else "ms")
        delays.append(float(match.group(1)) * _UNITS_MS[unit])
    if any(delay > 60000 for delay in delays):
        raise argparse.ArgumentTypeError(f"delays above 60 s are not sensible: '{text}'")
    return delays


def bench_program() -> Path:
    """The papcoll-bench of this MPI's build: $PAPCOLL_BENCH, else build/<mpi>/ in the source
    tree this package runs from, else the one on PATH."""
    if "PAPCOLL_BENCH" in os.environ:
        return Path(os.environ["PAPCOLL_BENCH"])
    built = _ROOT / "build" / mpi_flavor() / "papcoll-bench"
    if built.exists():
        return built
    from shutil import which

    found = which("papcoll-bench")
    if found is None:
        raise FileNotFoundError(f"papcoll-bench not found (looked in {built.parent} and PATH): "
                                "run `make build` or set PAPCOLL_BENCH")
    return Path(found)


def add_speedups(rows: list[dict[str, Any]]) -> None:
    """speedup_vs_ring = e-bar(ring) / e-bar(algorithm) for the same count and delay."""
    ring = {(row["count"], row["max_delay_ms"]): row["avg_elapsed_ms"]
            for row in rows if row["algorithm"] == BASELINE}
    for row in rows:
        baseline = ring.get((row["count"], row["max_delay_ms"]))
        row["speedup_vs_ring"] = (baseline / row["avg_elapsed_ms"]
                                  if baseline and row["avg_elapsed_ms"] > 0 else None)


def run_benchmark(arguments: argparse.Namespace, console: Console) -> list[dict[str, Any]]:
    algorithms = arguments.algorithms
    with tempfile.TemporaryDirectory() as directory:
        json_path = Path(directory) / "rows.json"
        program = [str(bench_program()), "--algorithms", ",".join(algorithms),
                   "--counts", ",".join(str(count) for count in arguments.count),
                   "--mode", arguments.mode,
                   "--max-delays-ms", ",".join(f"{delay:g}" for delay in arguments.max_delay),
                   "--iterations", str(arguments.iterations), "--warmup", str(arguments.warmup),
                   "--compute-ms", f"{arguments.compute_ms:g}", "--datatype", arguments.datatype,
                   "--seed", str(arguments.seed), "--json", str(json_path), "--progress"]
        if arguments.schedule:
            program += ["--schedule", arguments.schedule]
        argv, environment = mpiexec_command(arguments.ranks, program)
        # Open MPI's tuned component honours coll_tuned_allreduce_algorithm only with
        # dynamic rules on, and reads that at start-up (bench/native_algorithms.h).
        environment.setdefault("OMPI_MCA_coll_tuned_use_dynamic_rules", "1")
        stdout_file = open(Path(directory) / "stdout", "w+")  # closed below
        process = subprocess.Popen(argv, env=environment, stdout=stdout_file,
                                   stderr=subprocess.PIPE, text=True)
        # A hung MPI job must not hang the command: kill it after --timeout seconds.
        watchdog = threading.Timer(arguments.timeout, process.kill)
        watchdog.start()
        messages = []
        progress = Progress("[progress.description]{task.description}", BarColumn(),
                            MofNCompleteColumn(), TimeElapsedColumn(), console=console,
                            transient=True)
        with progress:
            task = progress.add_task(f"P = {arguments.ranks}, {', '.join(algorithms)}",
                                     total=None)
            assert process.stderr is not None
            for line in process.stderr:
                match = re.fullmatch(r"progress (\d+) (\d+)\s*", line)
                if match:
                    progress.update(task, completed=int(match.group(1)),
                                    total=int(match.group(2)))
                else:
                    messages.append(line)
        status = process.wait()
        watchdog.cancel()
        stdout_file.seek(0)
        output = stdout_file.read()
        stdout_file.close()
        if status != 0 and not json_path.exists():
            why = "timed out" if status == -9 else f"exit {status}"
            raise RuntimeError(f"papcoll-bench failed ({why}):\n"
                               + "".join(messages)[-3000:] + output[-1000:])
        rows: list[dict[str, Any]] = json.loads(json_path.read_text())
    add_speedups(rows)
    return rows


def print_table(rows: list[dict[str, Any]], console: Console) -> None:
    first = rows[0]
    table = Table(title=f"e-bar of all-reduce, P = {first['ranks']}, {first['mode']}, "
                        f"{first['datatype']}, compute {first['compute_ms']:g} ms, "
                        f"{first['iterations']} iterations ({first['mpi_library']})")
    for column in ("algorithm", "count", "max delay ms", "e-bar ms", "+-2 sigma ms",
                   "median ms", "e-bar_lo ms", "speedup vs ring", "correct"):
        if column == "algorithm":
            table.add_column(column, no_wrap=True, min_width=12)
        else:
            table.add_column(column, justify="right")
    ordered = sorted(rows, key=lambda row: (row["count"], row["max_delay_ms"]))
    previous = None
    for row in ordered:
        key = (row["count"], row["max_delay_ms"])
        if previous is not None and key != previous:
            table.add_section()
        previous = key
        speedup = row["speedup_vs_ring"]
        table.add_row(row["algorithm"], str(row["count"]), f"{row['max_delay_ms']:g}",
                      f"{row['avg_elapsed_ms']:.3f}", f"{2 * row['stddev_ms']:.3f}",
                      f"{row['median_ms']:.3f}", f"{row.get('lower_bound_ms', 0):.3f}",
                      "-" if speedup is None else f"{speedup:.2f}",
                      "[green]yes[/]" if row["correct"] else "[red]NO[/]")
    console.print(table)
    for line in saving_summary(rows):
        console.print(line)


def saving_summary(rows: list[dict[str, Any]]) -> list[str]:
    """Seed 000 S3: a PAP-aware algorithm can save at most Delta - delta against the ring,
    Delta = the ring's e-bar with balanced arrivals, delta = one transfer of the vector."""
    lines = []
    for count in sorted({row["count"] for row in rows}):
        of_count = [row for row in rows if row["count"] == count]
        balanced = [row for row in of_count
                    if row["algorithm"] == BASELINE and row["max_delay_ms"] == 0]
        delta = of_count[0].get("p2p_ms")
        if not balanced or delta is None:
            continue
        full = balanced[0]["avg_elapsed_ms"]
        lines.append(f"count {count}: Delta (ring, balanced) = {full:.3f} ms, delta (one "
                     f"transfer) = {delta:.3f} ms, Delta - delta = {full - delta:.3f} ms")
        ring = {row["max_delay_ms"]: row["avg_elapsed_ms"] for row in of_count
                if row["algorithm"] == BASELINE}
        for row in of_count:
            if row["algorithm"] in ("prr", "slt") and row["max_delay_ms"] in ring:
                saving = ring[row["max_delay_ms"]] - row["avg_elapsed_ms"]
                lines.append(f"  {row['algorithm']} at max delay {row['max_delay_ms']:g} ms: "
                             f"saves {saving:.3f} ms against ring "
                             f"({row.get('predicted_calls', 0)}/{row['iterations']} calls "
                             "on predictions)")
    return lines


def plot(rows: list[dict[str, Any]], path: str) -> None:
    """e-bar against the maximum delay, one line per algorithm, one panel per count."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot

    counts = sorted({row["count"] for row in rows})
    figure, axes = pyplot.subplots(1, len(counts), figsize=(6 * len(counts), 4.5),
                                   squeeze=False)
    for axis, count in zip(axes[0], counts):
        for algorithm in dict.fromkeys(row["algorithm"] for row in rows):
            series = sorted((row for row in rows
                             if row["algorithm"] == algorithm and row["count"] == count),
                            key=lambda row: row["max_delay_ms"])
            axis.errorbar([row["max_delay_ms"] for row in series],
                          [row["avg_elapsed_ms"] for row in series],
                          yerr=[2 * row["stddev_ms"] for row in series],
                          marker="o", capsize=3, label=algorithm)
        first = rows[0]
        axis.set_title(f"{count} x {first['datatype']}, P = {first['ranks']}, {first['mode']}")
        axis.set_xlabel("max delay (ms)")
        axis.set_ylabel("e-bar (ms)")
        axis.grid(alpha=0.3)
        axis.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    pyplot.close(figure)


def command_bench(arguments: argparse.Namespace) -> int:
    console = Console(stderr=arguments.json == "-", width=max(Console().width, 140))
    if BASELINE not in arguments.algorithms:
        arguments.algorithms = [*arguments.algorithms, BASELINE]
        console.print(f"[dim]adding '{BASELINE}', the baseline of speedup_vs_ring[/]")
    if arguments.mode == "one-late" and arguments.ranks < 2:
        print("papcoll bench: one-late delays rank 1, so it needs --ranks 2 or more",
              file=sys.stderr)
        return 2
    try:
        rows = run_benchmark(arguments, console)
    except (RuntimeError, FileNotFoundError) as error:
        print(f"papcoll bench: {error}", file=sys.stderr)
        return 2
    print_table(rows, console)
    if arguments.json == "-":
        print(json.dumps(rows, indent=1))
    elif arguments.json:
        Path(arguments.json).write_text(json.dumps(rows, indent=1) + "\n")
    if arguments.plot:
        plot(rows, arguments.plot)
        console.print(f"plot written to {arguments.plot}")
    return 0 if all(row["correct"] for row in rows) else 1
