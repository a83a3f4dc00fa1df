"""auto's "Scales" target in the simulator: auto never above native, decision < 1 % of a call.

For every network, P, arrival pattern (balanced, one-late: rank 1 late; rand-late: every rank
late by a seeded uniform share), size per rank and delay (a multiple of delta, one transfer
of the vector: papcoll.sim.transfer_time), auto decides as the MPI library does
(papcoll.sim.choose, src/core/select.c: its model knows no noise), timed on the wall clock;
then what it chose and native are simulated with OS noise on (--noise, per network: every op
starts late by an exponential delay of that mean, papcoll_sim_options.noise_mean). Native is
the best of its stand-ins (papcoll.sim.NATIVE_STAND_INS: recursive_doubling, rabenseifner,
ring), each simulated under the same noise, as papcoll.sim.simulate_auto has it. The two
figures:

  - points where auto's e-bar > native's (count and list; 1e-9 relative slack, for auto
    running native is native);
  - the worst decision time / call time, the call being native's simulated e-bar; and the
    same over the 100 calls a cached decision is taken to serve (src/core/select.c's
    calls_per_decision: the decision is kept per shape and arrival class).

    PYTHONPATH=python .venv/bin/python bench/auto_sim_sweep.py --json auto_sim_sweep.json

Progress goes to stderr; the table (rich) and the figures to stdout. The wall clock of a
decision depends on the machine: run it alone, not beside a test suite.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from papcoll.cli.options import comma_list
from papcoll.lab.bench import readable_bytes
from papcoll.network import Network, load_network
from papcoll.sim import NATIVE_STAND_INS, choose, simulate
from rich.console import Console
from rich.table import Table
from sim_sweep import add_grid_options, add_run_options, cell_of

NETWORKS = "ethernet-1g,infiniband-fdr"
RANKS = "16,32,64,128,256,512,1024"
COUNTS = "16K,256K,4M"  # x 4 B: 64 KiB, 1 MiB, 16 MiB per rank
PATTERNS = "balanced,one-late,rand-late"
DELAYS = "0,3,30"  # x delta; balanced runs once, at 0
# OS noise per network (mean delay of every op): a few % of one message's latency and
# overheads, the order Ruefenacht et al. 2017 and LogGOPSim report for a quiet cluster
NOISE = {"ethernet-1g": 2e-6, "infiniband-fdr": 0.2e-6}
CALLS_PER_DECISION = 100  # as src/core/select.c's budget counts them
TARGET_SHARE = 0.01
SLACK = 1e-9


@dataclass(frozen=True)
class Point:
    network: str
    ranks: int
    count: int
    pattern: str
    delay_deltas: float


def pattern_name(text: str) -> str:
    if text not in ("balanced", "one-late", "rand-late"):
        raise argparse.ArgumentTypeError(f"pattern must be balanced, one-late or rand-late, "
                                         f"not '{text}'")
    return text


def delay_number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"a delay is a multiple of delta >= 0, not {text}")
    return value


def points_of(arguments: argparse.Namespace) -> list[Point]:
    """Every combination; balanced once (at delay 0), the late patterns at each delay > 0."""
    points = []
    for network in arguments.network:
        for ranks in arguments.ranks:
            for count in arguments.count:
                for pattern in arguments.patterns:
                    delays = [0.0] if pattern == "balanced" else [
                        delay for delay in arguments.delays if delay > 0]
                    points += [Point(network, ranks, count, pattern, delay)
                               for delay in delays]
    return points


def run_point(point: Point, network: Network, elem_size: int, seed: int, noise: float,
              max_operations: int) -> dict[str, Any]:
    made = cell_of(network, point.ranks, point.count, elem_size, point.pattern,
                   point.delay_deltas, seed)
    model, topology, nbytes, delta = made.model, made.topology, made.nbytes, made.delta
    arrivals, context = made.arrivals, made.context
    began = time.perf_counter()
    decided = choose(point.ranks, point.count, elem_size, model, context)
    decision_seconds = time.perf_counter() - began
    ebar: dict[str, float] = {}
    for name in NATIVE_STAND_INS:
        try:
            ebar[name] = simulate(name, point.ranks, point.count, elem_size, model, arrivals,
                                  context, topology=topology, noise_mean=noise,
                                  noise_seed=seed, max_operations=max_operations
                                  ).average_elapsed
        except Exception as error:  # over --max-operations: native is the others' best
            print(f"{point}: {name} not simulated ({error})", file=sys.stderr)
    if not ebar:
        raise RuntimeError(f"{point}: no native stand-in within --max-operations")
    native_name = min(ebar, key=lambda name: ebar[name])
    if decided.algorithm == "native":
        auto_name, auto_ebar = native_name, ebar[native_name]
    else:
        auto_name = decided.algorithm
        auto_ebar = simulate(auto_name, point.ranks, point.count, elem_size, model, arrivals,
                             context, topology=topology, noise_mean=noise, noise_seed=seed,
                             max_operations=max_operations).average_elapsed
    native_ebar = ebar[native_name]
    return {
        "network": point.network, "ranks": point.ranks, "count": point.count,
        "elem_size": elem_size, "bytes": nbytes, "pattern": point.pattern,
        "delay_deltas": point.delay_deltas, "delta_ms": delta * 1e3, "noise_s": noise,
        "seed": seed, "chosen": decided.algorithm, "simulated": auto_name,
        "predicted_gain": decided.predicted_gain, "native_stand_in": native_name,
        "auto_ms": auto_ebar * 1e3, "native_ms": native_ebar * 1e3,
        "auto_over_native": auto_ebar / native_ebar if native_ebar > 0 else 1.0,
        "decision_ms": decision_seconds * 1e3,
        "decision_over_call": decision_seconds / native_ebar if native_ebar > 0 else 0.0,
    }


def table(rows: list[dict[str, Any]]) -> Table:
    shown = Table(title="auto against native in the simulator, noise on (e-bar in ms)")
    for column in ("network", "P", "size", "pattern", "delay/delta", "auto", "native",
                   "auto/native", "choice", "decision ms", "decision/call"):
        shown.add_column(column, justify="left" if column in (
            "network", "pattern", "choice") else "right")
    for row in rows:
        ratio = f"{row['auto_over_native']:.3f}"
        if row["auto_over_native"] > 1 + SLACK:
            ratio = f"[red]{ratio}[/]"
        shown.add_row(row["network"], str(row["ranks"]), readable_bytes(row["bytes"]),
                      row["pattern"], f"{row['delay_deltas']:g}", f"{row['auto_ms']:.4g}",
                      f"{row['native_ms']:.4g}", ratio,
                      row["chosen"] + (f" ({row['simulated']})" if row["chosen"] == "native"
                                       else ""),
                      f"{row['decision_ms']:.3g}", f"{row['decision_over_call']:.3g}")
    return shown


def figures(rows: list[dict[str, Any]]) -> list[str]:
    losses = [row for row in rows if row["auto_over_native"] > 1 + SLACK]
    worst = max(rows, key=lambda row: row["decision_over_call"])
    lines = [f"auto > native at {len(losses)} of {len(rows)} points"]
    lines += [f"  {row['network']} P={row['ranks']} {readable_bytes(row['bytes'])} "
              f"{row['pattern']} {row['delay_deltas']:g} delta: auto/native "
              f"{row['auto_over_native']:.3f} ({row['chosen']})" for row in losses]
    over = sum(row["decision_over_call"] > TARGET_SHARE for row in rows)
    amortized = sum(row["decision_over_call"] / CALLS_PER_DECISION > TARGET_SHARE
                    for row in rows)
    lines.append(f"worst decision time / call time: {worst['decision_over_call']:.3g} "
                 f"({worst['network']} P={worst['ranks']} {readable_bytes(worst['bytes'])} "
                 f"{worst['pattern']}); over {TARGET_SHARE:g} at {over} of {len(rows)} "
                 f"points, over {TARGET_SHARE:g} of {CALLS_PER_DECISION} calls at "
                 f"{amortized}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_grid_options(parser, networks=NETWORKS, ranks=RANKS, ranks_note="", counts=COUNTS,
                     counts_note="64 KiB, 1 MiB, 16 MiB of 4-byte elements")
    parser.add_argument("--patterns", type=comma_list(pattern_name),
                        default=PATTERNS.split(","),
                        help=f"arrival patterns, comma-separated (default {PATTERNS})")
    parser.add_argument("--delays", type=comma_list(delay_number),
                        default=[float(d) for d in DELAYS.split(",")],
                        help=f"delays of the late patterns in multiples of delta (default "
                             f"{DELAYS}; 0 is balanced's)")
    parser.add_argument("--noise-scale", type=float, default=1.0,
                        help="multiplies each network's noise mean (" + ", ".join(
                            f"{name} {mean * 1e6:g} us" for name, mean in NOISE.items())
                        + "; 0: no noise)")
    add_run_options(parser, seed_use="rand-late arrivals and the noise",
                    max_operations_help="simulate no schedules holding more operations "
                                        "(default 2e7)")
    arguments = parser.parse_args()
    networks = {name: load_network(name) for name in arguments.network}
    errors = Console(stderr=True)
    rows: list[dict[str, Any]] = []
    points = points_of(arguments)
    for index, point in enumerate(points, 1):
        errors.print(f"[{index}/{len(points)}] {point}", highlight=False)
        noise = NOISE.get(point.network, 1e-6) * arguments.noise_scale
        rows.append(run_point(point, networks[point.network], arguments.elem_size,
                              arguments.seed, noise, arguments.max_operations))
        if arguments.json:
            Path(arguments.json).write_text(json.dumps(rows, indent=1))
    if not rows:
        errors.print("[red]no point ran[/]")
        return 1
    console = Console(width=160)
    console.print(table(rows))
    print("\n".join(figures(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
