"""The figures of auto's targets from the rows of bench/auto_grid.py: which grid
point met which target, the counts per setting, the plain summary lines and the markdown
tables of docs/benchmarks.md.

Kept apart from the measuring so that a saved run (auto_grid.py --from-json) gives the same
figures as the run itself, and so that tests can check the logic on hand-made rows with
known answers. Every number is a median over a row's timed calls, because one slow call on
a busy machine moves a mean but not a median: e-bar is the row's median_ms, the excess the
median over calls of (e-bar - e-bar_lo), with each call's e-bar_lo from the arrivals that
happened in it (as papcoll-bench computes it, bench/bench_timing.c).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

from papcoll.lab.bench import readable_bytes

Row = dict[str, Any]
Point = dict[str, Any]

# auto's targets (docs/benchmarks.md)
NEVER_SLOWER_RATIO = 1.03  # auto's e-bar against the best native variant's
RIGHT_CHOICE_RATIO = 1.05  # auto's e-bar against the best contender's
RIGHT_CHOICE_SHARE = 0.90  # of the points
# differences under these (ms) are noise, not a loss: a 2-core machine's scheduler, the
# testbed's shaped links
SHARED_MEMORY_FLOOR_MS = 0.020
TESTBED_FLOOR_MS = 0.100
# where auto can win: one or more late ranks, a vector worth splitting, a delay over delta
WIN_SMALLEST_BYTES = 64 << 10
WIN_SMALLEST_MULTIPLE = 3
WIN_RATIO = {"one-late": 0.3, "rand-late": 0.6}  # auto's excess / the least native excess
RECOVERY_CALLS = 8  # "learns fast": back within 5 % of the best within this many calls

MODES = ("balanced", "one-late", "rand-late")
SHOWN = ("straggler", "prr", "slt", "ring")  # the algorithms whose excess the tables show


def is_native(name: str) -> bool:
    """The MPI library's own all-reduce: its default choice or one of its variants."""
    return name == "native" or name.startswith("native:")


def floor_ms(setting: str) -> float:
    return SHARED_MEMORY_FLOOR_MS if setting == "shared memory" else TESTBED_FLOOR_MS


def lower_bound_ms(arrivals_ms: Sequence[float], p2p_ms: float) -> float:
    """One call's e-bar_lo: the mean wait for the last arrival, plus delta."""
    last = max(arrivals_ms)
    return sum(last - arrival for arrival in arrivals_ms) / len(arrivals_ms) + p2p_ms


def median_excess_ms(row: Row) -> float:
    """The median over the row's calls of e-bar - e-bar_lo; the row's mean excess where it
    has no per-call lists (a row written by hand)."""
    calls = zip(row.get("ebar_ms") or [], row.get("arrival_offsets_ms") or [])
    excess = [ebar - lower_bound_ms(arrivals, row["p2p_ms"]) for ebar, arrivals in calls]
    return statistics.median(excess) if excess else float(row["excess_ms"])


def close_enough(value: float, reference: float, ratio: float, floor: float) -> bool:
    """value is at most ratio x reference, or at most floor above it."""
    return value <= ratio * reference or value - reference <= floor


def delay_label(multiple: float) -> str:
    return f"{multiple:g} delta" if multiple else "0"


def point_label(point: Point) -> str:
    return (f"{readable_bytes(point['bytes'])} {point['mode']} "
            f"{delay_label(point['delay_multiple'])}")


def _point(setting: str, mode: str, size: int, multiple: float, here: dict[str, Row]) -> Point:
    ebar = {name: float(row["median_ms"]) for name, row in here.items()}
    excess = {name: median_excess_ms(row) for name, row in here.items()}
    natives = [name for name in here if is_native(name)]
    others = [name for name in here if name != "auto"]
    ours = [name for name in others if not is_native(name)]
    best_native = min(natives, key=ebar.__getitem__)
    best = min(others, key=ebar.__getitem__)
    best_ours = min(ours, key=ebar.__getitem__) if ours else None
    # "the best native's" excess: the least of any native variant's
    least_native_excess = min(excess[name] for name in natives)
    auto = ebar["auto"]
    floor = floor_ms(setting)
    can_win = size >= WIN_SMALLEST_BYTES and multiple >= WIN_SMALLEST_MULTIPLE
    win_ratio = WIN_RATIO.get(mode) if can_win else None
    excess_ratio = excess["auto"] / least_native_excess if least_native_excess > 0 else None
    return {
        "setting": setting, "mode": mode, "bytes": size, "delay_multiple": multiple,
        "delta_ms": here["auto"].get("delta_ms"), "ebar_ms": ebar, "excess_ms": excess,
        "best_native": best_native, "least_native_excess_ms": least_native_excess,
        "best": best, "best_papcoll": best_ours, "excess_ratio": excess_ratio,
        "auto_over_best_native": auto / ebar[best_native],
        "auto_over_best": auto / ebar[best],
        "auto_over_best_papcoll": auto / ebar[best_ours] if best_ours else None,
        "auto_chose": here["auto"].get("chosen") or {},
        "never_slower": close_enough(auto, ebar[best_native], NEVER_SLOWER_RATIO, floor),
        # the same against MPI_Allreduce itself, what a program calls where it has no auto
        "auto_over_mpi_allreduce": auto / ebar["native"] if "native" in ebar else None,
        "never_slower_than_mpi_allreduce": (close_enough(auto, ebar["native"],
                                                         NEVER_SLOWER_RATIO, floor)
                                            if "native" in ebar else None),
        "right_choice": close_enough(auto, ebar[best], RIGHT_CHOICE_RATIO, floor),
        "win_ratio_target": win_ratio,
        # None where the target does not apply, or no native variant had a positive
        # excess to be a share of (the bound's delta over the real transfer: the testbed)
        "wins": (excess_ratio <= win_ratio
                 if win_ratio is not None and excess_ratio is not None else None),
    }


def points(rows: Sequence[Row]) -> list[Point]:
    """One point per (setting, mode, size, delay multiple) of the grid, with its targets met;
    the rows need setting, grid_mode, bytes, delay_multiple, algorithm, median_ms and the
    excess (per call lists, or excess_ms), an auto and at least one native."""
    groups: dict[tuple[str, str, int, float], dict[str, Row]] = {}
    for row in rows:
        key = (row["setting"], row["grid_mode"], row["bytes"], row["delay_multiple"])
        groups.setdefault(key, {})[row["algorithm"]] = row
    order = sorted(groups, key=lambda key: (key[0], MODES.index(key[1]), key[2], key[3]))
    return [_point(*key, groups[key]) for key in order]


# what each figure's misses say besides the point: how far auto was from the target
_MISSED_BY = {
    "never_slower": lambda point: f"{point['auto_over_best_native']:.2f} x "
                                  f"{point['best_native']}",
    "right_choice": lambda point: f"{point['auto_over_best']:.2f} x {point['best']}",
    "wins": lambda point: f"ratio {point['excess_ratio']:.2f}",
    "never_slower_than_mpi_allreduce": lambda point: f"{point['auto_over_mpi_allreduce']:.2f} x",
}


def geometric_mean(values: Sequence[float]) -> float | None:
    return math.exp(sum(math.log(value) for value in values) / len(values)) if values else None


def _count(chosen: Sequence[Point], key: str) -> dict[str, Any]:
    met = sum(1 for point in chosen if point[key])
    return {"met": met, "total": len(chosen),
            "misses": [f"{point_label(point)} ({_MISSED_BY[key](point)})"
                       for point in chosen if not point[key]]}


def _window_calls(row: Row) -> int | None:
    """calls_to_recover_in_windows (auto_learning.py: medians over 8 calls), the figure's
    measure; rows written before it existed give the call-by-call one."""
    return row.get("calls_to_recover_in_windows", row["calls_to_recover"])


def learning_figure(recovery: Sequence[Row]) -> dict[str, Any]:
    """Figure 4 from bench/auto_learning.py's recovery table: the changes after which auto's
    median over 8 calls was within 5 % of the best's again within RECOVERY_CALLS calls (None:
    it never was)."""
    quick = [row for row in recovery if (calls := _window_calls(row)) is not None
             and calls <= RECOVERY_CALLS]
    return {"met": len(quick), "total": len(recovery),
            "misses": [f"{row['change']} ("
                       + ("never" if (calls := _window_calls(row)) is None
                          else f"{calls} calls") + ")"
                       for row in recovery if row not in quick]}


def figures(grid: Sequence[Point],
            recovery: dict[str, list[Row]] | None = None) -> dict[str, dict[str, Any]]:
    """The four figures per setting; `recovery`: auto_learning's table per setting, where
    it was measured."""
    out: dict[str, dict[str, Any]] = {}
    for setting in sorted({point["setting"] for point in grid}):
        here = [point for point in grid if point["setting"] == setting]
        right = _count(here, "right_choice")
        cells = [point for point in here if point["win_ratio_target"] is not None]
        judged = [point for point in cells if point["wins"] is not None]
        against_mpi = [point for point in here
                       if point["never_slower_than_mpi_allreduce"] is not None]
        out[setting] = {
            "never_slower": _count(here, "never_slower"),
            "never_slower_than_mpi_allreduce": _count(against_mpi,
                                                      "never_slower_than_mpi_allreduce"),
            # one number per comparison for the whole grid: auto's e-bar over the best
            # native variant's, and over MPI_Allreduce's (1: even)
            "geometric_mean_over_best_native": geometric_mean(
                [point["auto_over_best_native"] for point in here]),
            "geometric_mean_over_mpi_allreduce": geometric_mean(
                [point["auto_over_mpi_allreduce"] for point in against_mpi]),
            "right_choice": {**right, "share": right["met"] / len(here),
                             "target_share": RIGHT_CHOICE_SHARE},
            "wins": {**_count(judged, "wins"), "cells": len(cells),
                     "undefined": [point_label(point) for point in cells
                                   if point["wins"] is None]},
        }
        if recovery is not None and setting in recovery:
            out[setting]["learns_fast"] = learning_figure(recovery[setting])
    return out


def _misses(figure: dict[str, Any]) -> str:
    return "; misses: " + ", ".join(figure["misses"]) if figure["misses"] else ""


def summary_lines(all_figures: dict[str, dict[str, Any]]) -> list[str]:
    """The figures as plain lines, one per figure and setting, each naming its misses."""
    lines = []
    for setting, figure in all_figures.items():
        never, right, wins = figure["never_slower"], figure["right_choice"], figure["wins"]
        lines.append(f"{setting}: never slower {never['met']}/{never['total']} points "
                     f"(target all){_misses(never)}")
        against = figure["never_slower_than_mpi_allreduce"]
        mean_best, mean_mpi = (figure["geometric_mean_over_best_native"],
                               figure["geometric_mean_over_mpi_allreduce"])
        lines.append(f"{setting}: against MPI_Allreduce itself, never slower "
                     f"{against['met']}/{against['total']} points; auto's e-bar over the "
                     "best native variant's, geometric mean "
                     + (f"{mean_best:.3f}" if mean_best is not None else "-")
                     + ", over MPI_Allreduce's "
                     + (f"{mean_mpi:.3f}" if mean_mpi is not None else "-"))
        lines.append(f"{setting}: right choice {right['met']}/{right['total']} points = "
                     f"{100 * right['share']:.0f} % (target {100 * RIGHT_CHOICE_SHARE:.0f} %)"
                     f"{_misses(right)}")
        undefined = (f"; {len(wins['undefined'])} without a positive native excess: "
                     + ", ".join(wins["undefined"]) if wins["undefined"] else "")
        lines.append(f"{setting}: wins when it can {wins['met']}/{wins['total']} cells "
                     f"(target all){undefined}{_misses(wins)}")
        learning = figure.get("learns_fast")
        lines.append(f"{setting}: learns fast " + (
            f"{learning['met']}/{learning['total']} changes within {RECOVERY_CALLS} calls"
            f"{_misses(learning)}" if learning is not None else "not measured"))
    return lines


def _mark(met: bool | None) -> str:
    return "-" if met is None else ("yes" if met else "**no**")


def markdown(grid: Sequence[Point], setting: str, mode: str) -> str:
    """docs/benchmarks.md's table of one setting and mode: excess of auto and of the shown
    algorithms, the best native's, the ratios, what auto ran, and which target each point
    met."""
    here = [point for point in grid if point["setting"] == setting and point["mode"] == mode]
    shown = [name for name in SHOWN if any(name in point["ebar_ms"] for point in here)]
    lines = [f"#### {setting}, {mode}", "",
             "Excess over e-bar_lo in ms (medians over the timed calls); ratio = auto's excess "
             "/ the least excess of any native variant; auto/native and auto/papcoll = auto's "
             "e-bar over the best native variant's and over the best of papcoll's other "
             "algorithms'; never slower, right choice, wins: auto's targets (wins n/a: "
             "no native variant had a positive excess).", "",
             "| size | delay | auto | " + " | ".join(shown) + (" | " if shown else "")
             + "best native | ratio | auto/native | auto/papcoll | auto chose | "
             "never slower | right choice | wins |",
             "|---" * (11 + len(shown)) + "|"]
    for point in here:
        excess = point["excess_ms"]
        native = point["best_native"]
        ratio = point["excess_ratio"]
        papcoll = point["auto_over_best_papcoll"]
        chose = ", ".join(f"{name} {calls}" for name, calls in point["auto_chose"].items())
        cells = [readable_bytes(point["bytes"]), delay_label(point["delay_multiple"]),
                 f"{excess['auto']:.3f}", *(f"{excess[name]:.3f}" if name in excess else "-"
                                           for name in shown),
                 f"{native} {excess[native]:.3f}", "-" if ratio is None else f"{ratio:.2f}",
                 f"{point['auto_over_best_native']:.2f}",
                 "-" if papcoll is None else f"{papcoll:.2f}", chose,
                 _mark(point["never_slower"]), _mark(point["right_choice"]),
                 "n/a" if point["win_ratio_target"] is not None and point["wins"] is None
                 else _mark(point["wins"])]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def learning_markdown(setting: str, recovery: Sequence[Row]) -> str:
    lines = [f"#### {setting}, learns fast", "",
             "| change | calls to recover, medians of 8 calls | call by call (median of 3) |",
             "|---|---|---|"]
    for row in recovery:
        windows, calls = _window_calls(row), row["calls_to_recover"]
        lines.append(f"| {row['change']} | {'never' if windows is None else windows} | "
                     f"{'never' if calls is None else calls} |")
    return "\n".join(lines)
