"""Property tests of every parser of papcoll (issue 17): recursive multiplying schedule
strings, the schedule text format, network files, arrival times, sizes, and the command
line end to end. Each property says what any input may lead to: a valid result or the
documented error; another exception, a crash or a hang fails.

Hypothesis profiles (conftest.py): `short` in `make test`, `long` (10x) with --long; the
seed is printed at the end of pytest's output. `--hypothesis-show-statistics` counts what ran.
"""

from __future__ import annotations

import argparse
import contextlib
import faulthandler
import io
import json
import math
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import papcoll
import pytest
from conftest import FUZZ_SEED
from hypothesis import event, example, given, seed
from hypothesis import strategies as st
from papcoll import checks, cli, multiplying
from papcoll.cli import options
from papcoll.core import PapcollError
from papcoll.model import PRESETS
from papcoll.network import NETWORKS, NetworkError, load_network
from papcoll.sim import simulate

INT32_MAX, INT64_MAX = 2**31 - 1, 2**63 - 1
# numbers that sit on a boundary of some integer type, and beyond every one
EXTREMES = (0, 1, -1, 2, 255, 256, 65535, 65536, INT32_MAX, INT32_MAX + 1, 2**32 - 1, 2**32,
            -(2**31), INT64_MAX, INT64_MAX + 1, 2**64 - 1, 2**64, -(2**63), 10**30, 10**400)
# one example that does not return in this many seconds ends the whole run with every
# thread's traceback (a hypothesis deadline only fails an example that does return)
WATCHDOG_SECONDS = 120


@contextlib.contextmanager
def watchdog() -> Iterator[None]:
    faulthandler.dump_traceback_later(WATCHDOG_SECONDS, exit=True)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


def fuzz(test: Any) -> Any:
    """Every property draws from the run's seed (printed at the end of pytest's output)."""
    return seed(FUZZ_SEED)(test)


extreme_numbers = st.sampled_from(EXTREMES)
small_numbers = st.integers(0, 70)
numbers = st.one_of(small_numbers, small_numbers, extreme_numbers,
                    st.integers(-(2**70), 2**70))


# --- recursive multiplying schedule strings ----------------------------------------------

@st.composite
def rm_stage(draw: st.DrawFn) -> str:
    """One stage of seed 004's language: aB, cTmB, eTmB, mRgGaB, nRgGaB."""
    kind = draw(st.sampled_from("acemn"))
    number = draw(st.one_of(st.integers(1, 9), numbers))
    if kind == "a":
        return f"a{number}"
    if kind in "ce":
        return f"{kind}{draw(st.integers(1, 24) | numbers)}m{number}"
    return f"{kind}{draw(st.integers(1, 12) | numbers)}g{draw(st.integers(1, 12) | numbers)}" \
           f"a{number}"


@st.composite
def mutated(draw: st.DrawFn, text: str) -> str:
    """`text` with a few random edits: a character dropped, inserted, doubled or replaced."""
    for _ in range(draw(st.integers(0, 3))):
        position = draw(st.integers(0, len(text)))
        edit = draw(st.sampled_from(("drop", "insert", "double", "replace")))
        character = draw(st.characters() | st.sampled_from(",;:- \t\n0123456789acegmn"))
        if edit == "drop":
            text = text[:position] + text[position + 1:]
        elif edit == "insert":
            text = text[:position] + character + text[position:]
        elif edit == "double":
            text = text[:position] + text[position:position + 3] * 2 + text[position + 3:]
        else:
            text = text[:position] + character + text[position + 1:]
    return text


rm_schedules = st.one_of(
    st.lists(rm_stage(), max_size=8).map(",".join),
    st.lists(rm_stage(), min_size=1, max_size=6).map(",".join).flatmap(mutated),
    st.text(max_size=40),
    st.text(alphabet="acemng0123456789,", max_size=40),
)
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

# the algorithms whose schedules need nothing besides P and count, and the two that need
# predicted arrivals (given) and groups (given)
_PLAIN = [info.name for info in papcoll.algorithms()
          if not info.needs_arrivals and not info.needs_groups]


def _context(name: str, ranks: int) -> papcoll.Context | None:
    info = papcoll.algorithm(name)
    if not (info.needs_arrivals or info.needs_groups):
        return None
    return papcoll.Context(
        arrivals=[0.001 * rank for rank in range(ranks)] if info.needs_arrivals else None,
        tau=1e-4 if info.needs_arrivals else 0.0,
        groups=[rank // 2 for rank in range(ranks)] if info.needs_groups else None)


@st.composite
def schedule_dumps(draw: st.DrawFn) -> list[str]:
    """The text of every rank's schedule of a real algorithm (small P and count)."""
    name = draw(st.sampled_from([info.name for info in papcoll.algorithms()]))
    ranks = draw(st.integers(1, 6))
    count = draw(st.integers(0, 12))
    context = _context(name, ranks)
    try:
        return [papcoll.schedule_text(name, ranks, rank, count, 4, context)
                for rank in range(ranks)]
    except PapcollError:  # an algorithm that refuses this P or count
        return [papcoll.schedule_text("ring", ranks, rank, count) for rank in range(ranks)]


@st.composite
def mutated_dumps(draw: st.DrawFn) -> list[str]:
    texts = draw(schedule_dumps())
    for _ in range(draw(st.integers(0, 4))):
        rank = draw(st.integers(0, len(texts) - 1))
        lines = texts[rank].split("\n")
        where = draw(st.integers(0, len(lines) - 1))
        edit = draw(st.sampled_from(("drop line", "double line", "swap lines", "number",
                                     "numbers", "header", "region", "token", "bytes",
                                     "drop rank", "double rank")))
        if edit == "drop line":
            del lines[where]
        elif edit == "double line":
            lines.insert(where, lines[where])
        elif edit == "swap lines":
            other = draw(st.integers(0, len(lines) - 1))
            lines[where], lines[other] = lines[other], lines[where]
        elif edit == "number":
            found = list(re.finditer(r"-?\d+", lines[where]))
            if found:
                match = draw(st.sampled_from(found))
                lines[where] = (lines[where][:match.start()] + str(draw(numbers))
                                + lines[where][match.end():])
        elif edit == "numbers":  # each number of the line, with even odds
            lines[where] = re.sub(r"-?\d+", lambda match: str(draw(numbers)) if draw(
                st.booleans()) else match.group(), lines[where])
        elif edit == "header":  # a field of the first line: ranks, rank, count, elem_size...
            fields = lines[0].split(" ")
            index = draw(st.integers(0, len(fields) - 1))
            name = fields[index].split("=", 1)[0]
            value = draw(numbers.map(str) | st.lists(numbers.map(str), max_size=40).map(
                ",".join) | st.text(max_size=6))
            fields[index] = f"{name}={value}"
            lines[0] = " ".join(fields)
        elif edit == "region":  # a region [start,end) of the line, both ends fuzzed
            lines[where] = re.sub(r"\[-?\d+,-?\d+\)", lambda match: (
                f"[{draw(numbers)},{draw(numbers)})"), lines[where], count=1)
        elif edit == "token":
            tokens = lines[where].split(" ")
            tokens[draw(st.integers(0, len(tokens) - 1))] = draw(
                st.text(max_size=12) | st.sampled_from(("SEND", "RECV", "REDUCE", "COPY",
                                                        "after", "to=", "from=", "scratch9[",
                                                        "recv[1,0)", "order=", "")))
            lines[where] = " ".join(tokens)
        elif edit == "bytes":
            raw = draw(st.binary(min_size=1, max_size=8)).decode("latin-1")
            position = draw(st.integers(0, len(lines[where])))
            lines[where] = lines[where][:position] + raw + lines[where][position:]
        texts[rank] = "\n".join(lines)
        if edit == "drop rank" and len(texts) > 1:
            del texts[rank]
        elif edit == "double rank":
            texts.insert(rank, texts[rank])
    return texts


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


def _either(valid: st.SearchStrategy[str], fuzzed: st.SearchStrategy[str]) -> Any:
    """Mostly a valid value (so runs get past the parser into the work), sometimes not."""
    return st.one_of(valid, valid, valid, fuzzed)


# --- network files -----------------------------------------------------------------------

json_leaves = st.one_of(st.none(), st.booleans(), numbers, st.floats(allow_nan=True),
                        st.text(max_size=8))
json_trees = st.recursive(json_leaves, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
    st.text(max_size=8), inner, max_size=4), max_leaves=12)
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


# --- arrival times -----------------------------------------------------------------------

arrival_numbers = st.one_of(st.floats(), st.integers(-(2**1100), 2**1100), st.booleans(),
                            st.none())
arrival_items = st.one_of(arrival_numbers, st.text(max_size=3), st.decimals(allow_nan=True),
                          st.fractions())


def _assert_arrivals(times: Any, ranks: int | None) -> None:
    assert isinstance(times, list)
    assert all(type(time) is float and math.isfinite(time) for time in times)
    if ranks is not None:
        assert len(times) == ranks
    if times:
        assert math.isfinite(max(times) - min(times))


@fuzz
@given(values=st.none() | st.lists(arrival_items, max_size=6) | json_leaves
       | st.lists(st.floats(), max_size=6).map(tuple),
       ranks=st.none() | st.integers(0, 6))
def test_arrival_times_checked(values: Any, ranks: int | None) -> None:
    try:
        times = checks.arrival_times(values, "arrivals", ranks)
    except (TypeError, ValueError):
        return
    if values is not None:
        _assert_arrivals(times, ranks)


arrival_texts = st.one_of(
    st.lists(st.floats().map(repr) | st.integers().map(str) | st.text(max_size=4),
             max_size=5).map(",".join),
    st.builds(lambda s, m: f"random:{s}" + ("" if m is None else f":{m}"),
              st.integers() | st.text(max_size=4),
              st.none() | st.floats().map(repr) | st.text(max_size=4)),
    st.from_regex(r"\s*[-+.\deE]+\s*", fullmatch=True),
    st.text(max_size=12).map(lambda text: text.replace("/", "_")),
)


@fuzz
@given(text=arrival_texts, ranks=st.integers(1, 8))
@example(text="random:1:1e308", ranks=3)
@example(text="1e308,-1e308", ranks=2)
def test_arrivals_option(text: str, ranks: int) -> None:
    """--arrivals a0,a1,... | random:SEED[:MAX] | FILE, as the command line reads it (a text
    that is no list names a file, here one that does not exist)."""
    with watchdog(), tempfile.TemporaryDirectory() as folder, contextlib.chdir(folder):
        try:
            value = options.arrivals(text)
            times = options.arrival_times(value, ranks)
        except (argparse.ArgumentTypeError, ValueError):
            event("refused")
            return
        event("read")
        assert times is not None
        _assert_arrivals(times, ranks)


arrival_files = st.one_of(
    st.lists(arrival_numbers, max_size=6).map(lambda items: json.dumps(items).encode()),
    json_trees.map(lambda tree: json.dumps(tree).encode()),
    st.lists(st.floats().map(repr) | st.integers().map(str), max_size=6).map(
        lambda lines: "\n".join(lines).encode()),
    st.binary(max_size=40),
    st.integers(1, 5000).map(lambda depth: b"[" * depth + b"]" * depth),
)


@fuzz
@given(content=arrival_files, ranks=st.integers(1, 8))
@example(content=b"[" * 100_000, ranks=1)
@example(content=b"[1e999]", ranks=1)
def test_arrivals_file(content: bytes, ranks: int) -> None:
    with watchdog(), tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "arrivals"
        path.write_bytes(content)
        try:
            times = options.arrival_times(str(path), ranks)
        except ValueError:  # options.UsageError
            event("refused")
            return
        event("read")
        assert times is not None
        _assert_arrivals(times, ranks)


# --- sizes -------------------------------------------------------------------------------

count_texts = st.one_of(
    st.builds(lambda sign, digits, suffix, pad: f"{pad}{sign}{digits}{pad}{suffix}{pad}",
              st.sampled_from(("", "-", "+", "--")), numbers.map(abs).map(str)
              | st.text(alphabet="0123456789", min_size=1, max_size=40),
              st.sampled_from(("", "K", "M", "G", "k", "T", "KB", "KiB")),
              st.sampled_from(("", " ", "\t"))),
    st.text(max_size=12),
)


@fuzz
@given(text=count_texts)
@example(text="9223372036854775807")
@example(text="9223372036854775808")
@example(text="8589934592G")
@example(text="-0")
def test_count_is_parsed_or_refused(text: str) -> None:
    try:
        value = options.parse_count(text)
    except argparse.ArgumentTypeError:
        event("refused")
        return
    event("parsed")
    assert type(value) is int and 0 <= value <= INT64_MAX
    match = re.fullmatch(r"\s*[-+]?(\d+)\s*([KMG]?)\s*", text, re.IGNORECASE)
    assert match is not None
    suffix = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}[match.group(2).upper()]
    assert value == int(match.group(1)) * suffix


@fuzz
@given(text=numbers.map(str) | st.text(max_size=12), low=st.integers(-5, 5),
       high=st.sampled_from((5, INT32_MAX, INT64_MAX)))
def test_integer_option_is_parsed_or_refused(text: str, low: int, high: int) -> None:
    try:
        value = options.integer_in_range("x", low, high)(text)
    except argparse.ArgumentTypeError:
        return
    assert low <= value <= high


@fuzz
@given(text=st.lists(st.from_regex(r"\d{1,6}(\.\d{0,3})?\s*(us|ms|s)?", fullmatch=True)
                     | st.text(max_size=5), min_size=1, max_size=4).map(",".join))
def test_durations_are_parsed_or_refused(text: str) -> None:
    try:
        values = options.durations(text)
    except argparse.ArgumentTypeError:
        return
    assert all(math.isfinite(value) and 0 <= value <= 60000 for value in values)


# --- the command line, in process --------------------------------------------------------

_ALGORITHMS = [info.name for info in papcoll.algorithms()]
_NETWORK_FILES = ("docs/networks/two-switch-32.json", "docs/networks/geo-2site.toml",
                  "docs/networks/smp-4x8.json", "docs/networks/geo-3site-unequal.toml")


# each option: (a valid value, a fuzzed one); sizes small so that valid runs are quick
option_values: dict[str, Any] = {name: _either(valid, fuzzed) for name, (valid, fuzzed) in {
    "--algorithm": (st.sampled_from(_ALGORITHMS), st.sampled_from(("nope", "", "ring,prr"))),
    "--algorithms": (st.lists(st.sampled_from(_ALGORITHMS), min_size=1, max_size=3).map(
        ",".join), st.sampled_from(("nope", ",", "ring,,prr", ""))),
    "--ranks": (st.integers(1, 12).map(str), st.sampled_from(("0", "-1", "x", "1e3", "99999999",
                                                              "4294967297"))),
    "--count": (st.integers(0, 64).map(str) | st.just("1K"),
                st.sampled_from(("-1", "1G", "x", "4k", "", "9223372036854775808"))),
    "--elem-size": (st.sampled_from(("1", "4", "8")), st.sampled_from(("0", "65537", "x"))),
    "--segment-elements": (st.integers(0, 8).map(str), numbers.map(str)),
    "--segment-count": (st.integers(0, 8).map(str), numbers.map(str)),
    "--schedule": (st.sampled_from(("a2", "a2,a2", "a3", "a2,a3", "c6m2,a2,a2,e6m2",
                                    "m1g2a3,n1g3a2", "a4;a2,a2")), rm_schedules),
    "--groups": (st.sampled_from(("blocks:2", "blocks:1", "host", "switch", "site")),
                 st.sampled_from(("blocks:0", "0,0,1,1", "0,1", "x", "blocks:", "-1"))),
    "--inner": (st.sampled_from(("ring", "recursive_doubling")), st.sampled_from(("hr2", "x"))),
    "--outer": (st.sampled_from(("recursive_doubling", "ring")), st.sampled_from(("hr1", "x"))),
    "--tau": (st.sampled_from(("0.001", "1e-9")), st.sampled_from(("0", "-1", "nan", "inf"))),
    "--arrivals": (st.sampled_from(("random:1", "random:7:0.5", "0,0.001,0.002")),
                   arrival_texts),
    "--tree": (st.sampled_from(("geo-2site", *_NETWORK_FILES)), st.sampled_from(("hockney",
                                                                                 "x", "x.json"))),
    "--eager-limit": (st.sampled_from(("0", "-1", "65536")), numbers.map(str)),
    "--rank": (st.integers(0, 12).map(str), st.sampled_from(("-1", "x", "1048577"))),
    "--network": (st.sampled_from((*NETWORKS, *_NETWORK_FILES)),
                  st.sampled_from(("nope.json", "nope", "docs", "Makefile"))),
    "--param": (st.sampled_from(("alpha=5e-5", "beta=1e-9,o=1e-6")),
                st.sampled_from(("beta=1e400", "x=1", "alpha", "L=-1", "", "L=nan"))),
    "--baseline": (st.sampled_from(("ring", "prr")), st.sampled_from(("nope", "none", ""))),
    "--mode": (st.sampled_from(("balanced", "one-late", "rand-late")), st.just("x")),
    "--max-delay": (st.sampled_from(("0,10,50ms", "1s", "5us,1")),
                    st.sampled_from(("70s", "x", "", ","))),
    "--seed": (st.integers(0, 9).map(str), numbers.map(str)),
    "--noise": (st.sampled_from(("0", "5us")), st.sampled_from(("1,2", "x", "1e9"))),
    "--max-base": (st.sampled_from(("2", "4", "8")), st.sampled_from(("0", "1", "65"))),
    "--top": (st.sampled_from(("1", "10")), st.sampled_from(("0", "-1"))),
    "--datatype": (st.sampled_from(("float", "double", "int", "char")), st.just("x")),
    "--max-operations": (st.sampled_from(("1000000", "100")), st.sampled_from(("0", "x"))),
    "--json": (st.just("-"), st.just("-")),
}.items()}
flags = {"sim": ["--show", "--per-rank", "--links"]}
subcommand_options = {
    "algorithms": ["--json"],
    "verify": ["--algorithm", "--ranks", "--count", "--elem-size", "--segment-elements",
               "--segment-count", "--schedule", "--groups", "--inner", "--outer", "--tau",
               "--arrivals", "--tree", "--eager-limit", "--json"],
    "schedule": ["--algorithm", "--ranks", "--count", "--rank", "--schedule", "--groups",
                 "--arrivals", "--tau", "--segment-count", "--json"],
    "sim": ["--network", "--param", "--ranks", "--algorithms", "--baseline", "--count",
            "--elem-size", "--datatype", "--mode", "--max-delay", "--arrivals", "--seed",
            "--noise", "--schedule", "--groups", "--tau", "--max-operations", "--json"],
    "schedules": ["--ranks", "--max-base", "--json"],
    "search": ["--ranks", "--network", "--count", "--max-base", "--top", "--json"],
}


@st.composite
def command_lines(draw: st.DrawFn) -> list[str]:
    command = draw(st.sampled_from(sorted(subcommand_options)))
    argv = [command]
    known = subcommand_options[command]
    chosen = draw(st.lists(st.sampled_from(known), max_size=len(known), unique=True))
    required = {"verify": ("--algorithm", "--ranks", "--count"), "schedule": (
        "--algorithm", "--ranks", "--count", "--rank"), "schedules": ("--ranks",),
                "search": ("--ranks",)}.get(command, ())
    if draw(st.integers(0, 3)):
        chosen = [name for name in required if name not in chosen] + chosen
    for name in chosen:
        argv += [name, draw(option_values[name])]
    for flag in flags.get(command, []):
        if draw(st.integers(0, 3)) == 0:
            argv.append(flag)
    if draw(st.integers(0, 9)) == 0:  # a stray word or option
        argv.insert(draw(st.integers(0, len(argv))), draw(st.sampled_from(
            ("--bogus", "-P", "--", "x", "--help", "-h"))))
    return argv


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of `papcoll ARGV`, run in this process."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = cli.main(argv)
        except SystemExit as exit_:  # argparse's usage errors and --help
            status = exit_.code if isinstance(exit_.code, int) else 2
    return status, out.getvalue(), err.getvalue()


REPOSITORY = Path(__file__).parents[2]


@fuzz
@given(argv=command_lines())
@example(argv=["verify", "--algorithm", "ring", "--ranks", "3", "--count", "4"])
@example(argv=["sim", "--ranks", "4", "--count", "16", "--arrivals", "random:1:1e308"])
@example(argv=["sim", "--ranks", "1"])  # was ZeroDivisionError: speedup of 0 ms over 0 ms
@example(argv=["search", "--ranks", "2", "--max-base", "1"])  # was IndexError: no schedule
@example(argv=["sim", "--ranks", "3", "--count", "0", "--json", "-"])
def test_command_line_exits_cleanly(argv: list[str]) -> None:
    """Any command line built from the real options exits 0, 1 or 2, without a traceback;
    unexpected exceptions propagate out of main() and fail here."""
    with watchdog():
        previous = os.getcwd()
        os.chdir(REPOSITORY)  # for docs/networks/...; --json is '-', nothing is written
        try:
            status, _, err = run_cli(argv)
        finally:
            os.chdir(previous)
    assert status in (0, 1, 2), (status, err)
    assert "Traceback" not in err
    event(f"{argv[0]} exit {status}")


@fuzz
@given(texts=st.one_of(mutated_dumps().map(lambda texts: [t.encode("utf-8", "surrogatepass")
                                                          for t in texts]),
                       st.lists(st.binary(max_size=80), min_size=1, max_size=3)))
def test_command_line_schedule_files(texts: list[bytes]) -> None:
    """`papcoll verify --schedule-files` on mutated dumps and random bytes."""
    with watchdog(), tempfile.TemporaryDirectory() as folder:
        paths = []
        for rank, content in enumerate(texts):
            path = Path(folder) / f"rank{rank}.txt"
            path.write_bytes(content)
            paths.append(str(path))
        status, _, err = run_cli(["verify", "--schedule-files", *paths])
    assert status in (0, 1, 2), (status, err)
    assert "Traceback" not in err
    event(f"exit {status}")


@pytest.mark.parametrize("argv", [
    ["verify", "--algorithm", "recursive_multiplying", "--ranks", "7", "--count", "6",
     "--schedule", "c6m2,a2,a2,e6m2"],
    ["schedule", "--algorithm", "ring", "--ranks", "3", "--count", "6", "--rank", "1"],
    ["sim", "--ranks", "4", "--count", "64", "--algorithms", "ring,prr"],
    ["schedules", "--ranks", "12"],
])
def test_command_line_valid_runs_succeed(argv: list[str]) -> None:
    """The generator's valid corner reaches real work: these exit 0."""
    status, out, err = run_cli(argv)
    assert status == 0, err
    assert out


# --- what the fuzzing found (issue 17), kept fixed -----------------------------------------

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
