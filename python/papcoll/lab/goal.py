"""LogGOPSim GOAL text for a papcoll schedule (`papcoll sim --export-goal`), so users can
cross-check the simulator with LogGOPSim (txt2bin, then LogGOPSim -f).

GOAL has three kinds of operation: `send <bytes>b to <rank> tag <t>`, `recv <bytes>b from
<rank> tag <t>` and `calc <time>` (LogGOPSim's time unit, nanoseconds), and dependencies
`lA requires lB` (A starts when B is done). Mapping:
  SEND / RECV -> send / recv with the schedule's tag;
  REDUCE / COPY -> calc of bytes x (gamma or copy cost per byte), rounded up to whole ns;
  empty messages -> calc 0 on both sides (papcoll's executors skip them on both sides, so
    they never match anything; a calc keeps the dependencies they carry).
The operations of a rank are numbered l1, l2, ... in schedule order (op i is l(i+1)).
"""

from __future__ import annotations

import math
import re

from ..core import Context, schedule_text
from ..model import SimModel

_REGION = r"\w+\[(\d+),(\d+)\)"
_LINE = re.compile(
    r"(?P<index>\d+) (?P<kind>SEND|RECV|REDUCE|COPY)"
    r"(?: (?:to|from)=(?P<peer>\d+) tag=(?P<tag>\d+))? "
    rf"(?P<source>\w+)\[(?P<first>\d+),(?P<end>\d+)\)(?: -> (?P<target>{_REGION}))?(?: paced)?"
    r"(?: order=[\w-]+)?(?: after (?P<after>[\d,]+))?$")


def rank_goal(text: str, elem_size: int, model: SimModel) -> list[str]:
    """The body lines of one rank's GOAL block, from its schedule dump."""
    lines: list[str] = []
    for raw in text.splitlines()[1:]:
        match = _LINE.fullmatch(raw.strip())
        if match is None:
            raise ValueError(f"cannot read schedule line '{raw}'")
        label = f"l{int(match['index']) + 1}"
        nbytes = (int(match["end"]) - int(match["first"])) * elem_size
        kind = match["kind"]
        if kind in ("SEND", "RECV") and nbytes > 0:
            direction = "to" if kind == "SEND" else "from"
            lines.append(f"{label}: {kind.lower()} {nbytes}b {direction} {match['peer']} "
                         f"tag {match['tag']}")
        else:
            per_byte = (model.reduce_seconds_per_byte if kind == "REDUCE"
                        else model.copy_seconds_per_byte if kind == "COPY" else 0.0)
            if kind == "COPY" and match["target"] == f"{match['source']}[{match['first']},"\
                                                      f"{match['end']})":
                per_byte = 0.0  # a copy onto itself (MPI_IN_PLACE) moves nothing
            lines.append(f"{label}: calc {math.ceil(nbytes * per_byte * 1e9)}")
        for before in filter(None, (match["after"] or "").split(",")):
            lines.append(f"{label} requires l{int(before) + 1}")
    return lines


def goal_text(algorithm: str, ranks: int, count: int, elem_size: int, model: SimModel,
              context: Context | None = None) -> str:
    """The whole GOAL file: every rank's schedule."""
    out = [f"num_ranks {ranks}", ""]
    for rank in range(ranks):
        body = rank_goal(schedule_text(algorithm, ranks, rank, count, elem_size, context),
                         elem_size, model)
        out += [f"rank {rank} {{", *body, "}", ""]
    return "\n".join(out)
