"""What the property tests (test_fuzz*.py) share: the run's seed and watchdog, the number
strategies that sit on every integer boundary, random edits of a text, and schedules (valid
dumps and mutated ones) that the schedule-text and command-line properties both feed."""

from __future__ import annotations

import contextlib
import faulthandler
import re
from collections.abc import Iterator
from typing import Any

import papcoll
from conftest import FUZZ_SEED
from hypothesis import seed
from hypothesis import strategies as st
from papcoll.core import PapcollError

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



def _either(valid: st.SearchStrategy[str], fuzzed: st.SearchStrategy[str]) -> Any:
    """Mostly a valid value (so runs get past the parser into the work), sometimes not."""
    return st.one_of(valid, valid, valid, fuzzed)


@st.composite
def rm_stage(draw: st.DrawFn) -> str:
    """One stage of Ruefenacht et al. 2017's language: aB, cTmB, eTmB, mRgGaB, nRgGaB."""
    kind = draw(st.sampled_from("acemn"))
    number = draw(st.one_of(st.integers(1, 9), numbers))
    if kind == "a":
        return f"a{number}"
    if kind in "ce":
        return f"{kind}{draw(st.integers(1, 24) | numbers)}m{number}"
    return f"{kind}{draw(st.integers(1, 12) | numbers)}g{draw(st.integers(1, 12) | numbers)}" \
           f"a{number}"



rm_schedules = st.one_of(
    st.lists(rm_stage(), max_size=8).map(",".join),
    st.lists(rm_stage(), min_size=1, max_size=6).map(",".join).flatmap(mutated),
    st.text(max_size=40),
    st.text(alphabet="acemng0123456789,", max_size=40),
)


json_leaves = st.one_of(st.none(), st.booleans(), numbers, st.floats(allow_nan=True),
                        st.text(max_size=8))
json_trees = st.recursive(json_leaves, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
    st.text(max_size=8), inner, max_size=4), max_leaves=12)
