"""`papcoll bench`: the seed 000 mini-benchmark (Fig. 9) over real MPI, papcoll's algorithms
side by side with the MPI library's own (`native`, `native:NAME`).

It launches `papcoll-bench` (bench/papcoll_bench.c) under mpiexec, reports its progress
lines, reads its JSON, adds `speedup_vs_ring` (e-bar of papcoll's ring / e-bar of the
algorithm, as in seed 000 Tables 3-4: above 1 means faster than ring), sums up the saving
of the PAP-aware algorithms and plots e-bar against the maximum delay (seed 000 Fig. 10).
The command (options, table, JSON) is papcoll.cli.bench.

Terms: e-bar is the mean over ranks of the time each rank spends inside the all-reduce,
averaged over iterations; +-2 sigma is twice the standard deviation of e-bar across
iterations.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .launcher import mpi_flavor, mpiexec_command

BASELINE = "ring"
_ROOT = Path(__file__).resolve().parents[2]
def bench_program() -> Path:
    """The papcoll-bench of this MPI's build: $PAPCOLL_BENCH, else build/<mpi>/ in the source
    tree this package runs from, else the one pip installed with the package, else the one on
    PATH."""
    if "PAPCOLL_BENCH" in os.environ:
        return Path(os.environ["PAPCOLL_BENCH"])
    built = _ROOT / "build" / mpi_flavor() / "papcoll-bench"
    if built.exists():
        return built
    installed = Path(__file__).resolve().parent / "_lib" / "papcoll-bench"
    if installed.exists():
        return installed
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


@dataclass(frozen=True)
class BenchOptions:
    """One papcoll-bench job: what `papcoll bench` passes on (bench/papcoll_bench.c)."""

    ranks: int
    algorithms: list[str]
    counts: list[int]
    mode: str = "one-late"
    max_delays_ms: list[float] = field(default_factory=lambda: [0.0, 10.0, 50.0])
    iterations: int = 20
    warmup: int = 2
    compute_ms: float = 100.0
    datatype: str = "float"
    seed: int = 1
    schedule: str | None = None
    timeout: float = 3600.0


def run_benchmark(options: BenchOptions,
                  progress: Callable[[int, int], None] | None = None) -> list[dict[str, Any]]:
    """Runs papcoll-bench under mpiexec; `progress(done, total)` follows its progress lines.
    Returns its rows with speedup_vs_ring; RuntimeError when the job fails or times out."""
    with tempfile.TemporaryDirectory() as directory:
        json_path = Path(directory) / "rows.json"
        program = [str(bench_program()), "--algorithms", ",".join(options.algorithms),
                   "--counts", ",".join(str(count) for count in options.counts),
                   "--mode", options.mode,
                   "--max-delays-ms", ",".join(f"{delay:g}" for delay in options.max_delays_ms),
                   "--iterations", str(options.iterations), "--warmup", str(options.warmup),
                   "--compute-ms", f"{options.compute_ms:g}", "--datatype", options.datatype,
                   "--seed", str(options.seed), "--json", str(json_path), "--progress"]
        if options.schedule:
            program += ["--schedule", options.schedule]
        argv, environment = mpiexec_command(options.ranks, program)
        # Open MPI's tuned component honours coll_tuned_allreduce_algorithm only with
        # dynamic rules on, and reads that at start-up (bench/native_algorithms.h).
        environment.setdefault("OMPI_MCA_coll_tuned_use_dynamic_rules", "1")
        stdout_file = open(Path(directory) / "stdout", "w+")  # closed below
        process = subprocess.Popen(argv, env=environment, stdout=stdout_file,
                                   stderr=subprocess.PIPE, text=True)
        # A hung MPI job must not hang the command: kill it after options.timeout seconds.
        watchdog = threading.Timer(options.timeout, process.kill)
        watchdog.start()
        messages = []
        assert process.stderr is not None
        for line in process.stderr:
            match = re.fullmatch(r"progress (\d+) (\d+)\s*", line)
            if match is None:
                messages.append(line)
            elif progress is not None:
                progress(int(match.group(1)), int(match.group(2)))
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
