"""`papcoll bench`: the Proficz 2018 mini-benchmark (Fig. 9) over real MPI, papcoll's algorithms
side by side with the MPI library's own (`native`, `native:NAME`).

It launches `papcoll-bench` (bench/papcoll_bench.c) under mpiexec, reports its progress
lines (and, as each size and delay is done, its "finished" lines: what `--stream` prints),
reads its JSON, adds `time_vs_baseline` (e-bar of the algorithm / e-bar of the baseline,
`native` unless the user names another or none: below 1 means faster than the baseline, the
one ratio convention of papcoll's output; `speedup_vs_baseline`, the inverse as Proficz 2018
Tables 3-4 give it against ring, stays for programs that read it) and the native MPI's
tuning the job ran with (launcher.native_tuning), sums up the saving of the PAP-aware
algorithms against ring where ring ran, and plots e-bar relative to the baseline against
message size and delay. The command (options,
table, JSON, CSV) is papcoll.cli.bench.

Terms: e-bar is the mean over ranks of the time each rank spends inside the all-reduce,
averaged over iterations (IMB's t_avg); +-2 sigma is twice the standard deviation of e-bar
across iterations; t_min and t_max are IMB's: the least and the most over ranks of a rank's
mean time in the call.
"""

from __future__ import annotations

import functools
import json
import math
import re
import subprocess
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..pmpi import load_report, preload_library_path
from ..sim import network_lower_bound
from .launcher import Launch, NativeTuning, cores, mpiexec_command, native_tuning, program_path

if TYPE_CHECKING:
    from ..network import Network
    from ..topology import Topology

DEFAULT_BASELINE = "native"
# --baseline none: no time ratios, no baseline added to the run
NO_BASELINE = "none"
# Proficz 2018, Sect. 3's saving (saving_summary) is measured against papcoll's ring
RING = "ring"
# The keys of a row a spreadsheet cell cannot hold (lists and objects): the JSON has them,
# the CSV leaves them out. ebar_ms: e-bar of every timed call; arrival_offsets_ms: every
# rank's arrival in every timed call; own_before_ms, own_after_ms: every rank's time in
# papcoll's own work before and after the algorithm in every timed call; group_colors:
# every rank's group (null: MPI's shared-memory nodes); chosen (auto): calls per algorithm
# auto ran; preload_totals (--preload): the drop-in report's totals.
JSON_ONLY_KEYS = ("ebar_ms", "arrival_offsets_ms", "own_before_ms", "own_after_ms",
                  "group_colors", "chosen", "preload_totals", "smpi")


# The MPI library's own all-reduce as a benchmark compares with it: its default choice and
# the algorithms it offers for large vectors, by MPI flavour (launcher.mpi_flavor()).
NATIVE_CONTENDERS: dict[str, list[str]] = {
    "mpich": ["native", "native:recursive_doubling", "native:reduce_scatter_allgather",
              "native:ring"],
    "openmpi": ["native", "native:recursive_doubling", "native:ring", "native:rabenseifner"],
}




def bench_program() -> Path:
    """The papcoll-bench of this MPI's build (launcher.program_path: $PAPCOLL_BENCH, the
    build tree, the pip install, PATH)."""
    return program_path("papcoll-bench", "PAPCOLL_BENCH")


def add_speedups(rows: list[dict[str, Any]], baseline: str = DEFAULT_BASELINE) -> None:
    """Adds `baseline` (its name; None for NO_BASELINE), time_vs_baseline =
    e-bar(algorithm) / e-bar(baseline) for the same size and delay (below 1: faster),
    time_2sigma, twice the standard deviation of that ratio propagated to first order from
    both e-bars' spread across iterations: r x sqrt((sigma_a / a)^2 + (sigma_b / b)^2), and
    median_time_vs_baseline, the same ratio of medians, which one slow iteration (a busy
    machine) does not move. speedup_vs_baseline, speedup_2sigma and
    median_speedup_vs_baseline are the inverse ratios (above 1: faster), kept for programs
    that read them. None where the baseline has no row (or there is none)."""
    base = {(row["bytes"], row["max_delay_ms"]): row
            for row in rows if row["algorithm"] == baseline and baseline != NO_BASELINE}
    for row in rows:
        reference = base.get((row["bytes"], row["max_delay_ms"]))
        row["baseline"] = None if baseline == NO_BASELINE else baseline
        mean = row["avg_elapsed_ms"]
        if reference is None or mean <= 0 or reference["avg_elapsed_ms"] <= 0:
            row["time_vs_baseline"] = row["time_2sigma"] = None
            row["median_time_vs_baseline"] = None
            row["speedup_vs_baseline"] = row["speedup_2sigma"] = None
            row["median_speedup_vs_baseline"] = None
            continue
        # the same relative spread for a ratio and its inverse, to first order
        spread = 2 * math.hypot(reference["stddev_ms"] / reference["avg_elapsed_ms"],
                                row["stddev_ms"] / mean)
        ratio = mean / reference["avg_elapsed_ms"]
        row["time_vs_baseline"] = ratio
        row["time_2sigma"] = ratio * spread
        row["median_time_vs_baseline"] = (row["median_ms"] / reference["median_ms"]
                                          if reference["median_ms"] > 0 else None)
        speedup = reference["avg_elapsed_ms"] / mean
        row["speedup_vs_baseline"] = speedup
        row["speedup_2sigma"] = speedup * spread
        row["median_speedup_vs_baseline"] = (reference["median_ms"] / row["median_ms"]
                                              if row["median_ms"] > 0 else None)


def add_network_bounds(rows: list[dict[str, Any]], network: Network | None = None) -> None:
    """Adds network_bound_ms, the bound that knows the network (papcoll.sim.
    network_lower_bound: per rank the time the last arriving rank's data needs to reach it),
    computed for every timed iteration from the arrivals that happened (arrival_offsets_ms,
    as papcoll-bench computes lower_bound_ms) on the network's model and its topology for
    the row's P (ranks placed as the simulator and the testbed place them) and averaged like
    e-bar; and network_excess_ms = e-bar - that bound. Without a network (the job ran in
    this machine's shared memory, a crossbar) it is lower_bound_ms itself: a crossbar's
    bound is e-bar_lo, whose delta papcoll-bench measured."""
    topologies: dict[int, Topology | None] = {}
    for row in rows:
        patterns = row.get("arrival_offsets_ms") or []
        if network is not None and row["ranks"] not in topologies:
            topologies[row["ranks"]] = network.topology(row["ranks"])
        if network is None or not patterns:
            bound = row["lower_bound_ms"]
        else:
            bound = sum(network_lower_bound([offset / 1e3 for offset in arrivals],
                                            network.model, topologies[row["ranks"]],
                                            row["bytes"])
                        for arrivals in patterns) / len(patterns) * 1e3
        row["network_bound_ms"] = bound
        row["network_excess_ms"] = row["avg_elapsed_ms"] - bound


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
    # each rank's arrival noise a call: the mean of an exponential draw, unknown to every
    # prediction (papcoll-bench --jitter-ms)
    jitter_ms: float = 0.0
    datatype: str = "float"
    op: str = "sum"
    seed: int = 1
    mispredict: bool = False  # one-late: every rank predicts rank 2 late instead of rank 1
    # of the time ratios, NO_BASELINE for none; the caller puts it in `algorithms`
    baseline: str = DEFAULT_BASELINE
    schedule: str | None = None
    # the hierarchical algorithms' group of every rank (papcoll-bench --group-colors); None:
    # MPI's shared-memory nodes
    group_colors: list[int] | None = None
    # libpapcoll_pmpi.so preloaded: 'native' contenders' MPI_Allreduce goes through papcoll
    preload: bool = False
    timeout: float = 3600.0


@functools.cache
def native_algorithm_names() -> tuple[str, tuple[str, ...]] | None:
    """(the MPI library's name, the names native:NAME takes in it), from
    `papcoll-bench --native-names`, which asks the library as the job would
    (src/mpi/native_names.c) but without MPI_Init or mpiexec: a run with a wrong name is
    refused before it starts. None where the library does not tell (Open MPI before
    MPI_Init may not) or the program cannot run: the job's own check remains."""
    try:
        result = subprocess.run([str(bench_program()), "--native-names"], capture_output=True,
                                text=True, timeout=60)
        answer = json.loads(result.stdout) if result.returncode == 0 else {}
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    names = answer.get("names")
    if not isinstance(names, list) or not names:
        return None
    return str(answer.get("library", "this MPI")), tuple(str(name) for name in names)


def tuning_fields(tuning: NativeTuning) -> dict[str, Any]:
    """The row keys that say what native MPI_Allreduce ran with, named and written as the
    drop-in's report names its node's: native_tuning (NAME=VALUE;...; '' for the MPI's
    defaults), oversubscribed, and the cores that was judged by."""
    return {"native_tuning": tuning.summary(), "oversubscribed": tuning.oversubscribed,
            "cores": tuning.cores}


def run_benchmark(options: BenchOptions,
                  progress: Callable[[int, int], None] | None = None,
                  launch: Launch = mpiexec_command,
                  network: Network | None = None, *,
                  started: Callable[[NativeTuning], None] | None = None,
                  finished: Callable[[dict[str, Any]], None] | None = None,
                  simulated: bool = False) -> list[dict[str, Any]]:
    """Runs papcoll-bench under mpiexec (`launch`: this machine's, or a testbed's);
    `progress(done, total)` follows its progress lines, `started(tuning)` is told the
    native MPI's settings as the job starts, and `finished(summary)` gets, as each size and
    delay is done, an object per algorithm: algorithm, bytes, max_delay_ms, iterations,
    avg_elapsed_ms, t_min_ms, t_max_ms, correct. `network`: the testbed's network, for the
    bound that knows it (add_network_bounds); None: shared memory, a crossbar. Returns its
    rows with the time ratios to options.baseline, the network bounds and the native
    tuning (tuning_fields); RuntimeError when the job fails or times out. `simulated`: the
    launch runs SimGrid's SMPI (papcoll.lab.smpi_launcher), which takes its own build of the
    program by name and tunes no MPI: no real MPI is needed or described."""
    with tempfile.TemporaryDirectory() as directory:
        json_path = Path(directory) / "rows.json"
        program = ["papcoll-bench" if simulated else str(bench_program()),
                   "--algorithms", ",".join(options.algorithms),
                   "--counts", ",".join(str(count) for count in options.counts),
                   "--mode", options.mode,
                   "--max-delays-ms", ",".join(f"{delay:g}" for delay in options.max_delays_ms),
                   "--iterations", str(options.iterations), "--warmup", str(options.warmup),
                   "--compute-ms", f"{options.compute_ms:g}",
                   "--jitter-ms", f"{options.jitter_ms:g}", "--datatype", options.datatype,
                   "--op", options.op,
                   "--seed", str(options.seed), "--mispredict", str(int(options.mispredict)),
                   "--json", str(json_path), "--progress"]
        if options.schedule:
            program += ["--schedule", options.schedule]
        if options.group_colors is not None:
            program += ["--group-colors", ",".join(str(color) for color in options.group_colors)]
        argv, environment = launch(options.ranks, program)
        report_path = Path(directory) / "report.json"
        if options.preload:
            environment["LD_PRELOAD"] = str(preload_library_path())
            environment["PAPCOLL_REPORT"] = str(report_path)
        # Open MPI's tuned component honours coll_tuned_allreduce_algorithm only with
        # dynamic rules on, and reads that at start-up (bench/native_algorithms.h).
        if not simulated:
            environment.setdefault("OMPI_MCA_coll_tuned_use_dynamic_rules", "1")
        tuning = (NativeTuning({}, (), options.ranks, cores(), False) if simulated
                  else native_tuning(options.ranks, argv, environment))
        if started is not None:
            started(tuning)
        stdout_file = open(Path(directory) / "stdout", "w+")  # closed below
        process = subprocess.Popen(argv, env=environment, stdout=stdout_file,
                                   stderr=subprocess.PIPE, text=True)
        # A hung MPI job must not hang the command: kill it after options.timeout seconds.
        watchdog = threading.Timer(options.timeout, process.kill)
        watchdog.start()
        messages = []
        assert process.stderr is not None
        try:
            for line in process.stderr:
                match = re.fullmatch(r"progress (\d+) (\d+)\s*", line)
                if line.startswith("finished {"):
                    if finished is not None:
                        finished(json.loads(line.removeprefix("finished ")))
                elif match is None:
                    messages.append(line)
                elif progress is not None:
                    progress(int(match.group(1)), int(match.group(2)))
            status = process.wait()
        except BaseException:
            # interrupted (Ctrl-C, SIGTERM, a progress callback's error): the MPI job must
            # not outlive us. mpiexec passes SIGTERM on to its ranks and daemons.
            stop_job(process)
            raise
        finally:
            watchdog.cancel()
        stdout_file.seek(0)
        output = stdout_file.read()
        stdout_file.close()
        # no rows is a failure whatever the status: smpirun exits 0 after MPI_Abort
        if not json_path.exists():
            why = "timed out" if status == -9 else f"exit {status}"
            raise RuntimeError(f"papcoll-bench failed ({why}):\n"
                               + "".join(messages)[-3000:] + output[-1000:])
        rows: list[dict[str, Any]] = json.loads(json_path.read_text())
        preload_totals = load_report(report_path)["totals"] if options.preload else None
    for row in rows:
        row["preload"] = options.preload
        if preload_totals is not None:
            row["preload_totals"] = preload_totals
        row.update(tuning_fields(tuning))
    add_speedups(rows, options.baseline)
    add_network_bounds(rows, network)
    return rows


def stop_job(process: subprocess.Popen[str], grace: float = 10.0) -> None:
    """Ends an MPI job: SIGTERM to mpiexec (which ends its ranks), SIGKILL after `grace`."""
    process.terminate()
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def readable_bytes(size: float) -> str:
    """A size as people read it: whole bytes below 1 KiB ("8 B", where KiB with one decimal
    said "0.0 KiB"), else KiB, MiB or GiB with one decimal where it is not zero: "1 KiB",
    "1.5 KiB", "16 MiB"."""
    if size < 1024:
        return f"{size:.0f} B"
    unit, scale = next((unit, scale) for unit, scale in
                       (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)) if size >= scale)
    return f"{size / scale:.1f}".removesuffix(".0") + f" {unit}"


def format_bytes(size: int) -> str:
    """8, 1K, 16M: the largest power-of-1024 suffix that divides the size exactly, as
    --sizes takes them."""
    for suffix, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale}{suffix}"
    return str(size)


def saving_summary(rows: list[dict[str, Any]]) -> list[str]:
    """Proficz 2018, Sect. 3: a PAP-aware algorithm can save at most Delta - delta against the
    ring, Delta = the ring's e-bar with balanced arrivals, delta = one transfer of the vector.
    Nothing where ring or the PAP-aware algorithms did not run (ring runs only when asked
    for)."""
    lines: list[str] = []
    if not {"prr", "slt"} & {row["algorithm"] for row in rows}:
        return lines
    for size in sorted({row["bytes"] for row in rows}):
        of_size = [row for row in rows if row["bytes"] == size]
        balanced = [row for row in of_size
                    if row["algorithm"] == RING and row["max_delay_ms"] == 0]
        delta = of_size[0].get("p2p_ms")
        if not balanced or delta is None:
            continue
        full = balanced[0]["avg_elapsed_ms"]
        lines.append(f"{readable_bytes(size)}: Delta (ring, balanced) = {full:.3f} ms, delta "
                     f"(one transfer) = {delta:.3f} ms, Delta - delta = {full - delta:.3f} ms")
        ring = {row["max_delay_ms"]: row["avg_elapsed_ms"] for row in of_size
                if row["algorithm"] == RING}
        for row in of_size:
            if row["algorithm"] in ("prr", "slt") and row["max_delay_ms"] in ring:
                saving = ring[row["max_delay_ms"]] - row["avg_elapsed_ms"]
                lines.append(f"  {row['algorithm']} at max delay {row['max_delay_ms']:g} ms: "
                             f"saves {saving:.3f} ms against ring "
                             f"({row.get('predicted_calls', 0)}/{row['iterations']} calls "
                             "on predictions)")
    return lines


# An excess below this (ms) is rounding and timer resolution, not a clock offset error
NEGATIVE_EXCESS_TOLERANCE_MS = 0.005
# The CPU share above which the machine, not the algorithm, sets the timings
BUSY_PERCENT = 50.0
# A balanced call slower than this many transfers of its vector (delta), and 1 ms, waited
# on the scheduler rather than on data
BALANCED_DELTAS = 20.0


def measurement_warnings(rows: list[dict[str, Any]], cores: int) -> list[str]:
    """Warnings for numbers that cannot be what they seem, one line each:

    - e-bar below e-bar_lo (a negative excess): e-bar_lo is built from each rank's arrival
      on rank 0's clock, through clock offsets measured once by ping-pong at the start; an
      offset wrong by x ms moves the arrivals, and so e-bar_lo, by up to x. The row's excess
      then measures that error, not the algorithm (a row read -1.060 ms);
    - more ranks than cores, or a busy CPU: the compute phase is a sleep (nanosleep), and
      MPI waits by spinning on shared memory. A rank that wakes must wait for a core, held
      by a spinning rank or another program, for up to a scheduler time slice: a 64 KiB
      balanced call at P = 2 measured 34 ms with --compute-ms 50 and 0.04 ms with
      --compute-ms 1 (a longer sleep gives the machine's other work the cores). Said where
      balanced calls took more than BALANCED_DELTAS transfers, or the CPU was busy."""
    warnings: list[str] = []
    negative = [row for row in rows if row["excess_ms"] < -NEGATIVE_EXCESS_TOLERANCE_MS]
    for row in negative:
        warnings.append(
            f"{row['algorithm']} at {readable_bytes(row['bytes'])}, max delay "
            f"{row['max_delay_ms']:g} ms: e-bar {row['avg_elapsed_ms']:.3f} ms is below its "
            f"lower bound e-bar_lo {row['lower_bound_ms']:.3f} ms (excess "
            f"{row['excess_ms']:.3f} ms), which no all-reduce can do: the ranks' clock offsets, "
            "measured once at the start, were off by about that much (a rank descheduled "
            "during the measurement), so this row's e-bar_lo and excess are not measurements")
    if not rows:
        return warnings
    ranks = rows[0]["ranks"]
    busy = max(float(row.get("cpu_busy_percent") or 0.0) for row in rows)
    slow = [row for row in rows if row["max_delay_ms"] == 0 and row.get("p2p_ms")
            and row["median_ms"] > max(1.0, BALANCED_DELTAS * row["p2p_ms"])]
    crowded = ranks > cores
    if crowded or busy > BUSY_PERCENT or slow:
        why = []
        if crowded:
            why.append(f"{ranks} ranks on {cores} cores (oversubscribed)")
        if busy > BUSY_PERCENT:
            why.append(f"the CPU {busy:.0f} % busy")
        if slow:
            row = max(slow, key=lambda row: row["median_ms"] / row["p2p_ms"])
            why.append(f"{row['algorithm']} at {readable_bytes(row['bytes'])} with every rank "
                       f"on time took {row['median_ms']:.3f} ms, "
                       f"{row['median_ms'] / row['p2p_ms']:.0f} x one transfer of its vector")
        warnings.append(
            "these timings are the machine's, not the algorithms': " + "; ".join(why)
            + ". Each rank sleeps through the compute phase and MPI waits by spinning, so a "
            "rank that wakes may wait up to a scheduler time slice (milliseconds) for a core "
            "held by a spinning rank or another program, and a longer --compute-ms leaves "
            "the cores to other work: run with a core per rank on an idle machine "
            "(docs/benchmarks.md, 'Numbers that cannot be')")
    return warnings


def _error_bars(series: list[dict[str, Any]]) -> list[list[float]]:
    """Asymmetric +-2 sigma bars of the time ratios, the lower one cut at 0: a ratio of
    times cannot be negative, however wide its spread."""
    ratios = [row["time_vs_baseline"] for row in series]
    spreads = [row["time_2sigma"] or 0.0 for row in series]
    return [[min(spread, ratio) for ratio, spread in zip(ratios, spreads)], spreads]


def _faint(container: Any) -> None:
    """Error bars lighter than their line, so crossing bars do not hide the points."""
    for bars in container[2]:
        bars.set_alpha(0.45)


def plot(rows: list[dict[str, Any]], path: str) -> None:
    """Two panels: e-bar / the baseline's e-bar (below 1: faster) against message size
    (log2 axis; a colour per algorithm, a line style per max delay) and against max delay
    (at the largest size), with +-2 sigma bars that stop at 0. The baseline is the dashed
    line at 1."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot

    first = rows[0]
    baseline = first["baseline"]
    algorithms = [name for name in dict.fromkeys(row["algorithm"] for row in rows)
                  if name != baseline]
    sizes = sorted({row["bytes"] for row in rows})
    delays = sorted({row["max_delay_ms"] for row in rows})
    colours = pyplot.rcParams["axes.prop_cycle"].by_key()["color"]
    styles = ["-", "--", ":", "-."]
    markers = ["o", "s", "^", "D", "v", "P"]
    figure, (by_size, by_delay) = pyplot.subplots(1, 2, figsize=(13, 5))
    usable = [row for row in rows if row["time_vs_baseline"] is not None]
    for index, algorithm in enumerate(algorithms):
        colour = colours[index % len(colours)]
        for number, delay in enumerate(delays):
            series = sorted((row for row in usable if row["algorithm"] == algorithm
                             and row["max_delay_ms"] == delay), key=lambda row: row["bytes"])
            if not series:
                continue
            label = algorithm if len(delays) == 1 else f"{algorithm}, delay {delay:g} ms"
            # each series a little to the side (x 2^dodge), so overlapping bars stay apart
            dodge = 2 ** (0.06 * (index * len(delays) + number))
            _faint(by_size.errorbar([row["bytes"] * dodge for row in series],
                             [row["time_vs_baseline"] for row in series],
                             yerr=_error_bars(series), color=colour,
                             linestyle=styles[number % len(styles)],
                             marker=markers[number % len(markers)], markersize=4, capsize=2,
                             label=label))
        series = sorted((row for row in usable if row["algorithm"] == algorithm
                         and row["bytes"] == sizes[-1]), key=lambda row: row["max_delay_ms"])
        if series:
            shift = 0.01 * index * (delays[-1] - delays[0])
            _faint(by_delay.errorbar([row["max_delay_ms"] + shift for row in series],
                                     [row["time_vs_baseline"] for row in series],
                                     yerr=_error_bars(series), color=colour, marker="o",
                                     markersize=4, capsize=3, label=algorithm))
    by_size.set_xscale("log", base=2)
    by_size.set_xticks(sizes)
    by_size.set_xticklabels([format_bytes(size) for size in sizes],
                            rotation=45 if len(sizes) > 8 else 0, ha="right"
                            if len(sizes) > 8 else "center")
    by_size.set_xlabel("message size per rank (bytes)")
    by_size.set_title("e-bar relative to the baseline against size")
    by_delay.set_xlabel("max delay (ms)")
    by_delay.set_title(f"e-bar relative to the baseline against delay, "
                       f"{readable_bytes(sizes[-1])}")
    # The axes fit the ratios, not the whiskers: one noisy iteration can make a bar ten
    # times taller than every point, and the points are what the plot is for.
    points = [row["time_vs_baseline"] for row in usable if row["algorithm"] != baseline]
    top = max([1.5, *(1.15 * point for point in points)])
    for axis in (by_size, by_delay):
        axis.axhline(1.0, color="black", linestyle="--", linewidth=1, label=baseline)
        axis.set_ylim(0, top)
        axis.set_ylabel(f"e-bar / {baseline} (below 1: faster)")
        axis.grid(alpha=0.3)
        axis.legend(fontsize="small")
    figure.suptitle(f"all-reduce ({first.get('op', 'sum')}, {first['datatype']}), "
                    f"P = {first['ranks']}, {first['mode']}, compute {first['compute_ms']:g} "
                    f"ms, {first['iterations']} iterations; bars +-2 sigma, cut at 0 and at "
                    "the top")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    pyplot.close(figure)
