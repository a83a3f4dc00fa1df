"""`papcoll validate`: the error arithmetic on known numbers, a tiny real run (2 ranks,
mpiexec) whose every row is checked against its own numbers and a fresh simulation of the
arrivals it recorded, and the messages for input it refuses."""

from __future__ import annotations

import json
import math

import pytest
from conftest import run_papcoll
from papcoll import algorithms
from papcoll.lab.validate import (
    ERROR_FLOOR,
    MODES,
    ValidateOptions,
    ValidationError,
    check_options,
    geometric_mean_error,
    relative_error,
    validated_algorithms,
)
from papcoll.network import load_network
from papcoll.sim import simulate

ALGORITHMS = ["ring", "recursive_doubling"]
SIZES = [8, 1024]


def test_relative_error_is_simulated_less_measured_over_measured():
    assert relative_error(2.0, 2.5) == pytest.approx(0.25)
    assert relative_error(4.0, 3.0) == pytest.approx(-0.25)
    with pytest.raises(ValueError, match="positive"):
        relative_error(0.0, 1.0)


def test_geometric_mean_of_absolute_errors_on_known_numbers():
    assert geometric_mean_error([0.1, -0.4]) == pytest.approx(0.2)  # sqrt(0.1 x 0.4)
    assert geometric_mean_error([-0.5]) == pytest.approx(0.5)
    assert geometric_mean_error([0.02, 0.02, 0.02]) == pytest.approx(0.02)
    # an exact 0 counts as the floor, so it does not zero the mean
    assert geometric_mean_error([0.0, 0.01]) == pytest.approx(math.sqrt(ERROR_FLOOR * 0.01))
    assert geometric_mean_error([0.0, 0.01], floor=1e-2) == pytest.approx(0.01)
    with pytest.raises(ValueError, match="no errors"):
        geometric_mean_error([])


def test_algorithms_are_chosen_by_their_declared_properties():
    chosen = validated_algorithms(4)
    for info in algorithms():
        assert (info.name in chosen) == (not info.reduce_scatter and not info.needs_groups), \
            info.name
    assert "native" not in chosen


@pytest.mark.parametrize(("change", "message"), [
    ({"ranks": 1}, "at least 2 ranks"),
    ({"algorithms": ["native"]}, "no schedule papcoll could simulate"),
    ({"algorithms": ["rs_halving"]}, "a reduce-scatter"),
    ({"algorithms": ["hr1"]}, "needs groups"),
    ({"algorithms": ["nope"]}, "unknown algorithm 'nope'"),
    ({"sizes": [0]}, "message size 0 B"),
    ({"sizes": [6]}, "multiple of 4 B"),
    ({"modes": ["late"]}, "unknown mode 'late'"),
    ({"max_delays_ms": []}, "need at least one max delay"),
])
def test_check_options_refuses_what_cannot_be_validated(change, message):
    options = ValidateOptions(**{"ranks": 2, "algorithms": ["ring"], **change})
    with pytest.raises(ValidationError, match=message):
        check_options(options)


@pytest.mark.parametrize(("arguments", "message"), [
    (["--network", "nope"], "unknown network 'nope'"),
    (["--network", "missing.json"], "cannot read network file"),
    (["--algorithms", "nope"], "unknown algorithm 'nope'"),
    (["--algorithms", "native"], "no schedule papcoll could simulate"),
    (["--sizes", "0"], "sizes must be at least 1 byte"),
    (["--sizes", "6"], "multiple of 4 B"),
    (["--modes", "late"], "is not a list of balanced, one-late, rand-late"),
    (["--ranks", "1"], "at least 2 ranks"),
])
def test_validate_bad_input_exits_2_with_a_message(arguments, message):
    result = run_papcoll("validate", *arguments)
    assert result.returncode == 2, result.stdout[-2000:]
    assert message in result.stderr, result.stderr


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    json_path = tmp_path_factory.mktemp("validate") / "report.json"
    result = run_papcoll("validate", "--ranks", "2", "--algorithms", ",".join(ALGORITHMS),
                         "--sizes", ",".join(map(str, SIZES)), "--max-delay", "2ms",
                         "--iterations", "3", "--warmup", "1", "--compute-ms", "2",
                         "--json", str(json_path))
    assert result.returncode == 0, result.stderr[-3000:]
    return result, json.loads(json_path.read_text())


def test_a_row_per_case_and_its_error_from_its_own_numbers(tiny_run):
    _, report = tiny_run
    rows = report["rows"]
    assert sorted((row["algorithm"], row["bytes"], row["mode"]) for row in rows) == sorted(
        (name, size, mode) for name in ALGORITHMS for size in SIZES for mode in MODES)
    for row in rows:
        assert row["correct"] is True and row["ranks"] == 2
        assert row["max_delay_ms"] == (0 if row["mode"] == "balanced" else 2)
        assert row["measured_ms"] > 0 and row["simulated_ms"] > 0
        assert row["relative_error"] == pytest.approx(
            (row["simulated_ms"] - row["measured_ms"]) / row["measured_ms"])
        assert len(row["arrival_offsets_ms"]) == row["iterations"] == 3
        assert row["median_relative_error"] == pytest.approx(
            (row["simulated_median_ms"] - row["measured_median_ms"]) / row["measured_median_ms"])
    for name in ALGORITHMS:
        errors = [row["relative_error"] for row in rows if row["algorithm"] == name]
        assert report["geomean_abs_error_by_algorithm"][name] == pytest.approx(
            math.exp(sum(math.log(max(abs(e), ERROR_FLOOR)) for e in errors) / len(errors)))
    assert report["geomean_abs_error"] == pytest.approx(
        geometric_mean_error([row["relative_error"] for row in rows]))
    assert report["median_geomean_abs_error"] == pytest.approx(
        geometric_mean_error([row["median_relative_error"] for row in rows]))


def test_the_simulator_replays_the_measured_arrivals(tiny_run):
    # the simulated e-bar is the mean over iterations of the simulated e-bar of each
    # iteration's recorded arrivals (not of the intended ones: rank 1 late by exactly 2 ms)
    _, report = tiny_run
    model = load_network(report["network"]).model
    for row in report["rows"]:
        ebars = sorted(simulate(row["algorithm"], 2, row["bytes"] // 4, 4, model,
                                [a / 1e3 for a in arrivals]).average_elapsed * 1e3
                       for arrivals in row["arrival_offsets_ms"])
        assert row["simulated_ms"] == pytest.approx(sum(ebars) / 3, rel=1e-9)
        assert row["simulated_median_ms"] == pytest.approx(ebars[1], rel=1e-9)
        if row["mode"] == "one-late":
            # the spread the arrivals had makes the rank that came first wait, in the model
            # as in the machine: at P = 2, e-bar >= spread / 2
            assert row["simulated_ms"] >= 0.5 * 0.9 * row["mean_arrival_spread_ms"]
    # rank 1 sleeps 2 ms longer (a sleep never ends early), so over every one-late
    # iteration it comes after rank 0 by about that; a loaded machine that starts rank 0
    # late after the barrier takes some off, so half is asked, where without the delay the
    # two would come within microseconds of each other
    late_by = [arrivals[1] - arrivals[0] for row in report["rows"] if row["mode"] == "one-late"
               for arrivals in row["arrival_offsets_ms"]]
    assert sum(late_by) / len(late_by) >= 0.5 * 2.0, late_by


def test_the_tables_name_every_algorithm_and_the_overall_mean(tiny_run):
    result, report = tiny_run
    for name in ALGORITHMS:
        assert name in result.stdout
    assert "geometric mean of |relative error|" in result.stdout
    overall = f"{100 * report['geomean_abs_error']:.1f} %"
    assert any(line.lstrip("│ ").startswith("all") and overall in line
               for line in result.stdout.splitlines())
