"""Recursive multiplying: the schedule language's parser (precise errors, fuzzed),
every schedule of the space verified, MPICH's recursive doubling as a schedule, the model's
optimal fan-out, and the search."""

from __future__ import annotations

import json
import math
import random
import re

import pytest
from papcoll import Context, PapcollError, Parameters, verify
from papcoll.core import schedule_text
from papcoll.model import preset
from papcoll.multiplying import (
    MAX_RECEIVED,
    check,
    default_schedule,
    enumerate_schedules,
    factorisations,
    lambert_w,
    optimal_fanout,
    recursive_doubling_schedule,
)
from papcoll.sim import simulate

NAME = "recursive_multiplying"


@pytest.mark.parametrize(("schedule", "ranks", "message"), [
    ("x3", 3, "unknown instruction 'x'"),
    ("a", 3, "malformed, expected aB"),
    ("a3b", 3, "malformed, expected aB"),
    ("a12345678901", 3, "malformed"),
    ("a1234567890", 3, "the base must be 2..1024, not 1234567890"),
    ("c6m", 7, "malformed, expected cTmB"),
    ("m1g2", 7, "malformed, expected mRgGaB"),
    ("a1", 1, "the base must be 2.."),
    ("a0,a2", 2, "the base must be 2.."),
    ("a2,,a3", 6, "stage 2 is empty"),
    ("a2,a2", 6, "a base of 2 does not divide"),
    ("a2,a3", 12, "the stages multiply to 6, not P = 12"),
    ("c7m2,a2,a2,e7m2", 8, "multiple of the base"),
    ("c10m2,a2,e10m2", 8, "between 2 and the group size 8"),
    ("a2,c4m2,a2,e4m2", 6, "a collapse must come first"),
    ("c4m2,a2,a2", 6, "never closed (add eTmB)"),
    ("a2,a2,e4m2", 4, "no collapse is open"),
    ("c4m2,a2,a2,e4m4", 6, "does not close a collapse"),
    ("c4m2,a2,e4m2", 6, "not fully reduced"),
    ("m1g2a3", 7, "never closed (add nRgGaB)"),
    ("m1g2a3,a2", 7, "its last stage must be the nRgGaB"),
    ("n1g3a2", 7, "no merge is open"),
    ("m2g2a3,n2g3a2", 7, "G x B + R = the group size 7"),
    ("m1g1a6,n1g1a6", 7, "needs at least two stages"),
    ("m1g2a3,n1g2a3", 7, "must be the interior's last stage"),
    ("m1g2a3,a3,n1g3a2", 7, "a base of 3 does not divide"),
    ("m5996g2a2,n5996g2a2", 6000, "would receive 2999 vectors in one stage, more than 1024"),
    ("m1g3a2,n1g999999999a1024", 7, "must be the interior's last stage"),
])
def test_the_parser_names_the_problem(schedule, ranks, message):
    with pytest.raises(PapcollError, match=re.escape(message)):
        check(schedule, ranks)
    with pytest.raises(PapcollError, match="schedule '"):
        verify(NAME, ranks, 10, 4, Context(parameters=Parameters(schedule=schedule)))


# Numbers near and past 2^31: refused with the stage named, or checked without
# signed overflow (the sanitizer build runs these through the same C code). P is too large
# for verify(), which builds every rank; check() and one rank's schedule suffice.
INT32_MAX = 2**31 - 1


@pytest.mark.parametrize(("schedule", "ranks", "message"), [
    ("a2147483647", INT32_MAX, "stage 1 'a2147483647': the base must be 2..1024, not 2147483647"),
    ("a2147483648", 4, "stage 1 'a2147483648': malformed, expected aB with decimal numbers "
                       "(0 to 2147483647)"),
    ("a99999999999999999999", 4, "stage 1 'a99999999999999999999': malformed, expected aB"),
    ("c4294967296m2,a2", 4, "stage 1 'c4294967296m2': malformed, expected cTmB"),
    ("c4m2,a2,e4294967296m2", 4, "stage 3 'e4294967296m2': malformed, expected eTmB"),
    ("m4294967295g1a2,n1g1a2", 4, "stage 1 'm4294967295g1a2': malformed, expected mRgGaB"),
    ("m1g2147483647a2,a2,n1g2a2", 5, "G x B + R = the group size 5 (here 4294967295)"),
    ("m2147483643g2a2,a2,n2147483643g2a2", INT32_MAX,
     "would receive 1073741823 vectors in one stage, more than 1024"),
    # T/B + P - T, which overflowed int32 when added first
    ("c2147483646m2,a2,e2147483646m2", INT32_MAX,
     "stage 3 'e2147483646m2': the collapsed group of 1073741824 processes is not fully reduced"),
    ("c1073741826m2,a2,e1073741826m2", 1073741827,
     "the collapsed group of 536870914 processes is not fully reduced"),
])
def test_huge_numbers_are_refused_by_name(schedule, ranks, message):
    with pytest.raises(PapcollError, match=re.escape(message)):
        check(schedule, ranks)


def _merge_near_2_to_31() -> str:
    # interior 2^30 (30 stages of 2), R = 2^30 - 1 extras over G = 2^29 blocks: 2 each
    remaining, groups = INT32_MAX - 2**30, 2**29
    return f"m{remaining}g{groups}a2," + ",".join(["a2"] * 28) + f",n{remaining}g{groups}a2"


@pytest.mark.parametrize(("ranks", "schedule"), [
    (INT32_MAX, ""), (INT32_MAX - 1, ""), (2**30 + 1, ""), (1_500_000_001, ""),
    (INT32_MAX, recursive_doubling_schedule(INT32_MAX)),  # c2147483646m2,...: 10 digits
    (2**30 + 1, recursive_doubling_schedule(2**30 + 1)),
    (INT32_MAX, _merge_near_2_to_31()),
])
def test_schedules_near_2_to_31_check_and_build(ranks, schedule):
    check(schedule or default_schedule(ranks), ranks)
    context = Context(parameters=Parameters(schedule=schedule))
    for rank in (0, 1, ranks // 2, ranks - 2, ranks - 1):
        # one rank's schedule: stepping through the merge's extras, not all P of them (this
        # took 6 s a rank at P = 2^31 - 1 before), and no array of P entries
        text = schedule_text(NAME, ranks, rank, 3, 4, context)
        assert text.startswith(f"schedule ranks={ranks} rank={rank} ")


def test_defaults_near_2_to_31_pass_the_checker():
    for ranks in (INT32_MAX, INT32_MAX - 1, 2**30 + 1, 1_000_000_007, 1_500_000_001):
        check(default_schedule(ranks), ranks)
        check(recursive_doubling_schedule(ranks), ranks)


def test_scratch_past_2_to_63_bytes_is_refused():
    # a8: 7 vectors of scratch; 7 x 2^59 x 4 bytes passes 2^63 - 1, 7 x 2^58 x 4 does not
    context = Context(parameters=Parameters(schedule="a8"))
    with pytest.raises(PapcollError, match=re.escape(
            "its scratch of 7 x 576460752303423488 elements of 4 bytes passes 2^63-1 bytes")):
        schedule_text(NAME, 8, 0, 2**59, 4, context)
    assert "scratch=2017612633061982208" in schedule_text(NAME, 8, 0, 2**58, 4, context)


@pytest.mark.parametrize("ranks", [1030, 2047, 2050, 2051, 2052, 2053, 2100, 2500])
def test_every_listed_schedule_passes_the_checker(ranks):
    # above P = 2050 some merges would give a block member more than PAPCOLL_RM_MAX_BASE
    # vectors in one stage (P = 2051: m2035g2a8, 1025); the enumeration leaves them out
    listed = list(enumerate_schedules(ranks))
    for _kind, schedule in listed:
        check(schedule, ranks)
    merged = {schedule for kind, schedule in listed if kind == "merged"}
    # and it leaves out only those: every merge of the paper's generator that check() takes
    accepted = set()
    for remaining in range(1, ranks - 3):
        interior = ranks - remaining
        for bases in factorisations(interior, 8):
            if len(bases) >= 2:
                first, *middle, last = bases
                schedule = ",".join([f"m{remaining}g{interior // first}a{first}",
                                     *(f"a{b}" for b in middle),
                                     f"n{remaining}g{interior // last}a{last}"])
                try:
                    check(schedule, ranks)
                except PapcollError as error:
                    assert "more than 1024" in error.message, error.message
                    continue
                accepted.add(schedule)
    assert merged == accepted
    if ranks == 2051:
        assert "m2035g2a8,n2035g8a2" not in merged


def test_max_base_is_capped_at_the_checkers_limit():
    assert MAX_RECEIVED == 1024
    listed = list(enumerate_schedules(2048, max_base=4096))
    assert ("factored", "a1024,a2") in listed and ("factored", "a2048") not in listed
    for _kind, schedule in listed[:2000]:
        check(schedule, 2048)


def test_the_parser_survives_fuzzing():
    generator = random.Random(2026)
    alphabet = "acemng0123456789, "
    accepted = 0
    for _ in range(5000):
        text = "".join(generator.choice(alphabet) for _ in range(generator.randint(0, 24)))
        ranks = generator.randint(1, 40)
        try:
            check(text, ranks)
        except PapcollError as error:
            assert error.message  # every refusal explains itself
            continue
        accepted += 1
        report = verify(NAME, ranks, 5, 4, Context(parameters=Parameters(schedule=text)))
        assert report.ok, (text, ranks, report.reason)
    # mutations of valid schedules: digits changed, stages dropped or swapped
    for _ in range(2000):
        ranks = generator.randint(2, 30)
        _, schedule = generator.choice(list(enumerate_schedules(ranks)))
        stages = schedule.split(",")
        operation = generator.randint(0, 2)
        if operation == 0 and len(stages) > 1:
            stages.pop(generator.randrange(len(stages)))
        elif operation == 1 and len(stages) > 1:
            i, j = generator.sample(range(len(stages)), 2)
            stages[i], stages[j] = stages[j], stages[i]
        else:
            i = generator.randrange(len(stages))
            stages[i] = "".join(str(generator.randint(1, 9)) if c.isdigit() else c
                                for c in stages[i])
        mutated = ",".join(stages)
        try:
            check(mutated, ranks)
        except PapcollError:
            continue
        mutant = Context(parameters=Parameters(schedule=mutated))
        assert verify(NAME, ranks, 3, 4, mutant).ok, mutated
    assert accepted > 0


def _verify_space(ranks: int) -> int:
    checked = 0
    for kind, schedule in enumerate_schedules(ranks):
        reorders = check(schedule, ranks)
        assert reorders == (kind == "merged")
        report = verify(NAME, ranks, 7, 4, Context(parameters=Parameters(schedule=schedule)))
        assert report.ok, (schedule, report.reason)
        assert report.order_preserved == (not reorders), schedule
        checked += 1
    return checked


@pytest.mark.parametrize("ranks", range(1, 65))
def test_every_schedule_up_to_64_is_verified(ranks):
    # all factored, split and merged schedules (bases <= 8): 17,524 of them, about 13 s
    assert _verify_space(ranks) >= 1


@pytest.mark.parametrize("ranks", [2, 3, 5, 6, 7, 8, 12, 13, 16, 33])
def test_mpich_recursive_doubling_is_a_schedule(ranks):
    schedule = recursive_doubling_schedule(ranks)
    assert all(stage == "a2" for stage in schedule.split(",")
               if stage.startswith("a"))
    model = preset("aries")
    context = Context(parameters=Parameters(schedule=schedule))
    native = simulate("recursive_doubling", ranks, 2, 4, model)
    ours = simulate(NAME, ranks, 2, 4, model, context=context)
    # the same messages in the same rounds; ours may end with one 8-byte copy
    assert ours.makespan == pytest.approx(native.makespan, abs=8 * model.copy_seconds_per_byte
                                          + 1e-15)
    assert verify(NAME, ranks, 64, 4, context).rounds == \
        verify("recursive_doubling", ranks, 64, 4).rounds


def test_defaults_and_the_paper_schedules():
    assert default_schedule(1) == ""
    assert default_schedule(12) == "a4,a3"
    assert default_schedule(48) == "a8,a6"
    assert default_schedule(128) == "a8,a4,a4"
    assert default_schedule(13).startswith("c2m2,") and default_schedule(13).endswith(",e2m2")
    for ranks in (11, 13, 22, 97):
        assert verify(NAME, ranks, 9, 4).ok
    assert recursive_doubling_schedule(6) == "c4m2,a2,a2,e4m2"
    assert recursive_doubling_schedule(8) == "a2,a2,a2"


def test_merges_are_refused_for_a_non_commutative_op():
    merged = Context(parameters=Parameters(schedule="m1g2a3,n1g3a2"), keep_order=True)
    with pytest.raises(PapcollError, match="needs a commutative op"):
        verify(NAME, 7, 10, 4, merged)
    split = Context(parameters=Parameters(schedule="c6m2,a2,a2,e6m2"), keep_order=True)
    assert verify(NAME, 7, 10, 4, split).order_preserved


def test_optimal_fanout_solves_the_model():
    assert lambert_w(1.0) == pytest.approx(0.5671432904097838, rel=1e-14)
    assert optimal_fanout(1.0) == pytest.approx(math.e - 1)
    for ratio in (1.5, 3.94, 10.0, 100.0):
        x = optimal_fanout(ratio) + 1
        assert x * (math.log(x) - 1) == pytest.approx(ratio - 1, rel=1e-12)
        # and it is the minimum of (alpha_p + b alpha_r) / ln(b + 1)
        cost = lambda b, r=ratio: (r + b) / math.log(b + 1)  # noqa: E731
        assert cost(x - 1) <= min(cost(x - 1.01), cost(x - 0.99))


def test_search_ranks_the_space(papcoll_command):
    result = papcoll_command("search", "--ranks", "12", "--network", "aries", "--json", "-")
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    rows = found["rows"]
    assert len(rows) == len(list(enumerate_schedules(12)))
    times = [row["avg_elapsed_ms"] for row in rows]
    assert times == sorted(times)
    baseline = next(row for row in rows if row["schedule"] == "c8m2,a2,a2,a2,e8m2")
    assert baseline["avg_elapsed_ms"] == pytest.approx(
        found["recursive_doubling"]["avg_elapsed_ms"])
    assert rows[0]["avg_elapsed_ms"] < baseline["avg_elapsed_ms"]
    assert 3.5 < found["optimal_fanout"] < 4.5  # aries: alpha_p / alpha_r = 3.94


def test_schedules_command_and_bad_schedule(papcoll_command):
    listing = papcoll_command("schedules", "--ranks", "7")
    assert listing.returncode == 0, listing.stderr
    # P = 2051 listed a merge the checker refuses, and the command failed on it
    large = papcoll_command("schedules", "--ranks", "2051", "--json", "-")
    assert large.returncode == 0, large.stderr
    assert len(json.loads(large.stdout)) == len(list(enumerate_schedules(2051)))
    assert "m1g2a3,n1g3a2" in listing.stdout and "c6m2,a2,a2,e6m2" in listing.stdout
    bad = papcoll_command("verify", "--algorithm", NAME, "--ranks", "6", "--count", "4",
                          "--schedule", "a4,a2")
    assert bad.returncode == 2 and "a base of 4 does not divide the group of 6" in bad.stderr


def test_table_2_reproduction_has_the_papers_shape():
    from papcoll.lab.reproduce import seed004_table2

    rows = seed004_table2()
    assert [row["ranks"] for row in rows] == [4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128]
    for row in rows:
        # every schedule of the paper beats recursive doubling, and the search does at least
        # as well as the paper's schedule
        assert 0 < row["paper_schedule_reduction_percent"] <= row["best_reduction_percent"]
