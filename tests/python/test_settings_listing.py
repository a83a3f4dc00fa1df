"""`papcoll settings` and its one table (python/papcoll/settings.py), held to the code so it
cannot drift: every `PAPCOLL_*` environment variable the C sources read (getenv or
papcoll_environment_switch) or the Python package and its tests read is a row, and every row's
variable is read where the row says; every field of papcoll_config and of Python's Config,
and every option and PAPCOLL_* cache variable of CMakeLists.txt, is a row; docs/settings.md is
the table's current Markdown."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from papcoll.cli import main
from papcoll.settings import READERS, SETTINGS, c_grammar, c_setting_names, settings_markdown

ROOT = Path(__file__).resolve().parents[2]
VARIABLE = re.compile(r"PAPCOLL_[A-Z0-9_]+")
# the readers: getenv, and the one parser's front doors (src/mpi/environment.c, the core's
# papcoll_setting_parse)
C_READ = re.compile(r"\b(?:getenv|papcoll_environment_switch|environment_read|"
                    r"papcoll_setting_parse)\(\s*\"(PAPCOLL_[A-Z0-9_]+)\"")


def c_variables() -> dict[str, set[str]]:
    """The PAPCOLL_* variables src/ reads, each with the files that read it."""
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / "src").rglob("*.[ch]")):
        for name in C_READ.findall(path.read_text()):
            found.setdefault(name, set()).add(str(path.relative_to(ROOT)))
    return found


def _environment_read(node: ast.AST) -> str | None:
    """The variable a node reads from the environment: os.environ.get("X"), os.environ["X"],
    os.getenv("X") or "X" in os.environ; else None."""
    def constant(value: ast.AST) -> str | None:
        return value.value if isinstance(value, ast.Constant) and \
            isinstance(value.value, str) else None

    if isinstance(node, ast.Call) and node.args:
        called = ast.unparse(node.func)
        if called in ("os.environ.get", "os.getenv", "environ.get", "getenv"):
            return constant(node.args[0])
    if isinstance(node, ast.Subscript) and ast.unparse(node.value) in ("os.environ", "environ"):
        return constant(node.slice)
    if isinstance(node, ast.Compare) and isinstance(node.ops[0], ast.In) and \
            ast.unparse(node.comparators[0]) in ("os.environ", "environ"):
        return constant(node.left)
    return None


def python_variables() -> dict[str, set[str]]:
    """The PAPCOLL_* variables the package reads (its reads go through helpers that take the
    name, `_paths(..., "PAPCOLL_LIBRARY")`, so every whole-string constant of that form
    counts), and the ones the tests read directly from the environment."""
    found: dict[str, set[str]] = {}
    package = ROOT / "python" / "papcoll"
    for path in sorted(package.rglob("*.py")):
        if "_lib" in path.parts or path == package / "settings.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                    VARIABLE.fullmatch(node.value):
                found.setdefault(node.value, set()).add(str(path.relative_to(ROOT)))
    for path in sorted((ROOT / "tests" / "python").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            name = _environment_read(node)
            if name and VARIABLE.fullmatch(name):
                found.setdefault(name, set()).add(str(path.relative_to(ROOT)))
    return found


def cmake_variables() -> set[str]:
    """CMakeLists.txt's options and PAPCOLL_* cache variables (what -DNAME=... sets)."""
    text = (ROOT / "CMakeLists.txt").read_text()
    return set(re.findall(r"\boption\(\s*(\w+)", text)) | \
        set(re.findall(r"\bset\(\s*(PAPCOLL_\w+)[^)]*\bCACHE\b", text))


def c_config_fields() -> set[str]:
    """The fields of papcoll_config, from include/papcoll.h."""
    header = (ROOT / "include" / "papcoll.h").read_text()
    body = header.split("typedef struct papcoll_config {", 1)[1].split("} papcoll_config;")[0]
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    return {re.findall(r"\w+", declaration)[-1] for declaration in body.split(";")
            if declaration.strip()}


def python_config_fields() -> set[str]:
    """The fields of papcoll.Config, read from the source (importing it would start MPI)."""
    tree = ast.parse((ROOT / "python" / "papcoll" / "communicator.py").read_text())
    config = next(node for node in ast.walk(tree)
                  if isinstance(node, ast.ClassDef) and node.name == "Config")
    return {node.target.id for node in config.body
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)}


def table_variables() -> set[str]:
    return {setting.environment for setting in SETTINGS if setting.environment}


def test_every_variable_the_code_reads_is_in_the_table_and_back():
    read = set(c_variables()) | set(python_variables())
    listed = table_variables()
    assert read - listed == set(), "read in the code but missing from papcoll/settings.py"
    assert listed - read == set(), "in papcoll/settings.py but read nowhere"


def test_every_row_is_read_where_it_says():
    for setting in SETTINGS:
        assert setting.reader in READERS and setting.read_in, setting.name
        assert setting.default and setting.accepted and setting.meaning, setting.name
        names = [name for name in (setting.environment, setting.cmake) if name]
        if setting.c:
            names.append(setting.c)
        texts = {path: (ROOT / path).read_text() for path in setting.read_in}
        for path, text in texts.items():  # each file reads it under one of its names
            assert any(re.search(rf"\b{name}\b", text) for name in names), \
                f"{setting.name}: {path} names none of {names}"
        for name in names:  # and each name is read somewhere the row says
            assert any(re.search(rf"\b{name}\b", text) for text in texts.values()), \
                f"{setting.name}: none of {setting.read_in} names {name}"
        if setting.docs:
            assert (ROOT / setting.docs).is_file(), setting.docs


def test_the_c_readers_are_in_the_rows():
    rows = {setting.environment: setting for setting in SETTINGS if setting.environment}
    for name, paths in c_variables().items():
        assert paths <= set(rows[name].read_in), f"{name} is also read in {paths}"


def test_every_setting_of_the_c_parser_is_a_row_that_says_its_grammar():
    """The C table of environment settings (src/core/environment_table.c) is the one
    declaration of what each takes: the row's `accepted` starts with it in words (PAPCOLL_
    TUNING's and PAPCOLL_TAU_MODEL's grammars are their own, said by their rows), and the
    drop-in checks each at MPI_Init, which the row says."""
    rows = {setting.environment: setting for setting in SETTINGS if setting.environment}
    names = c_setting_names()
    assert {"PAPCOLL_TAG_LIMIT", "PAPCOLL_PROGRESS", "PAPCOLL_PROGRESS_CPU"} <= set(names)
    for name in names:
        setting = rows[name]
        grammar = c_grammar(name)
        assert grammar is None or setting.accepted.startswith(grammar), (name, grammar)
        assert "MPI_Init" in setting.when, name


def test_every_config_field_and_cmake_option_is_a_row():
    assert {setting.c for setting in SETTINGS if setting.c} == c_config_fields()
    python_names = " ".join(setting.python or "" for setting in SETTINGS)
    for field in python_config_fields():
        assert f"Config.{field}" in python_names, f"Config.{field} is not in the table"
    assert {setting.cmake for setting in SETTINGS if setting.cmake} == cmake_variables()


def test_names_are_unique():
    names = [name for setting in SETTINGS for name in setting.names]
    assert len(names) == len(set(names))


def test_settings_json_lists_every_row(capsys):
    assert main(["settings", "--json", "-"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [row["name"] for row in rows] == [setting.name for setting in SETTINGS]
    for row in rows:
        assert {"names", "reader", "when", "default", "accepted", "meaning", "read_in",
                "environment", "c", "python", "cmake", "docs"} <= set(row)


def test_settings_table_names_every_variable(capsys):
    assert main(["settings"]) == 0
    printed = capsys.readouterr().out
    for name in table_variables():
        assert name in printed


def test_docs_settings_md_is_the_table_as_it_is_now():
    # regenerate with: papcoll settings --markdown docs/settings.md
    assert (ROOT / "docs" / "settings.md").read_text() == settings_markdown()


def test_markdown_and_json_cannot_both_take_stdout(capsys):
    assert main(["settings", "--json", "-", "--markdown", "-"]) == 2
    assert "stdout" in capsys.readouterr().err
