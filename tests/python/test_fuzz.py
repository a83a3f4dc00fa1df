"""Property tests of every parser of papcoll: recursive multiplying schedule
strings, the schedule text format, network files, arrival times, sizes, and the command
line end to end. Each property says what any input may lead to: a valid result or the
documented error; another exception, a crash or a hang fails.

Hypothesis profiles (conftest.py): `short` in `make test`, `long` (10x) with --long; the
seed is printed at the end of pytest's output. `--hypothesis-show-statistics` counts what ran.
"""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path
from typing import Any

import papcoll
import pytest
from fuzzing import (
    INT32_MAX,
    fuzz,
    json_leaves,
    json_trees,
    mutated,
    mutated_dumps,
    numbers,
    rm_schedules,
    schedule_dumps,
    watchdog,
)
from hypothesis import event, example, given
from hypothesis import strategies as st
from papcoll import multiplying
from papcoll.core import PapcollError
from papcoll.model import PRESETS
from papcoll.network import NETWORKS, NetworkError, load_network
from papcoll.sim import simulate

# --- recursive multiplying schedule strings ----------------------------------------------

rm_ranks = st.one_of(st.integers(1, 64), st.integers(1, INT32_MAX),
                     st.sampled_from((INT32_MAX, 2**30, 3 * 2**29, 2**16 * 3**9)))


@st.composite
def rm_cases(draw: st.DrawFn) -> tuple[str, int]:
    """(schedule, P): a schedule of the search space of a small P, as it is or mutated (a
    valid neighbour is often valid for a nearby P), or any string for any P."""
    if draw(st.booleans()):
        ranks = draw(st.integers(1, 24))
        schedule = draw(st.sampled_from([text for _, text in
                                         multiplying.enumerate_schedules(ranks, 6)]))
        if draw(st.booleans()):
            schedule = draw(mutated(schedule))
        return schedule, max(1, draw(st.sampled_from((ranks, ranks - 1, ranks + 1, 2 * ranks))
                                     | rm_ranks))
    return draw(rm_schedules), draw(rm_ranks)


@fuzz
@given(case=rm_cases(), count=st.integers(0, 20))
@example(case=("a4\x00zz", 4), count=4)
@example(case=("a2\ud800", 2), count=1)
@example(case=("c6m2,a2,a2,e6m2", 7), count=7)
@example(case=("m1g2a3,n1g3a2", 7), count=5)
def test_schedule_string_is_checked_or_refused(case: tuple[str, int], count: int) -> None:
    schedule, ranks = case
    with watchdog():
        try:
            reorders = multiplying.check(schedule, ranks)
        except PapcollError:
            event("refused")
            return
        assert isinstance(reorders, bool)
        if ranks > 48:
            event("accepted, P > 48: not built")
            return
        event("accepted and verified")
        context = papcoll.Context(parameters=papcoll.Parameters(schedule=schedule))
        report = papcoll.verify("recursive_multiplying", ranks, count, context=context)
        assert report.ok, f"{schedule!r} at P = {ranks}, count {count}: {report.reason}"


# --- the schedule text format ------------------------------------------------------------

@fuzz
@given(texts=st.one_of(mutated_dumps(), st.lists(st.text(max_size=200), min_size=1,
                                                  max_size=3)))
@example(texts=["schedule ranks=1 rank=0 count=1 elem_size=4 scratch=0\n"
                "0 COPY send[0,1) -> recv[0,1)\x00\n1 COPY send[0,1) -> recv[0,9)\n"])
@example(texts=["schedule ranks=1 rank=0 count=1 elem_size=4 scratch=0\n\udcff"])
def test_schedule_text_is_verified_or_refused(texts: list[str]) -> None:
    with watchdog():
        try:
            report = papcoll.verify_texts(texts)
        except PapcollError:
            event("refused")
            return
        assert isinstance(report, papcoll.VerifyReport)
        event("verified: " + ("ok" if report.ok else "violation"))


@fuzz
@given(texts=schedule_dumps())
def test_schedule_text_round_trip_verifies(texts: list[str]) -> None:
    """Unmutated dumps of a correct algorithm parse and verify (the dump and the parser
    agree on the format)."""
    with watchdog():
        report = papcoll.verify_texts(texts)
        assert report.ok, report.reason


# --- network files -----------------------------------------------------------------------

model_names = st.sampled_from(("latency", "L", "alpha", "overhead", "o", "seconds_per_byte",
                               "G", "beta", "eager_limit_bytes", "gap", "bogus", ""))
model_values = st.one_of(numbers, st.floats(), st.just("1e-6"), st.booleans(), st.none())


@st.composite
def network_documents(draw: st.DrawFn) -> Any:
    """A network file's object: a valid one (a base, model overrides, a tree of switches and
    hosts) with, half the time, one to three values replaced by fuzzed ones; sometimes any
    JSON at all."""
    if draw(st.integers(0, 9)) == 0:
        return draw(json_trees)
    document: dict[str, Any] = {}
    if draw(st.booleans()):
        document["base"] = draw(st.sampled_from(list(PRESETS)))
    if draw(st.booleans()):
        document["model"] = draw(st.dictionaries(st.sampled_from(
            ("latency", "overhead", "seconds_per_byte", "G", "o")), st.floats(0, 1e-3),
            max_size=3))
    if draw(st.booleans()):
        document["description"] = draw(st.text(max_size=10))
    link = st.fixed_dictionaries({}, optional={"latency": st.floats(0, 1e-3),
                                               "seconds_per_byte": st.floats(0, 1e-8)})
    if draw(st.integers(0, 3)) or not document.keys() & {"base", "model"}:
        # a tree: switch s_i under an earlier switch, hosts under switches
        switches: list[dict[str, Any]] = [{"name": "s0"}]
        for i in range(1, draw(st.integers(1, 4))):
            switches.append({"name": f"s{i}", "parent": f"s{draw(st.integers(0, i - 1))}"})
        if draw(st.booleans()):  # sites: any switches marked, valid or not
            for switch in switches:
                if draw(st.booleans()):
                    switch["site"] = True
        hosts: list[dict[str, Any]] = [
            {"name": f"h{i}_", "parent": f"s{draw(st.integers(0, len(switches) - 1))}",
             "count": draw(st.integers(1, 6)), "cores": draw(st.integers(1, 4))}
            for i in range(draw(st.integers(1, 3)))]
        topology: dict[str, Any] = {"switches": switches, "hosts": hosts}
        for key in ("link", "local"):
            if draw(st.booleans()):
                topology[key] = draw(link)
        if draw(st.booleans()):
            host_names = [f"{entry['name']}{k}" for entry in hosts
                          for k in range(entry["count"])]
            topology["placement"] = draw(st.sampled_from(("block", "cyclic"))
                                         | st.lists(st.sampled_from(host_names), max_size=8))
        document["topology"] = topology
    names = st.sampled_from(("s0", "s1", "h0_0", "h", "")) | st.text(max_size=4) | json_leaves
    values = st.one_of(numbers, model_values, json_leaves, json_trees)
    for _ in range(draw(st.sampled_from((0, 0, 0, 1, 1, 2, 3)))):
        # one break: a value of a key the file has, or a key it should not have
        where = draw(st.sampled_from(("document", "model", "topology", "vertex", "placement")))
        topology = document.get("topology")
        if where == "model" and isinstance(document.get("model"), dict):
            document["model"][draw(model_names)] = draw(model_values)
        elif where == "topology" and isinstance(topology, dict):
            topology[draw(st.sampled_from(("switches", "hosts", "link", "local", "x")))] = \
                draw(values)
        elif where == "vertex" and isinstance(topology, dict) and all(
                isinstance(topology.get(kind), list) and topology[kind]
                and all(isinstance(entry, dict) for entry in topology[kind])
                for kind in ("switches", "hosts")):
            entry = draw(st.sampled_from(topology["switches"] + topology["hosts"]))
            key = draw(st.sampled_from(("name", "parent", "count", "cores", "latency",
                                        "seconds_per_byte", "site", "bogus")))
            entry[key] = draw(names if key in ("name", "parent") else values)
        elif where == "placement" and isinstance(topology, dict):
            topology["placement"] = draw(st.lists(names, max_size=8) | json_leaves)
        else:
            document[draw(st.sampled_from(("base", "model", "description", "topology",
                                           "")))] = draw(values)
    return document


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if value != value else ("inf" if value > 0 else "-inf")
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(item) for item in value if item is not None) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(key))} = {_toml_value(item)}"
                               for key, item in value.items() if item is not None) + "}"
    return '""'


def _check_network(path: Path, ranks: int) -> None:
    try:
        network = load_network(str(path))
    except NetworkError:
        event("refused")
        return
    assert network.model.latency >= 0
    try:
        topology = network.topology(ranks)
    except NetworkError:
        event("loaded; placement refused")
        return
    if topology is None:
        event("loaded: a crossbar")
        return
    assert len(topology.rank_vertex) == ranks
    try:
        order = topology.ring_order()
    except PapcollError:
        event("loaded and placed; ring order refused")
        return
    assert sorted(order) == list(range(ranks))
    # the simulator on the file's model and tree: finite, non-negative times
    try:
        result = simulate("ring_topology", ranks, 8, 4, network.model, topology=topology,
                          context=papcoll.Context(parameters=papcoll.Parameters(tree=topology)))
    except PapcollError:
        event("loaded, placed, ring order; simulation refused")
        return
    assert all(math.isfinite(time) and time >= 0 for time in result.finish), result.finish
    event("loaded, placed, ring order, simulated")


@fuzz
@given(document=network_documents(), as_toml=st.booleans(), ranks=st.integers(1, 40))
@example(document={"model": {"latency": 10**400}}, as_toml=False, ranks=1)
@example(document={"topology": {"switches": [{"name": "s"}],
                                "hosts": [{"name": "h", "parent": "s", "latency": 10**400}]}},
         as_toml=False, ranks=1)
def test_network_file_loads_or_is_refused(document: Any, as_toml: bool, ranks: int) -> None:
    with watchdog(), tempfile.TemporaryDirectory() as folder:
        if as_toml and isinstance(document, dict):
            path = Path(folder) / "net.toml"
            path.write_text("\n".join(f"{json.dumps(str(key))} = {_toml_value(value)}"
                                      for key, value in document.items()
                                      if value is not None))
        else:
            path = Path(folder) / "net.json"
            path.write_text(json.dumps(document))
        _check_network(path, ranks)


network_examples = sorted(Path(__file__).parents[2].joinpath("docs", "networks").iterdir())


@fuzz
@given(example_file=st.sampled_from(network_examples), data=st.data(),
       ranks=st.integers(1, 64))
def test_network_file_mutated_loads_or_is_refused(example_file: Path, data: st.DataObject,
                                                  ranks: int) -> None:
    """docs/networks' files with characters dropped, inserted or replaced, or random bytes."""
    text = example_file.read_text()
    raw = data.draw(st.one_of(mutated(text).map(lambda t: t.encode("utf-8", "surrogatepass")),
                              st.binary(max_size=64)))
    with watchdog(), tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / example_file.name
        path.write_bytes(raw)
        _check_network(path, ranks)


@fuzz
@given(text=st.sampled_from([*NETWORKS, "x", "", "a.JSON", "/", "a.toml", "."])
       | st.text(max_size=12))
def test_network_name_is_a_preset_or_refused(text: str) -> None:
    with watchdog():
        try:
            assert load_network(text).name
        except NetworkError:
            pass


# --- what the fuzzing found, kept fixed ----------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda: multiplying.check("a4\x00zz", 4),
    lambda: multiplying.check("a2\ud800", 2),
    lambda: papcoll.algorithm("ring\x00x"),
    lambda: papcoll.verify("ring\x00x", 3, 4),
    lambda: papcoll.schedule_text("ring\udcff", 3, 0, 4),
    lambda: papcoll.verify("recursive_multiplying", 4, 4, context=papcoll.Context(
        parameters=papcoll.Parameters(schedule="a4\x00a9"))),
    lambda: papcoll.verify_texts([papcoll.schedule_text("ring", 1, 0, 1) + "\x00junk"]),
    lambda: papcoll.verify_texts(["schedule ranks=1 \udcff"]),
])
def test_text_for_c_with_nul_or_surrogate_is_refused(call: Any) -> None:
    """C would read a text with a NUL only up to it ('ring\\0x' ran ring, 'a4\\0zz' passed
    as a4); a lone surrogate raised UnicodeEncodeError. Both are PapcollErrors now."""
    with pytest.raises(PapcollError, match="NUL|UTF-8"):
        call()


@pytest.mark.parametrize("document", [
    {"model": {"latency": 10**400}},
    {"topology": {"switches": [{"name": "s"}],
                  "hosts": [{"name": "h", "parent": "s", "seconds_per_byte": -(10**400)}]}},
])
def test_network_number_beyond_a_float_is_refused(document: Any, tmp_path: Path) -> None:
    """A JSON integer beyond a float's range raised OverflowError out of load_network."""
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(document))
    with pytest.raises(NetworkError, match="finite number"):
        load_network(str(path))


# --- what the fuzzing found in C (src/core), fixed there: kept as inputs -------------------
# Found by this file run against the core built with -fsanitize=address,undefined (`make
# fuzz-sanitizers`): signed overflows that a plain build hid. Each must return or raise
# PapcollError, and under `make fuzz-sanitizers` run without a report.
_SEND_WHOLE_INT64 = [
    "schedule ranks=2 rank=0 count=1 elem_size=4 scratch=\n"
    "0 SEND to=1 tag=0 send[0,9223372036854775807)\n",
    "schedule ranks=2 rank=1 count=1 elem_size=4 scratch=\n"
    "0 RECV from=0 tag=0 recv[0,9223372036854775807)\n",
]
C_FINDINGS = [
    # rm_language.c:119: threshold / B + size - threshold computes 2^31-1 + 3 in int32
    pytest.param(lambda: multiplying.check("c6m2", INT32_MAX), id="rm c6m2 at P=2^31-1"),
    # schedule_text.c:149: a region's end - start with start -2^63
    pytest.param(lambda: papcoll.verify_texts([
        "schedule ranks=1 rank=0 count=8 elem_size=4 scratch=\n"
        "0 COPY send[-9223372036854775808,0) -> recv[0,8)\n"]), id="text send[-2^63,0)"),
    # verify.c:409-410: a region's length x elem_size overflows int64
    pytest.param(lambda: papcoll.verify_texts(_SEND_WHOLE_INT64), id="text send[0,2^63-1)"),
]


@pytest.mark.parametrize("call", C_FINDINGS)
def test_c_findings_return_or_refuse(call: Any) -> None:
    try:
        call()
    except PapcollError:
        pass


def test_verifier_byte_counts_do_not_wrap() -> None:
    # verify.c:409: SEND send[0,2^63-1) of 4-byte elements wrapped total_bytes_sent to -4;
    # the byte counts now saturate at 2^63-1
    report = papcoll.verify_texts(_SEND_WHOLE_INT64)
    assert min(report.total_bytes_sent, report.max_bytes_sent,
               report.max_bytes_received) >= 0, report
