"""What auto's cost model predicts for each contender of the grid, beside
what the grid measured.

auto chooses with a model (the simulator on a crossbar, src/mpi/choose.c); the closed loop
corrects it where the measurements say otherwise. This shows where and by how much the model
is wrong, per contender: for every point of a grid file (bench/auto_grid.py --json), each
contender is simulated (papcoll.sim.simulate) on a calibrated network file with the point's
arrivals (one-late: rank 1 late by the delay; rand-late: the mean over SEEDS seeded uniform
patterns, as papcoll-bench draws them; balanced: none), and its predicted e-bar set beside
the measured median. The MPI library's algorithms are simulated as their papcoll
counterparts (native:recursive_doubling as recursive_doubling, native:reduce_scatter_allgather
as rabenseifner, native:ring as ring); "native" (MPI_Allreduce as the library chose) as the
best of those three (papcoll.sim.NATIVE_STAND_INS), and auto as the model's own choice for
the true arrivals (papcoll.sim.choose: the decision without the closed loop).

    PYTHONPATH=python .venv/bin/python bench/auto_grid_model.py docs/data/auto_grid_shm.json \\
        --network docs/networks/shared-memory-2core.json \\
        --markdown docs/data/auto_grid_model_shm.md --json docs/data/auto_grid_model_shm.json \\
        --plot docs/auto_grid_model_shm.png

Prints, per contender, the median of measured / predicted e-bar over the points and its
spread (the quartiles), and how often the contender the model predicts fastest is within 5 %
of the fastest measured (the model alone "right"; where it predicts a tie, every tied
contender must be), against how often auto was.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from auto_grid_figures import RIGHT_CHOICE_RATIO, Point, close_enough, floor_ms, points
from papcoll import Context
from papcoll.network import load_network
from papcoll.sim import NATIVE_STAND_INS, SimModel, arrival_pattern, choose, simulate, tau
from rich.console import Console
from rich.table import Table

SEEDS = 8            # rand-late: patterns averaged
ELEMENT_BYTES = 4    # the grid's floats
# the MPI library's algorithms, as the papcoll schedule the simulator runs for each
NATIVE_COUNTERPARTS = {"native:recursive_doubling": "recursive_doubling",
                       "native:reduce_scatter_allgather": "rabenseifner",
                       "native:ring": "ring"}


def predicted_ebar_ms(contender: str, ranks: int, count: int, model: SimModel,
                      patterns: list[list[float]]) -> float:
    """The simulated e-bar of one contender, mean over the arrival patterns, in ms."""
    total = 0.0
    for arrivals in patterns:
        segment_tau = tau(model, ranks, count, ELEMENT_BYTES)
        name = contender
        if contender == "auto":  # the model's choice (balanced: native, nothing simulated)
            name = choose(ranks, count, ELEMENT_BYTES, model,
                          Context(arrivals=arrivals, tau=segment_tau)).algorithm
        if name == "native":
            seconds = min(simulate(stand_in, ranks, count, ELEMENT_BYTES, model, arrivals)
                          .average_elapsed for stand_in in NATIVE_STAND_INS)
        else:
            seconds = simulate(NATIVE_COUNTERPARTS.get(name, name), ranks, count,
                               ELEMENT_BYTES, model, arrivals).average_elapsed
        total += seconds
    return total / len(patterns) * 1e3


def arrival_patterns(point: Point, ranks: int) -> list[list[float]]:
    delay = point["delay_multiple"] * (point["delta_ms"] or 0.0) * 1e-3
    if point["mode"] == "rand-late":
        return [arrival_pattern("rand-late", ranks, delay, seed) for seed in range(1, SEEDS + 1)]
    return [arrival_pattern(point["mode"], ranks, delay)]


def compare(grid: list[Point], model: SimModel, ranks: int) -> list[dict[str, Any]]:
    """One row per point: measured and predicted e-bar of every contender."""
    rows = []
    for point in grid:
        count = point["bytes"] // ELEMENT_BYTES
        patterns = arrival_patterns(point, ranks)
        predicted = {name: predicted_ebar_ms(name, ranks, count, model, patterns)
                     for name in point["ebar_ms"]}
        rows.append({"setting": point["setting"], "mode": point["mode"],
                     "bytes": point["bytes"], "delay_multiple": point["delay_multiple"],
                     "measured_ms": point["ebar_ms"], "predicted_ms": predicted})
    return rows


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per contender: quartiles of measured / predicted; and how often the model's fastest
    contender (auto left out) is within 5 % of the measured fastest, against auto's."""
    ratios: dict[str, list[float]] = {}
    model_right = auto_right = 0
    for row in rows:
        measured, predicted = row["measured_ms"], row["predicted_ms"]
        for name in measured:
            ratios.setdefault(name, []).append(measured[name] / predicted[name])
        others = [name for name in measured if name != "auto"]
        best = min(others, key=measured.__getitem__)
        # contenders simulated alike tie (native is the best of its stand-ins, MPICH's
        # recursive doubling is papcoll's): a tie is no pick, so the model is right only
        # where every contender it cannot tell apart from its fastest is
        fastest = min(predicted[name] for name in others)
        tied = [name for name in others if predicted[name] <= fastest * (1 + 1e-9)]
        pick = max(tied, key=measured.__getitem__)
        floor = floor_ms(row["setting"])
        model_right += close_enough(measured[pick], measured[best], RIGHT_CHOICE_RATIO, floor)
        auto_right += close_enough(measured["auto"], measured[best], RIGHT_CHOICE_RATIO, floor)
    quartiles = {name: statistics.quantiles(values, n=4) if len(values) > 1
                 else [values[0]] * 3 for name, values in ratios.items()}
    return {"points": len(rows), "model_right": model_right, "auto_right": auto_right,
            "measured_over_predicted": {name: {"lower_quartile": q[0], "median": q[1],
                                               "upper_quartile": q[2]}
                                        for name, q in quartiles.items()}}


def markdown(setting: str, network: str, result: dict[str, Any]) -> str:
    lines = [f"#### {setting}: measured / predicted e-bar, on {network}", "",
             f"{result['points']} points. The contender the model predicts fastest is within "
             f"5 % of the measured fastest at {result['model_right']} of them; auto (the "
             f"model and the closed loop) at {result['auto_right']}.", "",
             "| contender | lower quartile | median | upper quartile |", "|---|---|---|---|"]
    for name, q in sorted(result["measured_over_predicted"].items(),
                          key=lambda item: item[1]["median"]):
        lines.append(f"| {name} | {q['lower_quartile']:.2f} | {q['median']:.2f} | "
                     f"{q['upper_quartile']:.2f} |")
    return "\n".join(lines) + "\n"


def plot(rows: list[dict[str, Any]], path: Path, title: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot
    figure, axes = pyplot.subplots(figsize=(7, 6))
    names = sorted({name for row in rows for name in row["measured_ms"]})
    for name in names:
        xs = [row["predicted_ms"][name] for row in rows if name in row["predicted_ms"]]
        ys = [row["measured_ms"][name] for row in rows if name in row["measured_ms"]]
        axes.scatter(xs, ys, s=14, label=name, marker="o" if name.startswith("native")
                     else "x" if name == "auto" else "^")
    low = min(min(row["predicted_ms"].values()) for row in rows)
    high = max(max(row["measured_ms"].values()) for row in rows)
    axes.plot([low, high], [low, high], color="grey", linewidth=0.8, label="measured = predicted")
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("predicted e-bar, ms (simulator, calibrated network)")
    axes.set_ylabel("measured e-bar, ms (median)")
    axes.set_title(title)
    axes.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("grid", help="a grid file written by bench/auto_grid.py --json")
    options.add_argument("--network", required=True,
                         help="the calibrated network file (docs/networks/...) or preset")
    options.add_argument("--ranks", "-P", type=int, default=4)
    options.add_argument("--json", default=None, metavar="FILE")
    options.add_argument("--markdown", default=None, metavar="FILE")
    options.add_argument("--plot", default=None, metavar="FILE")
    arguments = options.parse_args(argv)
    if arguments.plot:
        try:
            import matplotlib  # noqa: F401
        except ModuleNotFoundError:
            options.error("--plot needs matplotlib (pip install matplotlib)")
    data = json.loads(Path(arguments.grid).read_text())
    network = load_network(arguments.network)
    grid = points(data["rows"])
    rows = compare(grid, network.model, arguments.ranks)
    settings = sorted({row["setting"] for row in rows})
    results = {setting: summary([row for row in rows if row["setting"] == setting])
               for setting in settings}
    console = Console()
    for setting, result in results.items():
        table = Table(title=f"{setting}: measured / predicted e-bar ({network.name}); the "
                            f"model's pick right at {result['model_right']}/{result['points']}"
                            f", auto at {result['auto_right']}")
        for column in ("contender", "lower quartile", "median", "upper quartile"):
            table.add_column(column, justify="left" if column == "contender" else "right")
        for name, q in sorted(result["measured_over_predicted"].items(),
                              key=lambda item: item[1]["median"]):
            table.add_row(name, f"{q['lower_quartile']:.2f}", f"{q['median']:.2f}",
                          f"{q['upper_quartile']:.2f}")
        console.print(table)
    if arguments.json:
        Path(arguments.json).write_text(json.dumps({"network": network.name, "rows": rows,
                                                    "summary": results}, indent=1) + "\n")
    if arguments.markdown:
        Path(arguments.markdown).write_text("\n".join(
            markdown(setting, network.name, result) for setting, result in results.items()))
    if arguments.plot:
        plot(rows, Path(arguments.plot), f"{', '.join(settings)}: measured against predicted "
                                         f"({network.name})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
