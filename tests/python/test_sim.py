"""The simulator against closed forms (Hockney on a crossbar), seed 000's worked examples in
a unit model, and its command line."""

from __future__ import annotations

import json
import math

import pytest
from conftest import run_python_within
from papcoll import Context
from papcoll.sim import SimModel, arrival_pattern, preset, simulate, with_parameters

ALPHA, BETA, GAMMA = 1e-6, 1e-10, 2.5e-10
HOCKNEY = SimModel(latency=ALPHA, seconds_per_byte=BETA, reduce_seconds_per_byte=GAMMA)


def closed_form(name: str, ranks: int, nbytes: int) -> float:
    steps, block = math.log2(ranks), nbytes / ranks
    if name == "ring":  # 2(P-1)(alpha + n/P beta) + (P-1) n/P gamma
        return 2 * (ranks - 1) * (ALPHA + block * BETA) + (ranks - 1) * block * GAMMA
    if name == "recursive_doubling":  # log2 P (alpha + n beta + n gamma)
        return steps * (ALPHA + nbytes * BETA + nbytes * GAMMA)
    # rabenseifner: 2 log2 P alpha + 2 (P-1)/P n beta + (P-1)/P n gamma
    return 2 * steps * ALPHA + (ranks - 1) * block * (2 * BETA + GAMMA)


@pytest.mark.parametrize("name", ["ring", "recursive_doubling", "rabenseifner"])
@pytest.mark.parametrize("ranks", [2, 4, 8, 16, 64])
@pytest.mark.parametrize("per_rank", [1024, 4096])
def test_hockney_matches_the_closed_forms(name, ranks, per_rank):
    count = per_rank * ranks  # P divides n, as the ring's formula assumes
    result = simulate(name, ranks, count, 4, HOCKNEY)
    assert result.makespan == pytest.approx(closed_form(name, ranks, count * 4), rel=1e-12)
    assert result.average_elapsed == pytest.approx(result.makespan, rel=1e-12)


@pytest.mark.parametrize("name", ["ring", "recursive_doubling", "rabenseifner"])
@pytest.mark.parametrize("ranks", [2, 4, 8])
def test_each_receive_costs_the_receive_overhead_and_each_send_the_overhead(name, ranks):
    """Every rank of these algorithms sends and receives one message a step, in lock step, so
    o and o_r add steps x (o + o_r) to the Hockney time (the CPU is free when a message
    comes in): 2 (P-1) steps for the ring, log2 P for recursive doubling, 2 log2 P for
    Rabenseifner."""
    send, receive = 7e-6, 1e-6
    count = 1024 * ranks
    model = SimModel(latency=ALPHA, seconds_per_byte=BETA, reduce_seconds_per_byte=GAMMA,
                     overhead=send, receive_overhead=receive)
    steps = {"ring": 2 * (ranks - 1), "recursive_doubling": math.log2(ranks),
             "rabenseifner": 2 * math.log2(ranks)}[name]
    result = simulate(name, ranks, count, 4, model)
    assert result.makespan == pytest.approx(
        closed_form(name, ranks, count * 4) + steps * (send + receive), rel=1e-12)


@pytest.mark.parametrize("per_rank_bytes", [4096, 65536, 1 << 20])
def test_a_token_bucket_lets_a_burst_through_and_then_the_rate(per_rank_bytes):
    """Recursive doubling at P = 2 is one exchange: with a full bucket of B bytes the n-byte
    message costs o + max(0, n - B) G + L + o_r, and the reduction n gamma."""
    burst = 65536.0
    model = SimModel(latency=2e-6, overhead=7e-6, receive_overhead=1e-6,
                     seconds_per_byte=8e-9, reduce_seconds_per_byte=1e-10, burst_bytes=burst)
    result = simulate("recursive_doubling", 2, per_rank_bytes // 4, 4, model)
    expected = (7e-6 + max(0.0, per_rank_bytes - burst) * 8e-9 + 2e-6 + 1e-6
                + per_rank_bytes * 1e-10)
    assert result.makespan == pytest.approx(expected, rel=1e-12)


def test_back_to_back_messages_empty_the_bucket_and_pay_the_rate():
    """The ring at P = 2 sends two half-vectors in a row; with a bucket of one half the first
    goes free and the second finds the bucket empty (it refills at the rate, no faster than
    the message would go): exactly one half's wire time is saved."""
    half = 1 << 20
    plain = SimModel(seconds_per_byte=8e-9)
    shaped = SimModel(seconds_per_byte=8e-9, burst_bytes=half)
    full = simulate("ring", 2, half // 2, 4, plain).makespan  # 2 x 1 MiB at the rate
    bucketed = simulate("ring", 2, half // 2, 4, shaped).makespan
    assert bucketed == pytest.approx(full - half * 8e-9, rel=1e-12)


@pytest.mark.parametrize(("parameters", "message"), [
    ({"seconds_per_byte": 0.0}, "needs a link rate"),
    ({"seconds_per_byte": 1e-9, "burst_seconds_per_byte": 2e-9}, "must not exceed"),
])
def test_a_token_bucket_without_a_rate_or_with_a_slow_burst_is_refused(parameters, message):
    from papcoll.core import PapcollError

    with pytest.raises(PapcollError, match=message):
        simulate("ring", 4, 1024, 4, SimModel(burst_bytes=1000, **parameters))


def test_the_receiving_bucket_counts_from_when_the_message_is_taken():
    """Linear at P = 3 with only bandwidth: ranks 1 and 2 both send n bytes to rank 0 at 0.
    Rank 0's receiving bucket (B = n / 2, free bursts) takes the first message with n / 2 of
    it free, the second right after at the full rate: the reduce ends at n/2 G + n G, not
    earlier (the bucket's state is kept from the time the message is taken)."""
    count = 1 << 16
    nbytes = count * 4
    rate = 1e-9
    model = SimModel(seconds_per_byte=rate, burst_bytes=nbytes / 2)
    plain = SimModel(seconds_per_byte=rate)
    shaped = simulate("linear", 3, count, 4, model).makespan
    unshaped = simulate("linear", 3, count, 4, plain).makespan
    # every bucket is full at the start and each lets n/2 bytes through free at most once
    # per side before the traffic refills it; the saving cannot exceed one half-message
    # per message on the critical path (two in, two out)
    assert unshaped - 4 * nbytes / 2 * rate - 1e-15 <= shaped < unshaped


def test_a_token_bucket_on_a_topology_is_refused():
    from papcoll.core import PapcollError
    from papcoll.network import load_network

    topology = load_network("docs/networks/two-switch-32.json").topology(4)
    with pytest.raises(PapcollError, match="crossbar only"):
        simulate("ring", 4, 1024, 4, SimModel(seconds_per_byte=1e-9, burst_bytes=1000),
                 topology=topology)


def test_one_overhead_sets_both_ends_unless_the_receive_overhead_is_given():
    assert SimModel(overhead=3e-6).receive_overhead == 3e-6
    assert with_parameters(HOCKNEY, "o=2e-6").receive_overhead == 2e-6
    both = with_parameters(HOCKNEY, "o=2e-6,o_r=5e-7")
    assert (both.overhead, both.receive_overhead) == (2e-6, 5e-7)


# Unit model: one element of one byte per segment, so moving one segment takes tau = 1.
UNIT = SimModel(seconds_per_byte=1.0)


def test_seed_000_fig_8_ring_and_prr_in_tau():
    # P = 4 (Fig. 8 shows four processes), process 0 late by 2 tau. The ring takes 8 tau as
    # the paper says. The paper's PRR takes 7 tau; ours takes 8: no one-way ring can end
    # before a_late + (2P - 2) tau (docs/algorithms.md), so we assert what the model gives.
    late = [2.0, 0.0, 0.0, 0.0]
    assert simulate("ring", 4, 4, 1, UNIT, late).makespan == 8.0
    prr = simulate("prr", 4, 4, 1, UNIT, late, Context(arrivals=late, tau=1.0))
    assert prr.makespan == 8.0


def test_seed_000_fig_6_linear_tree_and_slt_in_tau():
    # P = 4 (inferred from the 2-tau gap), process 0 late by 4 tau. The paper: linear tree
    # 14 tau, SLT 12 tau. Ours: 13 and 11, the same 2-tau saving; the paper's figures count
    # one step more (we read Fig. 6 as starting the clock one tau earlier).
    late = [4.0, 0.0, 0.0, 0.0]
    linear = simulate("linear_tree", 4, 4, 1, UNIT, late).makespan
    sorted_tree = simulate("slt", 4, 4, 1, UNIT, late, Context(arrivals=late, tau=1.0)).makespan
    assert (linear, sorted_tree) == (13.0, 11.0)


@pytest.mark.parametrize("name", ["ring", "rabenseifner", "slt", "prr", "recursive_doubling"])
def test_one_late_rank_costs_at_least_the_lower_bound(name):
    # e-bar >= (P-1)/P x D + delta, delta = one transfer of the vector (seed 000 S3)
    model = preset("ethernet-1g")
    ranks, count, delay = 8, 65536, 0.02
    arrivals = arrival_pattern("one-late", ranks, delay)
    result = simulate(name, ranks, count, 4, model, arrivals)
    delta = model.latency + 2 * model.overhead + count * 4 * model.seconds_per_byte
    assert result.average_elapsed >= (ranks - 1) / ranks * delay + delta


def test_predictions_help_prr_when_a_rank_is_late():
    model = preset("ethernet-1g")
    arrivals = arrival_pattern("one-late", 16, 0.05)
    ring = simulate("ring", 16, 1 << 20, 4, model, arrivals).average_elapsed
    prr = simulate("prr", 16, 1 << 20, 4, model, arrivals).average_elapsed
    assert prr < ring


def test_bad_model_and_network_are_refused():
    with pytest.raises(ValueError, match="unknown crossbar preset"):
        preset("token-ring")
    with pytest.raises(ValueError, match="unknown model parameter 'delta'"):
        with_parameters(HOCKNEY, "delta=1")
    with pytest.raises(ValueError, match="finite number >= 0"):
        with_parameters(HOCKNEY, "alpha=-1")
    with pytest.raises(ValueError, match="SimModel.latency must be a finite number"):
        simulate("ring", 4, 16, 4, SimModel(latency=float("nan")))
    with pytest.raises(TypeError, match="SimModel.eager_limit_bytes must be a whole number"):
        SimModel(eager_limit_bytes=1.5)
    with pytest.raises(ValueError, match="entry of arrivals must be a finite number"):
        simulate("ring", 4, 16, 4, HOCKNEY, [0.0, 0.0, float("inf"), 0.0])
    with pytest.raises(ValueError, match="arrivals spans .* more than a float holds"):
        simulate("ring", 4, 16, 4, HOCKNEY, [1e308, -1e308, 0.0, 0.0])
    with pytest.raises(ValueError, match="arrivals gives 3 times for 4 ranks"):
        simulate("ring", 4, 16, 4, HOCKNEY, [0.0, 0.0, 0.0])


def test_sim_command_prints_rows(papcoll_command):
    result = papcoll_command("sim", "--network", "hockney", "--ranks", "8", "--algorithms",
                             "ring,prr", "--count", "64K", "--mode", "one-late",
                             "--max-delay", "0,1ms", "--json", "-")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout[result.stdout.index("["):])
    assert {(row["algorithm"], row["max_delay_ms"]) for row in rows} == {
        ("ring", 0.0), ("ring", 1.0), ("prr", 0.0), ("prr", 1.0)}
    for row in rows:
        assert row["avg_elapsed_ms"] >= row["lower_bound_ms"] > 0
        assert row["makespan_ms"] >= row["avg_elapsed_ms"]


@pytest.mark.parametrize(("arguments", "message"), [
    (["--network", "nope", "--ranks", "4"], "unknown network"),
    (["--ranks", "4", "--param", "beta=x"], "needs a number"),
    (["--ranks", "4", "--algorithms", "bogus"], "unknown algorithm"),
])
def test_sim_command_bad_input(papcoll_command, arguments, message):
    result = papcoll_command("sim", *arguments)
    assert result.returncode == 2
    assert message in result.stderr


# Issue 17: messages were matched by searching the destination's lists, so linear (rank 0
# receives from P - 1 down while the sends arrive from 1 up) was quadratic: 26 s at
# P = 100,000, some 7 minutes at this P; now 1.2 to 2.5 s. The limit is some 20 times that.
LINEAR_AT_400K = """
from papcoll.sim import simulate
ranks = 400_000
result = simulate("linear", ranks, 1)
assert result.operations == 5 * ranks - 4, result.operations  # root 3P - 2, leaves 2 each
"""


def test_simulator_is_not_quadratic_for_linear():
    run_python_within(LINEAR_AT_400K, seconds=40)
