"""libpapcoll_pmpi.so from Python: where it is, and its report (docs/pmpi.md).

The library gives unmodified MPI programs papcoll's all-reduce through the MPI profiling
interface: ``LD_PRELOAD=$(papcoll preload) mpiexec -n 4 ./app``. With ``PAPCOLL_REPORT=FILE``
world rank 0 writes at MPI_Finalize a JSON report per communicator and call site;
:func:`load_report` reads and checks it, :func:`report_rows` gives its table.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from .checks import INT64_MAX, read_small_file

# where the build puts the libraries (python/papcoll/_lib), as papcoll._core loads them
_LIB_DIR = Path(__file__).resolve().parent / "_lib"

REPORT_FORMAT = 1
# Every site entry has these (src/pmpi/report.c writes them).
NODE_FIELDS = ("ranks", "cores", "oversubscribed", "native_tuning")
SITE_FIELDS = ("communicator", "communicator_size", "freed", "site", "ranks_reporting",
               "calls", "papcoll_calls", "native_calls", "nonblocking_calls", "bytes_per_call",
               "seconds_inside",
               "seconds_per_call", "imbalance_seconds", "estimated_saving_seconds",
               "algorithms", "native_reasons", "probe_calls", "overruled_calls",
               "last_choice")
TOTALS_FIELDS = ("calls", "papcoll_calls", "native_calls", "seconds_inside",
                 "estimated_saving_seconds", "native_reasons")
# What the program called at a site ("call"; reports written before the drop-in named it
# lack it): src/pmpi/statistics.c's call_kind_names. "persistent": MPI_Allreduce_init and
# each MPI_Start of it.
CALL_KINDS = ("MPI_Allreduce", "MPI_Iallreduce", "persistent")
# a site's "last_choice", where not null: the two sides of auto's last choice and their times
CHOICE_FIELDS = ("model", "alternative", "model_predicted_seconds", "model_observed_seconds",
                 "alternative_predicted_seconds", "alternative_observed_seconds")
# The largest file `papcoll report` reads, some 700,000 call sites: a larger one (/dev/zero,
# a wrong path) is refused before it fills memory.
MOST_REPORT_BYTES = 512 << 20
# A JSON integer of more digits is beyond a float (1.8e308), so beyond any number a report
# holds; refused before int() refuses it with Python's own limit (4300 digits) as the reason.
_MOST_INTEGER_DIGITS = 309


def preload_library_path() -> Path:
    """libpapcoll_pmpi.so of this installation, or the file $PAPCOLL_PMPI_LIBRARY names, for
    LD_PRELOAD. Raises FileNotFoundError when it was not built or names no file."""
    # empty is unset, as `PAPCOLL_PMPI_LIBRARY= cmd` means in a shell: Path("") is ".",
    # which exists, and was printed as the library
    chosen = os.environ.get("PAPCOLL_PMPI_LIBRARY")
    if chosen:
        if not Path(chosen).is_file():
            raise FileNotFoundError(2, "PAPCOLL_PMPI_LIBRARY names no file", chosen)
        return Path(chosen)
    library = _LIB_DIR / "libpapcoll_pmpi.so"
    if not library.exists():
        raise FileNotFoundError(
            2, "libpapcoll_pmpi.so is not built (`make build` in a checkout, or "
               "`pip install` papcoll with an MPI present)", str(library))
    return library


class ReportError(ValueError):
    """A file that is not a report libpapcoll_pmpi.so writes. The message names the file
    and the first field that is missing or malformed; `papcoll report` prints it as one
    line and exits 2."""


def load_report(path: str | Path) -> dict[str, Any]:
    """The report at `path`, checked by check_report: ReportError names the file and what
    is missing or malformed."""
    raw = read_small_file(path, MOST_REPORT_BYTES, f"report {path}", ReportError)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ReportError(f"{path}: not UTF-8 text (byte {error.start})") from None
    try:
        # NaN and Infinity are not JSON (Python's json reads them unless told not to), and
        # an integer too long for int() raises an obscure ValueError: both refused here
        report = json.loads(text, parse_constant=_refuse_constant, parse_int=_integer)
        check_report(report)
    except json.JSONDecodeError as error:
        raise ReportError(f"{path}: not valid JSON: {error}") from None
    except RecursionError:
        raise ReportError(f"{path}: not valid JSON: nested too deeply") from None
    except ValueError as error:  # what check_report, _integer and _refuse_constant raise
        raise ReportError(f"{path}: {error}") from None
    return report


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"not valid JSON: {name} is not a number JSON allows")


def _integer(digits: str) -> int:
    if len(digits.lstrip("-")) > _MOST_INTEGER_DIGITS:
        raise ValueError(f"not a report: an integer of {len(digits.lstrip('-'))} digits, "
                         "beyond any number a report holds")
    return int(digits)


def check_report(report: Any) -> None:
    """Raises ValueError, naming the field, where `report` is not what src/pmpi/report.c
    writes: every field that the table and its rows read has its type (text, true or
    false, an object of counts); counts are whole numbers from 0 to 2^63-1; seconds and
    bytes are finite numbers, >= 0 but for the model's estimated saving (negative where the
    model expected papcoll to lose) and auto's last choice's times (differences of times).
    Linear in the size of the report."""
    version = report.get("papcoll_report") if isinstance(report, dict) else None
    if not (_is_whole(version) and version == REPORT_FORMAT):  # true == 1 in Python
        raise ValueError(f"not a papcoll report (no \"papcoll_report\": {REPORT_FORMAT})")
    for key in ("complete", "ranks", "totals", "sites"):
        if key not in report:
            raise ValueError(f"the report has no \"{key}\"")
    _boolean(report["complete"], "complete")
    _count(report["ranks"], "ranks")
    totals = _object(report["totals"], "totals", TOTALS_FIELDS)
    for name in ("calls", "papcoll_calls", "native_calls"):
        _count(totals[name], f"totals.{name}")
    _amount(totals["seconds_inside"], "totals.seconds_inside")
    _amount(totals["estimated_saving_seconds"], "totals.estimated_saving_seconds",
            signed=True)
    _counts_by_name(totals["native_reasons"], "totals.native_reasons")
    if "node" in report:  # where rank 0 ran (reports before it lack it)
        node = _object(report["node"], "node", NODE_FIELDS)
        _count(node["ranks"], "node.ranks")
        _count(node["cores"], "node.cores")
        _boolean(node["oversubscribed"], "node.oversubscribed")
        _text(node["native_tuning"], "node.native_tuning")
    if not isinstance(report["sites"], list):
        raise ValueError(f"sites must be a list, not {_shown(report['sites'])}")
    for index, site in enumerate(report["sites"]):
        _check_site(site, f"sites[{index}]")


def _check_site(site: Any, where: str) -> None:
    _object(site, where, SITE_FIELDS)
    for name in ("communicator", "site"):
        _text(site[name], f"{where}.{name}")
    _boolean(site["freed"], f"{where}.freed")
    if "call" in site and site["call"] not in CALL_KINDS:
        raise ValueError(f"{where}.call must be one of {', '.join(CALL_KINDS)}, not "
                         f"{_shown(site['call'])}")
    for name in ("communicator_size", "ranks_reporting", "calls", "papcoll_calls",
                 "native_calls", "nonblocking_calls", "probe_calls", "overruled_calls"):
        _count(site[name], f"{where}.{name}")
    for name in ("bytes_per_call", "seconds_inside", "seconds_per_call", "imbalance_seconds"):
        _amount(site[name], f"{where}.{name}")
    _amount(site["estimated_saving_seconds"], f"{where}.estimated_saving_seconds",
            signed=True)
    for name in ("algorithms", "native_reasons"):
        _counts_by_name(site[name], f"{where}.{name}")
    # the shape of the calls papcoll decided (papcoll.rules); absent from older reports
    decided = site.get("decided")
    if decided is not None:
        _object(decided, f"{where}.decided", ("bytes", "datatype"))
        extent = decided["bytes"]
        if not isinstance(extent, list) or len(extent) != 2:
            raise ValueError(f"{where}.decided.bytes must be [least, most], not "
                             f"{_shown(extent)}")
        for bound in extent:
            _count(bound, f"{where}.decided.bytes")
        if extent[0] > extent[1]:
            raise ValueError(f"{where}.decided.bytes: {extent[0]} > {extent[1]}")
        if decided["datatype"] is not None:
            _text(decided["datatype"], f"{where}.decided.datatype")
    if site["last_choice"] is not None:
        choice = _object(site["last_choice"], f"{where}.last_choice", CHOICE_FIELDS)
        for name in ("model", "alternative"):
            _text(choice[name], f"{where}.last_choice.{name}")
        # a time after the last arrival, null where not known: a difference of times (the
        # predicted ones the model's time less its predicted wait), so either sign
        for name in CHOICE_FIELDS[2:]:
            if choice[name] is not None:
                _amount(choice[name], f"{where}.last_choice.{name}", signed=True)


def _shown(value: Any) -> str:
    """`value` for a one-line message, shortened: a field may hold megabytes."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _is_whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _object(value: Any, where: str, fields: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"{where} must be an object, not {_shown(value)}")
    missing = [field for field in fields if field not in value]
    if missing:
        raise ValueError(f"{where} lacks {', '.join(missing)}")
    return value


def _text(value: Any, where: str) -> None:
    if not isinstance(value, str):
        raise ValueError(f"{where} must be text, not {_shown(value)}")


def _boolean(value: Any, where: str) -> None:
    # "no" or 0 would read as true or false by Python's truth; the writer writes true/false
    if not isinstance(value, bool):
        raise ValueError(f"{where} must be true or false, not {_shown(value)}")


def _count(value: Any, where: str) -> None:
    if not _is_whole(value) or not 0 <= value <= INT64_MAX:
        raise ValueError(f"{where} must be a whole number from 0 to 2^63-1, not "
                         f"{_shown(value)}")


def _amount(value: Any, where: str, signed: bool = False) -> None:
    """Seconds or bytes: a finite number (>= 0 unless `signed`) that stays finite in the
    units the table shows (milliseconds: x 1e3)."""
    shown_units: float | None = None
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            shown_units = float(value) * 1e3
        except OverflowError:  # an integer beyond a float's range
            shown_units = None
    if shown_units is None or not math.isfinite(shown_units) or (value < 0 and not signed):
        raise ValueError(f"{where} must be a finite number{'' if signed else ' >= 0'}, not "
                         f"{_shown(value)}")


def _counts_by_name(value: Any, where: str) -> None:
    """An object of counts, such as {"ring": 12} (algorithms) or {"op": 3} (why native)."""
    if not isinstance(value, dict):
        raise ValueError(f"{where} must be an object of counts, not {_shown(value)}")
    for name, count in value.items():
        _count(count, f"{where}[{_shown(name)}]")


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {calls}" for name, calls in
                     sorted(counts.items(), key=lambda item: -item[1])) or "-"


# what the report's note calls clearly slower: a median 15 % above the other's. The closed
# loop itself switches at 5 % (src/mpi/native_feedback.c's switch_share) where its rank test
# also tells the times apart, with samples_to_compare (3) measurements on each side at the
# decision's lateness level; the note is for gaps a reader should not miss
_CLEARLY_FASTER = 1.15


def report_contradictions(report: dict[str, Any]) -> list[str]:
    """The counts of a report that cannot all be true, one line each: a
    checked report has the right types, but a damaged or hand-edited one can still claim
    more non-blocking calls, or more calls per algorithm, than its site had calls. Printed
    beside the table, so that nobody reads such a table as a measurement; [] for none."""
    problems = []
    for index, site in enumerate(report["sites"]):
        where = f"sites[{index}] ({site['site']})"
        calls, decided = site["calls"], site["papcoll_calls"]
        if site["nonblocking_calls"] > calls:
            problems.append(f"{where}: {site['nonblocking_calls']} non-blocking or persistent "
                            f"calls of {calls} calls")
        elif site.get("call") == "MPI_Allreduce" and site["nonblocking_calls"] > 0:
            problems.append(f"{where}: MPI_Allreduce with {site['nonblocking_calls']} "
                            "non-blocking calls")
        elif site.get("call") in ("MPI_Iallreduce", "persistent") and \
                site["nonblocking_calls"] != calls:
            problems.append(f"{where}: {site['call']} with {site['nonblocking_calls']} of its "
                            f"{calls} calls non-blocking")
        if decided + site["native_calls"] != calls:
            problems.append(f"{where}: papcoll decided {decided} and passed "
                            f"{site['native_calls']} to MPI, not the {calls} calls")
        ran = sum(site["algorithms"].values())
        if ran > decided:
            problems.append(f"{where}: its algorithms ran {ran} calls of the {decided} "
                            "papcoll decided")
        if sum(site["native_reasons"].values()) != site["native_calls"]:
            problems.append(f"{where}: native reasons count {sum(site['native_reasons'].values())}"
                            f" calls, not its {site['native_calls']} passed to MPI")
        if site["probe_calls"] + site["overruled_calls"] > decided:
            problems.append(f"{where}: {site['probe_calls']} probes and "
                            f"{site['overruled_calls']} overruled of the {decided} calls "
                            "papcoll decided")
    totals = report["totals"]
    if totals["papcoll_calls"] + totals["native_calls"] != totals["calls"]:
        problems.append(f"totals: papcoll decided {totals['papcoll_calls']} and passed "
                        f"{totals['native_calls']} to MPI, not the {totals['calls']} calls")
    if report["sites"] and sum(site["calls"] for site in report["sites"]) != totals["calls"]:
        problems.append(f"totals: {totals['calls']} calls, but the sites add up to "
                        f"{sum(site['calls'] for site in report['sites'])}")
    return problems


def closed_loop_note(site: dict[str, Any]) -> str | None:
    """Where auto's last decision at a site measured the side it did not run as clearly
    faster, why it may still run the slower (None otherwise): the measurements are per lateness
    level, and a side is overruled only with 3 of each there; the medians shown may rest on
    one probe. Read with the algorithms' counts, such a row looked like auto ignoring a
    1588 ms against 9.6 ms measurement."""
    choice = site["last_choice"]
    if not choice or not choice["alternative"]:
        return None
    model, alternative = choice["model_observed_seconds"], choice["alternative_observed_seconds"]
    if model is None or alternative is None or min(model, alternative) <= 0:
        return None
    sides = {choice["model"]: model, choice["alternative"]: alternative}
    slower, faster = sorted(sides, key=sides.__getitem__, reverse=True)
    if sides[slower] <= _CLEARLY_FASTER * sides[faster] or not site["algorithms"]:
        return None
    # what ran most at the site ("native" stands for every variant of MPI's own)
    most = max(site["algorithms"], key=site["algorithms"].__getitem__)
    if most.split(":")[0] != slower.split(":")[0]:
        return None
    running, other, running_ms, other_ms = slower, faster, sides[slower], sides[faster]
    return (f"{site['site']}: at auto's last decision {other} measured "
            f"{other_ms * 1e3:.3f} ms against {running} {running_ms * 1e3:.3f} ms (medians "
            f"from the last arrival), yet {running} ran most calls "
            f"({site['algorithms'][most]} of {site['calls']}): auto switches only "
            "once each side has 3 measurements at that lateness level, and each level has "
            "its own (docs/pmpi.md, the report)")


def report_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per (communicator, call site, call kind), busiest first: what the table
    shows. "algorithms" are the calls papcoll decided, by what ran (auto's choice of MPI's
    own all-reduce as "native"); "native" the calls passed straight to MPI, by why."""
    rows = []
    for site in sorted(report["sites"], key=lambda entry: -entry["seconds_inside"]):
        rows.append({
            "communicator": site["communicator"] + (" (freed)" if site["freed"] else ""),
            "site": site["site"],
            "call": site.get("call", "-"),
            "calls": site["calls"],
            "nonblocking_calls": site["nonblocking_calls"],
            "kib_per_call": site["bytes_per_call"] / 1024,
            "ms_per_call": site["seconds_per_call"] * 1e3,
            "imbalance_ms": site["imbalance_seconds"] * 1e3,
            "algorithms": _counts(site["algorithms"]),
            "native": _counts(site["native_reasons"]),
            "saving_ms": site["estimated_saving_seconds"] * 1e3,
            "probe_calls": site["probe_calls"],
            "overruled_calls": site["overruled_calls"],
            "closed_loop": _closed_loop(site["last_choice"]),
            "closed_loop_note": closed_loop_note(site),
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
