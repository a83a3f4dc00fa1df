"""The emulated cluster (papcoll.lab.testbed): real network namespaces and tc-shaped links made
and removed by the tests, a bulk stream at the shaped rate, an all-reduce verified across
the namespaces under this MPI with its bytes counted on the links, nothing left behind after
a failure or a signal, and bad input refused. Skipped, with the reason, where the machine
cannot make namespaces (no root, no iproute2)."""

from __future__ import annotations

import json
import math
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import COMMAND_TIMEOUT_SECONDS, VENV_BIN, run_papcoll
from papcoll.lab import testbed
from papcoll.lab.bench import BenchOptions, run_benchmark
from papcoll.lab.calibrate import fit
from papcoll.network import load_network
from papcoll.sim import network_lower_bound

MISSING = testbed.missing_support()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")


def _leftovers(name: str) -> list[str]:
    """Namespaces, interfaces and state of testbed `name` that still exist."""
    namespaces = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True,
                                check=True).stdout.split()
    found = [n for n in namespaces if n.startswith(f"papcoll-{name}-")]
    found += [d.name for d in Path("/sys/class/net").iterdir() if d.name.startswith(f"pc{name}")]
    if testbed.state_file(name).exists():
        found.append("state file")
    return found


@pytest.fixture
def two_hosts() -> Iterator[testbed.Plan]:
    plan = testbed.up("ethernet-1g", 2, name="pt2")
    yield plan
    testbed.down(plan.name)
    assert _leftovers(plan.name) == []


def test_up_makes_what_the_plan_says_and_down_removes_all_of_it(two_hosts: testbed.Plan) -> None:
    assert testbed.missing_pieces(two_hosts) == []
    assert two_hosts.cores == [1, 1]
    for namespace, address in zip(two_hosts.namespaces, two_hosts.addresses, strict=True):
        shown = subprocess.run(["ip", "-n", namespace, "-4", "addr", "show", "eth0"],
                               capture_output=True, text=True, check=True).stdout
        assert f"inet {address}/24" in shown
    qdisc = subprocess.run(["tc", "qdisc", "show", "dev", two_hosts.links[0].outer],
                           capture_output=True, text=True, check=True).stdout
    assert "tbf" in qdisc and "rate 1Gbit" in qdisc
    assert testbed.down("pt2") is True
    assert _leftovers("pt2") == []
    assert testbed.down("pt2") is False  # idempotent


def test_a_stream_between_two_hosts_runs_at_the_shaped_rate(two_hosts: testbed.Plan) -> None:
    """Shaping works: a 24 MiB stream each way crosses the hosts' links (their counters) and
    never beats the shaped rate by more than tbf's bucket (125 KB: 0.5 % of 24 MiB), where
    unshaped veth runs at many Gb/s. The stream is timed from the sender's first byte to the
    receiver's last, so a busy machine can only make it slower; how much slower is the
    machine's business (`check` then says it is off the rate, exit 1), not this test's."""
    mebibytes = 24
    before = testbed.link_bytes(two_hosts)
    result = run_papcoll("testbed", "check", "--name", two_hosts.name, "--mebibytes",
                         str(mebibytes), "--json", "-")
    after = testbed.link_bytes(two_hosts)
    assert result.returncode in (0, 1), result.stderr
    rows = json.loads(result.stdout)
    assert len(rows) == 2
    for row in rows:
        # ~0.956 on an idle machine (TCP/IP headers take 4.4 % of a frame)
        assert 0 < row["ratio"] <= 1.02, row
    # the verdict is the one its rows give: within 10 % each way, or exit 1
    assert (result.returncode == 0) == all(abs(row["ratio"] - 1) <= 0.10 for row in rows)
    for host, (sent_up, sent_down) in after.items():
        assert sent_up - before[host][0] >= mebibytes << 20, host
        assert sent_down - before[host][1] >= mebibytes << 20, host


def test_an_allreduce_across_namespaces_is_correct_and_crosses_the_links() -> None:
    """Every byte of the ring's reduce-scatter and all-gather goes over the shaped links:
    each rank sends 2 (P-1)/P of the vector per call, so the links' counters must carry at
    least that (plus the checks' MPI_Allreduce), not the nothing shared memory would."""
    ranks, count, iterations = 3, 64 * 1024, 3
    with testbed.temporary("ethernet-1g", ranks) as bed:
        before = testbed.link_bytes(bed.plan)
        rows = run_benchmark(BenchOptions(ranks=ranks, algorithms=["ring", "native"],
                                          counts=[count], max_delays_ms=[0],
                                          iterations=iterations, warmup=1, compute_ms=0,
                                          timeout=COMMAND_TIMEOUT_SECONDS),
                             launch=bed.mpiexec_command)
        after = testbed.link_bytes(bed.plan)
    assert all(row["correct"] for row in rows)
    ring_bytes_per_rank = 2 * (ranks - 1) / ranks * count * 4 * (iterations + 1)
    for host, (sent_up, _) in after.items():
        assert sent_up - before[host][0] >= ring_bytes_per_rank, host
    assert _leftovers(bed.plan.name) == []


TWO_SITES = "docs/networks/testbed-2site.json"


@pytest.mark.parametrize(("network", "ranks"), [
    ("docs/networks/smp-4x8.json", 10), (TWO_SITES, 6), (TWO_SITES, 4), ("ethernet-1g", 3)])
def test_the_launch_places_ranks_where_the_topology_does(network: str, ranks: int) -> None:
    """`bench --testbed` computes the ranks' groups on the network's topology (sim's
    placement): mpiexec_command must put every rank on that host. A plan only, nothing made."""
    bed = testbed.Testbed(testbed.plan(network, "pt8", ranks=ranks))
    launched = [bed.plan.hosts[host] for host in bed.rank_hosts(ranks)]
    topology = load_network(network).topology(ranks)
    if topology is None:  # a crossbar: a host per rank, in rank order
        assert launched == [f"host{rank}" for rank in range(ranks)]
    else:
        assert launched == [topology.names[vertex] for vertex in topology.rank_vertex]
    argv, _ = bed.mpiexec_command(ranks, ["true"])
    if "-hosts" in argv:  # MPICH: host:count, block by block, as rank_hosts says
        hosts = argv[argv.index("-hosts") + 1].split(",")
        assert [spec.rsplit(":", 1)[0] for spec in hosts] == list(dict.fromkeys(
            bed.plan.namespaces[host] for host in bed.rank_hosts(ranks)))
        assert sum(int(spec.rsplit(":", 1)[1]) for spec in hosts) == ranks


def test_bench_on_two_sites_groups_ranks_by_site_and_bounds_by_the_network() -> None:
    """Two sites of 3 hosts: the hierarchical algorithms get the sites as their groups (a
    rank is its own namespace, so MPI's shared-memory nodes would be 6 groups of one), and
    the rows carry the bound of the network (its 100 Mb/s between the sites), computed from
    the arrivals that happened."""
    result = run_papcoll("bench", "--testbed", TWO_SITES, "--ranks", "6", "--algorithms",
                         "hr1,hr2", "--count", "8K", "--max-delay", "5ms", "--iterations", "2",
                         "--warmup", "0", "--compute-ms", "0", "--json", "-")
    assert result.returncode == 0, result.stderr[-3000:]
    rows = json.loads(result.stdout)
    assert {row["algorithm"] for row in rows} == {"hr1", "hr2", "native"}
    network = load_network(TWO_SITES)
    topology = network.topology(6)
    assert topology is not None and topology.sites == [0, 0, 0, 1, 1, 1]
    for row in rows:
        assert row["correct"] is True and row["testbed"] == TWO_SITES
        assert row["group_colors"] == [0, 0, 0, 1, 1, 1], row
        bounds = [network_lower_bound([a / 1e3 for a in arrivals], network.model, topology,
                                      row["bytes"]) * 1e3
                  for arrivals in row["arrival_offsets_ms"]]
        assert row["network_bound_ms"] == pytest.approx(sum(bounds) / len(bounds), rel=1e-9)
        assert row["network_excess_ms"] == pytest.approx(
            row["avg_elapsed_ms"] - row["network_bound_ms"], rel=1e-9, abs=1e-9)
        # rank 1's 32 KiB must cross the sites' 100 Mb/s link to ranks 3..5 (2.6 ms), where
        # e-bar_lo charges every rank one transfer between two ranks of a site
        assert row["network_bound_ms"] > 0.5 * 32768 * 8e-8 * 1e3
    assert "net bound" in result.stderr  # the table, on stderr beside --json -


def test_an_interface_in_the_way_is_refused_and_left_alone() -> None:
    subprocess.run(["ip", "link", "add", "pcpt3h1", "type", "bridge"], check=True)
    try:
        with pytest.raises(testbed.TestbedError, match="pcpt3h1 exists"):
            testbed.up("ethernet-1g", 3, name="pt3")
        assert _leftovers("pt3") == ["pcpt3h1"]  # not the testbed's: still there
    finally:
        subprocess.run(["ip", "link", "delete", "pcpt3h1"], check=True)


def test_an_up_that_fails_half_way_removes_what_it_made(monkeypatch: pytest.MonkeyPatch) -> None:
    """The last step fails (writing the launch wrapper: a full disk, say) after every
    namespace, bridge and shaped link is made: all of them must go."""

    def full_disk(_plan: testbed.Plan) -> Path:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(testbed.links, "_write_launch_wrapper", full_disk)
    with pytest.raises(OSError, match="No space left"):
        testbed.up("ethernet-1g", 3, name="pt6")
    assert _leftovers("pt6") == []


def test_sigterm_during_a_testbed_run_leaves_nothing_behind() -> None:
    process = subprocess.Popen(
        [str(VENV_BIN / "papcoll"), "bench", "--testbed", "ethernet-1g", "--ranks", "2",
         "--algorithms", "ring", "--count", "1M", "--max-delay", "0", "--iterations", "1000",
         "--compute-ms", "0"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    # a hang guard, not a speed limit: the loop ends as soon as the testbed exists
    deadline = time.monotonic() + COMMAND_TIMEOUT_SECONDS
    while not [p for p in testbed.existing() if p.name.startswith("t")] and \
            time.monotonic() < deadline:
        time.sleep(0.2)
    made = [p.name for p in testbed.existing()]
    assert made, "the run made no testbed"
    time.sleep(2)  # into the MPI job
    process.send_signal(signal.SIGTERM)
    _, error = process.communicate(timeout=60)
    assert process.returncode != 0
    assert "interrupted" in error
    for name in made:
        assert _leftovers(name) == []


@pytest.mark.parametrize(("arguments", "message"), [
    (["--network", "no-such-net", "--hosts", "2"], "unknown network 'no-such-net'"),
    (["--network", "ethernet-1g", "--hosts", "65"], "hosts must be in 1..64"),
    (["--network", "ethernet-1g", "--hosts", "0"], "hosts must be in 1..64"),
    (["--network", "ethernet-1g", "--hosts", "2", "--name", "Bad-Name"],
     "must be 1 to 6 lower-case letters or digits"),
    (["--network", "docs/networks/smp-4x8.json", "--hosts", "5"], "has 4 hosts, not 5"),
])
def test_bad_input_is_refused_with_a_message(arguments: list[str], message: str) -> None:
    result = run_papcoll("testbed", "up", *arguments)
    assert result.returncode == 2
    assert message in result.stderr, result.stderr


def test_zero_bandwidth_is_refused(tmp_path: Path) -> None:
    network = tmp_path / "zero.json"
    network.write_text(json.dumps({"base": "ethernet-1g", "model": {"seconds_per_byte": 0}}))
    result = run_papcoll("testbed", "up", "--network", str(network), "--hosts", "2")
    assert result.returncode == 2
    assert "infinitely fast link" in result.stderr


def test_two_testbeds_get_their_own_names_and_subnets() -> None:
    first = testbed.up("ethernet-1g", 2, name="pt4")
    try:
        second = testbed.up("ethernet-1g", 2, name="pt5")
        try:
            assert first.subnet != second.subnet
            assert set(first.namespaces).isdisjoint(second.namespaces)
            with pytest.raises(testbed.TestbedError, match="exists"):
                testbed.up("ethernet-1g", 2, name="pt4")
        finally:
            testbed.down("pt5")
    finally:
        testbed.down("pt4")


def test_calibrate_on_the_testbed_finds_the_shaped_rate(tmp_path: Path) -> None:
    """The ping-pong crosses the shaped link: no message beats 1 Gb/s beyond what tbf's
    bucket lets through at once, where shared memory moves 1 MiB ~50 times faster (~0.1
    ns/B against 8.37 ns a payload byte). Physics bounds the times from below whatever the
    load; the fitted slope is a difference of two sizes' times, which a busy machine can
    shrink (a late 256 KiB sample: 6.76 ns/B once), so it is checked on the fit of the
    minimums, which noise disturbs far less (it only ever adds time), against a bound far
    from both shared memory and the link: it must land near the link, not at memory speed."""
    output, record = tmp_path / "testbed.json", tmp_path / "record.json"
    result = run_papcoll("calibrate", "--testbed", "ethernet-1g", "--ranks", "2", "--quick",
                         "--datatypes", "float", "--output", str(output), "--json", str(record))
    assert result.returncode == 0, result.stderr
    model = json.loads(output.read_text())["model"]
    bucket = testbed.bucket_bytes(1_000_000_000)
    assert model["burst_bytes"] == bucket
    assert math.isfinite(model["seconds_per_byte"]) and model["seconds_per_byte"] > 0, model
    measurements = json.loads(record.read_text())["calibration"]["measurements"]
    for row in measurements["ping_pong"]:
        # tbf lets at most the bucket through at once, the rest at 1 Gb/s (8 ns a byte)
        assert row["minimum_seconds"] >= 0.98 * (row["bytes"] - bucket) * 8e-9, row
    largest = max(row["bytes"] for row in measurements["ping_pong"])
    assert largest - bucket >= 1 << 19  # so the bound above is far from shared memory's
    by_minimums = fit(measurements, "float", "minimum", bucket).model
    assert by_minimums.seconds_per_byte >= 0.5 * 8e-9, by_minimums
    assert by_minimums.overhead > 0  # a message costs its sender a system call


def test_validate_on_the_testbed_compares_each_case_with_its_simulation() -> None:
    result = run_papcoll("validate", "--testbed", "ethernet-1g", "--network",
                         "docs/networks/testbed-1g.json", "--ranks", "2", "--algorithms",
                         "ring,recursive_doubling", "--sizes", "8,1M", "--modes",
                         "balanced,one-late", "--max-delay", "5ms", "--iterations", "3",
                         "--compute-ms", "0", "--json", "-")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert len(report["rows"]) == 2 * 2 * 2
    for row in report["rows"]:
        assert row["correct"]
        assert row["relative_error"] == pytest.approx(
            (row["simulated_ms"] - row["measured_ms"]) / row["measured_ms"], rel=1e-9)
        if row["bytes"] == 1 << 20:
            # a shaped 1 Gb/s link: 1 MiB all-reduced at P = 2 moves 1 MiB each way, which
            # no run over shared memory (~0.3 ms) comes near
            assert row["measured_ms"] > 0.5 * (1 << 20) * 8e-9 * 1e3


def test_testbeds_made_at_the_same_time_get_different_names_and_subnets() -> None:
    """`papcoll bench --testbed` in two terminals: both pick a default name and a subnet."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool:
        plans = list(pool.map(lambda _: testbed.up("ethernet-1g", 2), range(2)))
    try:
        assert plans[0].name != plans[1].name
        assert plans[0].subnet != plans[1].subnet
        assert all(testbed.missing_pieces(plan) == [] for plan in plans)
    finally:
        for plan in plans:
            testbed.down(plan.name)


@pytest.mark.parametrize("arguments", [
    ["testbed", "status"],
    ["testbed", "up", "--network", "ethernet-1g", "--hosts", "2"],
    ["bench", "--testbed", "ethernet-1g", "--ranks", "2"],
    ["calibrate", "--testbed", "ethernet-1g", "--quick"],
])
def test_without_root_every_testbed_command_says_what_is_missing(arguments: list[str]) -> None:
    """The same commands as an unprivileged user (setpriv drops root): exit 2, a message."""
    import shutil

    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) is not installed")
    result = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                             str(VENV_BIN / "papcoll"), *arguments], capture_output=True,
                            text=True, timeout=COMMAND_TIMEOUT_SECONDS)
    if "Permission denied" in result.stderr and "needs root" not in result.stderr:
        pytest.skip("the unprivileged user cannot read this checkout or its venv")
    assert result.returncode == 2, result.stderr
    assert "needs root" in result.stderr and "CAP_NET_ADMIN" in result.stderr


@pytest.mark.parametrize(("topology", "message"), [
    ({"switches": [{"name": "s"}], "hosts": [{"name": "a b", "count": 2, "parent": "s"}]},
     "cannot name a namespace"),
    ({"switches": [{"name": "s"}], "hosts": [{"name": "h", "count": 2, "parent": "s"}],
      "placement": "cyclic"}, "places ranks in blocks"),
])
def test_a_network_the_testbed_cannot_build_is_refused(tmp_path: Path, topology: dict,
                                                         message: str) -> None:
    network = tmp_path / "network.json"
    network.write_text(json.dumps({"base": "ethernet-1g", "topology": topology}))
    result = run_papcoll("testbed", "up", "--network", str(network), "--hosts", "2")
    assert result.returncode == 2
    assert message in result.stderr, result.stderr
