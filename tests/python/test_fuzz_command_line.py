"""Property tests of the command line's parsers (arrival times, sizes, integers, durations)
and of the command line end to end, in process: any input leads to a result or a
one-line refusal with exit 2, never another exception, a crash or a hang (see
test_fuzz.py for the profiles and the seed)."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import papcoll
import pytest
from fuzzing import (
    INT32_MAX,
    INT64_MAX,
    _either,
    fuzz,
    json_leaves,
    json_trees,
    mutated_dumps,
    numbers,
    rm_schedules,
    watchdog,
)
from hypothesis import event, example, given
from hypothesis import strategies as st
from papcoll import checks, cli
from papcoll.cli import context_options, options
from papcoll.network import NETWORKS

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


def _read_or_refused(read: Callable[[], Any], refusals: tuple[type[Exception], ...],
                     ranks: int) -> None:
    """The command line's arrivals, read (then as _assert_arrivals holds them) or refused
    with one of `refusals`: nothing else may come out."""
    try:
        times = read()
    except refusals:
        event("refused")
        return
    event("read")
    assert times is not None
    _assert_arrivals(times, ranks)


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
        _read_or_refused(
            lambda: context_options.arrival_times(context_options.arrivals(text), ranks),
            (argparse.ArgumentTypeError, ValueError), ranks)


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
        _read_or_refused(lambda: context_options.arrival_times(str(path), ranks),
                         (ValueError,), ranks)  # options.UsageError


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
    # K, M or G, also written KB or KiB, or a bare B (bytes)
    match = re.fullmatch(r"\s*[-+]?(\d+)\s*(?:([KMG])(?:I?B)?|B)?\s*", text, re.IGNORECASE)
    assert match is not None
    suffix = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}[(match.group(2) or "").upper()]
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
    "--rank-order": (st.permutations(range(4)).map(lambda order: ",".join(map(str, order))),
                     st.sampled_from(("0,0,1,2", "1,2", "-1,0", "x", "", "4,3,2,1,0"))),
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
    "--datatype": (st.sampled_from(("float", "double", "int", "char", "int8", "c_double_complex")),
                   st.just("x")),
    "--max-operations": (st.sampled_from(("1000000", "100")), st.sampled_from(("0", "x"))),
    "--json": (st.just("-"), st.just("-")),
}.items()}
flags = {"sim": ["--show", "--per-rank", "--links", "--exchange-predictions"]}
subcommand_options = {
    "algorithms": ["--json"],
    "verify": ["--algorithm", "--ranks", "--count", "--elem-size", "--segment-elements",
               "--segment-count", "--rank-order", "--schedule", "--groups", "--inner", "--outer",
               "--tau", "--arrivals", "--tree", "--eager-limit", "--json"],
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


