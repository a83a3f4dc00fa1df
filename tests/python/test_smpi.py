"""papcoll's real library under SimGrid's SMPI (docs/smpi.md) at P = 16 on a simulated
network: the differential test's blocking, non-blocking and persistent calls against
MPI_Allreduce, and `papcoll bench --smpi`, whose results are compared with MPI_Allreduce's
(the bench's own check), two runs of one job give the same simulated times to the last
digit, and the monitor sees the one late rank. Skipped, saying how to get SMPI, where
smpirun or the SMPI build (`make smpi`, which `make test` runs where smpicc is there) is
missing."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_papcoll
from papcoll.lab.smpi_bench import smpi_jobs
from papcoll.lab.smpi_launcher import HOW_TO_GET, smpi_job
from papcoll.network import load_network
from papcoll.smpi import platform

SMPI_BUILD = Path(__file__).resolve().parents[2] / "build" / "smpi" / "mpi_differential"
needs_smpi = pytest.mark.skipif(
    shutil.which("smpirun") is None or not SMPI_BUILD.exists(),
    reason=f"no SMPI here ({'no smpirun' if shutil.which('smpirun') is None else 'no build/smpi'}"
           f"): install {HOW_TO_GET}")

# every kind of contender: a fixed schedule, an arrival-aware one, auto, SMPI's MPI_Allreduce
# as the MPICH selector picks it, and one of SMPI's algorithms by name (a job of its own)
ALGORITHMS = "ring,straggler,auto,native,native:lr"


def bench_in_smpi(directory: Path, name: str, *options: str) -> list[dict]:
    json_path = directory / f"{name}.json"
    result = run_papcoll("bench", "--smpi", "ethernet-1g", "--ranks", "16",
                         "--compute-ms", "1", "--warmup", "1", "--json", str(json_path),
                         *options)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    return json.loads(json_path.read_text())


@needs_smpi
def test_every_result_equals_mpi_allreduce_and_a_second_run_gives_the_same_times(tmp_path):
    options = ("--algorithms", ALGORITHMS, "--sizes", "4K,256K", "--max-delay", "0,5ms",
               "--iterations", "3")
    first = bench_in_smpi(tmp_path, "first", *options)
    second = bench_in_smpi(tmp_path, "second", *options)
    assert sorted((row["algorithm"], row["bytes"], row["max_delay_ms"]) for row in first) == \
        sorted((name, size, delay) for name in ALGORITHMS.split(",")
               for size in (4096, 262144) for delay in (0.0, 5.0))
    for row in first:
        assert row["correct"] is True, row
        assert row["ranks"] == 16
        assert row["mpi_library"].startswith("SMPI")
        assert row["smpi"]["network"] == "ethernet-1g"  # a key the README lists
        assert re.fullmatch(r"\d+\.\d+(\.\d+)?", row["smpi"]["simgrid"]), row["smpi"]
        assert row["smpi"]["settings"]["smpi/coll-selector"] == "mpich"
        assert row["smpi"]["settings"].get("smpi/allreduce") == (
            "lr" if row["algorithm"] == "native:lr" else None)
    # simulated time: every iteration's e-bar and every arrival the same, digit for digit
    timed = ("ebar_ms", "arrival_offsets_ms", "median_ms", "t_min_ms", "t_max_ms")
    assert [{key: row[key] for key in timed} for row in first] == \
        [{key: row[key] for key in timed} for row in second]


@needs_smpi
@pytest.mark.parametrize("call", ["blocking", "nonblocking", "persistent"])
def test_every_call_kind_equals_mpi_allreduce_at_sixteen_ranks(call):
    # auto, a fixed schedule and two arrival-aware ones, every datatype and op of the
    # representative matrix, user ops included, in place too; results also bitwise alike
    # on every rank (SMPI's own MPI_Iallreduce is not, so posts and starts never run it)
    with smpi_job(load_network("ethernet-1g")) as job:
        argv, environment = job.command(16, [
            "mpi_differential", "--matrix", "representative", "--call", call,
            "--algorithms", "auto,ring,straggler,prr", "--counts", "2,1009",
            "--large-count", "0"])
        result = subprocess.run(argv, env=environment, capture_output=True, text=True,
                                timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == "2304 passed, 0 failed"


@needs_smpi
def test_the_monitor_sees_the_one_late_rank(tmp_path):
    # rank 1 arrives 5 ms late; edge() at mid-compute predicts it on every rank: in every
    # timed call the rank predicted to come last is the one that did
    rows = bench_in_smpi(tmp_path, "late", "--algorithms", "straggler", "--baseline", "none",
                         "--sizes", "64K", "--max-delay", "5ms", "--iterations", "3")
    (row,) = rows
    assert row["correct"] is True
    assert max(offsets[1] for offsets in row["arrival_offsets_ms"]) == pytest.approx(5.0)
    assert row["predicted_calls"] == row["late_rank_predicted"] == 3, row


@needs_smpi
def test_auto_settles_on_time_after_random_lateness(tmp_path):
    # rand-late: 16 KiB on time, then 10 ms late, then 1 MiB on time. The monitor once read
    # the arrival pattern from the waits: prr, built for the lateness left from the point
    # before, let ranks leave apart, the waits named those ranks late again, and auto ran
    # prr and native in turn through the warm-up and ring and native in turn after it
    # (ring 3, native 5, 4 probes). From the entries the pattern is gone after a period.
    result = run_papcoll("bench", "--smpi", "ethernet-1g", "--ranks", "8", "--compute-ms", "1",
                         "--algorithms", "auto", "--baseline", "none", "--mode", "rand-late",
                         "--sizes", "16K,1M", "--max-delay", "0,10ms", "--warmup", "16",
                         "--iterations", "8", "--json", str(tmp_path / "settles.json"))
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    rows = json.loads((tmp_path / "settles.json").read_text())
    (on_time,) = [row for row in rows if row["bytes"] == 1 << 20 and row["max_delay_ms"] == 0]
    assert max(on_time["chosen"].values()) >= 7 and on_time["probes"] <= 1, on_time["chosen"]


def test_a_crossbar_becomes_a_star_whose_links_carry_the_model():
    network = load_network("ethernet-1g")
    described = platform(network, 3)
    assert described.rank_hosts == ["host-0", "host-1", "host-2"]
    # half the latency each way, the bandwidth 1 / G, full duplex
    assert described.xml.count('latency="2.5e-05s"') == 3
    assert described.xml.count('bandwidth="125000000Bps"') == 3
    assert described.xml.count('sharing_policy="SPLITDUPLEX"') == 3
    assert described.settings["smpi/ois"] == "0:5e-06:0"
    # papcoll's eager limit is the largest eager message; SMPI's threshold the first not
    assert described.settings["smpi/send-is-detached-thresh"] == "65537"


def test_a_topology_becomes_its_tree_and_ranks_land_where_the_simulator_puts_them():
    network = load_network("geo-2site")
    topology = network.topology(4)
    assert topology is not None
    described = platform(network, 4)
    assert described.rank_hosts == [topology.names[v] for v in topology.rank_vertex]
    # the WAN link between the sites, with its latency
    assert 'id="link-site-b"' in described.xml and 'latency="0.013s"' in described.xml
    assert described.settings["network/loopback-lat"] == "5e-07"


def test_each_named_smpi_algorithm_runs_in_a_job_of_its_own():
    assert smpi_jobs(["ring", "native:lr", "auto", "native:rdb"]) == [
        (None, ["ring", "auto"]), ("lr", ["native"]), ("rdb", ["native"])]
    assert smpi_jobs(["native:lr"]) == [("lr", ["native"])]


def test_bad_smpi_input_names_the_problem():
    with pytest.raises(ValueError, match="unknown SMPI selector 'intel'"):
        platform(load_network("ethernet-1g"), 4, selector="intel")
    result = run_papcoll("bench", "--smpi", "ethernet-1g", "--testbed", "ethernet-1g",
                         "--ranks", "2")
    assert result.returncode != 0
    assert "--smpi runs the job in SimGrid's simulator: not with --testbed" in result.stderr


@needs_smpi
def test_a_job_that_aborts_in_smpi_fails_with_its_message():
    # smpirun exits 0 after MPI_Abort: the missing rows, not the status, say it failed
    result = run_papcoll("bench", "--smpi", "ethernet-1g", "--ranks", "4", "--algorithms",
                         "rs_halving", "--sizes", "1K", "--max-delay", "0", "--iterations",
                         "1", "--warmup", "0", "--compute-ms", "1")
    assert result.returncode != 0
    assert "papcoll-bench failed" in result.stderr
    assert "'rs_halving' is a reduce-scatter, not an all-reduce" in result.stderr


@needs_smpi
def test_injected_jitter_spreads_arrivals_alike_in_every_run_of_a_seed(tmp_path):
    # --jitter: every rank arrives later by an exponential draw each call, in simulated time:
    # the arrivals spread (by about the mean), the same in a second run of the seed, and
    # otherwise under another seed
    options = ("--algorithms", "ring", "--baseline", "none", "--sizes", "4K",
               "--max-delay", "0", "--iterations", "4", "--jitter", "300us")
    first, second = (bench_in_smpi(tmp_path, name, *options) for name in ("first", "second"))
    (other,) = bench_in_smpi(tmp_path, "other", *options, "--seed", "2")
    (row,) = first
    assert row["jitter_ms"] == pytest.approx(0.3)
    spreads = [max(offsets) - min(offsets) for offsets in row["arrival_offsets_ms"]]
    assert all(0.1 < spread < 5 for spread in spreads), spreads
    assert first == second
    assert other["arrival_offsets_ms"] != row["arrival_offsets_ms"]


@needs_smpi
def test_the_pattern_change_experiment_runs_in_smpi_and_its_late_rank_is_last():
    # bench/auto_learning.py --smpi: papcoll-pattern-change checks every call's result
    # against MPI_Allreduce and stops on a wrong one; in simulated time the phase's late
    # rank arrives last in every call (on a real machine only in most).
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    try:
        from auto_learning import measure_learning, recovery_table
    finally:
        sys.path.pop(0)
    calls = 6
    rows = measure_learning(8, None, 65536, calls_per_phase=calls, delay_ms=5.0,
                            compute_ms=1.0, smpi="ethernet-1g", timeout=300)
    assert len(rows) == 4 * 3 * calls  # 4 phases x auto, native, straggler
    late = {"A": 1, "B": 2, "D": 1}
    for row in rows:
        assert row["smpi"] == "ethernet-1g" and row["ranks"] == 8
        if row["phase"] in late:
            assert row["last_rank"] == late[row["phase"]], row
            assert row["ebar_lo_ms"] - row["delta_ms"] > 0.5 * 7 / 8 * 5.0, row
    table = recovery_table(rows)
    assert [entry["phase"] for entry in table] == ["B", "C", "D"]
    assert all(entry["floor_ms"] == 0.02 for entry in table)


@needs_smpi
def test_the_simulator_given_papcolls_own_work_predicts_each_call_as_smpi_times_it(tmp_path):
    # The monitor's messages fall on some calls (a period's end) and not others, so at 1 KiB
    # on time straggler's calls differ by 50 % in SMPI; the library reports its own work in
    # each (papcoll_last_own_seconds), and with it papcoll's simulator predicts every call;
    # without it, not those with a monitor's message.
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    try:
        from smpi_scale import simulated_ms
    finally:
        sys.path.pop(0)
    rows = bench_in_smpi(tmp_path, "own", "--algorithms", "ring,straggler", "--baseline",
                         "none", "--sizes", "1K", "--max-delay", "0", "--iterations", "6")
    rows_by_name = {row["algorithm"]: row for row in rows}
    ring, straggler = rows_by_name["ring"], rows_by_name["straggler"]
    assert all(ms == 0 for key in ("own_before_ms", "own_after_ms") for call in ring[key]
               for ms in call)
    # a monitor's message round: 15 receives or sends at 5 us (other calls may hold a few
    # microseconds of SMPI's injected times of MPI calls)
    round_ms = 15 * load_network("ethernet-1g").model.receive_overhead * 1e3
    busy = [max(before + after) >= round_ms for before, after in
            zip(straggler["own_before_ms"], straggler["own_after_ms"], strict=True)]
    assert any(busy) and not all(busy), straggler["own_before_ms"]
    for call, smpi_ms in enumerate(straggler["ebar_ms"]):
        one = dict(straggler, **{key: [straggler[key][call]] for key in
                                 ("arrival_offsets_ms", "own_before_ms", "own_after_ms")})
        assert simulated_ms(one, "ethernet-1g") == pytest.approx(smpi_ms, rel=0.01), call
        without = dict(one, own_before_ms=None, own_after_ms=None)
        if busy[call]:
            assert simulated_ms(without, "ethernet-1g") < 0.9 * smpi_ms, call
