#!/usr/bin/env python3
"""Reproducible training (docs/reproducible.md): the same data-parallel SGD run
with different all-reduce algorithms and the slow rank moved between runs, with and without
papcoll's reproducible mode, compared by the SHA-256 of the final weights.

Without the mode, ring, straggler and auto add the gradients in different groupings (and
auto and straggler change theirs with the arrivals), so the weights differ in their last
bits from run to run. In the mode every all-reduce gives the canonical order's bits, so
canonical_scatter, canonical_straggler and auto end with the same weights whichever rank
was slow. Runs examples/train_sgd.py (which launches mpiexec) once per mode and slow rank.

    python examples/reproducible_training.py --ranks 4 --epochs 1
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

TRAIN = Path(__file__).resolve().parent / "train_sgd.py"
ALGORITHMS = {False: "ring,straggler,auto", True: "canonical_scatter,canonical_straggler,auto"}


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=4, help="ranks (mpiexec)")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--delay-ms", type=int, default=10, help="the slow rank's delay")
    arguments = parser.parse_args()
    if arguments.ranks < 3 or arguments.epochs < 1 or arguments.delay_ms < 0:
        parser.error("--ranks must be at least 3 (two slow ranks to move between), "
                     "--epochs at least 1, --delay-ms at least 0")
    return arguments


def train(arguments: argparse.Namespace, reproducible: bool, slow: int,
          folder: Path) -> list[dict]:
    output = folder / f"{'on' if reproducible else 'off'}_{slow}.json"
    command = [sys.executable, str(TRAIN), "--ranks", str(arguments.ranks),
               "--algorithm", ALGORITHMS[reproducible], "--epochs", str(arguments.epochs),
               "--straggler", f"{slow}:{arguments.delay_ms}", "--json", str(output)]
    if reproducible:
        command.append("--reproducible")
    print("$ " + " ".join(command[1:]), flush=True)
    subprocess.run(command, check=True)
    return json.loads(output.read_text())["runs"]


def main() -> int:
    from rich.console import Console
    from rich.table import Table

    arguments = parse_arguments()
    console = Console(width=110)
    digests: dict[bool, set[str]] = {False: set(), True: set()}
    table = Table(title=f"Final weights, P = {arguments.ranks}, {arguments.epochs} epoch(s), "
                        f"one rank {arguments.delay_ms} ms slow")
    for column in ("reproducible mode", "slow rank", "algorithm", "weights (SHA-256)"):
        table.add_column(column)
    with tempfile.TemporaryDirectory() as folder:
        for reproducible in (False, True):
            for slow in (1, arguments.ranks - 1):  # the slow rank moves between runs
                for run in train(arguments, reproducible, slow, Path(folder)):
                    digests[reproducible].add(run["weights_digest"])
                    table.add_row("on" if reproducible else "off", str(slow),
                                  run["algorithm"], run["weights_digest"][:16])
    console.print(table)
    runs = 2 * len(ALGORITHMS[True].split(","))
    console.print(f"without the mode: {len(digests[False])} different final weights in "
                  f"{runs} runs", highlight=False)
    console.print(f"reproducible mode: {len(digests[True])} different final weights in "
                  f"{runs} runs", highlight=False)
    same = len(digests[True]) == 1
    console.print("Verdict: " + ("reproducible mode gives bitwise identical weights whatever "
                                 "the algorithm and the slow rank." if same else
                                 "FAILED: reproducible mode gave different weights."),
                  highlight=False)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
