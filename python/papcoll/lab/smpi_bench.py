"""The benchmark under SimGrid's SMPI (`papcoll bench --smpi NETWORK`): the same
papcoll-bench, options, rows and JSON as on real MPI, on a simulated network.

SMPI's own all-reduce algorithms cannot be chosen call by call (SMPI has no MPI_T): the
algorithm is the job's, set when smpirun starts (`--cfg=smpi/allreduce:NAME`). So each
`native:NAME` runs in a job of its own with SMPI's NAME as "native", and its rows are named
native:NAME; "native" alone is what the job's selector (mpich, ompi, default) chooses. Jobs
need not be interleaved as on a real machine: simulated time does not drift between runs.
Every row carries "smpi": the network, SimGrid's version and every setting of its job.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..network import Network
from .bench import BenchOptions, add_speedups
from .launcher import Launch
from .smpi_launcher import smpi_job

# Runs one job's options through a launch and returns its rows (the command line's progress
# bar around papcoll.lab.bench.run_benchmark).
JobRunner = Callable[[BenchOptions, Launch], list[dict[str, Any]]]


def smpi_jobs(algorithms: list[str]) -> list[tuple[str | None, list[str]]]:
    """(SMPI's all-reduce forced for the job or None, the job's algorithms): papcoll's and
    plain "native" in one job, then one job per native:NAME."""
    shared = [name for name in algorithms if not name.startswith("native:")]
    jobs: list[tuple[str | None, list[str]]] = [(None, shared)] if shared else []
    jobs += [(name.removeprefix("native:"), ["native"]) for name in algorithms
             if name.startswith("native:")]
    return jobs


def run_smpi_benchmark(options: BenchOptions, network: Network, selector: str,
                       run: JobRunner) -> list[dict[str, Any]]:
    """Every job of options.algorithms under SMPI on `network` (SMPI's collectives picked by
    `selector`), the rows merged and their time ratios taken against the baseline again."""
    rows: list[dict[str, Any]] = []
    for allreduce, algorithms in smpi_jobs(options.algorithms):
        with smpi_job(network, selector, allreduce) as job:
            job_rows = run(replace(options, algorithms=algorithms), job.command)
            record = job.record(options.ranks)
        for row in job_rows:
            if allreduce is not None:
                row["algorithm"] = f"native:{allreduce}"
            row["smpi"] = record
        rows += job_rows
    add_speedups(rows, options.baseline)
    return rows
