"""`papcoll bench` end to end: real mpiexec, papcoll's algorithms and the MPI library's own,
the JSON rows, the plot, and the errors a user gets for bad input."""

from __future__ import annotations

import json

import pytest
from conftest import run_papcoll

ALGORITHMS = ["ring", "recursive_doubling", "prr", "slt", "native",
              "native:recursive_doubling"]
DELAYS_MS = [0.0, 20.0]


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory):
    directory = tmp_path_factory.mktemp("bench")
    json_path, plot_path = directory / "rows.json", directory / "ebar.png"
    result = run_papcoll("bench", "--ranks", "3", "--algorithms", ",".join(ALGORITHMS),
                         "--count", "1009", "--mode", "one-late", "--max-delay", "0,20ms",
                         "--iterations", "3", "--warmup", "1", "--compute-ms", "2",
                         "--json", str(json_path), "--plot", str(plot_path))
    return result, json_path, plot_path


def test_bench_rows_cover_every_algorithm_and_delay(bench_run):
    result, json_path, _ = bench_run
    assert result.returncode == 0, result.stderr[-3000:]
    rows = json.loads(json_path.read_text())
    assert sorted((row["algorithm"], row["max_delay_ms"]) for row in rows) == sorted(
        (name, delay) for name in ALGORITHMS for delay in DELAYS_MS)
    for row in rows:
        assert row["correct"] is True
        assert row["ranks"] == 3 and row["count"] == 1009 and row["mode"] == "one-late"
        assert row["iterations"] == 3 and row["stddev_ms"] >= 0
        assert row["min_ms"] <= row["median_ms"] <= row["max_ms"]
        # the bench calls edge(0.5) as Fig. 9, so slt and prr run on predictions every time
        if row["algorithm"] in ("slt", "prr"):
            assert row["predicted_calls"] == row["iterations"], row
        else:
            assert row["predicted_calls"] == 0
        assert row["lower_bound_ms"] >= row["p2p_ms"] > 0
        if row["algorithm"] == "ring":
            assert row["speedup_vs_ring"] == pytest.approx(1.0)
        else:
            assert row["speedup_vs_ring"] > 0


def test_one_late_rank_makes_the_others_wait(bench_run):
    # Rank 1 enters 20 ms after the other two, and neither can finish before it enters, so
    # e-bar >= (P - 1) / P x 20 ms = 13.3 ms whatever the algorithm (less a little slack for
    # barrier exit skew); without the delay the same 4 KB all-reduce takes well under that.
    _, json_path, _ = bench_run
    rows = json.loads(json_path.read_text())
    for row in rows:
        if row["max_delay_ms"] == 20.0:
            assert row["avg_elapsed_ms"] >= 0.8 * (2 / 3) * 20.0, row


def test_bench_prints_the_table_and_draws_the_plot(bench_run):
    result, _, plot_path = bench_run
    for name in ALGORITHMS:
        assert name in result.stdout
    assert "speedup vs ring" in result.stdout
    assert plot_path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--algorithms", "ring,native:no_such_algorithm"], "unknown to this MPI; it knows:"),
        (["--algorithms", "bogus"], "unknown algorithm 'bogus'"),
        (["--max-delay", "5parsecs"], "is not a delay"),
        (["--count", "lots"], "is not a count"),
        (["--ranks", "1"], "needs --ranks 2 or more"),
    ],
)
def test_bench_bad_input_exits_2_with_a_message(papcoll_command, arguments, message):
    result = papcoll_command("bench", "--iterations", "1", "--compute-ms", "0", "--count", "8",
                             *arguments)
    assert result.returncode == 2, result.stdout + result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr
