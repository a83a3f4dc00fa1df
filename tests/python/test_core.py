"""The core through its Python bindings: contexts, parameters, dump round trips, errors."""

from __future__ import annotations

import os
import random
import re
import subprocess
from pathlib import Path

import papcoll
import pytest
from conftest import run_python_within
from papcoll import Context, PapcollError, Parameters
from papcoll.lab.launcher import mpi_flavor

ALGORITHMS = [info.name for info in papcoll.algorithms()]


def some_arrivals(ranks: int, seed: int = 5) -> Context:
    """Arrival estimates for slt and prr, groups for hr1, hr2, smp_* (the others ignore both)."""
    generator = random.Random(seed + ranks)
    return Context(arrivals=[generator.uniform(0, 0.01) for _ in range(ranks)], tau=1e-3,
                   groups=[generator.randrange(3) for _ in range(ranks)])


@pytest.mark.parametrize("name", ALGORITHMS)
@pytest.mark.parametrize("ranks", [1, 2, 3, 7, 8])
def test_dump_parses_back_to_the_same_verdict(name, ranks):
    count = 37
    context = some_arrivals(ranks)
    if papcoll.algorithm(name).reduce_scatter and ranks & (ranks - 1):
        with pytest.raises(papcoll.PapcollError, match="power of two"):
            papcoll.verify(name, ranks, count, context=context)
        return
    texts = [papcoll.schedule_text(name, ranks, rank, count, context=context)
             for rank in range(ranks)]
    from_texts = papcoll.verify_texts(texts)
    direct = papcoll.verify(name, ranks, count, context=context)
    assert from_texts == direct
    assert direct.ok


def sends_without_their_predecessor(text: str) -> list[str]:
    """The SENDs with a payload that do not wait for the previous SEND to the same peer."""
    previous: dict[str, str] = {}
    missing = []
    for line in text.splitlines()[1:]:
        fields = line.split()
        if len(fields) < 4 or fields[1] != "SEND":
            continue
        peer = fields[2]
        start, end = re.search(r"\[(\d+),(\d+)\)", line).groups()
        if int(end) == int(start):
            continue
        waits_for = line.split(" after ")[1].split(",") if " after " in line else []
        if peer in previous and previous[peer] not in waits_for:
            missing.append(line)
        previous[peer] = fields[0]
    return missing


@pytest.mark.parametrize("name", ALGORITHMS)
@pytest.mark.parametrize("ranks", [2, 5, 8])
def test_a_rank_sends_one_message_at_a_time_to_each_peer(name, ranks):
    # papcoll_schedule_build chains a peer's sends (sched_order_sends); the verdict above
    # (rendezvous sends, the strictest) is what proves the chains cannot deadlock.
    if papcoll.algorithm(name).reduce_scatter and ranks & (ranks - 1):
        return
    context = some_arrivals(ranks)
    for rank in range(ranks):
        text = papcoll.schedule_text(name, ranks, rank, 1000, context=context)
        assert sends_without_their_predecessor(text) == [], (rank, text)
    assert papcoll.verify(name, ranks, 1000, context=context).ok


def test_ring_follows_a_given_rank_order():
    generator = random.Random(7)
    for ranks in (2, 5, 9, 16):
        order = list(range(ranks))
        generator.shuffle(order)
        report = papcoll.verify("ring", ranks, 1000,
                                context=Context(parameters=Parameters(rank_order=order)))
        assert report.ok, report.reason
        # each rank's first send goes to its successor in the ring order
        position = order.index(0)
        successor = order[(position + 1) % ranks]
        if ranks > 1:
            text = papcoll.schedule_text("ring", ranks, 0, 1000,
                                         context=Context(parameters=Parameters(rank_order=order)))
            first_send = next(line for line in text.splitlines() if " SEND " in line)
            assert f"to={successor} " in first_send


@pytest.mark.parametrize("order", [[0, 1, 1], [0, 1, 5], [2, 1]])
def test_ring_refuses_an_order_that_is_not_a_permutation(order):
    with pytest.raises(PapcollError) as caught:
        papcoll.verify("ring", 3, 10, context=Context(parameters=Parameters(rank_order=order)))
    assert "order" in caught.value.message


@pytest.mark.parametrize("segment_elements", [1, 3, 64, 1000, 5000])
@pytest.mark.parametrize("ranks", [2, 5, 8])
def test_segmented_ring_any_segment_size(segment_elements, ranks):
    report = papcoll.verify("segmented_ring", ranks, 4099,
                            context=Context(parameters=Parameters(segment_elements=segment_elements)))
    assert report.ok, report.reason
    assert report.max_bytes_sent == pytest.approx(report.lower_bound_bytes, abs=8 * ranks)


def test_segmented_ring_pipelines_segments():
    coarse = papcoll.verify("segmented_ring", 4, 4096,
                            context=Context(parameters=Parameters(segment_elements=1024)))
    fine = papcoll.verify("segmented_ring", 4, 4096,
                          context=Context(parameters=Parameters(segment_elements=64)))
    assert fine.max_ops > coarse.max_ops
    # 16 segments per block pipelined: more, shorter rounds than one message per block
    assert fine.rounds > coarse.rounds


@pytest.mark.parametrize("segments", [1, 2, 5, 40])
@pytest.mark.parametrize("ranks", [2, 3, 6])
def test_linear_tree_any_segment_count(segments, ranks):
    report = papcoll.verify("linear_tree", ranks, 1009,
                            context=Context(parameters=Parameters(segment_count=segments)))
    assert report.ok, report.reason
    assert report.order_preserved


@pytest.mark.parametrize("algorithm", ["linear_tree", "slt"])
def test_a_segment_holds_at_least_one_element(algorithm):
    # --segment-count 50000000 once ran for minutes; now more segments than elements
    # is refused by name, and count 0 (nothing to cut) still runs.
    arrivals = [0.0, 0.0, 0.0]
    def context(segments: int) -> Context:
        return Context(parameters=Parameters(segment_count=segments), arrivals=arrivals)
    with pytest.raises(PapcollError, match="segment_count 11 is more than the 10 elements"):
        papcoll.verify(algorithm, 3, 10, context=context(11))
    assert papcoll.verify(algorithm, 3, 10, context=context(10)).ok
    assert papcoll.verify(algorithm, 3, 0, context=context(11)).ok


def test_segment_count_is_bounded():
    limit = papcoll.core.lib.PAPCOLL_MAX_SEGMENTS
    with pytest.raises(ValueError, match="Parameters.segment_count must be from 0 to 1048576"):
        Parameters(segment_count=limit + 1)
    Parameters(segment_count=limit)


def test_segmented_ring_refuses_more_segments_than_the_limit_and_names_the_smallest():
    limit = papcoll.core.lib.PAPCOLL_MAX_SEGMENTS
    count, ranks = 3 * limit, 4
    def operations(segment_elements: int) -> int:
        context = Context(parameters=Parameters(segment_elements=segment_elements))
        return papcoll.core.estimated_operations("segmented_ring", ranks, count, 4, context)
    refusal = r"PAPCOLL_MAX_SEGMENTS.*use segment_elements >= (\d+)"
    with pytest.raises(PapcollError, match=refusal) as caught:
        operations(1)
    smallest = int(caught.value.message.rsplit(">= ", 1)[1])
    assert operations(smallest) > 0
    with pytest.raises(PapcollError, match="PAPCOLL_MAX_SEGMENTS"):
        operations(smallest - 1)


def test_segmented_ring_default_grows_its_segment_for_huge_vectors():
    # 2^40 floats (4 TiB) with the default 64 KiB segment would be 2^26 segments; the default
    # grows the segment instead, so the schedule stays within the segment limit.
    limit = papcoll.core.lib.PAPCOLL_MAX_SEGMENTS
    ranks = 4
    operations = papcoll.core.estimated_operations("segmented_ring", ranks, 1 << 40, 4)
    # a few operations per segment and step on each rank: far below P x 2^20 x (2P) x 4
    assert operations < ranks * limit * 2 * ranks * 4


def test_bad_context_is_refused_with_a_message():
    with pytest.raises(PapcollError, match="one time per rank"):
        papcoll.verify("ring", 4, 10, context=Context(arrivals=[0.0, 1.0]))
    with pytest.raises(PapcollError, match="unknown algorithm"):
        papcoll.verify("no_such_algorithm", 4, 10)
    with pytest.raises(PapcollError, match="rank must lie"):
        papcoll.schedule_text("ring", 4, 4, 10)
    with pytest.raises(PapcollError, match="count must not be negative"):
        papcoll.verify("ring", 4, -1)


def test_verify_texts_reports_the_first_violation():
    texts = [papcoll.schedule_text("recursive_doubling", 2, rank, 8) for rank in range(2)]
    # replace rank 1's reduction by a copy: rank 1 then misses its own contribution
    lines = texts[1].splitlines()
    position = next(i for i, line in enumerate(lines) if " REDUCE " in line)
    lines[position] = lines[position].replace("REDUCE", "COPY").replace(" order=source-left", "")
    report = papcoll.verify_texts([texts[0], "\n".join(lines)])
    assert not report.ok
    assert report.violation_rank == 1
    assert "misses the contribution" in report.reason


def test_parse_errors_name_the_line():
    with pytest.raises(PapcollError, match="line 2"):
        papcoll.verify_texts(["schedule ranks=1 rank=0 count=4 elem_size=4 scratch=\n0 FLY\n"])


@pytest.mark.long
@pytest.mark.parametrize("name", ALGORITHMS)
def test_random_sweep(name):
    generator = random.Random(2026)
    for _ in range(300):
        ranks = generator.randint(1, 200)
        count = generator.choice([0, 1, ranks - 1, ranks, generator.randint(0, 1 << 22)])
        report = papcoll.verify(name, ranks, count, generator.choice([1, 2, 4, 8, 16]),
                                context=some_arrivals(ranks, generator.randint(0, 99)))
        assert report.ok, (ranks, count, report.reason)


def test_races_are_caught_in_schedules_too_large_for_bitsets():
    # Segments of one element make > 8192 ops per rank: the verifier answers ancestry
    # questions by searching the DAG instead of bitsets, and must still catch a race.
    context = Context(parameters=Parameters(segment_elements=1))
    texts = [papcoll.schedule_text("segmented_ring", 2, rank, 9000, context=context)
             for rank in range(2)]
    assert len(texts[0].splitlines()) > 8192
    assert papcoll.verify_texts(texts).ok
    lines = texts[0].splitlines()
    position = max(i for i, line in enumerate(lines) if " REDUCE " in line)
    lines[position] = lines[position].split(" after ")[0]  # drop its dependencies
    report = papcoll.verify_texts(["\n".join(lines), texts[1]])
    assert not report.ok
    assert report.violation_rank == 0
    assert "race" in report.reason


@pytest.mark.long
def test_pap_aware_algorithms_every_count_under_every_arrival_pattern():
    # make test runs the C sweep with a subset of counts for the skewed arrival patterns;
    # here every count of the foundation set and every element size for all eight
    build = Path(__file__).resolve().parents[2] / "build" / os.environ.get("PAPCOLL_MPI",
                                                                            mpi_flavor())
    result = subprocess.run([str(build / "test_algorithms"), "--all-counts"],
                            capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, result.stdout[-3000:]


def _past_python(**fields: object) -> Parameters:
    """Parameters holding values Python refuses, to reach the C check (C callers' door)."""
    parameters = Parameters()
    for name, value in fields.items():
        object.__setattr__(parameters, name, value)
    return parameters


@pytest.mark.parametrize(("parameters", "message"), [
    (_past_python(segment_count=-1), "segment_count must not be negative"),
    (_past_python(segment_elements=-5), "segment_elements must not be negative"),
    (Parameters(rank_order=[0, 1]), "rank_order must list every rank once"),
    (Parameters(rank_order=[0, 1, 1, 3]), "not a permutation of 0..3: entry 2 is 1"),
    (Parameters(schedule="a3"), "schedule 'a3'"),
    (Parameters(inner_algorithm="teleport"), "unknown inner algorithm 'teleport'"),
    (Parameters(outer_algorithm="prr"), "parameter outer_algorithm"),
])
def test_parameters_are_checked_once_and_name_the_field(parameters, message):
    with pytest.raises(PapcollError, match=re.escape(message)):
        papcoll.check_parameters(parameters, 4)


@pytest.mark.parametrize(("make", "error", "message"), [
    (lambda: Parameters(segment_count=-1), ValueError, "Parameters.segment_count must be from 0"),
    (lambda: Parameters(segment_elements=2**70), ValueError, "Parameters.segment_elements"),
    (lambda: Parameters(schedule=5), TypeError, "Parameters.schedule must be text"),
    (lambda: Parameters(rank_order="0123"), TypeError, "Parameters.rank_order must be a seq"),
    (lambda: Parameters(rank_order=[0, 1.5]), TypeError, "entry of Parameters.rank_order"),
    (lambda: Parameters(tree="geo-2site"), TypeError, "Parameters.tree must be a network"),
    (lambda: Context(arrivals=[1e308, float("inf")]), ValueError, "entry of Context.arrivals"),
    (lambda: Context(tau=-1.0), ValueError, "Context.tau must be a finite number >= 0"),
    (lambda: Context(groups=[0, -1]), ValueError, "entry of Context.groups"),
    (lambda: Context(parameters=None), TypeError, "Context.parameters must be a Parameters"),
])
def test_python_refuses_wrong_types_and_ranges_by_name(make, error, message):
    with pytest.raises(error, match=re.escape(message)):
        make()


def test_good_parameters_pass_the_check():
    papcoll.check_parameters(Parameters(), 4)
    papcoll.check_parameters(Parameters(rank_order=[3, 1, 0, 2], schedule="a2,a2",
                                        inner_algorithm="ring", segment_count=7), 4)


# The verifier was once quadratic in independent ops (each write rebuilt its buffer's
# map) and in ops on one region (races were checked pair by pair). At these sizes the old
# engine took minutes (measured: 135 s at a quarter of the first, 18 s at a fifth of the
# second); now about 1.5 s and 0.3 s. The limit is some 20 times that, so only a return of
# the quadratic behaviour fails it, not a slow or busy machine.
INDEPENDENT_COPIES = """
import papcoll
elements = 150_000  # 300,002 ops per rank
def schedule(rank):
    side = "source-left" if rank else "target-left"
    lines = [f"schedule ranks=2 rank={rank} count={elements} elem_size=4 scratch={elements}",
             f"0 RECV from={1 - rank} tag=0 scratch0[0,{elements})",
             f"1 SEND to={1 - rank} tag=0 send[0,{elements})"]
    for index in range(elements):
        element = index * 7919 % elements  # every element once, out of order
        at = 2 + 2 * index
        lines.append(f"{at} COPY send[{element},{element + 1}) -> recv[{element},{element + 1})")
        lines.append(f"{at + 1} REDUCE scratch0[{element},{element + 1}) -> "
                     f"recv[{element},{element + 1}) order={side} after {at},0,1")
    return "\\n".join(lines) + "\\n"
report = papcoll.verify_texts([schedule(0), schedule(1)])
assert report.ok and report.max_ops == 2 * elements + 2, report
"""

COPIES_ONTO_ONE_REGION = """
import papcoll
copies = 100_000  # a chain on one element: every pair overlaps, one of them writing
def schedule(rank):
    side = "source-left" if rank else "target-left"
    lines = [f"schedule ranks=2 rank={rank} count=1 elem_size=4 scratch=1,1",
             f"0 RECV from={1 - rank} tag=0 scratch0[0,1)",
             f"1 SEND to={1 - rank} tag=0 send[0,1)",
             "2 COPY send[0,1) -> recv[0,1)",
             "3 COPY scratch0[0,1) -> scratch1[0,1) after 0"]
    lines += [f"{at} COPY scratch0[0,1) -> scratch1[0,1) after {at - 1}"
              for at in range(4, copies + 4)]
    lines.append(f"{copies + 4} REDUCE scratch1[0,1) -> recv[0,1) order={side} "
                 f"after {copies + 3},2,1")
    return "\\n".join(lines) + "\\n"
report = papcoll.verify_texts([schedule(0), schedule(1)])
assert report.ok, report
lines = schedule(0).splitlines()
lines[len(lines) // 2] = lines[len(lines) // 2].split(" after ")[0]  # a race mid-chain
report = papcoll.verify_texts(["\\n".join(lines), schedule(1)])
assert not report.ok and "race" in report.reason, report
"""


# Segmented pipelines at the segment limit's scale: the ancestry questions of a long pipeline
# were searches over the ops between (segmented_ring, count 4M: 156,000 ops a rank, 3.3 s at
# count 1M and growing 3x per doubling; linear_tree, 65,536 segments: 110 s). Now 0.7-0.8 s.
SEGMENTED_PIPELINES = """
import papcoll
from papcoll import Context, Parameters
for algorithm, count, parameters in [
        ("segmented_ring", 4_000_000, Parameters(segment_elements=96)),
        ("linear_tree", 2_000_000, Parameters(segment_count=65_536))]:
    report = papcoll.verify(algorithm, 4, count, context=Context(parameters=parameters))
    assert report.ok, report
"""


# A hand-written schedule whose every pair overlaps: 20,000 ops that each read all of recv,
# cut into 20,000 stretches by 20,000 one-element writes, all chained (no race). Checking it
# costs 4 x 10^8 (op, stretch) steps, past the verifier's 2^28: refused with the limit named
# within seconds instead of running on (100,000 readers x 200,000 stretches would take hours).
OVERLAPPING_EVERYWHERE = """
import papcoll
from papcoll import PapcollError
elements, readers = 20_000, 20_000
lines = [f"schedule ranks=1 rank=0 count={elements} elem_size=4 scratch={elements}",
         f"0 COPY send[0,{elements}) -> recv[0,{elements})"]
for at in range(1, readers + 1):
    lines.append(f"{at} COPY recv[0,{elements}) -> scratch0[0,{elements}) after {at - 1}")
for element in range(elements):
    at = readers + 1 + element
    lines.append(f"{at} COPY send[{element},{element + 1}) -> recv[{element},{element + 1}) "
                 f"after {at - 1}")
try:
    papcoll.verify_texts(["\\n".join(lines) + "\\n"])
except PapcollError as error:
    assert "too large to check for races" in error.message, error.message
else:
    raise AssertionError("a schedule past the race check's limit was verified")
"""


# A hand-written 300,000-op schedule at P = 2: each REDUCE waits for its piece's RECV and the
# last of a chain of 100,000 SENDs, and (MPI_IN_PLACE) must be ordered after the SEND of its
# own piece, a different far op each time. Each such question was a pass over the ops after
# it: 6 minutes. The REDUCEs wait for nobody; left out of the chains, the rest is two chains.
FAR_QUESTIONS = """
import papcoll
pieces = 100_000
texts = []
for rank in range(2):
    other = 1 - rank
    lines = [f"schedule ranks=2 rank={rank} count={pieces} elem_size=4 scratch={pieces}",
             f"0 COPY send[0,{pieces}) -> recv[0,{pieces})"]
    for piece in range(pieces):
        lines.append(f"{1 + piece} SEND to={other} tag=0 send[{piece},{piece + 1}) "
                     f"after {piece}")
    for piece in range(pieces):
        after = f" after {pieces + piece}" if piece else ""
        lines.append(f"{1 + pieces + piece} RECV from={other} tag=0 "
                     f"scratch0[{piece},{piece + 1}){after}")
    order = "target-left" if other < rank else "source-left"
    for piece in range(pieces):
        lines.append(f"{1 + 2 * pieces + piece} REDUCE scratch0[{piece},{piece + 1}) -> "
                     f"recv[{piece},{piece + 1}) order={order} "
                     f"after {1 + pieces + piece},{pieces}")
    texts.append("\\n".join(lines) + "\\n")
report = papcoll.verify_texts(texts)
assert report.ok and report.max_ops == 3 * pieces + 1, report
# the same with one REDUCE no longer waiting for the SENDs (nor, through them, the first
# COPY): it may overwrite its piece while the COPY writes it or its SEND reads it, and the
# answers from the rows of what it waits for must say so
victim = 1 + 2 * pieces + 77_777
lines = texts[0].split("\\n")
lines[victim + 1] = lines[victim + 1].replace(f",{pieces}", "")
report = papcoll.verify_texts(["\\n".join(lines), texts[1]])
assert not report.ok and report.violation_op == victim, report
assert "race" in report.reason, report.reason
"""


# 1,000 lanes of SEND then COPY on rank 0, interleaved (300,000 ops): each op waits for the
# one before it in its lane, so no chain table fits (1,000 chains x 300,000 ops) and each
# "is this SEND after the lane's last one" is a pass over 2,000 ops and more. The search
# stops at its step limit: refused as too large, with the reason, in seconds, not hours.
MANY_LANES = """
import papcoll
from papcoll import PapcollError
lanes, rounds = 1_000, 150
sender = [f"schedule ranks=2 rank=0 count={lanes} elem_size=4 scratch={lanes}"]
receiver = [f"schedule ranks=2 rank=1 count={lanes} elem_size=4 scratch={lanes}"]
last_sender, last_receiver = [None] * lanes, [None] * lanes
for _ in range(rounds):
    for lane in range(lanes):
        at = len(sender) - 1
        after = "" if last_sender[lane] is None else f" after {last_sender[lane]}"
        sender.append(f"{at} SEND to=1 tag={lane} send[{lane},{lane + 1}){after}")
        sender.append(f"{at + 1} COPY send[{lane},{lane + 1}) -> "
                      f"scratch0[{lane},{lane + 1}) after {at}")
        last_sender[lane] = at + 1
        at = len(receiver) - 1
        after = "" if last_receiver[lane] is None else f" after {last_receiver[lane]}"
        receiver.append(f"{at} RECV from=0 tag={lane} scratch0[{lane},{lane + 1}){after}")
        last_receiver[lane] = at
try:
    papcoll.verify_texts(["\\n".join(sender) + "\\n", "\\n".join(receiver) + "\\n"])
except PapcollError as error:
    assert "too large to check for races" in error.message, error.message
    assert "search steps" in error.message, error.message
else:
    raise AssertionError("a schedule past the search's step limit was verified")
"""


@pytest.mark.parametrize("code", [INDEPENDENT_COPIES, COPIES_ONTO_ONE_REGION,
                                  SEGMENTED_PIPELINES, OVERLAPPING_EVERYWHERE,
                                  FAR_QUESTIONS, MANY_LANES],
                         ids=["independent-copies", "copies-onto-one-region",
                              "segmented-pipelines", "overlapping-everywhere",
                              "far-questions", "many-lanes"])
def test_verifier_is_not_quadratic(code):
    run_python_within(code, seconds=30)


def test_straggler_paces_its_streamed_chunks_and_nothing_else():
    # P = 8, rank 1 late, 1 MiB of floats: 7 core blocks of 8 chunks. The late rank's
    # hand-off and each core rank's finals stream chunks to many peers at once and are
    # PACED (the next chunk to a peer leaves once the last is delivered); the core's ring
    # reduce-scatter is not.
    ranks, chunks = 8, 8
    context = Context(arrivals=[0.0, 0.01] + [0.0] * (ranks - 2), tau=1e-4)

    def sends(rank: int) -> tuple[int, int]:
        lines = [line for line in
                 papcoll.schedule_text("straggler", ranks, rank, 262144, context=context)
                 .splitlines() if " SEND " in line]
        return len(lines), sum(" paced" in line for line in lines)

    assert sends(1) == ((ranks - 1) * chunks, (ranks - 1) * chunks)  # the hand-off only
    total, paced = sends(0)
    assert paced == (ranks - 1) * chunks  # a final of every chunk to every other rank
    assert total > paced  # the ring's sends
