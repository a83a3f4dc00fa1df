"""The front doors' audit in the command line and the Python API, each kept fixed: `papcoll
report` on a hostile or huge report, --compute-ms, an empty PAPCOLL_PMPI_LIBRARY,
Config.check_agreement, `reproduce --network`, a 5,000-digit number in a network file,
--plot and --timeline without matplotlib, --version, and `validate --testbed` without
--network. Commands run in process (cli.main) unless they need a fresh interpreter."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from fuzzing import fuzz, json_leaves, json_trees, mutated, numbers, watchdog
from hypothesis import event, example, given
from hypothesis import strategies as st
from papcoll import cli, pmpi
from papcoll.cli import bench, report, sim
from papcoll.network import NetworkError, load_network

# --- helpers ------------------------------------------------------------------------------


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of `papcoll ARGV` in this process; an exception that
    main() does not turn into an exit status propagates, and fails the test."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = cli.main(argv)
        except SystemExit as exit_:  # argparse's usage errors, --help and --version
            status = exit_.code if isinstance(exit_.code, int) else 2
    return status, out.getvalue(), err.getvalue()


def assert_one_line_refusal(status: int, err: str, *fragments: str) -> None:
    assert status == 2, err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    for fragment in fragments:
        assert fragment in err, err


def site_entry(index: int, choice: bool = True) -> dict[str, Any]:
    """One site as src/pmpi/report.c writes it (write_site, write_closed_loop)."""
    return {
        "communicator": "MPI_COMM_WORLD", "communicator_size": 4, "freed": index % 2 == 1,
        "site": f"main+0x{index:x} (app.c:{index})", "call": "MPI_Allreduce",
        "ranks_reporting": 4,
        "calls": 10 + index, "papcoll_calls": 8, "native_calls": 2 + index,
        "nonblocking_calls": 0, "bytes_per_call": 1048576,
        # distinct, so that the busiest-first order is one order
        "seconds_inside": 1.0 + index * 1e-4, "seconds_per_call": 1e-4,
        "imbalance_seconds": 2e-5, "estimated_saving_seconds": -1e-5,
        "probe_calls": 1, "overruled_calls": 0,
        "last_choice": {"ran": "straggler", "model": "straggler", "alternative": "native",
                        "wait_seconds": 1e-4, "model_predicted_seconds": -2e-5,
                        "model_observed_seconds": None,
                        "alternative_predicted_seconds": 2e-4,
                        "alternative_observed_seconds": 3e-4} if choice else None,
        "algorithms": {"straggler": 8}, "native_reasons": {"below_min_bytes": 2 + index},
    }


def valid_report(sites: int = 3) -> dict[str, Any]:
    """A report as src/pmpi/report.c writes it (write_report), with `sites` sites."""
    return {
        "papcoll_report": 1, "complete": True, "ranks": 4, "ranks_reporting": 4,
        "algorithm": "auto", "min_bytes": 65536, "mpi": "MPICH Version: 4.0",
        "totals": {"calls": 33, "papcoll_calls": 24, "native_calls": 9,
                   "seconds_inside": 3.0, "estimated_saving_seconds": -3e-5,
                   "native_reasons": {"below_min_bytes": 9}},
        "sites": [site_entry(index, choice=index != 1) for index in range(sites)],
    }


# json.dumps cannot write an integer of more digits than int() converts (4300): a value of
# this text becomes one in the file
FIVE_THOUSAND_DIGITS = "an integer of 5000 digits"


def write_report(folder: Path, document: Any, name: str = "report.json") -> str:
    path = folder / name
    path.write_text(json.dumps(document).replace(f'"{FIVE_THOUSAND_DIGITS}"', "1" * 5000))
    return str(path)


# --- 1. papcoll report ----------------------------------------------------------------------


def test_valid_report_renders(tmp_path: Path) -> None:
    path = write_report(tmp_path, valid_report())
    status, out, err = run_cli(["report", path])
    assert status == 0, err
    assert "main+0x2 (app.c:2)" in out and "straggler -0.020/-" in out
    assert pmpi.load_report(path)["sites"][0]["site"] == "main+0x0 (app.c:0)"


def _set_site(field: str, value: Any) -> Any:
    return lambda document: document["sites"][0].__setitem__(field, value)


def _set(field: str, value: Any) -> Any:
    return lambda document: document.__setitem__(field, value)


# (what the hostile file does, its change to a valid report, what the message says)
HOSTILE_REPORTS: list[tuple[str, Any, str]] = [
    ("sites a number", _set("sites", 5), "sites must be a list, not 5"),
    ("complete 'no'", _set("complete", "no"), "complete must be true or false, not 'no'"),
    ("complete 0", _set("complete", 0), "complete must be true or false"),
    ("NaN", _set_site("seconds_per_call", float("nan")), "NaN is not a number JSON allows"),
    ("Infinity", lambda document: document["totals"].__setitem__(
        "seconds_inside", float("inf")), "Infinity is not a number JSON allows"),
    ("negative calls", _set_site("calls", -3),
     "sites[0].calls must be a whole number from 0 to 2^63-1, not -3"),
    ("negative seconds", _set_site("imbalance_seconds", -1.0),
     "sites[0].imbalance_seconds must be a finite number >= 0, not -1.0"),
    ("seconds beyond a float", _set_site("seconds_inside", 10**308),
     "sites[0].seconds_inside must be a finite number >= 0"),
    ("a 5000-digit number", _set_site("calls", FIVE_THOUSAND_DIGITS),
     "an integer of 5000 digits, beyond any number a report holds"),
    ("calls true", _set_site("calls", True), "sites[0].calls must be a whole number"),
    ("calls beyond int64", _set_site("calls", 2**63), "from 0 to 2^63-1"),
    ("site a number", _set_site("site", 7), "sites[0].site must be text, not 7"),
    ("call not an all-reduce", _set_site("call", "MPI_Bcast"),
     "sites[0].call must be one of MPI_Allreduce, MPI_Iallreduce, persistent, not "
     "'MPI_Bcast'"),
    ("a site a list", lambda document: document["sites"].__setitem__(0, []),
     "sites[0] must be an object, not []"),
    ("algorithms a list", _set_site("algorithms", ["ring"]),
     "sites[0].algorithms must be an object of counts"),
    ("a count text", _set_site("native_reasons", {"op": "3"}),
     "sites[0].native_reasons['op'] must be a whole number"),
    ("last_choice text", _set_site("last_choice", "ring"),
     "sites[0].last_choice must be an object"),
    ("last_choice half", _set_site("last_choice", {"model": "ring"}),
     "sites[0].last_choice lacks alternative"),
    ("a choice's time text", lambda document: document["sites"][0]["last_choice"].__setitem__(
        "model_observed_seconds", "1"), "last_choice.model_observed_seconds must be a finite"),
    ("totals a list", _set("totals", []), "totals must be an object, not []"),
    ("format true", _set("papcoll_report", True), "not a papcoll report"),
    ("an empty object", lambda document: document.clear(), "not a papcoll report"),
    ("no ranks", lambda document: document.pop("ranks"), "the report has no \"ranks\""),
    ("a site's field missing", lambda document: document["sites"][0].pop("freed"),
     "sites[0] lacks freed"),
]


@pytest.mark.parametrize(("change", "message"), [case[1:] for case in HOSTILE_REPORTS],
                         ids=[case[0] for case in HOSTILE_REPORTS])
def test_hostile_report_is_refused_in_one_line_naming_the_file(tmp_path: Path, change: Any,
                                                               message: str) -> None:
    document = valid_report()
    change(document)
    path = write_report(tmp_path, document)
    status, out, err = run_cli(["report", path])
    assert_one_line_refusal(status, err, f"papcoll report: {path}: ", message)
    assert out == ""


@pytest.mark.parametrize(("content", "message"), [
    (b'{"papcoll_report": 1,', "not valid JSON: Expecting"),
    (b'{"a": "\xff\xfe"}', "not UTF-8 text (byte 7)"),
    (b"[" * 100_000 + b"]" * 100_000, "not valid JSON"),
])
def test_report_that_is_not_json_names_the_file(tmp_path: Path, content: bytes,
                                                message: str) -> None:
    path = tmp_path / "broken.json"
    path.write_bytes(content)
    status, _, err = run_cli(["report", str(path)])
    assert_one_line_refusal(status, err, str(path), message)


def test_report_that_is_a_folder_names_it(tmp_path: Path) -> None:
    status, _, err = run_cli(["report", str(tmp_path)])
    assert_one_line_refusal(status, err, f"cannot read report {tmp_path}: Is a directory")


def test_markup_and_control_characters_of_a_report_are_shown_as_text(tmp_path: Path) -> None:
    """A call site "f[/]" raised rich's MarkupError; an escape sequence reached the
    terminal."""
    document = valid_report(1)
    document["sites"][0]["site"] = "f[/]x[bold]y"
    document["sites"][0]["communicator"] = "comm\x1b[2J"
    document["sites"][0]["algorithms"] = {"[red]ring": 8}
    (tmp_path / "[").mkdir()  # the file's path holds "[/]": the title shows it
    path = write_report(tmp_path / "[", document, "]report.json")
    status, out, err = run_cli(["report", path])
    assert status == 0, err
    assert "f[/]x[bold]y" in out and "[red]ring 8" in out and "[/]report.json" in out
    assert "\x1b" not in out and "comm\\x1b[2J" in out


def test_report_of_20000_sites_shows_the_busiest_and_writes_every_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """200,000 sites took 312 s and 1.9 GB: rich renders a table whole, in memory, at some
    2 ms a row. The table now has the busiest TABLE_SITES rows whatever the report's size
    (counted here, not timed); --json still has every site, busiest first."""
    sites = 20_000
    path = write_report(tmp_path, valid_report(sites))
    added: list[tuple[Any, ...]] = []
    add_row = report.Table.add_row
    monkeypatch.setattr(report.Table, "add_row",
                        lambda table, *cells, **options: added.append(cells) or add_row(
                            table, *cells, **options))
    status, out, err = run_cli(["report", path])
    assert status == 0, err
    assert len(added) == report.TABLE_SITES
    # the busiest first: site i spent 1 + i * 1e-4 s inside MPI_Allreduce
    assert [row[1] for row in added[:2]] == [f"main+0x{index:x} (app.c:{index})"
                                             for index in (sites - 1, sites - 2)]
    assert f"{sites - report.TABLE_SITES:,} quieter call sites not shown (of {sites:,}" in out
    status, out, err = run_cli(["report", path, "--json", "-"])
    assert status == 0, err
    rows = json.loads(out)
    assert len(rows) == sites
    assert [row["site"] for row in rows] == [f"main+0x{index:x} (app.c:{index})"
                                             for index in reversed(range(sites))]


# the property: any edit of a valid report renders, or is refused in one line that names the
# file; no other exception escapes main() (a TypeError, KeyError, MarkupError would)
report_values = st.one_of(numbers, json_leaves, json_trees, st.floats(),
                          st.sampled_from(("[/]", "[bold]x", "\x1b[2J", "", "no", "true")))


def _paths(document: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a parsed JSON document, as the keys and indices that lead to it."""
    found = [prefix]
    if isinstance(document, dict):
        for key, value in document.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            found += _paths(value, (*prefix, index))
    return found


@st.composite
def mutated_reports(draw: st.DrawFn) -> str:
    """A valid report's text with up to three of its values replaced, removed or added to,
    and, sometimes, the text itself edited character by character."""
    document = valid_report(draw(st.integers(0, 3)))
    for _ in range(draw(st.integers(0, 3))):
        path = draw(st.sampled_from(_paths(document)))
        if not path:
            document = draw(report_values)
            continue
        parent = document
        for key in path[:-1]:
            parent = parent[key]
        edit = draw(st.sampled_from(("replace", "replace", "remove", "add")))
        if edit == "replace":
            parent[path[-1]] = draw(report_values)
        elif edit == "remove":
            del parent[path[-1]]
        elif isinstance(parent[path[-1]], dict):
            parent[path[-1]][draw(st.text(max_size=6))] = draw(report_values)
        elif isinstance(parent[path[-1]], list):
            parent[path[-1]].append(draw(report_values))
    text = json.dumps(document)  # NaN and Infinity as Python writes them: not JSON
    if draw(st.integers(0, 4)) == 0:
        text = draw(mutated(text))
    return text


@fuzz
@given(text=mutated_reports(), as_json=st.booleans())
@example(text=json.dumps(valid_report()), as_json=False)
@example(text=json.dumps({**valid_report(), "sites": 5}), as_json=False)
def test_any_report_renders_or_is_refused_naming_the_file(text: str, as_json: bool) -> None:
    with watchdog(), tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "report.json"
        path.write_bytes(text.encode("utf-8", "surrogatepass"))
        status, _, err = run_cli(["report", str(path), *(["--json", "-"] if as_json else [])])
    assert "Traceback" not in err
    if status == 0:
        event("rendered")
        return
    # every refusal comes from the report's checks, which name the file
    assert_one_line_refusal(status, err, f"papcoll report: {path}: ")
    event("refused")


# --- 2. --compute-ms ------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["bench", "validate"])
@pytest.mark.parametrize("value", ["-5", "nan", "inf", "1e9", "5ms"])
def test_compute_ms_is_checked_under_its_own_name(command: str, value: str) -> None:
    """papcoll-bench refused --compute-ms -5 as "bad max delay"."""
    status, _, err = run_cli([command, "--compute-ms", value])
    assert_one_line_refusal(status, err, "--compute-ms must be a number of milliseconds from "
                                         f"0 to 60000, not '{value}'")


# --- 3. PAPCOLL_PMPI_LIBRARY ------------------------------------------------------------------


def _preload_outcome() -> str:
    try:
        return str(pmpi.preload_library_path())
    except FileNotFoundError as error:
        return f"FileNotFoundError {error}"


def test_empty_pmpi_library_variable_is_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    """`papcoll preload` printed "." (Path("")) for PAPCOLL_PMPI_LIBRARY=''."""
    monkeypatch.delenv("PAPCOLL_PMPI_LIBRARY", raising=False)
    unset = _preload_outcome()
    monkeypatch.setenv("PAPCOLL_PMPI_LIBRARY", "")
    assert _preload_outcome() == unset
    assert _preload_outcome() != "."


def test_pmpi_library_variable_naming_no_file_is_refused(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for chosen in (str(tmp_path), str(tmp_path / "missing.so")):
        monkeypatch.setenv("PAPCOLL_PMPI_LIBRARY", chosen)
        status, out, err = run_cli(["preload"])
        assert_one_line_refusal(status, err, f"PAPCOLL_PMPI_LIBRARY names no file: {chosen}")
        assert out == ""
    library = tmp_path / "libpapcoll_pmpi.so"
    library.write_bytes(b"")
    monkeypatch.setenv("PAPCOLL_PMPI_LIBRARY", str(library))
    assert run_cli(["preload"])[1] == f"{library}\n"


# --- 4. Config.check_agreement -----------------------------------------------------------------

CONFIG_CHECK = """
from mpi4py import rc
rc.initialize = False  # a Config needs no MPI: checking it must not start one
import papcoll
for value in ("yes", 1, None):
    try:
        papcoll.Config(check_agreement=value)
    except TypeError as error:
        print(error)
print(papcoll.Config(check_agreement=True).check_agreement)
"""


def test_config_check_agreement_must_be_a_bool() -> None:
    """Config(check_agreement='yes') was taken as true; reproducible= already refused it."""
    pytest.importorskip("mpi4py")
    result = subprocess.run([sys.executable, "-c", CONFIG_CHECK], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "Config.check_agreement must be True or False, not 'yes'",
        "Config.check_agreement must be True or False, not 1",
        "Config.check_agreement must be True or False, not None",
        "True"]


# --- 5. reproduce --network -------------------------------------------------------------------


@pytest.mark.parametrize("table", ["seed003-table1", "seed001-crossover", "seed002-tables"])
def test_reproduce_refuses_a_network_its_table_does_not_use(table: str) -> None:
    """seed003-table1 --network bogus ran on its own network, the option silently ignored."""
    status, out, err = run_cli(["reproduce", table, "--network", "bogus"])
    assert_one_line_refusal(status, err, f"--network applies to seed004-table2 only: {table}")
    assert out == ""


# --- 6. a number too long for int() in a network file ------------------------------------------


@pytest.mark.parametrize(("name", "text", "field"), [
    ("net.json", '{"model": {"latency": 1%s}}', "model.latency is a number of 5000 digits"),
    ("net.json", '{"topology": {"switches": [{"name": "s"}], "hosts": [{"name": "h", '
                 '"parent": "s", "count": -1%s}]}}',
     "topology.hosts[0].count is a number of 5000 digits"),
    ("net.toml", "[model]\nlatency = 1%s\n", "line 2 (latency): a number of 5000 digits"),
])
def test_network_number_of_5000_digits_names_file_and_field(tmp_path: Path, name: str,
                                                            text: str, field: str) -> None:
    """Python's own message named neither: "Exceeds the limit (4300 digits) for integer
    string conversion"."""
    path = tmp_path / name
    path.write_text(text % ("1" * 4999))
    with pytest.raises(NetworkError) as refused:
        load_network(str(path))
    assert str(refused.value).startswith(f"{path}: {field}")
    status, _, err = run_cli(["sim", "--ranks", "4", "--count", "1K", "--algorithms", "ring",
                              "--network", str(path)])
    assert_one_line_refusal(status, err, f"{path}: {field}")


# --- 7. --plot and --timeline without matplotlib ------------------------------------------------


def _run_started(arguments: Any) -> int:
    raise AssertionError("the run started before matplotlib was checked")


@pytest.mark.parametrize(("module", "handler", "argv"), [
    (bench, "command_bench", ["bench", "--ranks", "2", "--count", "1", "--plot", "{out}"]),
    (sim, "command_sim", ["sim", "--ranks", "4", "--count", "1K", "--timeline", "{out}"]),
])
def test_plot_without_matplotlib_is_refused_before_the_run(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, module: Any, handler: str,
        argv: list[str]) -> None:
    """--plot and --timeline raised ModuleNotFoundError after the whole sweep."""
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` fails
    monkeypatch.setattr(module, handler, _run_started)
    out = str(tmp_path / "figure.png")
    status, _, err = run_cli([out if argument == "{out}" else argument for argument in argv])
    option = argv[-2]
    assert_one_line_refusal(status, err, f"{option} draws with matplotlib, which cannot be "
                                         "imported", "pip install 'papcoll[plot]'")


# --- 8. --version -------------------------------------------------------------------------------


def test_version_prints_the_version() -> None:
    status, out, err = run_cli(["--version"])
    assert status == 0, err
    assert out == f"papcoll {cli.papcoll_version()}\n"
    assert cli.papcoll_version().split(".")[0].isdigit()


@pytest.mark.parametrize("argv", [["--version", "extra"], ["--version", "algorithms"],
                                  ["--version", "--version"], ["--version", "sim", "--ranks", "4"]])
def test_version_with_anything_after_it_is_a_usage_error(argv: list[str]) -> None:
    """argparse's version action printed the version and exited 0 whatever followed it, so
    `papcoll --version extra` hid a typo (a command meant, not run)."""
    status, out, err = run_cli(argv)
    assert_one_line_refusal(status, err, "--version takes nothing after it", repr(argv[1]))
    assert out == ""


# --- 9. validate --testbed without --network -----------------------------------------------------


def test_validate_on_a_testbed_needs_network() -> None:
    """It compared the testbed's measurements with the uncalibrated hockney preset."""
    status, out, err = run_cli(["validate", "--testbed", "ethernet-1g"])
    assert_one_line_refusal(status, err, "--testbed ethernet-1g needs --network")
    assert out == ""


def test_report_fuzz_examples_are_valid_to_begin_with(tmp_path: Path) -> None:
    """The fuzzing starts from reports the checks accept: its refusals are the edits'."""
    for sites in range(4):
        document = copy.deepcopy(valid_report(sites))
        pmpi.check_report(document)
        assert run_cli(["report", write_report(tmp_path, document)])[0] == 0


# --- the report's words: what each count is, and counts that contradict each other ---------


def test_report_names_each_native_and_says_the_saving_is_modelled(tmp_path: Path) -> None:
    document = valid_report()
    document["sites"][0]["algorithms"] = {"straggler": 3, "native": 5}
    document["sites"][2].update(call="MPI_Iallreduce", nonblocking_calls=12)
    status, out, err = run_cli(["report", write_report(tmp_path, document)])
    assert status == 0 and err == "", err
    line = " ".join(out.split())  # the console folds the totals line
    assert ("33 calls on 4 ranks (12 of them MPI_Iallreduce posts or persistent starts, timed "
            "to the end of the post, not of the wait): papcoll decided 24 (auto ran MPI's own "
            "all-reduce in 5 of them), passed 9 straight to MPI; 3.000 s inside the calls per "
            "rank; auto's cost model estimated -0.030 ms saved against MPI_Allreduce "
            "(modelled, not measured") in line
    assert "inside MPI_Allreduce" not in line and "estimated saving" not in line
    assert "passed to MPI: calls papcoll left to MPI" in line
    assert "modelled saving: auto's cost model's estimate against MPI_Allreduce, not a " \
           "measurement" in line


@pytest.mark.parametrize(("edit", "fragment"), [
    (_set_site("nonblocking_calls", 11), "11 non-blocking or persistent calls of 10 calls"),
    (lambda document: document["sites"][0].update(call="persistent", nonblocking_calls=4),
     "persistent with 4 of its 10 calls non-blocking"),
    (_set_site("nonblocking_calls", 3), "MPI_Allreduce with 3 non-blocking calls"),
    (_set_site("algorithms", {"straggler": 8, "native": 2}),
     "its algorithms ran 10 calls of the 8 papcoll decided"),
    (_set_site("papcoll_calls", 9), "papcoll decided 9 and passed 2 to MPI, not the 10 calls"),
    (_set_site("native_reasons", {"below_min_bytes": 1}),
     "native reasons count 1 calls, not its 2 passed to MPI"),
    (_set_site("overruled_calls", 8), "1 probes and 8 overruled of the 8 calls"),
    (lambda document: document["totals"].update(calls=40), "totals: papcoll decided 24"),
])
def test_a_report_whose_counts_contradict_each_other_is_flagged(tmp_path: Path, edit: Any,
                                                                fragment: str) -> None:
    document = valid_report()
    assert pmpi.report_contradictions(document) == []  # the valid one is consistent
    edit(document)
    for argv in (["report"], ["report", "--json", "-"]):
        status, _, err = run_cli([*argv, write_report(tmp_path, document)])
        assert status == 0
        assert "warning: the report contradicts itself" in err and fragment in err, err


def test_report_explains_auto_running_the_side_measured_slower(tmp_path: Path) -> None:
    """auto ran native in most calls while its last decision measured native at 1588 ms and
    straggler at 9.6 ms, overruled 0: the report says why (too few measurements at that
    lateness level), not nothing."""
    document = valid_report()
    site = document["sites"][0]
    site["algorithms"] = {"native": 17, "straggler": 13}
    site.update(calls=32, papcoll_calls=30, overruled_calls=0)
    site["last_choice"].update(model="native", alternative="straggler",
                               model_observed_seconds=1.588,
                               alternative_observed_seconds=0.0096)
    document["totals"].update(calls=55, papcoll_calls=46)
    assert pmpi.report_contradictions(document) == []
    status, out, err = run_cli(["report", write_report(tmp_path, document)])
    assert status == 0 and err == "", err
    line = " ".join(out.split())
    assert ("at auto's last decision straggler measured 9.600 ms against native 1588.000 ms "
            "(medians from the last arrival), yet native ran most calls (17 of 32): auto "
            "switches only once each side has 3 measurements at that lateness level") in line
    site["algorithms"] = {"native": 10, "straggler": 20}  # it did switch: nothing to explain
    status, out, _ = run_cli(["report", write_report(tmp_path, document)])
    assert "at auto's last decision" not in out
