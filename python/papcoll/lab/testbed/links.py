"""Making and removing a testbed (papcoll.lab.testbed): its network namespaces, bridges and
tbf-shaped veth links, built from its Plan after the state file claims its names, and the
launch wrapper that lets MPI's launchers start daemons inside the namespaces.
`down` removes every piece the state file names, also of a testbed `up` left half-made.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shlex
import shutil
import signal
from dataclasses import asdict
from pathlib import Path

from .planning import (
    STATE_DIRECTORY,
    Plan,
    TestbedError,
    bucket_bytes,
    check_name,
    existing,
    load,
    plan,
    require_support,
    run_command,
    state_file,
)


def _tbf(device: str, namespace: str | None, bits: int) -> None:
    burst = bucket_bytes(bits)
    # a queue of 50 ms at the rate: TCP's window, not tbf, should set the pace (a drop costs
    # a retransmission time-out, which no model of the network has)
    limit = max(4 * burst, bits // 8 // 20)
    prefix = ["ip", "netns", "exec", namespace] if namespace else []
    result = run_command([*prefix, "tc", "qdisc", "replace", "dev", device, "root", "tbf",
                   "rate", f"{bits}bit", "burst", str(burst), "limit", str(limit)], check=False)
    if result.returncode != 0:
        raise TestbedError(f"cannot shape {device} with tc tbf ({result.stderr.strip()}): the "
                           "kernel needs the sch_tbf module")


def up(network_name: str, hosts: int = 0, *, name: str | None = None,
       ranks: int | None = None) -> Plan:
    """Builds a testbed and returns its plan; on any failure removes what it made."""
    require_support()
    if Path(network_name).suffix in (".json", ".toml"):  # the state outlives the directory
        network_name = str(Path(network_name).resolve())
    STATE_DIRECTORY.mkdir(parents=True, exist_ok=True)
    # Two papcoll processes may make testbeds at once: choosing a name and a subnet and
    # writing the state that claims them happen under one lock.
    with (STATE_DIRECTORY / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        name = name or _free_name()
        if state_file(name).exists():
            raise TestbedError(f"a testbed named '{name}' exists: `papcoll testbed down "
                               f"--name {name}` first, or give another --name")
        testbed = plan(network_name, name, hosts, ranks)
        in_the_way = [device for device in
                      testbed.bridges + [link.outer for link in testbed.links]
                      + [link.inner for link in testbed.links if link.namespace is None]
                      if Path(f"/sys/class/net/{device}").exists()]
        present = set(run_command(["ip", "netns", "list"], check=False).stdout.split())
        in_the_way += [namespace for namespace in testbed.namespaces if namespace in present]
        if in_the_way:  # not ours: `down` would remove it
            raise TestbedError(f"{in_the_way[0]} exists already (not made by a testbed "
                               "papcoll knows of): remove it or give another --name")
        state_file(name).write_text(json.dumps(asdict(testbed), indent=1))
    try:
        for bridge in testbed.bridges:
            run_command(["ip", "link", "add", bridge, "type", "bridge"])
            run_command(["ip", "link", "set", bridge, "up"])
        run_command(["ip", "addr", "add", f"{testbed.root_address}/24", "dev", testbed.bridges[0]])
        for namespace in testbed.namespaces:
            run_command(["ip", "netns", "add", namespace])
            run_command(["ip", "-n", namespace, "link", "set", "lo", "up"])
        for link in testbed.links:
            if link.namespace is None:  # a switch's link: both ends in the root namespace
                run_command(["ip", "link", "add", link.inner, "type", "veth", "peer", "name",
                      link.outer])
                run_command(["ip", "link", "set", link.inner, "master", str(link.inner_bridge),
                      "up"])
            else:
                run_command(["ip", "link", "add", link.outer, "type", "veth", "peer", "name",
                      link.inner, "netns", link.namespace])
                run_command(["ip", "-n", link.namespace, "addr", "add", f"{link.address}/24", "dev",
                      link.inner])
                run_command(["ip", "-n", link.namespace, "link", "set", link.inner, "up"])
            run_command(["ip", "link", "set", link.outer, "master", link.bridge, "up"])
            _tbf(link.outer, None, link.rate_bits)
            _tbf(link.inner, link.namespace, link.rate_bits)
        _write_launch_wrapper(testbed)
    except BaseException:
        down(name)
        raise
    return testbed


def _free_name() -> str:
    taken = {plan.name for plan in existing()}
    return next(f"t{k}" for k in range(1000) if f"t{k}" not in taken)


def down(name: str) -> bool:
    """Removes testbed `name` (namespaces, bridges, links, its state); True if it existed.
    Safe to call again, and on a testbed that `up` left half-made."""
    check_name(name)
    state = state_file(name)
    if not state.exists():
        return False
    present = set(run_command(["ip", "netns", "list"], check=False).stdout.split())
    try:
        testbed = load(name)
        namespaces = testbed.namespaces
        devices = [link.inner for link in testbed.links if link.namespace is None] + [
            link.outer for link in testbed.links] + testbed.bridges
    except TestbedError:  # a damaged state file: remove what the testbed's names cover
        namespaces = [n for n in present if n.startswith(f"papcoll-{name}-")]
        devices = [d.name for d in Path("/sys/class/net").iterdir()
                   if re.fullmatch(rf"pc{name}[shud]\d+", d.name)]
    for namespace in namespaces:
        if namespace in present:
            # a rank or daemon still inside would keep the namespace (and its links) alive
            pids = run_command(["ip", "netns", "pids", namespace], check=False).stdout.split()
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, ValueError):
                    os.kill(int(pid), signal.SIGKILL)
            # Deleting a namespace deletes the veth ends in it, and with them their peers.
            run_command(["ip", "netns", "delete", namespace], check=False)
    for device in devices:
        if Path(f"/sys/class/net/{device}").exists():
            run_command(["ip", "link", "delete", device], check=False)
    shutil.rmtree(wrapper_directory(name), ignore_errors=True)
    state.unlink(missing_ok=True)
    return True


def missing_pieces(testbed: Plan) -> list[str]:
    """The namespaces and interfaces of the plan that do not exist (empty: complete)."""
    present = set(run_command(["ip", "netns", "list"], check=False).stdout.split())
    missing = [n for n in testbed.namespaces if n not in present]
    missing += [d for d in testbed.bridges + [link.outer for link in testbed.links]
                if not Path(f"/sys/class/net/{d}").exists()]
    return missing


# Runs a command inside a host's namespace when a launcher asks for a remote shell.
ENTER_HOST = Path(__file__).resolve().with_name("enter_host.sh")


# --- the launch wrapper ------------------------------------------------------------------

def wrapper_directory(name: str) -> Path:
    return STATE_DIRECTORY / name


def _write_launch_wrapper(testbed: Plan) -> Path:
    """The 'remote shell' the MPI launchers use to start their daemons on a host of this
    testbed (enter_host.sh, beside this file, given the testbed's name): a launcher takes
    one program to run, so each testbed has its own two-line wrapper."""
    directory = wrapper_directory(testbed.name)
    directory.mkdir(parents=True, exist_ok=True)
    wrapper = directory / "enter-host"
    wrapper.write_text("#!/bin/sh\n"
                       f"exec /bin/sh {shlex.quote(str(ENTER_HOST))} {testbed.name} \"$@\"\n")
    wrapper.chmod(0o755)
    return wrapper
