"""Reproducible mode: the canonical order, the rank-order left fold
((x0 op x1) op x2) ... op x(P-1), as the verifier proves it per schedule.

tests/c/test_algorithms.c verifies every algorithm that claims the canonical order with the
verifier's requirement on (P = 1..64, every count and arrival pattern of its sweep); here:
the claim is tight (an algorithm that does not claim it breaks it somewhere), and a
schedule that breaks it fails with the element and the REDUCE's operands named. Under real
MPI (tests/mpi/reproducible.c, tests/pmpi/reproducible_unmodified.c): results bit for bit
the canonical order's value with random arrivals, blocking, non-blocking, persistent and
through the drop-in; the refusals."""

from __future__ import annotations

import papcoll
import pytest
from conftest import passed_failed
from papcoll import Context
from papcoll.pmpi import load_report
from test_mpi import checks_passed
from test_pmpi import BUILD, run_preloaded
from test_python_api import PROGRAMS, run_python_mpi


def cases(info: papcoll.AlgorithmInfo) -> list[tuple[int, int, Context | None]]:
    """(P, count, context) over which a non-canonical algorithm must break the fold."""
    found = []
    for ranks in (3, 4, 5, 8):
        groups = [rank % 2 for rank in range(ranks)] if info.needs_groups else None
        late_first = [0.01] + [0.0] * (ranks - 1)
        late_last = [0.0] * (ranks - 1) + [0.01]
        arrival_patterns = [late_last, late_first] if info.needs_arrivals else [None]
        for count in (1, ranks + 1, 1000):
            for arrivals in arrival_patterns:
                context = Context(arrivals=arrivals, tau=1e-4, groups=groups)
                found.append((ranks, count, context))
    return found


FLAT_OR_PAP = [info for info in papcoll.algorithms() if not info.reduce_scatter]


@pytest.mark.parametrize("info", FLAT_OR_PAP, ids=lambda info: info.name)
def test_the_canonical_order_claim_is_tight(info):
    reports = [papcoll.verify(info.name, ranks, count, 8, context)
               for ranks, count, context in cases(info)]
    assert all(report.ok for report in reports)
    if info.canonical_order:
        broken = [report.canonical_break for report in reports if not report.canonical_order]
        assert not broken, broken[:2]
    else:  # it does not claim the order: some case must show why
        assert any(not report.canonical_order for report in reports), info.name


@pytest.mark.parametrize("name", ["ring", "recursive_doubling", "binomial"])
def test_a_schedule_that_breaks_the_order_fails_naming_element_and_operands(name):
    report = papcoll.verify(name, 4, 10, 8, reproducible=True)
    assert not report.ok
    assert "not the rank-order fold" in report.reason
    assert "result element" in report.reason and "combined x" in report.reason
    # without the requirement the same schedules are correct all-reduces
    plain = papcoll.verify(name, 4, 10, 8)
    assert plain.ok and not plain.canonical_order and "combined" in plain.canonical_break


def test_the_canonical_algorithms_send_what_they_should():
    # canonical_scatter: exactly the bandwidth lower bound (Patarasuk & Yuan 2009,
    # Lemma 4), P | count
    for ranks in (2, 3, 4, 8, 16):
        report = papcoll.verify("canonical_scatter", ranks, 64 * ranks, 8, reproducible=True)
        assert report.ok and report.canonical_order
        assert report.max_bytes_sent == report.lower_bound_bytes
        # canonical_gather: one round, the whole vector to every other rank
        report = papcoll.verify("canonical_gather", ranks, 100, 8, reproducible=True)
        assert report.ok and report.rounds == 1
        assert report.max_bytes_sent == (ranks - 1) * 100 * 8


# tests/mpi/reproducible.c: 5 algorithms x 3 call modes x 5 counts x 4 (float and double
# sums, double min, float sums in place), and 9 checks of which data pays, refusals and
# reports
MPI_CHECKS_PER_RANK = 5 * 3 * 5 * 4 + 9


@pytest.mark.parametrize("ranks", [1, 2, 3, 4])
def test_results_are_the_canonical_order_under_mpi(ranks):
    assert checks_passed(ranks, "mpi_reproducible") == MPI_CHECKS_PER_RANK * ranks


@pytest.mark.parametrize("ranks", [2, 3, 4])
def test_the_drop_in_gives_the_canonical_order(tmp_path, ranks):
    report_path = tmp_path / "report.json"
    # the default PAPCOLL_MIN_BYTES: the small sums too, which would otherwise go to MPI
    result = run_preloaded(ranks, [str(BUILD / "pmpi_reproducible_unmodified")],
                           {"PAPCOLL_REPRODUCIBLE": "1", "PAPCOLL_REPORT": str(report_path)})
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    # on world 4 MPI_Iallreduce (before any blocking call) and 8 MPI_Allreduce; 4 posts each
    # on a duplicate and a reversed split, before any blocking call on them
    assert "reproducible_unmodified: 20 of 20 equal" in result.stdout, result.stdout
    assert "ran in the MPI's order" not in result.stderr
    ran: dict[str, int] = {}
    for site in load_report(report_path)["sites"]:
        for name, calls in site["algorithms"].items():
            ran[name] = ran.get(name, 0) + calls
    assert all(papcoll.algorithm(name).canonical_order for name in ran), ran
    assert sum(ran.values()) == 20, ran


def test_the_drop_in_says_when_a_post_cannot_keep_the_order(tmp_path):
    """A communicator from MPI_Comm_idup gets no papcoll communicator before its first
    blocking call (communicator_constructors.c): its post goes to MPI, said on stderr and
    counted in the report."""
    report_path = tmp_path / "report.json"
    result = run_preloaded(2, [str(BUILD / "pmpi_reproducible_unmodified"), "--idup"],
                           {"PAPCOLL_REPRODUCIBLE": "1", "PAPCOLL_REPORT": str(report_path)})
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert result.stderr.count("ran in the MPI's order, which is not the canonical one") == 1
    reasons = load_report(report_path)["totals"]["native_reasons"]
    assert reasons.get("no_papcoll_communicator", 0) == 4, reasons


@pytest.mark.parametrize("ranks", [1, 3])
def test_python_reproducible_communicator(ranks):
    # 5 algorithms x 2 types x 4 counts x 2 call kinds, 2 refusals, 1 exact sum
    result = run_python_mpi(ranks, PROGRAMS / "reproducible_check.py")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    passed, failed = passed_failed(result.stdout)
    assert failed == 0 and passed == 83 * ranks


def test_the_drop_in_refuses_a_malformed_setting_at_mpi_init():
    result = run_preloaded(2, [str(BUILD / "pmpi_reproducible_unmodified")],
                           {"PAPCOLL_REPRODUCIBLE": "maybe"})
    assert result.returncode != 0
    assert "PAPCOLL_REPRODUCIBLE='maybe' is not 1/0" in result.stdout + result.stderr


def test_the_drop_in_refuses_an_algorithm_without_the_order_at_mpi_init():
    result = run_preloaded(2, [str(BUILD / "pmpi_reproducible_unmodified")],
                           {"PAPCOLL_REPRODUCIBLE": "1", "PAPCOLL_ALGORITHM": "ring"})
    assert result.returncode != 0
    assert "PAPCOLL_ALGORITHM='ring' does not keep the canonical order" in (result.stdout +
                                                                          result.stderr)


CANONICAL = [info for info in papcoll.algorithms()
             if info.canonical_order and not info.needs_groups and not info.reduce_scatter]


@pytest.mark.parametrize("ranks", [2, 4, 16])
@pytest.mark.parametrize("size_bytes", [8, 16384, 1 << 20])
@pytest.mark.parametrize("late", [False, True])
def test_auto_in_the_mode_runs_the_least_predicted_of_the_canonical_algorithms(
        ranks, size_bytes, late):
    """papcoll_choose_reproducible (src/core/select_canonical.c): never native, and no
    algorithm that keeps the order is predicted faster than what it picks."""
    from papcoll.sim import SimModel, choose, simulate
    model = SimModel(latency=2e-6, seconds_per_byte=1e-10, reduce_seconds_per_byte=2e-10,
                     copy_seconds_per_byte=1e-10)
    arrivals = [0.0] * ranks
    if late:
        arrivals[1] = 2e-3
    context = Context(arrivals=arrivals, tau=1e-5)
    count = size_bytes // 8
    decided = choose(ranks, count, 8, model, context, reproducible=True)
    chosen = papcoll.algorithm(decided.algorithm)
    assert chosen.canonical_order and decided.algorithm != "native"
    predicted = {info.name: simulate(info.name, ranks, count, 8, model, arrivals,
                                     context).average_elapsed for info in CANONICAL}
    assert decided.predicted_seconds == pytest.approx(min(predicted.values()))
    assert decided.predicted_seconds == pytest.approx(predicted[decided.algorithm])


def test_auto_in_the_mode_moves_from_one_round_to_two_phases_as_the_vector_grows():
    from papcoll.sim import SimModel, choose
    model = SimModel(latency=2e-6, seconds_per_byte=1e-10, reduce_seconds_per_byte=2e-10,
                     copy_seconds_per_byte=1e-10)
    small = choose(4, 1, 8, model, Context(), reproducible=True)
    large = choose(4, 1 << 21, 8, model, Context(), reproducible=True)
    assert small.algorithm == "canonical_gather"
    assert large.algorithm != "canonical_gather"
    with pytest.raises(TypeError, match="reproducible must be a bool"):
        choose(4, 1, 8, model, Context(), reproducible=1)  # type: ignore[arg-type]
