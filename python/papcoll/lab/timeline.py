"""Timelines of simulated all-reduces (`papcoll sim --timeline FILE.png`): one row per rank,
one bar per op, like the timelines of Ruefenacht et al. 2017, Figs. 18-23.

Each rank's row shows its CPU work (reduce, copy) as full-height bars and its messages as
thin bars: sends in the upper half of the row, receives in the lower half, from when the op
was posted to when it completed (so a long receive bar is a rank waiting for data). A black
tick marks the rank's arrival, a red one its finish.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..sim import SimResult

COLOURS = {"send": "tab:blue", "recv": "tab:orange", "reduce": "tab:green", "copy": "tab:gray"}
# vertical placement within a rank's row (offset from the row's bottom, height)
PLACES = {"send": (0.55, 0.35), "recv": (0.1, 0.35), "reduce": (0.1, 0.8), "copy": (0.1, 0.8)}


def draw_timelines(panels: Sequence[tuple[str, SimResult]], path: str, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot
    from matplotlib.patches import Patch

    ranks = len(panels[0][1].finish)
    height = max(2.0, 0.25 * ranks + 1.0)
    figure, axes = pyplot.subplots(len(panels), 1, figsize=(11, height * len(panels)),
                                   squeeze=False)
    scale, unit = _unit(max(max(result.finish) for _, result in panels))
    for axis, (label, result) in zip(axes[:, 0], panels, strict=True):
        for kind in ("recv", "send", "copy", "reduce"):  # CPU work drawn last, on top
            bottom, size = PLACES[kind]
            by_rank: dict[int, list[tuple[float, float]]] = {}
            for span in result.timeline:
                if span.kind == kind and span.end > span.start:
                    by_rank.setdefault(span.rank, []).append(
                        (span.start * scale, (span.end - span.start) * scale))
            for rank, bars in by_rank.items():
                axis.broken_barh(bars, (rank + bottom - 0.5, size), facecolors=COLOURS[kind],
                                 alpha=0.55 if kind in ("send", "recv") else 0.9)
        for rank in range(ranks):
            axis.plot([result.arrivals[rank] * scale] * 2, [rank - 0.45, rank + 0.45], "k-",
                      linewidth=1.5)
            axis.plot([result.finish[rank] * scale] * 2, [rank - 0.45, rank + 0.45], "r-",
                      linewidth=1.5)
        axis.set_ylim(ranks - 0.5, -0.5)
        axis.set_yticks(range(ranks) if ranks <= 32 else range(0, ranks, 4))
        axis.set_ylabel("rank")
        axis.set_xlabel(f"time ({unit})")
        axis.set_title(f"{label}: e-bar {result.average_elapsed * scale:.3g} {unit}, "
                       f"makespan {result.makespan * scale:.3g} {unit}", fontsize=10)
        axis.grid(axis="x", alpha=0.3)
    figure.legend(handles=[Patch(color=COLOURS[kind], label=kind) for kind in COLOURS],
                  loc="upper right", ncols=4)
    figure.suptitle(title)
    figure.tight_layout(rect=(0, 0, 1, 0.97))
    figure.savefig(path, dpi=110)
    pyplot.close(figure)


def _unit(longest: float) -> tuple[float, str]:
    """A time unit that keeps the axis numbers readable."""
    for scale, unit in ((1.0, "s"), (1e3, "ms"), (1e6, "us")):
        if longest * scale >= 1:
            return scale, unit
    return 1e9, "ns"
