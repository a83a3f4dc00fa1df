"""Rules files (docs/rules.md) written from the decisions a run made: what `papcoll report
--rules OUT` writes from the drop-in's report (papcoll.pmpi.load_report).

One rule per call site's shape: the communicator's size, the bytes of its calls (exact where
every call moved the same), its datatype where one, and its call kind ("call": the report
keeps a site's MPI_Allreduce, MPI_Iallreduce and persistent calls apart); the algorithm most
of the site's calls ran. Sites of the same shape are merged (their
calls summed per algorithm). The rules are ordered narrowest first, so that none is hidden
by an earlier one (papcoll_comm_create refuses a file where one is).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .core import algorithm
from .errors import PapcollError

RULES_FORMAT = 1


def _runs_as_rule(name: str) -> bool:
    """Whether name is an algorithm a rule may name (not a placeholder such as "papcoll")."""
    if name == "native" or name.startswith("native:"):
        return True
    try:
        return not algorithm(name).reduce_scatter
    except PapcollError:
        return False


# The report's call kinds (src/pmpi/report.c) as a rule names them (docs/rules.md).
_RULE_CALL = {"MPI_Allreduce": "blocking", "MPI_Iallreduce": "nonblocking",
              "persistent": "persistent"}


def _key(site: dict[str, Any]) -> tuple[Any, ...]:
    decided = site["decided"]
    low, high = decided["bytes"]
    # a report written before sites carried their kind: blocking where nothing was posted
    call = _RULE_CALL.get(site.get("call", ""),
                          "blocking" if site["nonblocking_calls"] == 0 else None)
    return (site["communicator_size"], int(low), int(high), decided["datatype"], call)


def _order(key: tuple[Any, ...]) -> tuple[Any, ...]:
    """Narrowest first: a named call kind, then a named datatype, then fewer bytes."""
    ranks, low, high, datatype, call = key
    return (call is None, datatype is None, high - low, ranks, low, datatype or "",
            call or "")


def rules_from_report(report: dict[str, Any]) -> dict[str, Any]:
    """The rules file (as JSON data) that makes each site's most frequent decision again."""
    calls: dict[tuple[Any, ...], dict[str, int]] = {}
    sites: dict[tuple[Any, ...], list[str]] = {}
    for site in report["sites"]:
        ran = {name: count for name, count in site["algorithms"].items()
               if _runs_as_rule(name)}
        if site.get("decided") is None or not ran:
            continue
        key = _key(site)
        merged = calls.setdefault(key, {})
        for name, count in ran.items():
            merged[name] = merged.get(name, 0) + count
        sites.setdefault(key, []).append(site["site"])
    rules = []
    for key in sorted(calls, key=_order):
        ranks, low, high, datatype, call = key
        counts = calls[key]
        # the most calls; a tie goes to the name first in order, the same on every run
        chosen = min(counts, key=lambda name: (-counts[name], name))
        rule: dict[str, Any] = {"ranks": ranks,
                                "bytes": low if low == high else [low, high + 1]}
        if datatype is not None:
            rule["datatype"] = datatype
        if call is not None:
            rule["call"] = call
        if not chosen.startswith("native") and algorithm(chosen).commutative_only:
            rule["commutative"] = True  # it ran, so the site's op commutes
        rule["algorithm"] = chosen
        ran = ", ".join(f"{name} {count}" for name, count in sorted(counts.items()))
        rule["comment"] = f"{', '.join(sites[key])}: {ran} calls"
        rules.append(rule)
    return {"papcoll_rules": RULES_FORMAT, "rules": rules}


def write_rules(rules: dict[str, Any], path: str | Path) -> None:
    """Writes rules one rule a line, so that the line an error names is the rule's."""
    lines = ",\n".join("  " + json.dumps(rule) for rule in rules["rules"])
    Path(path).write_text(f'{{"papcoll_rules": {rules["papcoll_rules"]}, "rules": [\n'
                          f"{lines}\n]}}\n")
