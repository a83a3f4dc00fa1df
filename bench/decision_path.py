"""What a decision that auto has not made before costs on the late rank's path, now that
the rank predicted to arrive first makes it and sends it (src/mpi/choice_sharing.c).

Runs itself under mpiexec: P ranks, auto with per-call predictions (EDGE), the last rank
predicted and made late by --late-ms. Each of --shapes vector sizes is called twice: the
first call of a shape is not decided yet (the decider simulates every candidate while it
waits, then sends the decision), the second finds it kept. From papcoll_choice of every
rank: path_seconds (the rank's own time in auto's path before the algorithm runs: monitor,
decision, plan) and decided_by. Before this change every rank simulated for itself, so the
late rank's path on a new shape was the decider's path; the table sets the two side by
side, with the path of a kept decision.

    .venv/bin/python bench/decision_path.py --ranks 4,8,16 --json docs/data/decision_path.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from statistics import median
from typing import Any

WORKER = "PAPCOLL_DECISION_PATH_WORKER"


def worker(shapes: int, late_ms: float) -> None:
    import numpy as np
    import papcoll
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    late = size - 1
    rows: list[dict[str, Any]] = []
    with papcoll.Communicator(comm, "auto", papcoll.Config(arrival_source="edge")) as pc:
        counts = [(1 << 16) + 4096 * k for k in range(shapes)]
        for count in counts * 2:
            data = np.ones(count, dtype=np.float32)
            out = np.empty_like(data)
            comm.Barrier()
            pc.compute_begin()
            pc.predict_arrival(late_ms / 1e3 if rank == late else 0.0)
            if rank == late:
                time.sleep(late_ms / 1e3)
            pc.allreduce(data, out)
            choice = pc.last_choice()
            paths = comm.gather(choice.path_seconds, root=0)
            if rank == 0:
                decider = choice.decided_by
                rows.append({"ranks": size, "count": count, "decided_by": decider,
                             "algorithm": choice.algorithm,
                             "decider_path_ms": paths[decider] * 1e3 if decider >= 0 else None,
                             "late_path_ms": paths[late] * 1e3})
    if rank == 0:
        print(json.dumps(rows))


def measure(ranks: int, shapes: int, late_ms: float, timeout: float) -> list[dict[str, Any]]:
    from papcoll.lab.launcher import mpiexec_command

    argv, environment = mpiexec_command(ranks, [sys.executable, __file__, "--shapes",
                                                str(shapes), "--late-ms", f"{late_ms:g}"])
    environment[WORKER] = "1"
    result = subprocess.run(argv, env=environment, capture_output=True, text=True,
                            timeout=timeout, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"P = {ranks} failed:\n{result.stdout[-2000:]}{result.stderr[-2000:]}")
    rows: list[dict[str, Any]] = json.loads(result.stdout.strip().splitlines()[-1])
    return rows


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    new = [row for row in rows if row["decided_by"] >= 0]
    kept = [row for row in rows if row["decided_by"] < 0]
    return {"ranks": rows[0]["ranks"], "new_shapes": len(new), "kept_calls": len(kept),
            "decider_path_ms": median(row["decider_path_ms"] for row in new) if new else None,
            "late_path_new_ms": median(row["late_path_ms"] for row in new) if new else None,
            "late_path_kept_ms": median(row["late_path_ms"] for row in kept) if kept else None,
            "deciders": sorted({row["decided_by"] for row in new})}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", "-P", default="4,8",
                        help="comma-separated process counts (default 4,8)")
    parser.add_argument("--shapes", type=int, default=6, help="vector sizes (default 6)")
    parser.add_argument("--late-ms", type=float, default=50.0,
                        help="how late the last rank is (default 50)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per run")
    parser.add_argument("--json", default=None, metavar="FILE")
    arguments = parser.parse_args(argv)
    if os.environ.get(WORKER):
        worker(arguments.shapes, arguments.late_ms)
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table(title="auto's path before the algorithm runs, ms (medians)")
    for column in ("P", "new shapes", "decider (simulates)", "late rank, new shape",
                   "late rank, kept decision", "decided by"):
        table.add_column(column)
    results = []
    for ranks in (int(text) for text in arguments.ranks.split(",")):
        rows = measure(ranks, arguments.shapes, arguments.late_ms, arguments.timeout)
        entry = summary(rows)
        results.append({**entry, "rows": rows})

        def shown(value: float | None) -> str:
            return "-" if value is None else f"{value:.3f}"

        table.add_row(str(ranks), str(entry["new_shapes"]), shown(entry["decider_path_ms"]),
                      shown(entry["late_path_new_ms"]), shown(entry["late_path_kept_ms"]),
                      ", ".join(map(str, entry["deciders"])))
    Console(width=None if sys.stdout.isatty() else 150).print(table)
    if arguments.json:
        with open(arguments.json, "w") as file:
            json.dump({"late_ms": arguments.late_ms, "results": results}, file, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
