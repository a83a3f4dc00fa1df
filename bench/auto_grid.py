"""auto's grid in one command: is `auto` never slower than the MPI library, right in its
choice, ahead when a process is late, and quick to learn a changed pattern?

Why one command: the four figures of auto's targets must be re-checkable by anyone
from one run, and docs/benchmarks.md's tables and plots regenerated from the same rows.

For each vector size (floats, bytes per rank), a balanced papcoll-bench job measures delta
(the point-to-point time of the vector, the bench's p2p_ms) and the balanced e-bars; then,
per late mode, a job puts the delays at 1, 3, 10, 30 and 100 x delta (one-late: rank 1 late
by that much; rand-late: every rank late by a uniform share of it). Every job interleaves,
iteration by iteration, auto, every papcoll algorithm that applies to a flat communicator
and a commutative sum of floats (from the registry's declared properties), the MPI
library's default all-reduce and each of its variants. The figures (bench/auto_grid_figures
.py) use medians over the timed calls. --learning adds figure 4 from bench/auto_learning.py.

    .venv/bin/python bench/auto_grid.py --json docs/data/auto_grid_shm.json \\
        --plot-folder docs --markdown docs/data/auto_grid_shm.md --learning
    .venv/bin/python bench/auto_grid.py --testbed ethernet-1g \\
        --json docs/data/auto_grid_testbed.json --plot-folder docs \\
        --markdown docs/data/auto_grid_testbed.md --learning
    .venv/bin/python bench/auto_grid.py --from-json docs/data/auto_grid_shm.json \\
        docs/data/auto_grid_testbed.json --markdown docs/data/auto_grid.md

--testbed needs root. --from-json measures nothing: it recomputes the figures and tables.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

from auto_grid_figures import (
    MODES,
    SHOWN,
    Point,
    Row,
    figures,
    is_native,
    learning_markdown,
    markdown,
    points,
    summary_lines,
)
from papcoll.cli.options import (
    MOST_COMPUTE_MS,
    Parser,
    integer_in_range,
    milliseconds,
    parse_sizes,
)
from papcoll.core import algorithms
from papcoll.lab.bench import NATIVE_CONTENDERS, BenchOptions, readable_bytes, run_benchmark
from papcoll.lab.launcher import mpi_flavor
from papcoll.lab.testbed import CpuMeter, temporary
from papcoll.network import NETWORKS, load_network
from papcoll.topology import NetworkError
from rich.console import Console
from rich.table import Table

DELAY_MULTIPLES = (1, 3, 10, 30, 100)  # x delta, in the late modes; balanced is delay 0
SHARED_MEMORY_SIZES = "1K,16K,64K,1M,4M,16M"
TESTBED_SIZES = "1K,16K,64K,1M,4M"  # 16 MiB at 100 delta is 13 s a call there
LEARNING_SIZE = 1 << 20


def registry_contenders() -> list[str]:
    """auto, every papcoll algorithm that runs on a flat communicator with a commutative
    sum of floats (the registry's properties: no groups needed, a whole all-reduce rather
    than a reduce-scatter; commutative-only ones qualify, sum is commutative), then the MPI
    library's default and each of its variants."""
    ours = [info.name for info in algorithms()
            if not info.needs_groups and not info.reduce_scatter]
    return ["auto", *ours, *NATIVE_CONTENDERS[mpi_flavor()]]


def chosen_contenders(wanted: str | None) -> list[str]:
    """The registry's contenders, or those of them `wanted` names (a comma list that keeps
    auto and a native one, which the figures compare)."""
    every = registry_contenders()
    if wanted is None:
        return every
    names = [name.strip() for name in wanted.split(",") if name.strip()]
    unknown = [name for name in names if name not in every]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"not a contender here: {', '.join(unknown)} (the contenders: {', '.join(every)})")
    if "auto" not in names or not any(is_native(name) for name in names):
        raise argparse.ArgumentTypeError("--algorithms must keep auto and a native one")
    return [name for name in every if name in names]  # the registry's order


def setting_of(testbed: str | None) -> str:
    return f"testbed {testbed}" if testbed else "shared memory"


def _job(options: BenchOptions, testbed: str | None) -> list[Row]:
    """One papcoll-bench job, in shared memory or on a testbed made for it, with how busy
    the cores were (a testbed's timings measure the network only while they have time)."""
    started = time.monotonic()
    if testbed is None:
        with CpuMeter() as cpu:
            rows = run_benchmark(options)
    else:
        with temporary(testbed, options.ranks) as bed, CpuMeter() as cpu:
            rows = run_benchmark(options, launch=bed.mpiexec_command,
                                 network=load_network(testbed))
    for row in rows:
        row["cpu_busy_percent"] = cpu.busy_percent
        row["job_seconds"] = time.monotonic() - started
    return rows


def measure_size(size: int, arguments: argparse.Namespace,
                 contenders: list[str]) -> list[Row]:
    """The balanced job (delta, and the balanced points), then one delayed job per late
    mode, for one size; every row tagged with its setting, grid mode, delta and multiple."""
    setting = setting_of(arguments.testbed)

    def job(mode: str, multiples: tuple[int, ...], delta_ms: float) -> list[Row]:
        delays = {float(f"{multiple * delta_ms:g}"): multiple for multiple in multiples}
        rows = _job(BenchOptions(
            ranks=arguments.ranks, algorithms=contenders, counts=[max(1, size // 4)],
            mode="one-late" if mode == "balanced" else mode, max_delays_ms=list(delays),
            iterations=arguments.iterations, warmup=arguments.warmup,
            compute_ms=arguments.compute_ms, baseline="native", timeout=arguments.timeout),
            arguments.testbed)
        for row in rows:
            row.update(setting=setting, grid_mode=mode, delta_ms=delta_ms,
                       delay_multiple=delays[row["max_delay_ms"]])
        print(f"measured {readable_bytes(size)} {mode} in {rows[0]['job_seconds']:.1f} s",
              file=sys.stderr)
        return rows

    balanced = job("balanced", (0,), 0.0)
    delta_ms = min(row["p2p_ms"] for row in balanced)
    if delta_ms <= 0:
        raise RuntimeError(f"papcoll-bench measured delta {delta_ms} ms at {size} bytes")
    for row in balanced:
        row["delta_ms"] = delta_ms
    late = [job(mode, DELAY_MULTIPLES, delta_ms) for mode in arguments.modes
            if mode != "balanced"]
    # the balanced job runs for delta also when the balanced points are not asked for
    kept = balanced if "balanced" in arguments.modes else []
    return kept + [row for rows in late for row in rows]


def _learning_module(without: str) -> Any:
    """bench/auto_learning.py (figure 4), or None where it is absent (saying so, and what
    happens `without` it)."""
    try:
        import auto_learning
    except ModuleNotFoundError as error:
        if error.name != "auto_learning":
            raise
        print(f"learns fast: bench/auto_learning.py is absent, {without}", file=sys.stderr)
        return None
    return auto_learning


def measure_learning(arguments: argparse.Namespace) -> dict[str, Any] | None:
    module = _learning_module("figure 4 skipped")
    if module is None:
        return None
    rows = module.measure_learning(arguments.ranks, arguments.testbed, arguments.learning_size)
    return {"setting": setting_of(arguments.testbed), "size_bytes": arguments.learning_size,
            "rows": rows, "recovery": module.recovery_table(rows)}


def recovery_by_setting(learning: list[dict[str, Any]]) -> dict[str, list[Row]]:
    """Each setting's calls-to-recover table: recomputed from its rows where
    bench/auto_learning.py is here, else as saved."""
    module = _learning_module("its tables as saved") if learning else None
    return {run["setting"]: (module.recovery_table(run["rows"]) if module is not None
                             else run["recovery"]) for run in learning}


def print_figures(all_figures: dict[str, dict[str, Any]], console: Console) -> None:
    table = Table(title="auto against its targets (medians over the timed calls)")
    for column in ("setting", "figure", "met", "of", "target", "misses"):
        table.add_column(column, overflow="fold")
    names = {"never_slower": "never slower", "right_choice": "right choice",
             "wins": "wins when it can", "learns_fast": "learns fast"}
    for setting, figure in all_figures.items():
        for key, name in names.items():
            if key not in figure:
                table.add_row(setting, name, "-", "-", "not measured", "")
                continue
            entry = figure[key]
            target = (f"{100 * entry['target_share']:.0f} %" if "target_share" in entry
                      else "all")
            table.add_row(setting, name, str(entry["met"]), str(entry["total"]), target,
                          ", ".join(entry["misses"]))
    console.print(table)
    for line in summary_lines(all_figures):
        print(line)


def plot(grid: list[Point], folder: Path) -> list[Path]:
    """Per setting and late mode, one PNG: excess against delay, a panel per size, with
    auto, the shown algorithms, the best of papcoll's others and the best native."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for setting in sorted({point["setting"] for point in grid}):
        for mode in MODES[1:]:
            here = [point for point in grid if point["setting"] == setting
                    and point["mode"] == mode]
            sizes = sorted({point["bytes"] for point in here})
            if not sizes:
                continue
            figure, axes = plt.subplots(1, len(sizes), figsize=(4 * len(sizes), 3.4),
                                        squeeze=False)
            for axis, size in zip(axes[0], sizes):
                series = [point for point in here if point["bytes"] == size]
                multiples = [point["delay_multiple"] for point in series]
                lines: dict[str, list[float]] = {"auto": [], "best other papcoll": [],
                                                 "best native": []}
                for point in series:
                    excess = point["excess_ms"]
                    lines["auto"].append(excess["auto"])
                    ours = [value for name, value in excess.items()
                            if name != "auto" and not is_native(name)]
                    lines["best other papcoll"].append(min(ours) if ours else float("nan"))
                    lines["best native"].append(point["least_native_excess_ms"])
                    for name in SHOWN:
                        if name in excess:
                            lines.setdefault(name, []).append(excess[name])
                for name, values in lines.items():
                    style = {"auto": {"linewidth": 2.5, "color": "tab:red"},
                             "best native": {"color": "black", "marker": "s"}}.get(
                                 name, {"linewidth": 1, "alpha": 0.6})
                    axis.plot(multiples, values, marker=style.pop("marker", "o"), label=name,
                              **style)
                axis.set_xscale("log")
                axis.set_xlabel("delay / delta")
                axis.set_ylabel("excess over e-bar_lo (ms, median)")
                axis.set_title(readable_bytes(size))
            axes[0][0].legend(fontsize=7)
            figure.suptitle(f"{setting}, {mode}")
            figure.tight_layout()
            slug = "shm" if setting == "shared memory" else setting.replace(" ", "_")
            path = folder / f"auto_grid_{slug}_{mode}.png"
            figure.savefig(path, dpi=110)
            plt.close(figure)
            written.append(path)
    return written


def write_markdown(grid: list[Point], recovery: dict[str, list[Row]], path: Path) -> None:
    parts = []
    for setting in sorted({point["setting"] for point in grid}):
        for mode in MODES:
            if any(point["setting"] == setting and point["mode"] == mode for point in grid):
                parts.append(markdown(grid, setting, mode))
        if setting in recovery:
            parts.append(learning_markdown(setting, recovery[setting]))
    path.write_text("\n\n".join(parts) + "\n")


def testbed_network(text: str) -> str:
    """--testbed's value: a network preset or file that loads (checked before any job runs,
    so that a misspelt name is a usage error, not a traceback after the balanced jobs)."""
    try:
        load_network(text)
    except (NetworkError, OSError) as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def positive_seconds(text: str) -> float:
    """--timeout's value: a finite number of seconds above 0 (NaN and infinity refused)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a number of seconds above 0, not '{text}'")
    return value


def saved_run(name: str) -> dict[str, Any]:
    """One --from-json file: a JSON object with a "rows" list, as --json writes it. A missing,
    empty or foreign file is a usage error naming the file and what is wrong with it."""
    path = Path(name)
    try:
        text = path.read_text()
    except OSError as error:
        raise argparse.ArgumentTypeError(f"cannot read {name}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise argparse.ArgumentTypeError(f"{name} is not text (a saved grid is JSON)") from None
    if not text.strip():
        raise argparse.ArgumentTypeError(f"{name} is empty (a saved grid is what --json wrote)")
    try:
        saved = json.loads(text)
    except json.JSONDecodeError as error:
        raise argparse.ArgumentTypeError(
            f"{name} is not JSON ({error.msg}, line {error.lineno})") from None
    rows = saved.get("rows") if isinstance(saved, dict) else None
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        raise argparse.ArgumentTypeError(
            f"{name} is not a saved grid (no \"rows\" list of objects; --json writes one)")
    needed = {"setting", "grid_mode", "bytes", "delay_multiple", "algorithm", "median_ms",
              "excess_ms"}
    for number, row in enumerate(rows):
        if missing := sorted(needed - row.keys()):
            raise argparse.ArgumentTypeError(
                f"{name}: row {number} lacks {', '.join(missing)} (not a grid row)")
    names: dict[tuple[Any, ...], set[str]] = {}
    for row in rows:
        if row["grid_mode"] not in MODES:
            raise argparse.ArgumentTypeError(f"{name}: not a grid mode: {row['grid_mode']!r}")
        key = (row["setting"], row["grid_mode"], row["bytes"], row["delay_multiple"])
        names.setdefault(key, set()).add(str(row["algorithm"]))
    for key, here in names.items():
        if "auto" not in here or not any(is_native(algorithm) for algorithm in here):
            raise argparse.ArgumentTypeError(
                f"{name}: the point {key[1]} {key[2]} bytes x{key[3]:g} lacks auto or a "
                "native all-reduce (each point compares them)")
    learning = saved.get("learning") or []
    if not isinstance(learning, list) or not all(
            isinstance(run, dict) and {"setting", "rows"} <= run.keys() for run in learning):
        raise argparse.ArgumentTypeError(f"{name}: \"learning\" is not a list of saved runs")
    return saved


def parser() -> argparse.ArgumentParser:
    # papcoll's parser: a usage error is one line naming the option, exit 2
    options = Parser(
        prog="bench/auto_grid.py", description=__doc__.split("\n\n")[0],
        epilog="\n\n".join(__doc__.split("\n\n")[1:]),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    options.add_argument("--ranks", "-P", type=integer_in_range("ranks", 2, 1024), default=4,
                         help="ranks (default 4; a grid of late ranks needs 2 or more)")
    options.add_argument("--sizes", type=parse_sizes, default=None,
                         help=f"bytes per rank (default {SHARED_MEMORY_SIZES}, on a testbed "
                              f"{TESTBED_SIZES})")
    options.add_argument("--modes", type=lambda text: text.split(","),
                         default=list(MODES), help=f"a comma list of {', '.join(MODES)} "
                                                   "(default all)")
    options.add_argument("--algorithms", default=None,
                         help="narrow the contenders (a comma list keeping auto and a native "
                              "one; default: " + ", ".join(registry_contenders()) + ")")
    options.add_argument("--iterations", type=integer_in_range("iterations", 1, 1000000),
                         default=10, help="timed calls (default 10)")
    options.add_argument("--warmup", type=integer_in_range("warm-up", 0, 1000000), default=4,
                         help="untimed calls first (default 4)")
    options.add_argument("--compute-ms", type=milliseconds(MOST_COMPUTE_MS), default=2.0,
                         help="emulated compute between calls (default 2)")
    options.add_argument("--timeout", type=positive_seconds, default=3600.0,
                         help="seconds one papcoll-bench job may take (default 3600)")
    options.add_argument("--testbed", type=testbed_network, default=None, metavar="NETWORK",
                         help="run on an emulated cluster of this network (needs root): a "
                              f"preset ({', '.join(NETWORKS)}) or a .json / .toml file")
    options.add_argument("--learning", action="store_true",
                         help="also measure figure 4, learns fast (bench/auto_learning.py)")
    options.add_argument("--learning-size", type=integer_in_range("learning size", 4, 1 << 31),
                         default=LEARNING_SIZE,
                         help=f"bytes per rank of the learning run (default {LEARNING_SIZE})")
    options.add_argument("--from-json", nargs="+", type=saved_run, default=None, metavar="FILE",
                         help="measure nothing: the figures and tables of saved runs")
    options.add_argument("--json", default=None, metavar="FILE",
                         help="the rows, points, figures and learning run")
    options.add_argument("--markdown", default=None, metavar="FILE",
                         help="docs/benchmarks.md's tables, one per setting and mode")
    options.add_argument("--plot-folder", default=None, metavar="FOLDER",
                         help="PNGs of excess against delay, per setting and late mode")
    return options


def main(argv: list[str] | None = None) -> int:
    options = parser()
    arguments = options.parse_args(argv)
    unknown = [mode for mode in arguments.modes if mode not in MODES]
    if unknown:
        options.error(f"--modes: not a mode: {', '.join(unknown)}")
    learning: list[dict[str, Any]] = []
    if arguments.from_json:
        rows: list[Row] = []
        for saved in arguments.from_json:
            rows += saved["rows"]
            learning += saved.get("learning") or []
    else:
        try:
            contenders = chosen_contenders(arguments.algorithms)
        except argparse.ArgumentTypeError as error:
            options.error(f"--algorithms: {error}")
        sizes = arguments.sizes or parse_sizes(
            TESTBED_SIZES if arguments.testbed else SHARED_MEMORY_SIZES)
        rows = [row for size in sizes for row in measure_size(size, arguments, contenders)]
        if arguments.learning and (run := measure_learning(arguments)) is not None:
            learning.append(run)
    grid = points(rows)
    recovery = recovery_by_setting(learning)
    all_figures = figures(grid, recovery)
    print_figures(all_figures, Console(width=160))
    if arguments.json:
        Path(arguments.json).write_text(json.dumps(
            {"rows": rows, "points": grid, "figures": all_figures, "learning": learning},
            indent=1))
    if arguments.markdown:
        write_markdown(grid, recovery, Path(arguments.markdown))
    if arguments.plot_folder:
        for path in plot(grid, Path(arguments.plot_folder)):
            print(f"plot: {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
