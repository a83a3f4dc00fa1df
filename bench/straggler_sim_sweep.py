"""The simulator target: auto's and straggler's excess over e-bar_lo, late ranks.

How close straggler and `auto` come to Proficz 2018's lower bound e-bar_lo when ranks arrive
late, against the algorithms MPI_Allreduce chooses between (ring, rabenseifner,
recursive_doubling).

For every network, P, size per rank, arrival mode (one-late: rank 1 late; rand-late: every
rank late by a seeded uniform share) and delay (a multiple of delta, one transfer of the
vector: papcoll.sim.transfer_time), the simulator (papcoll.sim, in this process) gives the
e-bar of auto, straggler, ring, rabenseifner and recursive_doubling, and each one's excess
over e-bar_lo (mean over ranks of a_last - a_i, plus delta: papcoll.sim.lower_bound). The
figure of merit is

    ratio = excess(auto) / min(excess(ring), excess(rabenseifner), excess(recursive_doubling))

which the target wants <= 0.3 for one-late with a delay of 3 delta or more. auto decides as
the MPI library does (papcoll.sim.choose: src/core/select.c simulates every candidate with
the arrivals as its prediction, native unless the best is 5 % better after the last
arrival); its e-bar is that of what it chose, native being the best of the three stand-ins,
as papcoll.sim.simulate_auto has it, but reusing the runs this script makes anyway.
select.c simulates no candidate whose schedules exceed 4 M operations: at P = 1024 that
leaves out straggler from 64 KiB up (5 to 7 M), so auto there cannot choose it (marked * in
the table).

    PYTHONPATH=python .venv/bin/python bench/straggler_sim_sweep.py \
        --json docs/data/straggler_sim_sweep.json > straggler_sim_sweep.md

Progress and timings go to stderr, the markdown table and the summaries to stdout. Measured
on one core (both networks, all sizes, modes and delays: 64 cells per P): P = 16 0.6 s,
P = 64 2 s of CPU (12 s on a loaded 2-core machine); P = 256 about 1 s of CPU a cell at
16 MiB, about a minute in all (estimated); P = 1024 about 7 s of CPU a cell (auto's
decision alone builds 13 candidates' schedules, up to its cap of 4 M operations each),
some 7 minutes of CPU and over 20 on a loaded machine. P = 1024 is therefore not in the
default --ranks: `--ranks 16,64,256,1024` runs it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from papcoll.cli.options import comma_list
from papcoll.core import estimated_operations
from papcoll.lab.bench import readable_bytes
from papcoll.network import Network, load_network
from papcoll.sim import (
    NATIVE_STAND_INS,
    SimResult,
    choose,
    lower_bound,
    simulate,
)
from rich.console import Console
from sim_sweep import add_grid_options, add_run_options, cell_of, markdown_head, progress_bar

NETWORKS = "ethernet-1g,infiniband-fdr"
RANKS = "16,64,256"  # 1024 adds ~7 minutes of CPU: give it in --ranks
COUNTS = "256,16K,256K,4M"  # x 4 B: 1 KiB, 64 KiB, 1 MiB, 16 MiB per rank
MODES = "one-late,rand-late"
DELAYS = "3,10,30,100"  # x delta
STRAGGLER = "straggler"
SHOWN = ("auto", STRAGGLER, "ring", "rabenseifner", "recursive_doubling")  # the last 3: native
TARGET_RATIO = 0.3
TARGET_DELAY = 3.0  # the target holds for one-late delays from 3 delta up
# src/core/select.c's most_simulated_operations: auto does not simulate larger candidates
AUTO_OPERATION_CAP = 4_000_000


@dataclass(frozen=True)
class Cell:
    network: str
    ranks: int
    count: int
    mode: str
    delay_deltas: float


def positive_number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"a delay must be a positive multiple of delta, "
                                         f"not {text}")
    return value


def mode_name(text: str) -> str:
    if text not in ("one-late", "rand-late"):
        raise argparse.ArgumentTypeError(f"mode must be one-late or rand-late, not '{text}'")
    return text


def run_cell(cell: Cell, network: Network, elem_size: int, seed: int,
             max_operations: int) -> dict[str, Any] | str:
    """The cell's JSON row, or why it was skipped."""
    made = cell_of(network, cell.ranks, cell.count, elem_size, cell.mode, cell.delay_deltas,
                   seed)
    model, topology, nbytes, delta = made.model, made.topology, made.nbytes, made.delta
    arrivals, context = made.arrivals, made.context

    def run(name: str) -> SimResult:
        return simulate(name, cell.ranks, cell.count, elem_size, model, arrivals, context,
                        topology=topology, max_operations=max_operations)

    for name in (STRAGGLER, *NATIVE_STAND_INS):
        estimate = estimated_operations(name, cell.ranks, cell.count, elem_size, context)
        if estimate > max_operations:
            return (f"{name} builds about {estimate:.3g} operations, above --max-operations "
                    f"{max_operations:.3g}")
    began = time.perf_counter()
    decided = choose(cell.ranks, cell.count, elem_size, model, context)
    choose_seconds = time.perf_counter() - began
    results = {name: run(name) for name in (STRAGGLER, *NATIVE_STAND_INS)}
    if decided.algorithm == "native":  # what simulate_auto runs for native
        simulated = min(NATIVE_STAND_INS, key=lambda name: results[name].average_elapsed)
    else:
        simulated = decided.algorithm
        if simulated not in results:
            results[simulated] = run(simulated)
    bound_ms = lower_bound(arrivals, delta) * 1e3
    ebar_ms = {name: result.average_elapsed * 1e3 for name, result in results.items()}
    ebar_ms["auto"] = ebar_ms[simulated]
    excess_ms = {name: ebar_ms[name] - bound_ms for name in SHOWN}
    best_native = min(excess_ms[name] for name in NATIVE_STAND_INS)
    return {
        "network": cell.network, "ranks": cell.ranks, "count": cell.count,
        "elem_size": elem_size, "bytes": nbytes, "mode": cell.mode, "seed": seed,
        "delay_deltas": cell.delay_deltas, "delta_ms": delta * 1e3,
        "max_delay_ms": cell.delay_deltas * delta * 1e3, "lower_bound_ms": bound_ms,
        "avg_elapsed_ms": {name: ebar_ms[name] for name in SHOWN},
        "excess_ms": excess_ms,
        "ratio": excess_ms["auto"] / best_native if best_native > 0 else None,
        "chosen": decided.algorithm, "simulated": simulated,
        "predicted_gain": decided.predicted_gain,
        "operations": {name: result.operations for name, result in results.items()},
        "straggler_beyond_auto_cap": results[STRAGGLER].operations > AUTO_OPERATION_CAP,
        "choose_seconds": choose_seconds,
        "cell_seconds": time.perf_counter() - began,
    }


def markdown(rows: Sequence[dict[str, Any]]) -> str:
    lines = ["Excess over e-bar_lo in ms (e-bar - e-bar_lo); ratio = auto's excess / the "
             "least of ring's, rabenseifner's and recursive_doubling's; * auto could not "
             "simulate straggler (over select.c's 4 M operations).", "",
             *markdown_head(["network", "P>", "size>", "mode", "delay/delta>", "e-bar_lo ms>",
                             *(f"{name}>" for name in SHOWN), "ratio>", "auto's choice"])]
    for row in rows:
        ratio = "-" if row["ratio"] is None else f"{row['ratio']:.2f}"
        if row["ratio"] is not None and row["ratio"] <= TARGET_RATIO:
            ratio = f"**{ratio}**"
        choice = row["chosen"] + (f" ({row['simulated']})" if row["chosen"] == "native" else "")
        choice += " *" if row["straggler_beyond_auto_cap"] else ""
        lines.append(f"| {row['network']} | {row['ranks']} | {readable_bytes(row['bytes'])} | "
                     f"{row['mode']} | {row['delay_deltas']:g} | {row['lower_bound_ms']:.4g} | "
                     + " | ".join(f"{row['excess_ms'][name]:.4g}" for name in SHOWN)
                     + f" | {ratio} | {choice} |")
    return "\n".join(lines)


def summaries(rows: Sequence[dict[str, Any]]) -> list[str]:
    """One line per network and mode: cells with ratio <= 0.3, the median ratio."""
    lines = []
    for network in dict.fromkeys(row["network"] for row in rows):
        for mode in dict.fromkeys(row["mode"] for row in rows):
            cells = [row for row in rows if row["network"] == network and row["mode"] == mode]
            if mode == "one-late":
                cells = [row for row in cells if row["delay_deltas"] >= TARGET_DELAY]
            ratios = [row["ratio"] for row in cells if row["ratio"] is not None]
            if not cells:
                continue
            met = sum(ratio <= TARGET_RATIO for ratio in ratios)
            median = f"{statistics.median(ratios):.2f}" if ratios else "-"
            scope = f" (delay >= {TARGET_DELAY:g} delta)" if mode == "one-late" else ""
            lines.append(f"- {network}, {mode}{scope}: ratio <= {TARGET_RATIO:g} in {met} of "
                         f"{len(cells)} cells, median ratio {median}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_grid_options(parser, networks=NETWORKS, ranks=RANKS,
                     ranks_note="; 1024 adds about 7 minutes of CPU", counts=COUNTS,
                     counts_note="1 KiB to 16 MiB of 4-byte elements")
    parser.add_argument("--modes", type=comma_list(mode_name), default=MODES.split(","),
                        help=f"arrival modes, comma-separated (default {MODES})")
    parser.add_argument("--delays", type=comma_list(positive_number),
                        default=[float(d) for d in DELAYS.split(",")],
                        help=f"maximum delays in multiples of delta (default {DELAYS})")
    add_run_options(parser, seed_use="rand-late arrivals",
                    max_operations_help="skip cells whose schedules would hold more "
                                        "operations (about 70 bytes each; default 20000000)")
    arguments = parser.parse_args()
    networks = {name: load_network(name) for name in arguments.network}
    cells = [Cell(network, ranks, count, mode, delay)
             for network in arguments.network for ranks in arguments.ranks
             for count in arguments.count for mode in arguments.modes
             for delay in arguments.delays]
    errors = Console(stderr=True)
    rows: list[dict[str, Any]] = []
    seconds_per_ranks: dict[int, list[float]] = {}  # P -> [wall clock, CPU] seconds
    with progress_bar(errors) as progress:
        task = progress.add_task("cells", total=len(cells))
        for cell in cells:
            progress.update(task, description=f"{cell.network} P={cell.ranks} "
                            f"{readable_bytes(cell.count * arguments.elem_size)} {cell.mode} "
                            f"{cell.delay_deltas:g} delta")
            began, cpu = time.perf_counter(), time.process_time()
            row = run_cell(cell, networks[cell.network], arguments.elem_size, arguments.seed,
                           arguments.max_operations)
            spent = seconds_per_ranks.setdefault(cell.ranks, [0.0, 0.0])
            spent[0] += time.perf_counter() - began
            spent[1] += time.process_time() - cpu
            if isinstance(row, str):
                progress.console.print(f"[yellow]skipped {cell}: {row}[/]")
            else:
                rows.append(row)
                if arguments.json:
                    Path(arguments.json).write_text(json.dumps(rows, indent=1))
            progress.advance(task)
    for ranks, (wall, cpu) in seconds_per_ranks.items():
        errors.print(f"P = {ranks}: {wall:.1f} s ({cpu:.1f} s of CPU)")
    if not rows:
        errors.print("[red]no cell ran[/]")
        return 1
    print(markdown(rows))
    print()
    print("\n".join(summaries(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
