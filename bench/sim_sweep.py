"""What the simulator sweeps share (auto_sim_sweep.py, straggler_sim_sweep.py,
site_sweep.py): the grid's options, spelled and checked alike in each, one cell's network,
arrivals and context made alike, the progress bar they draw on standard error and the head
of their markdown tables."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass

from papcoll import Context, Parameters
from papcoll.cli.options import comma_list, integer_in_range, parse_count
from papcoll.model import SimModel
from papcoll.network import Network
from papcoll.sim import arrival_pattern, tau, transfer_time
from papcoll.topology import Topology
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


def add_grid_options(parser: argparse.ArgumentParser, *, networks: str, ranks: str,
                     ranks_note: str, counts: str, counts_note: str) -> None:
    """--network, --ranks, --count and --elem-size, each a comma-separated list but the last;
    the defaults are comma-separated text, the notes what the help says after them."""
    parser.add_argument("--network", type=comma_list(str), default=networks.split(","),
                        help=f"networks, comma-separated (default {networks})")
    parser.add_argument("--ranks", type=comma_list(integer_in_range("ranks", 2, 1 << 16)),
                        default=[int(p) for p in ranks.split(",")],
                        help=f"numbers of ranks P, comma-separated (default {ranks}{ranks_note})")
    parser.add_argument("--count", type=comma_list(parse_count),
                        default=comma_list(parse_count)(counts),
                        help=f"elements per rank, comma-separated; K/M/G multiply by 1024 "
                             f"(default {counts}: {counts_note})")
    parser.add_argument("--elem-size", type=integer_in_range("element size", 1, 1 << 16),
                        default=4, help="bytes per element (default 4)")


def add_run_options(parser: argparse.ArgumentParser, *, seed_use: str,
                    max_operations_help: str) -> None:
    """--seed (what it seeds: `seed_use`), --max-operations and --json."""
    parser.add_argument("--seed", type=integer_in_range("seed", 0, 2**31 - 1), default=1,
                        help=f"for {seed_use} (default 1)")
    parser.add_argument("--max-operations", type=integer_in_range("max operations", 1, 1 << 62),
                        default=20_000_000, help=max_operations_help)
    parser.add_argument("--json", metavar="FILE", help="write every row here")


def progress_bar(console: Console) -> Progress:
    """A bar with the current cell's description, the cells done of all, and the time."""
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=console)


@dataclass
class Cell:
    """One point of a sweep as the simulator takes it: the network's model and tree for P
    ranks, the vector's bytes, delta (one transfer of it), the arrivals and the context."""
    model: SimModel
    topology: Topology | None
    nbytes: int
    delta: float
    arrivals: list[float]
    context: Context


def cell_of(network: Network, ranks: int, count: int, elem_size: int, pattern: str,
            delay_deltas: float, seed: int) -> Cell:
    """`pattern`'s arrivals (papcoll.sim.arrival_pattern) with the late ranks up to
    delay_deltas x delta late, and the context auto decides on: the tree and tau."""
    model, topology = network.model, network.topology(ranks)
    nbytes = count * elem_size
    delta = transfer_time(model, topology, nbytes)
    arrivals = arrival_pattern(pattern, ranks, delay_deltas * delta, seed)
    context = Context(parameters=Parameters(tree=topology), arrivals=arrivals,
                      tau=tau(model, ranks, count, elem_size))
    return Cell(model, topology, nbytes, delta, arrivals, context)


def markdown_head(columns: Sequence[str]) -> list[str]:
    """A markdown table's first two lines; a column whose name ends in ">" is numeric, set to
    the right (the mark is not shown)."""
    names = [name.removesuffix(">") for name in columns]
    rules = ["---:" if name.endswith(">") else "---" for name in columns]
    return ["| " + " | ".join(names) + " |", "|" + "|".join(rules) + "|"]
