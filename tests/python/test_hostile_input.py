"""Hostile inputs to the command line, one row each: every one exits 2 with one
line that names the input, no traceback, and within the command timeout (a hang or a
memory blow-up fails). The C and Python API cases live beside their code's tests
(test_core.py, test_topology.py, test_python_api.py, tests/mpi/errors.c)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

NETWORKS = Path(__file__).resolve().parents[2] / "docs" / "networks"


def network_variant(change: Callable[[dict], None]) -> Callable[[Path], str]:
    """A network file: docs/networks/smp-4x8.json with one field spoiled."""
    def write(folder: Path) -> str:
        network = json.loads((NETWORKS / "smp-4x8.json").read_text())
        change(network)
        path = folder / "network.json"
        path.write_text(json.dumps(network))
        return str(path)
    return write


def text_file(name: str, content: bytes) -> Callable[[Path], str]:
    def write(folder: Path) -> str:
        path = folder / name
        path.write_bytes(content)
        return str(path)
    return write


def first_host(network: dict) -> dict:
    return network["topology"]["hosts"][0]


SIM = ["sim", "--network", "hockney", "--ranks", "4", "--algorithms", "ring", "--count", "1K"]
SIM_SLT = ["sim", "--network", "hockney", "--ranks", "4", "--algorithms", "slt", "--count", "1K"]
SIM_ON = ["sim", "--ranks", "4", "--algorithms", "ring", "--count", "1K", "--network"]

# (arguments, message): "{file}" in the arguments is replaced by the file the row's maker
# writes; the message must appear in stderr.
CASES: list[tuple[list[str], str, Callable[[Path], str] | None]] = [
    (["verify", "--algorithm", "ring_topology", "--ranks", "4", "--count", "8",
      "--tree", "bogus"], "unknown network 'bogus'", None),
    (["reproduce", "seed004-table2", "--network", "bogus"], "unknown network 'bogus'", None),
    ([*SIM, "--param", "eager=inf"], "eager must be a finite number >= 0, not inf", None),
    (["verify", "--algorithm", "recursive_multiplying", "--ranks", "4", "--count", "8",
      "--schedule", "a4\u00e9"], "stage 1 'a4\u00e9': malformed", None),
    ([*SIM_ON, "{file}"], "cores must be a whole number from 1 to 65536, not 1e+18",
     network_variant(lambda network: first_host(network).update(cores=1e18))),
    ([*SIM_ON, "{file}"], "base [] is not a crossbar preset",
     network_variant(lambda network: network.update(base=[]))),
    ([*SIM_ON, "{file}"], "the parent of 'node0' must be a name, not ['r']",
     network_variant(lambda network: first_host(network).update(parent=["r"]))),
    ([*SIM_ON, "{file}"], "model parameter latency must be a number, not '1e-6,overhead=5'",
     network_variant(lambda network: network.update(model={"latency": "1e-6,overhead=5"}))),
    ([*SIM_ON, "{file}"], "not valid JSON: nested too deeply",
     text_file("deep.json", b"[" * 200_000 + b"]" * 200_000)),
    ([*SIM_ON, "{file}"], "not UTF-8 text (byte 10)",
     text_file("latin1.json", b'{"name": "\xff\xfe"}')),
    ([*SIM_ON, "{file}"], "it sets none of base, model and topology",
     text_file("empty.toml", b"")),
    ([*SIM_SLT, "--arrivals", "{file}"], "more than a float holds",
     text_file("arrivals.json", b"[1e308, -1e308, 0, 0]")),
    ([*SIM_SLT, "--arrivals", "1e308,-1e308,0,0"], "more than a float holds", None),
    (["sim", "--network", "hockney", "--ranks", "4", "--algorithms",
      "recursive_multiplying", "--count", "1K", "--schedule", ";;;"],
     "--schedule ';;;' holds an empty schedule", None),
    (["bench", "--ranks", "2", "--algorithms", "ring", "--count", "1K", "--schedule", "a2",
      "--iterations", "1"], "ring takes no schedule", None),
    (["verify", "--algorithm", "ring", "--ranks", "4", "--count", "-5K"],
     "--count must be >= 0, not '-5K'", None),
    ([*SIM, "--json", "/nonexistent/folder/out.json"], "no directory /nonexistent/folder",
     None),
    ([*SIM, "--timeline", "/nonexistent/timeline.png"], "no directory /nonexistent", None),
    (["verify", "--algorithm", "ring", "--ranks", "1048576", "--count", "1"],
     "ranks must be in 1..8192", None),
    (["search", "--ranks", "4096"], "above the limit of 4000000", None),
    (["demo", "--ranks", "4096"], "ranks must be in 1..256", None),
    (["verify", "--algorithm", "linear_tree", "--ranks", "4", "--count", "100",
      "--segment-count", "50000000"], "segment count must be in 0..1048576", None),
    (["verify", "--algorithm", "linear_tree", "--ranks", "4", "--count", "100",
      "--segment-count", "500"], "a segment holds at least one element", None),
    (["verify", "--algorithm", "segmented_ring", "--ranks", "4", "--count", "100000000",
      "--segment-elements", "1"], "use segment_elements >= 96", None),
]


@pytest.mark.parametrize(("arguments", "message", "make_file"), CASES,
                         ids=[" ".join(case[0])[:60] for case in CASES])
def test_hostile_input_exits_2_with_one_line(papcoll_command, tmp_path, arguments, message,
                                             make_file):
    if make_file is not None:
        path = make_file(tmp_path)
        arguments = [path if argument == "{file}" else argument for argument in arguments]
    result = papcoll_command(*arguments)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


@pytest.mark.long
def test_four_million_ranks_are_refused_before_their_schedules_are_built(papcoll_command):
    # this once built 6.4 GB of schedules before --max-operations refused it; the
    # estimate now builds three ranks' schedules (4-13 s here) and refuses.
    result = papcoll_command("sim", "--network", "hockney", "--ranks", "4194304",
                             "--algorithms", "ring", "--count", "1K")
    assert result.returncode == 2
    assert "above the limit of 2e+08 (--max-operations" in result.stderr
