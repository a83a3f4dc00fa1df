"""The house rules the code is held to (docs/architecture.md), checked on the tree itself
so they cannot drift: no source file over 600 lines; no circle between the C units of any
library or program (unit A calls into B and B, through any path, back into A), read from
the object files the build made; the core never includes mpi.h and never prints; no source cites
the tracker's or the paper folder's numbers (citations.py) where a reader needs a paper's
author and year or a feature's name."""

from __future__ import annotations

import os
import re
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest
from citations import numbers_cited
from papcoll.lab.launcher import mpi_flavor

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "build" / os.environ.get("PAPCOLL_MPI", mpi_flavor())
MOST_LINES = 600
SOURCE_FOLDERS = ("src", "include", "python", "bench", "tests", "examples")
SOURCE_ENDINGS = (".c", ".h", ".py")
SCRIPT_ENDINGS = (".sh",)
# every target the build made: the three libraries, the bench programs, the test programs
TARGETS = sorted(path for path in (BUILD / "CMakeFiles").glob("*.dir")) \
    if (BUILD / "CMakeFiles").is_dir() else []


def _sources(endings: tuple[str, ...] = SOURCE_ENDINGS) -> list[Path]:
    return sorted(path for folder in SOURCE_FOLDERS for path in (ROOT / folder).rglob("*")
                  if path.suffix in endings and "_lib" not in path.parts)


def test_no_source_file_is_over_600_lines():
    long = {str(path.relative_to(ROOT)): count for path in _sources()
            if (count := len(path.read_text().splitlines())) > MOST_LINES}
    assert not long, f"over {MOST_LINES} lines: {long}"


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """A circle in the directed graph `edges` (as the list of its nodes, first repeated at
    the end), or None: depth-first search with the path on a stack."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for successor in sorted(edges.get(node, ())):
            if state.get(successor) == 1:
                return path[path.index(successor):] + [successor]
            if successor not in state and (found := visit(successor)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_find_cycle_finds_a_circle_and_only_a_circle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def unit_calls(objects: list[Path]) -> dict[str, set[str]]:
    """Unit -> the units whose functions it calls, among `objects` (one object file per C
    file), from the functions each defines and the symbols each leaves undefined (nm). Data
    is no call: the registry lists the algorithms' entries, and composing algorithms find
    theirs through it, which is a lookup, not a circle of calls."""
    defines: dict[str, str] = {}
    needs: dict[str, set[str]] = defaultdict(set)
    for obj in objects:
        unit = obj.name.removesuffix(".o")
        for line in subprocess.run(["nm", str(obj)], capture_output=True, text=True,
                                   check=True).stdout.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == "U":
                needs[unit].add(parts[1])
            elif len(parts) == 3 and parts[1] == "T":  # a function: data is not a call
                defines[parts[2]] = unit
    return {unit: {defines[symbol] for symbol in symbols if symbol in defines} - {unit}
            for unit, symbols in needs.items()}


@pytest.mark.skipif(not TARGETS, reason="needs the build (make build)")
@pytest.mark.parametrize("target", TARGETS, ids=lambda path: path.name.removesuffix(".dir"))
def test_no_circle_between_the_c_units_of_a_target(target):
    objects = sorted(target.rglob("*.o"))
    assert objects, f"{target} holds no object files"
    cycle = find_cycle(unit_calls(objects))
    assert cycle is None, f"{target.name}: the units call round in a circle: {' -> '.join(cycle)}"


def test_the_core_never_includes_mpi_h_and_never_prints():
    printing = re.compile(r"\b(printf|fprintf|puts|fputs|putchar|perror|fwrite)\s*\("
                          r"|\bstd(out|err)\b")
    for path in sorted((ROOT / "src" / "core").rglob("*.[ch]")):
        text = re.sub(r"/\*.*?\*/|//[^\n]*", "", path.read_text(), flags=re.DOTALL)
        assert not re.search(r"#\s*include\s*[<\"]mpi\.h", text), f"{path} includes mpi.h"
        assert not printing.search(text), f"{path} prints"


def test_numbers_cited_finds_the_project_numbers_and_only_them():
    # each example is split into two literals, so that this file passes its own check below
    cited = numbers_cited("/* the monitor of seed" " 000 S3, and the loop of\n * Issue"
                          "\n * 32's table */\n# as in issues" "-19 and seeds 101..105\n")
    assert cited == [(1, "seed" " 000"), (2, "Issue * 32"), (4, "issues" "-19")]
    assert numbers_cited("papcoll reproduce seed004-table2; seed = 7; a tissue" " 3") == []


def test_no_source_cites_the_tracker_or_the_paper_folder_by_number():
    offending = [f"{path.relative_to(ROOT)}:{line}: {words}"
                 for path in _sources(SOURCE_ENDINGS + SCRIPT_ENDINGS)
                 for line, words in numbers_cited(path.read_text())]
    assert not offending, ("cite papers by author and year (docs/references.md) and features "
                           "by name:\n" + "\n".join(offending))
