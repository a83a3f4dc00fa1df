"""Does auto's closed loop settle in noise? One command for the figures of the noise
target: after the warm-up calls, does one choice run in >= 90 % of a point's calls, do
probes stay at <= 1 call in 16, and is auto within 5 % (or 20 us) of the best contender?

A point is (late mode, size, maximum delay); each mode is one `papcoll bench` job whose
contenders are interleaved call by call (A B A B), auto among them, --warmup untimed calls
first. Times are medians over the timed calls. On this machine the noise is the machine's
(4 ranks on 2 cores); under SimGrid's SMPI (--smpi NETWORK) time is simulated and exact, so
noise is injected (--jitter: every rank arrives later by an exponential draw of that mean
each call, which no prediction knows), and the right answer is known from the contenders'
own rows.

    .venv/bin/python bench/loop_settles.py --json docs/data/loop_settles_shm.json \\
        --markdown docs/data/loop_settles_shm.md
    .venv/bin/python bench/loop_settles.py --smpi ethernet-1g --ranks 16 --jitter 200us \\
        --sizes 16K,256K,1M --contenders auto,native,native:lr,ring,rabenseifner,straggler,slt \\
        --json docs/data/loop_settles_smpi.json --markdown docs/data/loop_settles_smpi.md
    .venv/bin/python bench/loop_settles.py --from-json docs/data/loop_settles_shm.json \\
        docs/data/loop_settles_shm_before.json

--from-json measures nothing: it recomputes the table from the rows.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from papcoll.lab.bench import readable_bytes
from rich.console import Console
from rich.table import Table
from smpi_scale import bench_rows

MODES = ("one-late", "rand-late")
# auto, papcoll's flat and arrival-aware algorithms, the MPI library's default and variants
SHARED_MEMORY_CONTENDERS = ("auto,native,native:recursive_doubling,"
                            "native:reduce_scatter_allgather,native:ring,ring,rabenseifner,"
                            "straggler,slt,prr")
SMPI_CONTENDERS = "auto,native,native:lr,native:rab_rdb,ring,rabenseifner,straggler,slt,prr"
TOP_SHARE = 0.9          # one choice in >= 90 % of the timed calls
MOST_PROBE_SHARE = 1 / 16
NEAR_SHARE, NEAR_MS = 0.05, 0.020  # within 5 % or 20 us of the best contender


def run_mode(arguments: argparse.Namespace, mode: str) -> list[dict[str, Any]]:
    options = ["--ranks", str(arguments.ranks), "--algorithms", arguments.contenders,
               "--baseline", "none", "--sizes", arguments.sizes,
               "--max-delay", arguments.max_delay, "--mode", mode,
               "--iterations", str(arguments.calls), "--warmup", str(arguments.warmup),
               "--compute-ms", f"{arguments.compute_ms:g}", "--seed", str(arguments.seed)]
    if arguments.jitter:
        options += ["--jitter", arguments.jitter]
    if arguments.smpi:
        options += ["--smpi", arguments.smpi]
    return bench_rows(*options)


def points(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One line per point: auto's choices and probes, its median, the best contender's and
    the best native's (every median in ms)."""
    grouped: dict[tuple[str, int, float], dict[str, dict[str, Any]]] = {}
    for row in rows:
        key = (row["mode"], row["bytes"], row["max_delay_ms"])
        grouped.setdefault(key, {})[row["algorithm"]] = row
    lines = []
    for (mode, size, delay), by_name in sorted(grouped.items()):
        auto = by_name["auto"]
        others = {name: row["median_ms"] for name, row in by_name.items() if name != "auto"}
        natives = {name: ms for name, ms in others.items() if name.startswith("native")}
        best = min(others, key=lambda name: others[name])
        best_native = min(natives, key=lambda name: natives[name])
        chosen = auto["chosen"]
        calls = sum(chosen.values())
        top = max(chosen, key=lambda name: chosen[name])
        lines.append({
            "mode": mode, "bytes": size, "max_delay_ms": delay, "calls": calls,
            "top_choice": top, "top_share": chosen[top] / calls,
            "choices": len(chosen), "probes": auto["probes"],
            "auto_ms": auto["median_ms"], "best": best, "best_ms": others[best],
            "best_native": best_native, "best_native_ms": natives[best_native],
            "lower_bound_ms": auto["lower_bound_ms"],
        })
    return lines


def near_best(line: dict[str, Any]) -> bool:
    return (line["auto_ms"] <= line["best_ms"] * (1 + NEAR_SHARE)
            or line["auto_ms"] - line["best_ms"] <= NEAR_MS)


def summary(lines: list[dict[str, Any]]) -> list[str]:
    count = len(lines)
    settled = sum(line["top_share"] >= TOP_SHARE for line in lines)
    quiet = sum(line["probes"] <= line["calls"] * MOST_PROBE_SHARE for line in lines)
    near = sum(near_best(line) for line in lines)
    worst = max(lines, key=lambda line: line["auto_ms"] / line["best_native_ms"])
    by_mode = {mode: [line for line in lines if line["mode"] == mode] for mode in MODES}
    return [
        f"one choice in >= 90 % of the timed calls: {settled} of {count} points ("
        + ", ".join(f"{mode} {sum(line['top_share'] >= TOP_SHARE for line in part)} of "
                    f"{len(part)}" for mode, part in by_mode.items() if part) + ")",
        f"probes in <= 1 call in 16: {quiet} of {count} points",
        f"auto within 5 % or 20 us of the best contender: {near} of {count} points "
        f"({near / count:.0%}; target >= 80 %)",
        f"auto / best native at worst: {worst['auto_ms'] / worst['best_native_ms']:.2f} "
        f"({worst['mode']}, {readable_bytes(worst['bytes'])}, {worst['max_delay_ms']:g} ms)",
    ]


def print_table(console: Console, lines: list[dict[str, Any]], title: str) -> None:
    table = Table(title=title)
    for column in ("mode", "bytes", "delay ms", "top choice", "share", "choices", "probes",
                   "auto ms", "best", "best ms", "best native", "auto / best"):
        table.add_column(column, justify="left" if column in ("mode", "top choice", "best",
                                                              "best native") else "right")
    for line in lines:
        table.add_row(line["mode"], readable_bytes(line["bytes"]), f"{line['max_delay_ms']:g}",
                      line["top_choice"], f"{line['top_share']:.0%}", str(line["choices"]),
                      f"{line['probes']}/{line['calls']}", f"{line['auto_ms']:.3f}",
                      line["best"], f"{line['best_ms']:.3f}", line["best_native"],
                      f"{line['auto_ms'] / line['best_ms']:.2f}"
                      + ("" if near_best(line) else " *"))
    console.print(table)
    for text in summary(lines):
        console.print(text)


def markdown(lines: list[dict[str, Any]], title: str) -> str:
    out = [f"### {title}", "",
           "| mode | bytes | delay ms | top choice | share | choices | probes | auto ms | "
           "best | best ms | best native | best native ms | auto / best |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for line in lines:
        out.append(f"| {line['mode']} | {readable_bytes(line['bytes'])} | {line['max_delay_ms']:g} "
                   f"| {line['top_choice']} | {line['top_share']:.0%} | {line['choices']} | "
                   f"{line['probes']}/{line['calls']} | {line['auto_ms']:.3f} | "
                   f"{line['best']} | {line['best_ms']:.3f} | {line['best_native']} | "
                   f"{line['best_native_ms']:.3f} | {line['auto_ms'] / line['best_ms']:.2f}"
                   + ("" if near_best(line) else " (*)") + " |")
    out += ["", *[f"- {text}" for text in summary(lines)], ""]
    return "\n".join(out)


def title_of(rows: list[dict[str, Any]]) -> str:
    first = rows[0]
    where = (f"SMPI, {first['smpi']['network']}" if first.get("smpi")
             else f"{first['mpi_library'].split(',')[0]}, this machine")
    jitter = f", jitter {first['jitter_ms']:g} ms" if first.get("jitter_ms") else ""
    return (f"auto's loop in noise: P = {first['ranks']}, {where}{jitter}, "
            f"{first['iterations']} timed calls a point")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", "-P", type=int, default=4)
    parser.add_argument("--smpi", metavar="NETWORK",
                        help="run under SimGrid's SMPI on this network (docs/smpi.md)")
    parser.add_argument("--jitter", metavar="MEAN", default=None,
                        help="injected arrival noise, as papcoll bench --jitter (e.g. 200us)")
    parser.add_argument("--contenders", default=None,
                        help="comma list, auto first (default: papcoll's flat and "
                             "arrival-aware algorithms and the MPI's algorithms)")
    parser.add_argument("--sizes", default="16K,1M,4M")
    parser.add_argument("--max-delay", default="0,5,20ms")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--calls", type=int, default=32, help="timed calls a point")
    parser.add_argument("--warmup", type=int, default=16, help="untimed calls first")
    parser.add_argument("--compute-ms", type=float, default=20.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="write every row here")
    parser.add_argument("--from-json", type=Path, nargs="+", help="measure nothing: read rows")
    parser.add_argument("--markdown", type=Path, help="write the table here")
    arguments = parser.parse_args()
    if arguments.contenders is None:
        arguments.contenders = SMPI_CONTENDERS if arguments.smpi else SHARED_MEMORY_CONTENDERS
    if not arguments.contenders.startswith("auto"):
        parser.error("--contenders: auto comes first (its rows are the ones judged)")
    console = Console(width=180)
    sections = []
    if arguments.from_json:
        sections = [json.loads(path.read_text()) for path in arguments.from_json]
    else:
        rows: list[dict[str, Any]] = []
        started = time.monotonic()
        for mode in arguments.modes.split(","):
            if mode not in MODES:
                parser.error(f"--modes: '{mode}' is not one of {', '.join(MODES)}")
            rows += run_mode(arguments, mode)
        console.print(f"wall time {time.monotonic() - started:.0f} s")
        if arguments.json:
            arguments.json.write_text(json.dumps(rows, indent=1) + "\n")
        sections = [rows]
    texts = []
    for rows in sections:
        lines = points(rows)
        print_table(console, lines, title_of(rows))
        texts.append(markdown(lines, title_of(rows)))
    if arguments.markdown:
        arguments.markdown.write_text("\n".join(texts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
