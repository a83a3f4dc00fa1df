"""The Python package's rooms and which way its imports point, read from the source (ast), so
that an import hidden inside a function or under TYPE_CHECKING counts as much as one at the
top of a module.

The library (papcoll and its modules outside papcoll.lab and papcoll.cli: what a program
imports) never imports the lab or the command line; the lab (papcoll.lab: benchmark,
calibration, validation, testbed, ...) never imports the command line; and no module imports
itself back through others (no cycle). The checkers themselves are tried on a small package
written here with deliberately wrong imports, so a checker that sees nothing cannot pass.
"""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "papcoll"


def module_files(package: Path) -> dict[str, Path]:
    """Every module of the package under its dotted name (a package by its __init__.py)."""
    modules = {}
    for path in sorted(package.rglob("*.py")):
        parts = [package.name, *path.relative_to(package).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def imported_modules(name: str, path: Path, known: set[str]) -> set[str]:
    """The package's modules that module `name` imports anywhere in its text: relative
    imports resolved, `from package import module` counted as that module."""
    is_package = path.name == "__init__.py"
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".")
                anchor = anchor[:len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                       for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:  # papcoll.sim.simulate -> papcoll.sim
                target = target.rpartition(".")[0]
            if target:
                found.add(target)
    return found


def import_graph(package: Path) -> dict[str, set[str]]:
    modules = module_files(package)
    known = set(modules)
    return {name: imported_modules(name, path, known) for name, path in modules.items()}


def room(module: str) -> str:
    """"cli", "lab" or "library": where a module lives. papcoll.__main__ (`python -m
    papcoll`) is the command line's entry point, as the `papcoll` script is."""
    parts = module.split(".")
    if parts[1:] == ["__main__"]:
        return "cli"
    return parts[1] if len(parts) > 1 and parts[1] in ("cli", "lab") else "library"


# Which rooms each room must not import.
FORBIDDEN = {"library": {"lab", "cli"}, "lab": {"cli"}, "cli": set()}


def wrong_way_imports(graph: dict[str, set[str]]) -> list[str]:
    return sorted(f"{module} ({room(module)}) imports {target} ({room(target)})"
                  for module, targets in graph.items() for target in targets
                  if room(target) in FORBIDDEN[room(module)])


def import_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One cycle of the graph as [a, b, ..., a] (depth first, modules in sorted order), or []
    when it has none."""
    state: dict[str, str] = {}  # "open" while on the current path, "done" once left
    path: list[str] = []

    def visit(module: str) -> list[str]:
        state[module] = "open"
        path.append(module)
        for target in sorted(graph.get(module, ())):
            if state.get(target) == "open":
                return path[path.index(target):] + [target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        state[module] = "done"
        path.pop()
        return []

    for module in sorted(graph):
        if module not in state:
            found = visit(module)
            if found:
                return found
    return []


def test_the_library_imports_neither_the_lab_nor_the_command_line():
    graph = import_graph(PACKAGE)
    assert {"papcoll.core", "papcoll.lab.bench", "papcoll.cli.options"} <= set(graph)
    assert "papcoll.sim" in graph["papcoll.lab.bench"]  # the reader sees imports at all
    assert wrong_way_imports(graph) == []


def test_python_dash_m_papcoll_is_the_command_lines_room():
    graph = import_graph(PACKAGE)
    assert room("papcoll.__main__") == "cli" and "papcoll.cli" in graph["papcoll.__main__"]
    assert not [module for module, targets in graph.items()
                if "papcoll.__main__" in targets], "nothing imports the entry point"


def test_no_module_imports_itself_back_through_others():
    cycle = import_cycle(import_graph(PACKAGE))
    assert cycle == [], "import cycle: " + " -> ".join(cycle)


def _write_package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / "papcoll" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "papcoll"


def test_the_checker_sees_a_wrong_way_import_inside_a_function(tmp_path):
    package = _write_package(tmp_path, {
        "__init__.py": "from .core import run\n",
        "core.py": "def run():\n    from .lab import bench\n    return bench\n",
        "lab/__init__.py": "",
        "lab/bench.py": "from ..core import run\nfrom papcoll.cli import options\n",
        "cli/__init__.py": "",
        "cli/options.py": "from ..lab.bench import run\n",
    })
    assert wrong_way_imports(import_graph(package)) == [
        "papcoll.core (library) imports papcoll.lab.bench (lab)",
        "papcoll.lab.bench (lab) imports papcoll.cli.options (cli)"]


def test_the_checker_reports_a_cycle_with_its_path(tmp_path):
    package = _write_package(tmp_path, {
        "__init__.py": "",
        "network.py": "from .sim import simulate\n",
        "sim.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                  "    from .topology import Topology\n",
        "topology.py": "def load():\n    from papcoll import network\n",
    })
    assert import_cycle(import_graph(package)) == [
        "papcoll.network", "papcoll.sim", "papcoll.topology", "papcoll.network"]
    assert import_cycle({"a": {"b"}, "b": set()}) == []
