"""A testbed's state file read as untrusted input (papcoll.lab.testbed.state): a file cut
short, nested past any plan, of the wrong shape, or naming namespaces and interfaces that are
not the testbed's own gets one message that names the file, what is wrong and how to
recover, the same from `status`, `up`, `check` and `down`; and `down` removes only the
testbed's own pieces. Every test points PAPCOLL_TESTBED_STATE at its own temporary
directory, and uses testbed names (pz...) and interfaces of its own, so no real testbed's
state or piece is read or touched; a foreign name a state file gives either does not exist
or is an interface the test made itself."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from conftest import COMMAND_TIMEOUT_SECONDS, VENV_BIN
from papcoll.lab import testbed
from papcoll.lab.testbed import links
from papcoll.lab.testbed.state import Link, own_interface_kind, own_namespace

MISSING = testbed.missing_support()
needs_root = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")


@pytest.fixture(autouse=True)
def state_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "state"
    directory.mkdir()
    monkeypatch.setenv("PAPCOLL_TESTBED_STATE", str(directory))
    return directory


def _plan_data(name: str) -> dict[str, Any]:
    """A state file's contents as `up` writes them, for a two-host testbed `name` (a plan:
    nothing made)."""
    host_links = [Link("eth0", f"pc{name}h{k}", f"papcoll-{name}-host{k}", f"pc{name}s0",
                       1_000_000_000, f"10.213.7.{k + 1}") for k in range(2)]
    return asdict(testbed.Plan(name, "ethernet-1g", 7, ["host0", "host1"],
                               [f"papcoll-{name}-host0", f"papcoll-{name}-host1"],
                               ["10.213.7.1", "10.213.7.2"], [1, 1], [f"pc{name}s0"],
                               host_links, "10.213.7.254"))


def _write(directory: Path, name: str, contents: str | bytes | dict[str, Any]) -> Path:
    path = directory / f"{name}.json"
    if isinstance(contents, dict):
        contents = json.dumps(contents)
    path.write_bytes(contents if isinstance(contents, bytes) else contents.encode())
    return path


def _papcoll_testbed(*arguments: str) -> subprocess.CompletedProcess[str]:
    """`papcoll testbed ...` as a user runs it, with this test's state directory."""
    return subprocess.run([str(VENV_BIN / "papcoll"), "testbed", *arguments],
                          capture_output=True, text=True, timeout=COMMAND_TIMEOUT_SECONDS,
                          env=os.environ.copy())


DEEP = "[" * 100_000 + "]" * 100_000
DAMAGED = [
    # (state file contents, what the message must say is wrong)
    (json.dumps(_plan_data("pz1"), indent=1)[:300], "is damaged (not JSON"),    # cut short
    ("", "is damaged (not JSON"),
    (DEEP, "is damaged (JSON nested deeper than any plan)"),
    ('{"name": "pz1", "x": ' + "[" * 500 + "1" + "]" * 500 + "}", "is damaged (the file lacks"),
    (b"\xff\xfe{}", "is damaged (not UTF-8 text"),
    ("[1, 2, 3]", "is damaged (the file is a list, not an object)"),
    ({**_plan_data("pz1"), "namespaces": "papcoll-pz1-host0"}, "namespaces is a string"),
    ({**_plan_data("pz1"), "subnet": True}, "subnet is a boolean, not a whole number"),
    ({**_plan_data("pz1"), "links": [{"inner": "eth0"}]}, "links[0] lacks outer"),
    ({**_plan_data("pz1"), "name": "pz2"}, "it is the state of testbed 'pz2'"),
    ({**_plan_data("pz1"), "cores": [1]}, "it has 1 cores for 2 hosts"),
]


@pytest.mark.parametrize(("contents", "problem"), DAMAGED,
                         ids=["cut-short", "empty", "deeply-nested", "nested-in-a-field",
                              "not-utf8", "a-list", "wrong-type", "bool-for-int",
                              "link-lacks-fields", "another-testbeds", "lengths-differ"])
def test_a_damaged_state_file_is_refused_naming_the_file_and_the_way_out(
        state_directory: Path, contents: str | bytes | dict[str, Any], problem: str) -> None:
    path = _write(state_directory, "pz1", contents)
    with pytest.raises(testbed.DamagedStateError) as caught:
        testbed.load("pz1")
    message = str(caught.value)
    assert str(path) in message and problem in message, message
    assert "`papcoll testbed down --name pz1`" in message
    plans, problems = testbed.survey()
    assert plans == [] and [str(error) for error in problems] == [message]


def test_a_state_file_larger_than_any_plan_is_not_parsed(state_directory: Path) -> None:
    _write(state_directory, "pz1", " " * (2 << 20))
    with pytest.raises(testbed.DamagedStateError, match="over 1048576 bytes"):
        testbed.load("pz1")


def test_a_sound_state_file_loads_as_written(state_directory: Path) -> None:
    _write(state_directory, "pz1", _plan_data("pz1"))
    assert asdict(testbed.load("pz1")) == _plan_data("pz1")
    assert [plan.name for plan in testbed.existing()] == ["pz1"]


def test_names_outside_the_testbeds_own_are_foreign_in_the_state_file(
        state_directory: Path) -> None:
    data = _plan_data("pz1")
    data["namespaces"][1] = data["links"][1]["namespace"] = "someone-elses-ns"
    data["links"][0]["outer"] = "notours0"
    path = _write(state_directory, "pz1", data)
    with pytest.raises(testbed.DamagedStateError) as caught:
        testbed.load("pz1")
    assert caught.value.foreign == ["namespace someone-elses-ns", "interface notours0"]
    assert str(path) in str(caught.value) and "not the testbed's own" in str(caught.value)
    assert "remove it by hand" in str(caught.value)


def test_which_names_are_a_testbeds_own() -> None:
    assert own_namespace("pz1", "papcoll-pz1-host0")
    assert not own_namespace("pz1", "papcoll-pz10-host0")   # another testbed's
    assert not own_namespace("pz1", "papcoll-pz1-")
    assert not own_namespace("pz1", "papcoll-pz1-../x")
    assert own_interface_kind("pz1", "pcpz1s0") == "bridge"
    assert own_interface_kind("pz1", "pcpz1h12") == "veth"
    assert own_interface_kind("pz1", "pcpz10s0") is None    # testbed pz10's bridge 0
    assert own_interface_kind("pz1", "eth0") is None


def test_a_namespace_that_is_this_machines_own_is_never_the_testbeds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A name in the namespaces' directory that leads to this machine's own namespace
    (`ip netns attach NAME 1` makes one): `down` would kill every process in it. Here a
    symbolic link in a directory of the test's own stands for it."""
    directory = tmp_path / "netns"
    directory.mkdir()
    (directory / "papcoll-pz1-host0").symlink_to("/proc/self/ns/net")
    monkeypatch.setattr(links, "NETNS_DIRECTORY", directory)
    assert "this machine's own network namespace" in str(
        links._namespace_problem("papcoll-pz1-host0"))


# --- the commands (need root, like every testbed command) -----------------------------------

@needs_root
@pytest.mark.parametrize(("contents", "problem"), [DAMAGED[0], DAMAGED[2], DAMAGED[6]],
                         ids=["cut-short", "deeply-nested", "wrong-type"])
def test_every_command_gives_the_same_clear_message_for_a_damaged_state_file(
        state_directory: Path, contents: str | dict[str, Any], problem: str) -> None:
    path = _write(state_directory, "pz1", contents)
    expected = f"papcoll testbed: testbed 'pz1': its state file {path} "
    for arguments in (["status"], ["check", "--name", "pz1"],
                      ["up", "--network", "ethernet-1g", "--hosts", "2", "--name", "pz1"]):
        result = _papcoll_testbed(*arguments)
        try:
            assert result.returncode == 2, (arguments, result.stdout, result.stderr)
            lines = result.stderr.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith(expected), (arguments, lines)
            assert problem in lines[0] and "papcoll testbed down --name pz1" in lines[0]
            assert "no testbeds" not in result.stdout and "Traceback" not in result.stderr
        finally:
            if arguments[0] == "up" and result.returncode == 0:  # a bug: made one
                testbed.down("pz1")
    # down is the way out: it says the file was damaged, removes what the testbed's own
    # names cover (nothing here) and the file
    result = _papcoll_testbed("down", "--name", "pz1")
    assert result.returncode == 0, result.stderr
    assert f"its state file {path} is damaged" in result.stdout, result.stdout
    assert problem in result.stdout
    assert not path.exists()
    assert _papcoll_testbed("status").stdout.strip() == "no testbeds"


@needs_root
def test_down_refuses_foreign_names_a_state_file_gives_and_keeps_the_file(
        state_directory: Path) -> None:
    """Names that exist nowhere (so nothing real is at risk even if down were wrong): down
    says it leaves each alone, exits 2 and keeps the file for a person to check."""
    data = _plan_data("pz2")
    data["namespaces"][1] = data["links"][1]["namespace"] = "pz-nosuch-ns"
    data["bridges"][0] = "pznosuch0"
    for link in data["links"]:
        link["bridge"] = "pznosuch0"
    path = _write(state_directory, "pz2", data)
    result = _papcoll_testbed("down", "--name", "pz2")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "left alone, not the testbed's own: namespace pz-nosuch-ns" in result.stderr
    assert "interface pznosuch0" in result.stderr and str(path) in result.stderr
    assert path.exists()
    status = _papcoll_testbed("status")
    assert status.returncode == 2 and "pz-nosuch-ns" in status.stderr


@pytest.fixture
def own_interfaces() -> Iterator[list[str]]:
    """Interfaces this test makes (and removes, whatever down did to them)."""
    made: list[str] = []
    yield made
    for interface in made:
        subprocess.run(["ip", "link", "delete", interface], capture_output=True, check=False)


def _make(own_interfaces: list[str], interface: str, kind: str) -> None:
    """A bridge, or a veth pair whose other end is `interface` + "p" (removed with it)."""
    peer = ["peer", "name", interface + "p"] if kind == "veth" else []
    subprocess.run(["ip", "link", "add", interface, "type", kind, *peer], check=True)
    own_interfaces.append(interface)


def _exists(interface: str) -> bool:
    return Path(f"/sys/class/net/{interface}").exists()


@needs_root
def test_down_leaves_an_interface_the_state_file_names_but_the_testbed_never_made(
        state_directory: Path, own_interfaces: list[str]) -> None:
    """The test's own interfaces: a bridge under a foreign name the state file gives as the
    root bridge, and a veth end under the testbed's own bridge name. down removes neither
    and names both."""
    _make(own_interfaces, "pzforeign0", "bridge")
    _make(own_interfaces, "pcpz3s0", "veth")
    foreign = _plan_data("pz3")
    foreign["bridges"][0] = "pzforeign0"
    for link in foreign["links"]:
        link["bridge"] = "pzforeign0"
    path = _write(state_directory, "pz3", foreign)
    with pytest.raises(testbed.TestbedError, match="interface pzforeign0 .named by the state"):
        testbed.down("pz3")
    assert _exists("pzforeign0") and path.exists()
    _write(state_directory, "pz3", _plan_data("pz3"))
    with pytest.raises(testbed.TestbedError,
                       match=r"interface pcpz3s0 \(a veth interface, where the testbed makes "
                             r"a bridge\)"):
        testbed.down("pz3")
    assert _exists("pcpz3s0") and path.exists()


@needs_root
def test_down_with_a_damaged_state_file_removes_the_testbeds_own_pieces(
        state_directory: Path, own_interfaces: list[str]) -> None:
    """What a half-made testbed leaves: its root bridge, and a state file cut short. down
    removes the bridge (the testbed's own name, a bridge) and the file, and nothing else."""
    _make(own_interfaces, "pcpz4s0", "bridge")
    _make(own_interfaces, "pcpz4x0", "bridge")  # not a name the testbed gives anything
    path = _write(state_directory, "pz4", json.dumps(_plan_data("pz4"))[:100])
    assert testbed.down("pz4") is True
    assert not _exists("pcpz4s0") and _exists("pcpz4x0") and not path.exists()
    assert testbed.down("pz4") is False


@needs_root
def test_down_never_kills_in_this_machines_own_namespace_under_a_testbeds_name(
        state_directory: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The namespace a sound state file names leads to this machine's own (here: a link in a
    directory of the test's own, listed as present; the real namespaces have no such name,
    so even a down that did kill would find no process there): left alone, named, and the
    state file kept."""
    directory = tmp_path / "netns"
    directory.mkdir()
    (directory / "papcoll-pz5-host0").symlink_to("/proc/self/ns/net")
    monkeypatch.setattr(links, "NETNS_DIRECTORY", directory)
    monkeypatch.setattr(links, "_present_namespaces", lambda: {"papcoll-pz5-host0"})
    killed: list[int] = []
    monkeypatch.setattr(links.os, "kill", lambda pid, _signal: killed.append(pid))
    path = _write(state_directory, "pz5", _plan_data("pz5"))
    with pytest.raises(testbed.TestbedError,
                       match="namespace papcoll-pz5-host0 .it is this machine's own network"):
        testbed.down("pz5")
    assert killed == [] and path.exists()


def test_a_state_file_that_links_nowhere_is_damaged_not_missing(state_directory: Path) -> None:
    (state_directory / "pz6.json").symlink_to(state_directory / "nowhere.json")
    with pytest.raises(testbed.DamagedStateError, match="is a link to a file that does not"):
        testbed.load("pz6")
    with pytest.raises(testbed.TestbedError, match="no testbed named 'pz7'"):
        testbed.load("pz7")
