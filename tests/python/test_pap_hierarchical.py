"""pap_hierarchical: the PAP-aware hierarchical all-reduce over sites. Its
schedules verified under site layouts x arrival patterns x counts; what crosses the slow
links counted byte for byte against the closed form (each site's on-time partial once, a
late rank's vector once, nothing else); wrong predictions still complete; auto weighing
the hierarchical algorithms where the groups form a hierarchy."""

from __future__ import annotations

import random

import pytest
from papcoll import Context, PapcollError, Parameters, schedule_text, verify
from papcoll.model import preset, with_parameters
from papcoll.network import load_network
from papcoll.sim import arrival_pattern, choose, simulate, tau

NAME = "pap_hierarchical"


def layouts(ranks: int) -> dict[str, list[int]]:
    generator = random.Random(ranks)
    return {
        "two sites": [0 if rank < (ranks + 1) // 2 else 1 for rank in range(ranks)],
        "three unequal sites": [0 if rank < ranks // 2 else 1 if rank < 3 * ranks // 4 else 2
                                for rank in range(ranks)],
        "sites interleaved": [rank % 3 for rank in range(ranks)],
        "random": [generator.randrange(4) * 7 for _ in range(ranks)],
        "one site": [5] * ranks,
        "a rank per site": list(range(ranks)),
    }


def patterns(ranks: int) -> dict[str, list[float]]:
    generator = random.Random(ranks + 1)
    return {
        "balanced": [0.0] * ranks,
        "one late": [0.1 if rank == ranks // 2 else 0.0 for rank in range(ranks)],
        "a late site": [0.05 if rank >= ranks // 2 else 0.0 for rank in range(ranks)],
        "random": [generator.uniform(0, 0.5) for _ in range(ranks)],
    }


@pytest.mark.parametrize("ranks", [1, 2, 3, 5, 8, 13])
@pytest.mark.parametrize("count", [0, 1, 7, 1009, 70000])
def test_schedules_verify_under_sites_and_arrivals(ranks, count):
    # the verifier runs every rank's schedule symbolically (strict rendezvous, in place too):
    # every element is each rank's contribution exactly once, no race, no deadlock
    for layout_name, groups in layouts(ranks).items():
        for pattern_name, arrivals in patterns(ranks).items():
            context = Context(arrivals=arrivals, tau=1e-4, groups=groups)
            report = verify(NAME, ranks, count, context=context)
            assert report.ok, (layout_name, pattern_name, report.reason)


def geo(name: str, ranks: int, arrivals: list[float], predictions: list[float] | None = None,
        count: int = 512 * 1024):
    network = load_network(name)
    topology = network.topology(ranks)
    context = Context(parameters=Parameters(tree=topology),
                      arrivals=predictions if predictions is not None else arrivals,
                      tau=tau(network.model, ranks, count, 4), groups=topology.sites)
    return network, topology, context


def site_link_bytes(topology, result) -> dict[str, int]:
    """Bytes over the directed links of the site switches (the slow links)."""
    return {topology.link_name(index): sent for index, sent in enumerate(result.link_bytes)
            if topology.names[index // 2].startswith("site-") and topology.parent[index // 2] >= 0
            and sent}


# crosses_alone: whether the late rank's vector crosses by itself. In a site of two ranks the
# straggler rule (T(m), straggler.c) finds no gain in treating it as late (T(0) = T(1)), so
# its vector crosses inside its site's partial, combined: B each way.
@pytest.mark.parametrize(("ranks", "crosses_alone"), [(4, False), (20, True), (64, True)])
def test_on_geo_2site_the_slow_link_carries_each_partial_once_and_the_late_vector_once(
        ranks, crosses_alone):
    count = 512 * 1024
    vector = count * 4
    for late in (None, 1, ranks - 1):
        arrivals = [0.1 if rank == late else 0.0 for rank in range(ranks)]
        network, topology, context = geo("geo-2site", ranks, arrivals)
        result = simulate(NAME, ranks, count, 4, network.model, arrivals, context,
                          topology=topology)
        # site-b hangs below site-a by the WAN link: [2v] up (b -> a), [2v + 1] down
        crossing = site_link_bytes(topology, result)
        late_site = None if late is None or not crosses_alone else topology.sites[late]
        up = vector + (vector if late_site == 1 else 0)
        down = vector + (vector if late_site == 0 else 0)
        assert crossing == {"site-b->site-a": up, "site-a->site-b": down}, (late, crossing)


def test_a_site_s_late_ranks_cross_once_summed():
    # five late ranks in site a (predicted and true): the slow link still carries one on-time
    # partial each way and one late partial from site a, however many ranks are late
    ranks, count = 20, 512 * 1024
    vector = count * 4
    arrivals = [0.01 * (rank + 1) if 3 <= rank < 8 else 0.0 for rank in range(ranks)]
    network, topology, context = geo("geo-2site", ranks, arrivals)
    result = simulate(NAME, ranks, count, 4, network.model, arrivals, context,
                      topology=topology)
    assert site_link_bytes(topology, result) == {"site-b->site-a": vector,
                                                 "site-a->site-b": 2 * vector}


@pytest.mark.parametrize(("ranks", "site_size"), [(70, 2), (140, 4)])
def test_many_sites_wrap_the_landing_slots(ranks, site_size):
    # more than 32 other sites (and late sites): the leaders' landing slots are reused, each
    # receive waiting for the combination that read its slot before
    generator = random.Random(ranks)
    arrivals = [generator.uniform(0, 0.05) for _ in range(ranks)]
    groups = [rank // site_size for rank in range(ranks)]
    for count in (ranks - 1, 50 * ranks):
        report = verify(NAME, ranks, count, context=Context(arrivals=arrivals, tau=1e-5,
                                                             groups=groups))
        assert report.ok, (count, report.reason)


def test_on_geo_3site_each_site_sends_its_partial_to_each_other_site():
    ranks, count = 21, 512 * 1024
    vector = count * 4
    arrivals = [0.1 if rank == 3 else 0.0 for rank in range(ranks)]
    network, topology, context = geo("geo-3site", ranks, arrivals)
    result = simulate(NAME, ranks, count, 4, network.model, arrivals, context,
                      topology=topology)
    crossing = site_link_bytes(topology, result)
    late_site = topology.site_names[topology.sites[3]]
    for site in ("site-a", "site-b", "site-c"):
        # up: its partial to two sites (+ the late vector to two); down: two partials in
        # (+ the late vector, unless it is the late rank's own site)
        extra_up = 2 * vector if site == late_site else 0
        extra_down = vector if site != late_site else 0
        assert crossing[f"{site}->wan"] == 2 * vector + extra_up
        assert crossing[f"wan->{site}"] == 2 * vector + extra_down


def test_the_exchange_across_costs_one_slice_per_other_site_on_a_crossbar():
    # every site on time, sites of 4 on a crossbar whose links only move bytes (ethernet-1g
    # without reduce and copy costs): each leader sends its 1 MiB partial to every other
    # site and receives theirs, so each site more adds one slice's wire time, no more. Two
    # parts must hold for it: the partials go out staggered (in readiness order every
    # leader's first went to the same site) and the simulator books a receiver when a queued
    # message leaves its sender, not when it was posted (else a message leaving third held
    # the receiver ahead of another sender's first): either missing, a site more cost two
    model = with_parameters(preset("ethernet-1g"),
                            "reduce_seconds_per_byte=0,copy_seconds_per_byte=0")
    count, slice_wire = 1 << 20, (1 << 20) * model.seconds_per_byte  # 4 MiB, 1 MiB a slice
    makespan = {}
    for sites in (4, 8, 16):
        ranks = 4 * sites
        groups = [rank // 4 for rank in range(ranks)]
        context = Context(arrivals=[0.0] * ranks, tau=1e-4, groups=groups)
        makespan[sites] = simulate(NAME, ranks, count, 4, model, None, context).makespan
    for sites in (8, 16):
        assert makespan[sites] - makespan[4] == pytest.approx((sites - 4) * slice_wire,
                                                              rel=1e-9)


@pytest.mark.parametrize("sites", [3, 4, 6])
def test_a_late_rank_hands_its_partial_to_one_site_after_another(sites):
    # the last late rank's crossings: its slices to one site's leaders travel together,
    # the next site's each after the same slice's to the site before (all at once, links
    # that share their bandwidth delivered every site's partial together at the end)
    ranks, late = 4 * sites, 1
    groups = [rank // 4 for rank in range(ranks)]
    arrivals = [1.0 if rank == late else 0.0 for rank in range(ranks)]
    context = Context(arrivals=arrivals, tau=1e-4, groups=groups)
    sends: dict[int, tuple[int, set[int]]] = {}  # op -> (destination, ops it waits for)
    for line in schedule_text(NAME, ranks, late, 80000, 4, context).splitlines()[1:]:
        fields = line.split()
        if fields[1] == "SEND" and "tag=6" in fields:  # the late partial
            _, _, waits_for = line.partition(" after ")
            after = {int(op) for op in waits_for.split(",")} if waits_for else set()
            sends[int(fields[0])] = (int(fields[2].removeprefix("to=")), after)
    crossings = {op: sent for op, sent in sends.items() if groups[sent[0]] != groups[late]}
    assert len(crossings) == 3 * (sites - 1)  # 3 slices (3 leaders a site) to every other site
    for op, (destination, after) in crossings.items():
        earlier = [sends[previous][0] for previous in after if previous in crossings]
        if groups[destination] == (groups[late] + 1) % sites:
            assert earlier == [], (op, after)
        else:  # one earlier crossing, to the site before
            assert [groups[e] for e in earlier] == [(groups[destination] - 1) % sites], (op, after)


@pytest.mark.parametrize("predicted_late", [None, 0, 2, 15])
def test_wrong_predictions_only_wait(predicted_late):
    # rank 1 truly late; predicted: nobody, rank 0 (a leader's place), rank 2 (same site),
    # rank 15 (the other site). Still correct (the verifier proves every layout); slower,
    # but never slower than hr1, which needs no predictions: one partial a site crosses
    # after the true late rank either way, and the leaders' ring keeps the rest local
    ranks, count = 20, 512 * 1024
    truth = arrival_pattern("one-late", ranks, 0.1)
    predicted = [0.1 if rank == predicted_late else 0.0 for rank in range(ranks)]
    network, topology, context = geo("geo-2site", ranks, truth, predicted)
    ours = simulate(NAME, ranks, count, 4, network.model, truth, context, topology=topology)
    hr1 = simulate("hr1", ranks, count, 4, network.model, truth, context, topology=topology)
    right = simulate(NAME, ranks, count, 4, network.model, truth,
                     geo("geo-2site", ranks, truth)[2], topology=topology)
    assert right.average_elapsed < ours.average_elapsed <= hr1.average_elapsed


def test_auto_weighs_the_hierarchical_algorithms_where_groups_form_a_hierarchy():
    ranks, count = 20, 512 * 1024
    balanced = [0.0] * ranks
    network, topology, context = geo("geo-2site", ranks, balanced)
    decided = choose(ranks, count, 4, network.model, context)
    assert decided.from_groups and not decided.from_arrivals
    assert decided.algorithm in ("hr1", "hr2", "smp_binomial", "smp_butterfly", NAME)
    late = arrival_pattern("one-late", ranks, 0.1)
    _, _, context = geo("geo-2site", ranks, late)
    decided = choose(ranks, count, 4, network.model, context)
    assert decided.from_groups and decided.from_arrivals and decided.algorithm == NAME
    # no tree: on a crossbar a hierarchy gains nothing; none is simulated, balanced is native
    flat = Context(arrivals=balanced, tau=context.tau, groups=topology.sites)
    decided = choose(ranks, count, 4, network.model, flat)
    assert not decided.from_groups and decided.algorithm == "native"
    # one group is no hierarchy: balanced is native without simulating
    single = Context(arrivals=balanced, tau=context.tau, groups=[0] * ranks)
    decided = choose(ranks, count, 4, network.model, single)
    assert not decided.from_groups and decided.algorithm == "native"
    # a non-commutative op: pap_hierarchical and hr1 / hr2 reorder operands, never chosen
    decided = choose(ranks, count, 4, network.model, context, commutative=False)
    assert decided.algorithm == "native"


@pytest.mark.parametrize(("context", "message"), [
    (Context(arrivals=[0.0] * 4, tau=1e-4), "needs the group of every rank"),
    (Context(tau=1e-4, groups=[0, 0, 1, 1]), "one predicted arrival time per rank"),
    (Context(arrivals=[0.0] * 4, tau=0.0, groups=[0, 0, 1, 1]), "needs tau > 0"),
])
def test_refusals_name_the_problem(context, message):
    with pytest.raises(PapcollError, match=message):
        verify(NAME, 4, 100, context=context)
