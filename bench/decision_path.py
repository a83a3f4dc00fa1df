"""What a decision that auto has not made before costs on the late rank's path, now that
the rank predicted to arrive first makes it and sends it (src/mpi/choice_sharing.c).

Runs itself under mpiexec: P ranks, auto with per-call predictions (EDGE), the last rank
predicted and made late by --late-ms. Each of --shapes vector sizes is called twice: the
first call of a shape is not decided yet (the decider simulates every candidate while it
waits, then sends the decision), the second finds it kept. From papcoll_choice of every
rank: path_seconds (the rank's own time in auto's path before the algorithm runs: monitor,
decision, plan), decision_seconds (its time on the decision alone) and decided_by. Before
this change every rank simulated for itself, so the late rank's decision on a new shape
took what the decider's takes; the table sets the two side by side, with the late rank's
whole path. Keep --shapes at most 8: the plan cache keeps 8 plans, and beyond that every
call builds its schedule again.

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
            # every on-time rank predicts the same moment: predictions relative to each
            # rank's own "now" scatter by more than a class where ranks share cores, and a
            # new class profile is a new decision
            moment = comm.bcast(time.monotonic() + 0.05, root=0)
            pc.compute_begin()
            ahead = max(0.0, moment - time.monotonic())
            pc.predict_arrival(ahead + (late_ms / 1e3 if rank == late else 0.0))
            time.sleep(ahead + (late_ms / 1e3 if rank == late else 0.0))
            pc.allreduce(data, out)
            choice = pc.last_choice()
            times = comm.gather((choice.path_seconds, choice.decision_seconds), root=0)
            if rank == 0:
                decider = choice.decided_by
                rows.append({"ranks": size, "count": count, "decided_by": decider,
                             "algorithm": choice.algorithm,
                             "decider_decision_ms": times[decider][1] * 1e3
                             if decider >= 0 else None,
                             "late_decision_ms": times[late][1] * 1e3,
                             "late_path_ms": times[late][0] * 1e3})
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

    def middle(of: list[dict[str, Any]], key: str) -> float | None:
        return median(row[key] for row in of) if of else None

    return {"ranks": rows[0]["ranks"], "new_shapes": len(new), "kept_calls": len(kept),
            "decider_decision_ms": middle(new, "decider_decision_ms"),
            "late_decision_new_ms": middle(new, "late_decision_ms"),
            "late_decision_kept_ms": middle(kept, "late_decision_ms"),
            "late_path_new_ms": middle(new, "late_path_ms"),
            "late_path_kept_ms": middle(kept, "late_path_ms"),
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

    table = Table(title="auto's decision, and the late rank's whole path before the "
                        "algorithm runs (monitor, decision, plan), ms (medians)")
    for column in ("P", "new shapes", "decision: decider (simulates)",
                   "decision: late rank, new shape", "decision: late rank, kept",
                   "path: late rank, new shape", "path: late rank, kept", "decided by"):
        table.add_column(column)
    results = []
    for ranks in (int(text) for text in arguments.ranks.split(",")):
        rows = measure(ranks, arguments.shapes, arguments.late_ms, arguments.timeout)
        entry = summary(rows)
        results.append({**entry, "rows": rows})

        def shown(value: float | None) -> str:
            return "-" if value is None else f"{value:.3f}"

        table.add_row(str(ranks), str(entry["new_shapes"]),
                      *(shown(entry[key]) for key in (
                          "decider_decision_ms", "late_decision_new_ms",
                          "late_decision_kept_ms", "late_path_new_ms", "late_path_kept_ms")),
                      ", ".join(map(str, entry["deciders"])))
    Console(width=None if sys.stdout.isatty() else 150).print(table)
    if arguments.json:
        with open(arguments.json, "w") as file:
            json.dump({"late_ms": arguments.late_ms, "results": results}, file, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
