"""libpapcoll_pmpi.so from Python: where it is, and its report (docs/pmpi.md).

The library gives unmodified MPI programs papcoll's all-reduce through the MPI profiling
interface: ``LD_PRELOAD=$(papcoll preload) mpiexec -n 4 ./app``. With ``PAPCOLL_REPORT=FILE``
world rank 0 writes at MPI_Finalize a JSON report per communicator and call site;
:func:`load_report` reads and checks it, :func:`report_rows` gives its table.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

# where the build puts the libraries (python/papcoll/_lib), as papcoll._core loads them
_LIB_DIR = Path(__file__).resolve().parent / "_lib"

REPORT_FORMAT = 1
# Every site entry has these (src/pmpi/report.c writes them).
SITE_FIELDS = ("communicator", "communicator_size", "freed", "site", "ranks_reporting",
               "calls", "papcoll_calls", "native_calls", "nonblocking_calls", "bytes_per_call",
               "seconds_inside",
               "seconds_per_call", "imbalance_seconds", "estimated_saving_seconds",
               "algorithms", "native_reasons", "probe_calls", "overruled_calls",
               "last_choice")


def preload_library_path() -> Path:
    """libpapcoll_pmpi.so of this installation ($PAPCOLL_PMPI_LIBRARY if set), for
    LD_PRELOAD. Raises FileNotFoundError when it was not built."""
    library = Path(os.environ.get("PAPCOLL_PMPI_LIBRARY", _LIB_DIR / "libpapcoll_pmpi.so"))
    if not library.exists():
        raise FileNotFoundError(
            2, "libpapcoll_pmpi.so is not built (`make build` in a checkout, or "
               "`pip install` papcoll with an MPI present)", str(library))
    return library


def load_report(path: str | Path) -> dict[str, Any]:
    """The report at `path`, checked: ValueError names what is missing or malformed."""
    report = json.loads(Path(path).read_text())
    if not isinstance(report, dict) or report.get("papcoll_report") != REPORT_FORMAT:
        raise ValueError(f"{path}: not a papcoll report (no \"papcoll_report\": "
                         f"{REPORT_FORMAT})")
    for key in ("complete", "ranks", "totals", "sites"):
        if key not in report:
            raise ValueError(f"{path}: the report has no \"{key}\"")
    for index, site in enumerate(report["sites"]):
        missing = [field for field in SITE_FIELDS if field not in site]
        if missing:
            raise ValueError(f"{path}: site {index} lacks {', '.join(missing)}")
    return report


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {calls}" for name, calls in
                     sorted(counts.items(), key=lambda item: -item[1])) or "-"


def report_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per (communicator, call site), busiest first: what the table shows."""
    rows = []
    for site in sorted(report["sites"], key=lambda entry: -entry["seconds_inside"]):
        rows.append({
            "communicator": site["communicator"] + (" (freed)" if site["freed"] else ""),
            "site": site["site"],
            "calls": site["calls"],
            "kib_per_call": site["bytes_per_call"] / 1024,
            "ms_per_call": site["seconds_per_call"] * 1e3,
            "imbalance_ms": site["imbalance_seconds"] * 1e3,
            "algorithms": _counts(site["algorithms"]),
            "native": _counts(site["native_reasons"]),
            "saving_ms": site["estimated_saving_seconds"] * 1e3,
            "probe_calls": site["probe_calls"],
            "overruled_calls": site["overruled_calls"],
            "closed_loop": _closed_loop(site["last_choice"]),
        })
    return rows


def _milliseconds(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.3f}"


def _closed_loop(choice: dict[str, Any] | None) -> str:
    """auto's last choice at a site: each side's time after the last arrival, predicted /
    measured in ms ("-": not measured yet), e.g. "straggler 0.12/0.90, native 0.40/0.10"."""
    if not choice or not choice["alternative"]:
        return "-"
    return (f"{choice['model']} {_milliseconds(choice['model_predicted_seconds'])}/"
            f"{_milliseconds(choice['model_observed_seconds'])}, {choice['alternative']} "
            f"{_milliseconds(choice['alternative_predicted_seconds'])}/"
            f"{_milliseconds(choice['alternative_observed_seconds'])}")
