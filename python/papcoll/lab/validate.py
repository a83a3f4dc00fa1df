"""`papcoll validate`: how far the simulator's e-bar is from the e-bar measured
on a real machine, case by case.

A case is (algorithm, message size, arrival mode, max delay). Every case runs for real in
papcoll-bench (python/papcoll/lab/bench.py, bench/papcoll_bench.c) through `launch`: this
machine's mpiexec (shared memory) or a testbed's. papcoll-bench runs once per arrival mode
with every algorithm, size and delay of that mode, interleaved iteration by iteration as it
always does, so drifts of the machine hit all algorithms alike. Modes: balanced (one-late
with delay 0: nobody is made late), one-late (rank 1 late by the max delay), rand-late
(every rank late by a random share of it).

The simulator replays the arrivals that happened, not the ones asked for: papcoll-bench
records every rank's arrival in every timed iteration (arrival_offsets_ms), and each
iteration is simulated with those arrivals; the simulated e-bar of a case is the mean over
iterations, as the measured one is. Replaying matters: sleep overshoot and scheduling make a
"balanced" start spread by tens of microseconds (milliseconds with more ranks than cores),
and rand-late's random delays are drawn in C from a generator the simulator does not share.
slt, prr and straggler are simulated with perfect predictions (the replayed arrivals) and
the model's tau; the real ones predict at edge(0.5) and measure tau at their first call.

relative_error = (simulated - measured) / measured. The summary is the geometric mean of
|relative_error| per algorithm and over all cases; an error of exactly 0 would make it 0
whatever the other cases, so every |error| counts as at least ERROR_FLOOR (1e-4, 0.01 %)
there.

Which algorithms: those that are all-reduces on their own (AlgorithmInfo): not the
reduce-scatters, and not those that need groups, whose groups papcoll's MPI library takes
from MPI's shared-memory nodes, which a network model does not say. `native` (the MPI
library's own all-reduce) has no schedule, so nothing to simulate: it is refused here.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..core import PapcollError, algorithm, algorithms
from ..network import Network
from ..sim import simulate
from .bench import BenchOptions, format_bytes, run_benchmark
from .launcher import Launch, mpiexec_command

MODES = ("balanced", "one-late", "rand-late")
ERROR_FLOOR = 1e-4
# papcoll-bench runs the all-reduce on floats (MPI_FLOAT, sum): sizes are multiples of this
ELEMENT_BYTES = 4
DEFAULT_SIZES = [8, 1 << 10, 64 << 10, 1 << 20, 16 << 20]


class ValidationError(ValueError):
    """Input `validate` refuses; the message says why."""


@dataclass(frozen=True)
class ValidateOptions:
    """What to run: every algorithm x size (bytes per rank) x mode x max delay."""

    ranks: int
    algorithms: Sequence[str]
    sizes: Sequence[int] = field(default_factory=lambda: list(DEFAULT_SIZES))
    modes: Sequence[str] = MODES
    max_delays_ms: Sequence[float] = (1.0,)  # one-late and rand-late; balanced has 0
    iterations: int = 10
    warmup: int = 2
    # 0: back to back. The bench's compute phase sleeps, and on this VM the first message
    # after a 10 ms sleep cost ~150 us more (8 B recursive doubling at P = 2 on the testbed:
    # 14 us back to back, 173 us after sleeping): the wake-up of an idle core, not the network.
    compute_ms: float = 0.0
    seed: int = 1
    timeout: float = 3600.0  # seconds, per papcoll-bench job


def why_not_validated(name: str, ranks: int) -> str | None:
    """None where `name` can run a case at P = `ranks` both for real and in the simulator;
    else why not (from its declared properties, then by building its schedule)."""
    if name == "native" or name.startswith("native:"):
        return ("the MPI library's own all-reduce has no schedule papcoll could simulate")
    try:
        info = algorithm(name)
    except PapcollError as error:
        return error.message
    if info.reduce_scatter:
        return "a reduce-scatter, not an all-reduce: papcoll-bench cannot check its result"
    if info.needs_groups:
        return ("needs groups, which papcoll's MPI library takes from MPI's shared-memory "
                "nodes and a network model does not give")
    try:  # a schedule the algorithm refuses at this P (a power of two, a schedule's bases)
        simulate(name, ranks, ranks, ELEMENT_BYTES)
    except PapcollError as error:
        return error.message
    return None


def validated_algorithms(ranks: int) -> list[str]:
    """Every registered algorithm that can run at P = `ranks` (why_not_validated)."""
    return [info.name for info in algorithms() if why_not_validated(info.name, ranks) is None]


def relative_error(measured: float, simulated: float) -> float:
    """(simulated - measured) / measured: above 0 where the simulator is too slow."""
    if not measured > 0:
        raise ValueError(f"a measured e-bar must be positive, not {measured}")
    return (simulated - measured) / measured


def geometric_mean_error(errors: Sequence[float], floor: float = ERROR_FLOOR) -> float:
    """exp(mean(log(max(|e|, floor)))): the typical size of the errors, which one large
    error does not dominate as it would an arithmetic mean. `floor` keeps an exact 0 from
    making the whole mean 0."""
    if not errors:
        raise ValueError("the geometric mean of no errors is undefined")
    if not floor > 0:
        raise ValueError(f"the floor must be positive, not {floor}")
    return math.exp(sum(math.log(max(abs(error), floor)) for error in errors) / len(errors))


def check_options(options: ValidateOptions) -> None:
    """Refuses what cannot be validated, before any MPI job starts."""
    if options.ranks < 2:
        raise ValidationError(f"validate needs at least 2 ranks (nothing moves at P = 1), "
                              f"not {options.ranks}")
    if not options.algorithms:
        raise ValidationError("no algorithms to validate")
    for name in options.algorithms:
        reason = why_not_validated(name, options.ranks)
        if reason is not None:
            raise ValidationError(f"cannot validate '{name}' at P = {options.ranks}: {reason}")
    if not options.sizes:
        raise ValidationError("no message sizes")
    for size in options.sizes:
        if size <= 0 or size % ELEMENT_BYTES:
            raise ValidationError(f"message size {size} B: want a positive multiple of "
                                  f"{ELEMENT_BYTES} B (the all-reduce runs on floats)")
    for mode in options.modes:
        if mode not in MODES:
            raise ValidationError(f"unknown mode '{mode}' (modes: {', '.join(MODES)})")
    if not options.modes:
        raise ValidationError("no arrival modes")
    if set(options.modes) - {"balanced"} and not options.max_delays_ms:
        raise ValidationError("one-late and rand-late need at least one max delay")
    for delay in options.max_delays_ms:
        if not 0 <= delay <= 60000:
            raise ValidationError(f"max delay {delay} ms: want 0 to 60000 ms")
    if options.iterations < 1 or options.warmup < 0 or not options.compute_ms >= 0:
        raise ValidationError("want iterations >= 1, warm-up >= 0 and compute >= 0 ms")


def bench_jobs(options: ValidateOptions) -> list[tuple[str, BenchOptions]]:
    """(mode, papcoll-bench job) per arrival mode: balanced is one-late with delay 0."""
    jobs = []
    for mode in dict.fromkeys(options.modes):
        delays = [0.0] if mode == "balanced" else list(dict.fromkeys(options.max_delays_ms))
        jobs.append((mode, BenchOptions(
            ranks=options.ranks, algorithms=list(options.algorithms),
            counts=[size // ELEMENT_BYTES for size in options.sizes],
            mode="rand-late" if mode == "rand-late" else "one-late", max_delays_ms=delays,
            iterations=options.iterations, warmup=options.warmup,
            compute_ms=options.compute_ms, datatype="float", op="sum", seed=options.seed,
            baseline=options.algorithms[0], timeout=options.timeout)))
    return jobs


def simulated_ebars_ms(name: str, ranks: int, count: int, network: Network,
                       arrivals_ms: Sequence[Sequence[float]]) -> list[float]:
    """The simulated e-bar of every iteration in ms: its measured arrivals replayed on the
    network's model and topology."""
    topology = network.topology(ranks)
    return [simulate(name, ranks, count, ELEMENT_BYTES, network.model,
                     [offset / 1e3 for offset in arrivals], topology=topology
                     ).average_elapsed * 1e3 for arrivals in arrivals_ms]


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def compare(bench_row: dict[str, Any], mode: str, network: Network) -> dict[str, Any]:
    """One case: papcoll-bench's row against its simulation."""
    arrivals = bench_row["arrival_offsets_ms"]
    ebars = simulated_ebars_ms(bench_row["algorithm"], bench_row["ranks"], bench_row["count"],
                               network, arrivals)
    simulated = sum(ebars) / len(ebars)
    measured = bench_row["avg_elapsed_ms"]
    return {"algorithm": bench_row["algorithm"], "ranks": bench_row["ranks"],
            "bytes": bench_row["bytes"], "mode": mode,
            "max_delay_ms": bench_row["max_delay_ms"],
            "measured_ms": measured, "measured_stddev_ms": bench_row["stddev_ms"],
            "measured_median_ms": bench_row["median_ms"], "simulated_ms": simulated,
            "relative_error": relative_error(measured, simulated),
            # the same of medians over iterations: a stall inside one call (another process
            # took the core) moves the mean, which no replay of arrivals can follow
            "simulated_median_ms": _median(ebars),
            "median_relative_error": relative_error(bench_row["median_ms"], _median(ebars)),
            # how late the last rank came, on average: what the waiting part of e-bar is
            "mean_arrival_spread_ms": sum(max(a) for a in arrivals) / len(arrivals),
            "predicted_calls": bench_row["predicted_calls"], "correct": bench_row["correct"],
            "iterations": bench_row["iterations"],
            # what was replayed, so anyone can simulate the case again with another model
            "arrival_offsets_ms": arrivals}


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The geometric mean of |relative_error| per algorithm (in the rows' order), per mode
    and over all rows. Per mode because a late rank's wait, which the replayed arrivals give
    the simulator, dominates one-late's e-bar at delays well above the all-reduce's own
    time, and its small errors would hide balanced's in the overall mean."""
    summary: dict[str, Any] = {"error_floor": ERROR_FLOOR}
    for prefix, key in (("", "relative_error"), ("median_", "median_relative_error")):
        by_algorithm: dict[str, list[float]] = {}
        by_mode: dict[str, list[float]] = {}
        for row in rows:
            by_algorithm.setdefault(row["algorithm"], []).append(row[key])
            by_mode.setdefault(row["mode"], []).append(row[key])
        summary |= {
            f"{prefix}geomean_abs_error_by_algorithm": {
                name: geometric_mean_error(errors) for name, errors in by_algorithm.items()},
            f"{prefix}geomean_abs_error_by_mode": {mode: geometric_mean_error(by_mode[mode])
                                                   for mode in MODES if mode in by_mode},
            f"{prefix}geomean_abs_error": geometric_mean_error([row[key] for row in rows])}
    return summary


def validate(options: ValidateOptions, network: Network,
             progress: Callable[[int, int], None] | None = None,
             launch: Launch = mpiexec_command) -> dict[str, Any]:
    """Runs every case for real (through `launch`) and in the simulator on `network`.
    Returns a JSON-able report: the options, the network's model, a row per case
    (compare) and the geometric means (summarize). ValidationError for bad options,
    RuntimeError where an MPI job fails."""
    check_options(options)
    # The network must take these ranks (a topology they fit, a model the engine accepts)
    # before any MPI job runs: a tiny simulation of each algorithm finds out in milliseconds.
    for name in options.algorithms:
        simulate(name, options.ranks, options.ranks, ELEMENT_BYTES, network.model,
                 topology=network.topology(options.ranks))
    jobs = bench_jobs(options)
    steps = [len(job.counts) * len(job.max_delays_ms) * (job.warmup + job.iterations)
             for _, job in jobs]
    rows: list[dict[str, Any]] = []
    # other work on the machine shows up as measured time the model cannot know of
    load_before = os.getloadavg()
    for number, (mode, job) in enumerate(jobs):
        done_before = sum(steps[:number])

        def step(done: int, _total: int, before: int = done_before) -> None:
            if progress is not None:
                progress(before + done, sum(steps))

        for bench_row in run_benchmark(job, step, launch):
            rows.append(compare(bench_row, mode, network))
    order = {name: index for index, name in enumerate(options.algorithms)}
    rows.sort(key=lambda row: (order[row["algorithm"]], MODES.index(row["mode"]),
                               row["max_delay_ms"], row["bytes"]))
    return {"network": network.name, "model": asdict(network.model),
            "topology": "crossbar" if network.layout is None else "tree",
            "options": {**asdict(options), "sizes": list(options.sizes),
                        "size_names": [format_bytes(size) for size in options.sizes]},
            "load_average": {"before": load_before, "after": os.getloadavg(),
                             "cores": os.cpu_count()},
            "rows": rows, **summarize(rows)}
