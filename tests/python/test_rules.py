"""A rules file (docs/rules.md): auto's choice forced per call shape, checked before the
model, through the C API (tests/mpi/rules.c), the Python API (programs/rules_check.py) and
the drop-in (tests/pmpi/rules_unmodified.c, PAPCOLL_RULES), every result compared with
MPI_Allreduce's or its closed form; bad files refused naming the line; `papcoll report
--rules` writing a file that makes the same decisions again."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import run_papcoll
from papcoll.lab.launcher import mpi_flavor
from papcoll.pmpi import load_report
from papcoll.rules import rules_from_report
from test_mpi import run_mpi
from test_pmpi import BUILD, run_preloaded
from test_python_api import PROGRAMS, run_python_mpi

# MPI_ERR_ARG's number: MPICH and Open MPI number the error classes differently
MPI_ERR_ARG = 12 if mpi_flavor() == "mpich" else 13

# One rule a line, so that rule k (from 0) is on line k + 2.
RULES = [
    {"bytes": [0, 4096], "datatype": "MPI_INT", "algorithm": "recursive_doubling"},
    {"bytes": [0, 65536], "op": "MPI_SUM", "datatype": "MPI_DOUBLE", "algorithm": "ring"},
    {"bytes": [65536, None], "algorithm": "native"},
    {"algorithm": "binomial"},
]
# The shapes of tests/mpi/rules.c and programs/rules_check.py, and the rule each matches:
# 400 bytes of MPI_INT, 8000 and 160000 of MPI_DOUBLE sums, 4000 of MPI_FLOAT maxima.
EXPECTED_RULE = {"int_sum_100": 0, "double_sum_1000": 1, "double_sum_20000": 2,
                 "float_max_1000": 3}
KINDS = ("blocking", "nonblocking", "persistent")


def write_rules(path: Path, rules: list[dict[str, object]]) -> Path:
    lines = ",\n".join(json.dumps(rule) for rule in rules)
    path.write_text('{"papcoll_rules": 1, "rules": [\n' + lines + "\n]}\n")
    return path


def choices(stdout: str) -> dict[tuple[str, str], tuple[str, str, bool]]:
    """{(kind, shape): (algorithm, rule, equal)} from the programs' "choice" lines."""
    found = {}
    for line in stdout.splitlines():
        if line.startswith("choice "):
            _, kind, shape, algorithm, rule, equal = line.split()
            found[(kind, shape)] = (algorithm, rule, equal == "1")
    return found


def assert_forced(result: subprocess.CompletedProcess[str], path: Path) -> None:
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    found = choices(result.stdout)
    for shape, index in EXPECTED_RULE.items():
        for kind in KINDS:
            assert found[(kind, shape)] == (RULES[index]["algorithm"], f"{path}:{index + 2}",
                                            True), (kind, shape, result.stdout)


@pytest.mark.parametrize("ranks", [2, 3])
def test_the_c_api_runs_what_the_rules_name(tmp_path, ranks):
    path = write_rules(tmp_path / "rules.json", RULES)
    assert_forced(run_mpi(ranks, "mpi_rules", str(path)), path)


def test_the_python_api_runs_what_the_rules_name(tmp_path):
    path = write_rules(tmp_path / "rules.json", RULES)
    assert_forced(run_python_mpi(3, PROGRAMS / "rules_check.py", str(path)), path)


def site_algorithms(report_path: Path) -> dict[int, dict[str, int]]:
    """{bytes per call: {algorithm: calls}} of the report's blocking sites (one shape each)."""
    found = {}
    for site in load_report(report_path)["sites"]:
        if site["nonblocking_calls"] == 0 and site["calls"] > 0:
            found[round(site["bytes_per_call"])] = site["algorithms"]
    return found


@pytest.mark.parametrize("ranks", [2, 4])
def test_the_drop_in_runs_what_the_rules_name(tmp_path, ranks):
    path = write_rules(tmp_path / "rules.json", RULES)
    report_path = tmp_path / "report.json"
    # PAPCOLL_MIN_BYTES unset: with a rules file the small calls are papcoll's too
    result = run_preloaded(ranks, [str(BUILD / "pmpi_rules_unmodified")],
                           {"PAPCOLL_RULES": str(path), "PAPCOLL_REPORT": str(report_path)})
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    calls = ranks * 4 * (3 + 1 + 2)  # per rank: 4 shapes, 3 blocking, 1 post, 2 starts
    assert f"rules_unmodified: {calls} of {calls} equal" in result.stdout, result.stdout
    assert site_algorithms(report_path) == {400: {"recursive_doubling": 3}, 8000: {"ring": 3},
                                            160000: {"native": 3}, 4000: {"binomial": 3}}


# (the file's rules, the line at fault, what the message says)
BAD_FILES = {
    "unknown key": ([{"bytes": [0, 10], "algorithm": "ring", "op": "MPI_SUM"},
                     {"byte": 5, "algorithm": "binomial"}], 3, 'unknown key "byte"'),
    "wrong type": ([{"ranks": "four", "algorithm": "binomial"}], 2,
                   '"ranks" must be a number'),
    "inverted range": ([{"bytes": [100, 10], "algorithm": "binomial"}], 2,
                       "the range [100, 10] is empty"),
    "no algorithm": ([{"bytes": [0, 10]}], 2, 'has no "algorithm"'),
    "unknown algorithm": ([{"algorithm": "rng"}], 2, "unknown algorithm 'rng'"),
    "unknown datatype": ([{"datatype": "MPI_FLAOT", "algorithm": "binomial"}], 2,
                         "'MPI_FLAOT' is not a predefined MPI datatype"),
    "same conditions": ([{"bytes": [0, 10], "algorithm": "binomial"},
                         {"bytes": [0, 10], "algorithm": "linear"}], 3, "the two contradict"),
    "one datatype by two names": ([{"datatype": "MPI_LONG_LONG", "algorithm": "binomial"},
                                   {"datatype": "MPI_LONG_LONG_INT", "algorithm": "linear"}],
                                  3, "the two contradict"),
    "covered by an earlier rule": ([{"ranks": [2, None], "algorithm": "binomial"},
                                    {"ranks": 4, "op": "MPI_SUM", "algorithm": "ring"}], 3,
                                   "the rule on line 2 comes first and matches every call"),
    "commutative-only algorithm on any op": ([{"algorithm": "ring"}], 2,
                                             "needs a commutative op"),
    "never matches": ([{"op": "MPI_SUM", "commutative": False, "algorithm": "binomial"}], 2,
                      "can never match"),
    "native variant on non-blocking calls": ([{"algorithm": "native:ring"}], 2,
                                             'add "call": "blocking"'),
    "native variant the MPI lacks": ([{"call": "blocking", "algorithm": "native:nosuch"}], 2,
                                     "'native:nosuch' is not one of this communicator's"),
}


@pytest.mark.parametrize("case", BAD_FILES, ids=list(BAD_FILES))
def test_a_bad_file_is_refused_naming_its_line(tmp_path, case):
    rules, line, fault = BAD_FILES[case]
    path = write_rules(tmp_path / "rules.json", rules)
    result = run_mpi(2, "mpi_rules", str(path))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert f"rules file '{path}', line {line}: " in result.stdout, result.stdout
    assert fault in result.stdout and f"create-error {MPI_ERR_ARG} " in result.stdout


def test_malformed_json_is_refused_naming_its_line(tmp_path):
    path = tmp_path / "rules.json"
    path.write_text('{"papcoll_rules": 1, "rules": [\n  {"algorithm": "binomial",\n'
                    '   "op": "MPI_SUM",}\n]}\n')
    result = run_mpi(2, "mpi_rules", str(path))
    assert f"rules file '{path}', line 3: '}}' found where" in result.stdout, result.stdout


def test_a_bad_file_stops_the_drop_in_at_mpi_init(tmp_path):
    rules, line, fault = BAD_FILES["covered by an earlier rule"]
    path = write_rules(tmp_path / "rules.json", rules)
    result = run_preloaded(2, [str(BUILD / "pmpi_rules_unmodified")],
                           {"PAPCOLL_RULES": str(path)})
    assert result.returncode != 0
    assert "rules_unmodified:" not in result.stdout  # no call ran
    assert result.stderr.count(f"rules file '{path}', line {line}: ") == 1, result.stderr
    assert fault in result.stderr


def test_a_bad_file_is_refused_through_python(tmp_path):
    path = write_rules(tmp_path / "rules.json", [{"algorithm": "rng"}])
    result = run_python_mpi(2, PROGRAMS / "rules_check.py", str(path))
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"create-error rules file '{path}', line 2: unknown algorithm" in \
        result.stdout.replace("papcoll_comm_create: ", ""), result.stdout


def test_ranks_with_different_files_are_refused_not_hung(tmp_path):
    first = write_rules(tmp_path / "first.json", RULES)
    second = write_rules(tmp_path / "second.json", RULES[1:])
    result = run_mpi(2, "mpi_rules", str(first), str(second))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "the rules file's contents" in result.stdout and "differs between ranks" in \
        result.stdout, result.stdout


def test_a_rule_naming_auto_leaves_the_choice_to_the_model(tmp_path):
    path = write_rules(tmp_path / "rules.json", [{"datatype": "MPI_INT", "algorithm": "auto"},
                                                  {"algorithm": "binomial"}])
    result = run_mpi(2, "mpi_rules", str(path))
    found = choices(result.stdout)
    assert found[("blocking", "int_sum_100")][1] == "-", result.stdout  # the model decided
    assert found[("blocking", "float_max_1000")][:2] == ("binomial", f"{path}:3")
    assert all(equal for _, _, equal in found.values())


def run_with_report(tmp_path: Path, name: str, ranks: int,
                    environment: dict[str, str]) -> dict[str, dict[str, int]]:
    """{call site: {algorithm: calls}} of a drop-in run of tests/pmpi/rules_unmodified.c."""
    report_path = tmp_path / f"{name}.json"
    result = run_preloaded(ranks, [str(BUILD / "pmpi_rules_unmodified")],
                           {"PAPCOLL_REPORT": str(report_path), **environment})
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    calls = ranks * 4 * (3 + 1 + 2)
    assert f"rules_unmodified: {calls} of {calls} equal" in result.stdout, result.stdout
    return {site["site"]: site["algorithms"] for site in load_report(report_path)["sites"]}


def report_to_rules(tmp_path: Path, name: str) -> Path:
    out = tmp_path / f"{name}.rules.json"
    result = run_papcoll("report", str(tmp_path / f"{name}.json"), "--rules", str(out))
    assert result.returncode == 0, result.stderr
    return out


@pytest.mark.parametrize("ranks", [2, 3])
def test_report_rules_round_trip_the_decisions(tmp_path, ranks):
    """Decisions a rules file forced, written back by `papcoll report --rules`, are made
    again by the file written: every site runs what it ran."""
    forced = write_rules(tmp_path / "rules.json", RULES)
    first = run_with_report(tmp_path, "first", ranks, {"PAPCOLL_RULES": str(forced)})
    written = report_to_rules(tmp_path, "first")
    again = run_with_report(tmp_path, "again", ranks, {"PAPCOLL_RULES": str(written)})
    assert again == first
    # one rule per site shape and call kind (the report keeps each site's kinds apart):
    # 4 shapes, each blocking, posted and started
    rules = json.loads(written.read_text())["rules"]
    assert len(rules) == 12
    assert sorted(rule["call"] for rule in rules) == sorted(
        ["blocking", "nonblocking", "persistent"] * 4)


def test_report_rules_of_auto_make_each_sites_most_frequent_decision(tmp_path):
    """auto's own decisions (the model's, its closed loop's probes): the file written names
    each site's most frequent one, and a run with it makes that one on every call."""
    first = run_with_report(tmp_path, "first", 3, {"PAPCOLL_MIN_BYTES": "0"})
    written = report_to_rules(tmp_path, "first")
    again = run_with_report(tmp_path, "again", 3, {"PAPCOLL_RULES": str(written)})
    for site, ran in first.items():
        most = min(ran, key=lambda name: (-ran[name], name))
        assert again[site] == {most: sum(ran.values())}, (site, ran, again[site])


def site(name: str, algorithms: dict[str, int], low: int, high: int, datatype: str | None,
         nonblocking: bool = False) -> dict[str, object]:
    calls = sum(algorithms.values())
    return {"site": name, "communicator_size": 4, "algorithms": algorithms,
            "nonblocking_calls": calls if nonblocking else 0,
            "decided": {"bytes": [low, high], "datatype": datatype}}


def test_rules_written_merge_sites_and_put_the_narrowest_first():
    report = {"sites": [
        site("wide", {"binomial": 2, "ring": 5}, 100, 900, None),
        site("a", {"straggler": 3, "native": 1}, 400, 400, "MPI_FLOAT"),
        site("b", {"native": 3}, 400, 400, "MPI_FLOAT"),  # the same shape as a: merged
        site("post", {"papcoll": 2, "linear": 1}, 400, 400, "MPI_FLOAT", nonblocking=True),
        site("none", {}, 8, 8, "MPI_INT"),  # nothing papcoll decided
    ]}
    rules = rules_from_report(report)["rules"]
    assert [rule["comment"] for rule in rules] == [
        "a, b: native 4, straggler 3 calls", "wide: binomial 2, ring 5 calls",
        "post: linear 1 calls"]  # "papcoll" is no algorithm: left out
    assert rules[0] == {"ranks": 4, "bytes": 400, "datatype": "MPI_FLOAT", "call": "blocking",
                        "algorithm": "native", "comment": rules[0]["comment"]}
    # ring reorders operands: it ran, so the op commuted, and the rule says so
    assert rules[1]["bytes"] == [100, 901] and rules[1]["commutative"] is True
    assert "call" not in rules[2] and rules[2]["algorithm"] == "linear"


def test_a_rule_whose_algorithm_refuses_the_call_is_an_error_naming_the_rule(tmp_path):
    """linear_tree refuses more segments than elements: the 100-element calls its rule
    matches fail, naming the rule, on every call kind; nothing falls back to the model."""
    path = write_rules(tmp_path / "rules.json", [
        {"datatype": "MPI_INT", "algorithm": "linear_tree"}, {"algorithm": "binomial"}])
    result = run_mpi(2, "mpi_rules", str(path), "--segment-count", "200")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    for kind in KINDS:
        assert (f"call-error {kind} int_sum_100 {MPI_ERR_ARG} papcoll: the rule at {path}:2 chose "
                f"'linear_tree', which cannot run this call: ") in result.stdout, result.stdout
    found = choices(result.stdout)
    assert ("blocking", "int_sum_100") not in found
    assert found[("persistent", "float_max_1000")] == ("binomial", f"{path}:3", True)
