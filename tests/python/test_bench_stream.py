"""`papcoll bench` as users of OSU and IMB expect it: --stream prints a line as
each size is done, OSU's -m / -i / -x, IMB's t_min / t_max; the CSV a spreadsheet opens and
the README's list of row keys checked against a run; errors said before a job starts
(native:NAME, unknown names, --baseline none); and what native MPI ran with in every row."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import time
from pathlib import Path

import pytest
from conftest import COMMAND_TIMEOUT_SECONDS, VENV_BIN, run_papcoll
from papcoll.cli import build_parser
from papcoll.cli.options import INT32_MAX, element_counts
from papcoll.lab.bench import (
    JSON_ONLY_KEYS,
    bench_program,
    native_algorithm_names,
    readable_bytes,
)
from papcoll.lab.launcher import cores, mpi_flavor, mpiexec_command, native_tuning
from test_hardening_cli import run_cli, valid_report, write_report

README = Path(__file__).parents[2] / "README.md"
ALLREDUCE_SETTING = "MPIR_CVAR_ALLREDUCE_POSIX_INTRA_ALGORITHM"
# a --stream line of the run below: algorithm, size, ...
RESULT_LINE = re.compile(r"native +\d+ ")
QUICK = ["-i", "1", "-x", "0", "--compute-ms", "0", "--max-delay", "0"]


# --- --stream: OSU's line per size, as it finishes ----------------------------------------


def test_stream_prints_each_size_as_it_is_done_in_microseconds(tmp_path):
    # Two sizes; each call sleeps its 300 ms compute phase, so the second size takes at
    # least 3 x 300 ms after the first one's line: a line printed as its size finishes
    # arrives that long before the command ends, a line held back to the end does not.
    json_path = tmp_path / "rows.json"
    process = subprocess.Popen(
        [str(VENV_BIN / "papcoll"), "bench", "-P", "2", "--algorithms", "native", "--stream",
         "--sizes", "8,16", "-i", "3", "-x", "0", "--compute-ms", "300", "--max-delay", "0",
         "--json", str(json_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    lines, first_result_at = [], None
    for line in process.stdout:
        lines.append(line.rstrip("\n"))
        if first_result_at is None and RESULT_LINE.match(line):
            first_result_at = time.monotonic()
    process.wait(timeout=COMMAND_TIMEOUT_SECONDS)
    ended_at = time.monotonic()
    assert process.returncode == 0, process.stderr.read() if process.stderr else ""
    assert first_result_at is not None, lines
    assert ended_at - first_result_at >= 0.6, lines
    # '#' lines first (what ran, what native ran with, the columns), then one line a size
    header = [line for line in lines if line.startswith("#")]
    # OSU's order: the average first, then the least and the most
    assert header[-1].split()[5:8] == ["t_avg(us)", "t_min(us)", "t_max(us)"], header[-1]
    assert any("native MPI ran with" in line for line in header), header
    results = [line.split() for line in lines if RESULT_LINE.match(line)]
    rows = {row["bytes"]: row for row in json.loads(json_path.read_text())}
    assert [int(result[1]) for result in results] == [8, 16]
    for name, size, delay, t_avg, t_min, t_max, correct in results:
        row = rows[int(size)]
        assert (name, float(delay), correct) == ("native", 0.0, "yes")
        # microseconds, two decimals, the JSON's numbers
        assert float(t_max) == pytest.approx(row["t_max_ms"] * 1e3, abs=0.006)
        assert float(t_min) == pytest.approx(row["t_min_ms"] * 1e3, abs=0.006)
        assert float(t_avg) == pytest.approx(row["avg_elapsed_ms"] * 1e3, abs=0.006)
        assert float(t_min) <= float(t_avg) <= float(t_max)
    # the box table follows as the summary
    assert any("e-bar of all-reduce" in line for line in lines[lines.index(header[-1]):])


def test_osu_short_options_are_sizes_iterations_and_warmup():
    parser = build_parser()
    arguments = parser.parse_args(["bench", "-m", "1K", "-i", "7", "-x", "3"])
    assert (arguments.iterations, arguments.warmup) == (7, 3)
    # OSU's -m MAX: from the smallest message (one float) up to MAX, doubling
    assert element_counts(arguments, 4, "float elements", INT32_MAX) == \
        [1, 2, 4, 8, 16, 32, 64, 128, 256]
    arguments = parser.parse_args(["bench", "-m", "16:64", "--datatype", "double"])
    assert element_counts(arguments, 8, "double elements", INT32_MAX) == [2, 4, 8]
    # no short option is two options' (argparse would refuse it), and OSU's are the ones
    bench = parser._subparsers._group_actions[0].choices["bench"]  # type: ignore[union-attr]
    shorts = {option: action.dest for action in bench._actions
              for option in action.option_strings if not option.startswith("--")}
    assert shorts == {"-h": "help", "-P": "ranks", "-m": "osu_sizes", "-i": "iterations",
                      "-x": "warmup"}


@pytest.mark.parametrize(("arguments", "message"), [
    (["-m", "0:8"], "-m: sizes must be at least 1 byte"),
    (["-m", "64:8"], "the range ends below its start"),
    (["-m", "4", "--datatype", "int64"], "-m: MAX 4 is below the smallest message, 8 bytes"),
    (["-m", "8:64", "--sizes", "8"], "exclude each other"),
    (["-m", "1:2:3"], "is not [MIN:]MAX"),
    (["--sizes", "4:64G"], "is more than 2147483647 float elements"),
    (["--max-delay", ",".join(str(delay) for delay in range(33))],
     "--max-delay: 33 of them; one run takes at most 32"),
    (["--baseline", "none", "--plot", "speedups.png"], "it needs one, not --baseline none"),
])
def test_bench_refuses_osu_sizes_and_limits_before_launching(arguments, message):
    status, _, err = run_cli(["bench", "--ranks", "2", *arguments])
    assert status == 2 and message in err and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err


# --- names: refused before MPI starts, every name listed --------------------------------------


def test_unknown_native_name_is_refused_before_a_job_naming_the_librarys():
    known = native_algorithm_names()
    if known is None:
        pytest.skip("this MPI does not tell its algorithms before MPI_Init")
    status, _, err = run_cli(["bench", "--algorithms", "ring,native:no_such_algorithm",
                              "--count", "8"])
    assert status == 2, err
    assert "--algorithms: native:no_such_algorithm is not one of the all-reduce " \
           "algorithms of this MPI" in err
    assert ", ".join(known[1]) in err
    # one line, in the command's words: not papcoll-bench's failure and usage
    assert len(err.strip().splitlines()) == 1, err
    for internal in ("--counts", "--max-delays-ms", "usage", "papcoll-bench failed"):
        assert internal not in err, err
    status, _, err = run_cli(["bench", "--baseline", "native:nope", "--count", "8"])
    assert status == 2 and err.startswith("papcoll bench: --baseline: native:nope"), err


def test_the_names_python_checks_are_the_ones_the_job_accepts():
    # papcoll-bench --native-names (no MPI_Init) and a job's own refusal list the same
    # names; the job's refusal says the problem alone, without papcoll-bench's usage
    known = native_algorithm_names()
    if known is None:
        pytest.skip("this MPI does not tell its algorithms before MPI_Init")
    if mpi_flavor() == "mpich":
        assert {"recursive_doubling", "ring", "reduce_scatter_allgather"} <= set(known[1])
    argv, environment = mpiexec_command(2, [
        str(bench_program()), "--algorithms", "native:nope", "--counts", "8", "--mode",
        "rand-late", "--max-delays-ms", "0", "--iterations", "1", "--warmup", "0",
        "--compute-ms", "0", "--json", "-"])
    result = subprocess.run(argv, env=environment, capture_output=True, text=True,
                            timeout=COMMAND_TIMEOUT_SECONDS)
    assert result.returncode == 2, result.stderr
    listed = re.search(r"it knows: (.*)", result.stderr)
    assert listed is not None, result.stderr
    assert listed.group(1).strip().split(", ") == list(known[1])
    assert "usage" not in result.stderr and "--counts" not in result.stderr


@pytest.mark.parametrize(("command", "listed"), [
    ("bench", "known: auto, native (MPI_Allreduce as the MPI library chooses), native:NAME"),
    ("sim", "known: auto; papcoll's: linear,"),
])
def test_an_unknown_algorithm_lists_auto_and_native_too(command, listed):
    status, _, err = run_cli([command, "--ranks", "4", "--algorithms", "ring,foo"])
    assert status == 2, err
    assert f"papcoll {command}: --algorithms: unknown algorithm 'foo'" in err
    assert listed in err and "ring" in err


# --- the rows: keys as documented, a CSV a spreadsheet reads, native's tuning --------------


def _documented_keys() -> tuple[set[str], set[str]]:
    """(every key the README lists for a bench row, the JSON-only ones among them)."""
    text = README.read_text()
    block = re.search(r"<!-- bench row keys:.*?-->(.*?)<!-- end of bench row keys -->", text,
                      flags=re.DOTALL)
    assert block is not None, "README.md lost its list of bench row keys"
    both, json_only = block.group(1).split("In the JSON only:")
    names = re.compile(r"`([a-z][a-z0-9_]*)`")
    return set(names.findall(both)) | set(names.findall(json_only)), set(
        names.findall(json_only))


@pytest.fixture(scope="module")
def every_key_run(tmp_path_factory):
    # auto and --preload: the run that writes every key a row can have
    directory = tmp_path_factory.mktemp("keys")
    json_path, csv_path = directory / "rows.json", directory / "rows.csv"
    result = run_papcoll("bench", "-P", "2", "--algorithms", "auto", "--preload", "--sizes",
                         "8", *QUICK, "--json", str(json_path), "--csv", str(csv_path))
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(json_path.read_text()), csv_path


def test_readme_lists_the_keys_a_row_has(every_key_run):
    rows, csv_path = every_key_run
    documented, json_only = _documented_keys()
    # and `smpi`, which only rows of `--smpi` jobs have (tests/python/test_smpi.py)
    written = {key for row in rows for key in row} | {"smpi"}
    assert written == documented, (sorted(written - documented), sorted(documented - written))
    assert json_only == set(JSON_ONLY_KEYS)
    with open(csv_path, newline="") as file:
        header = next(csv.reader(file))
    assert set(header) == documented - json_only


def test_csv_cells_hold_one_value_each(every_key_run):
    _, csv_path = every_key_run
    with open(csv_path, newline="") as file:
        table = list(csv.DictReader(file))
    for line in table:
        for key, cell in line.items():
            # no list or object, no Python repr: true/false and empty (null) as the JSON says
            assert not cell.startswith(("[", "{", "(")), (key, cell)
            assert cell not in ("None", "True", "False", "nan"), (key, cell)


def test_baseline_none_runs_no_baseline_and_shows_no_speedup_column(tmp_path):
    json_path = tmp_path / "rows.json"
    result = run_papcoll("bench", "-P", "2", "--algorithms", "ring", "--baseline", "none",
                         "--sizes", "8", *QUICK, "--json", str(json_path))
    assert result.returncode == 0, result.stderr[-3000:]
    rows = json.loads(json_path.read_text())
    assert [row["algorithm"] for row in rows] == ["ring"]  # native was not added
    assert rows[0]["baseline"] is None and rows[0]["speedup_vs_baseline"] is None
    assert rows[0]["time_vs_baseline"] is None and rows[0]["time_2sigma"] is None
    assert rows[0]["median_time_vs_baseline"] is None
    assert "e-bar /" not in result.stdout and "of medians" not in result.stdout
    assert "relative to" not in result.stdout and "speedup" not in result.stdout
    assert "correct" in result.stdout


@pytest.mark.skipif(mpi_flavor() != "mpich", reason="MPICH's control variable")
def test_the_launchers_native_tuning_is_what_a_row_says(monkeypatch):
    monkeypatch.delenv(ALLREDUCE_SETTING, raising=False)
    crowded = cores() + 1
    argv, environment = mpiexec_command(crowded, ["program"])
    tuning = native_tuning(crowded, argv, environment)
    assert tuning.oversubscribed and tuning.cores == cores()
    assert tuning.settings == {ALLREDUCE_SETTING: "mpir"}
    assert tuning.by_papcoll == (ALLREDUCE_SETTING,)
    assert tuning.summary() == f"{ALLREDUCE_SETTING}=mpir"
    # the user's own value wins, and is theirs
    monkeypatch.setenv(ALLREDUCE_SETTING, "recursive_doubling")
    argv, environment = mpiexec_command(crowded, ["program"])
    tuning = native_tuning(crowded, argv, environment)
    assert tuning.settings == {ALLREDUCE_SETTING: "recursive_doubling"} and not tuning.by_papcoll
    # a core per rank: nothing set, MPI's defaults
    monkeypatch.delenv(ALLREDUCE_SETTING)
    argv, environment = mpiexec_command(1, ["program"])
    tuning = native_tuning(1, argv, environment)
    assert not tuning.oversubscribed and tuning.summary() == ""


def test_every_row_says_what_native_ran_with(every_key_run):
    rows, _ = every_key_run
    for row in rows:
        assert row["oversubscribed"] is (2 > cores()) and row["cores"] == cores()
        assert isinstance(row["native_tuning"], str)
        if mpi_flavor() == "mpich":
            assert (f"{ALLREDUCE_SETTING}=" in row["native_tuning"]) is row["oversubscribed"]


# --- sizes as people read them --------------------------------------------------------------


def test_sizes_below_a_kib_are_bytes():
    assert [readable_bytes(size) for size in (8, 1023, 1024, 1536, 4 << 20)] == [
        "8 B", "1023 B", "1 KiB", "1.5 KiB", "4 MiB"]


def test_report_shows_an_8_byte_call_as_8_bytes(tmp_path):
    document = valid_report(sites=2)
    for site in document["sites"]:
        site["bytes_per_call"] = 8
    status, out, err = run_cli(["report", write_report(tmp_path, document)])
    assert status == 0, err
    assert "size/call" in out and " 8 B " in out and "0.0 KiB" not in out
