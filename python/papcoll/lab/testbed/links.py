"""Making and removing a testbed (papcoll.lab.testbed): its network namespaces, bridges and
tbf-shaped veth links, built from its Plan after the state file claims its names, and the
launch wrapper that lets MPI's launchers start daemons inside the namespaces.
`down` removes every piece the state file names, also of a testbed `up` left half-made, but
only pieces that are the testbed's own: named as the testbed names them (state.py) and
being what the testbed makes there (a bridge, a veth end, a network namespace other than
this machine's own); anything else it leaves alone and says so.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shlex
import shutil
import signal
from dataclasses import asdict
from pathlib import Path

from .planning import bucket_bytes, plan, require_support, run_command
from .state import (
    DamagedStateError,
    Plan,
    TestbedError,
    check_name,
    load,
    own_interface_kind,
    own_namespace,
    state_directory,
    state_file,
    state_names,
)

# where `ip netns add` mounts the namespaces it names (iproute2's NETNS_RUN_DIR)
NETNS_DIRECTORY = Path("/run/netns")


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
    directory = state_directory()
    directory.mkdir(parents=True, exist_ok=True)
    # Two papcoll processes may make testbeds at once: choosing a name and a subnet and
    # writing the state that claims them happen under one lock.
    with (directory / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        name = name or _free_name()
        if os.path.lexists(state_file(name)):
            load(name)  # a damaged state file says so, and how to remove it
            raise TestbedError(f"a testbed named '{name}' exists: `papcoll testbed down "
                               f"--name {name}` first, or give another --name")
        testbed = plan(network_name, name, hosts, ranks)
        in_the_way = [device for device in
                      testbed.bridges + [link.outer for link in testbed.links]
                      + [link.inner for link in testbed.links if link.namespace is None]
                      if Path(f"/sys/class/net/{device}").exists()]
        present = _present_namespaces()
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
    taken = set(state_names())  # a damaged state file keeps its name too
    return next(f"t{k}" for k in range(1000) if f"t{k}" not in taken)


def down(name: str) -> bool:
    """Removes testbed `name` (namespaces, bridges, links, its state); True if it existed.
    Safe to call again, and on a testbed that `up` left half-made. With a damaged state file
    it removes what the testbed's own names cover. A piece that is not the testbed's own (a
    foreign name in the state file, an interface of another kind than the testbed makes
    under its name, this machine's own namespace under a testbed's name) is left alone: then
    TestbedError names each, after the rest is removed, and the state file is kept."""
    check_name(name)
    state = state_file(name)
    if not os.path.lexists(state):
        return False
    present = _present_namespaces()
    refused: list[str] = []
    try:
        testbed: Plan | None = load(name)
    except DamagedStateError as error:
        testbed = None
        refused += [f"{piece} (named by the state file, not the testbed's)"
                    for piece in error.foreign]
    except TestbedError:  # a state file that went since: only its name is left
        testbed = None
    if testbed is not None:
        namespaces = testbed.namespaces
        interfaces = testbed.bridges + [link.outer for link in testbed.links] + [
            link.inner for link in testbed.links if link.namespace is None]
    else:  # what the testbed's own names cover
        namespaces = sorted(n for n in present if own_namespace(name, n))
        interfaces = sorted(_interface_kinds())
    for namespace in namespaces:
        if namespace not in present or not own_namespace(name, namespace):
            continue
        problem = _namespace_problem(namespace)
        if problem:
            refused.append(f"namespace {namespace} ({problem})")
            continue
        # a rank or daemon still inside would keep the namespace (and its links) alive
        pids = run_command(["ip", "netns", "pids", namespace], check=False).stdout.split()
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid), signal.SIGKILL)
        # Deleting a namespace deletes the veth ends in it, and with them their peers.
        run_command(["ip", "netns", "delete", namespace], check=False)
    kinds = _interface_kinds()  # after the namespaces went, with their veth pairs
    for interface in dict.fromkeys(interfaces):
        expected = own_interface_kind(name, interface)
        if interface not in kinds or expected is None:
            continue
        if kinds[interface] != expected:
            refused.append(f"interface {interface} (a {kinds[interface] or 'kindless'} "
                           f"interface, where the testbed makes a {expected})")
            continue
        run_command(["ip", "link", "delete", interface], check=False)
    if refused:
        raise TestbedError(
            f"testbed '{name}': left alone, not the testbed's own: {'; '.join(refused)}. "
            f"The rest is removed; the state file {state} is kept: check those pieces, "
            "remove what is stale by hand, then the file")
    shutil.rmtree(wrapper_directory(name), ignore_errors=True)
    try:
        state.unlink(missing_ok=True)
    except OSError as error:  # a directory under the state file's name, say
        raise TestbedError(f"testbed '{name}': cannot remove its state file {state} "
                           f"({error.strerror or error}): remove it by hand") from None
    return True


def _present_namespaces() -> set[str]:
    """The named network namespaces (`ip netns list`: a name, then maybe `(id: N)`)."""
    listing = run_command(["ip", "netns", "list"], check=False).stdout
    return {line.split()[0] for line in listing.splitlines() if line.strip()}


def _interface_kinds() -> dict[str, str | None]:
    """Every interface of the root namespace and its kind (bridge, veth, ...; None for a
    physical one), from `ip -details -json link`."""
    text = run_command(["ip", "-details", "-json", "link", "show"]).stdout
    try:
        links = json.loads(text)
    except ValueError as error:
        raise TestbedError(f"cannot read `ip -details -json link show` ({error})") from None
    return {link["ifname"]: (link.get("linkinfo") or {}).get("info_kind")
            for link in links if isinstance(link, dict) and "ifname" in link}


def _namespace_problem(namespace: str) -> str | None:
    """Why the named namespace must not be removed as a testbed's, or None: a name that
    leads to this process's (or init's) own network namespace would have `down` kill every
    process of the machine."""
    try:
        named = os.stat(NETNS_DIRECTORY / namespace)
    except OSError as error:
        return f"cannot be inspected: {error.strerror or error}"
    machine = []
    for path in ("/proc/self/ns/net", "/proc/1/ns/net"):
        with contextlib.suppress(OSError):
            identity = os.stat(path)
            machine.append((identity.st_dev, identity.st_ino))
    if (named.st_dev, named.st_ino) in machine:
        return "it is this machine's own network namespace, under a testbed's name"
    return None


def missing_pieces(testbed: Plan) -> list[str]:
    """The namespaces and interfaces of the plan that do not exist (empty: complete)."""
    present = _present_namespaces()
    missing = [n for n in testbed.namespaces if n not in present]
    missing += [d for d in testbed.bridges + [link.outer for link in testbed.links]
                if not Path(f"/sys/class/net/{d}").exists()]
    return missing


# Runs a command inside a host's namespace when a launcher asks for a remote shell.
ENTER_HOST = Path(__file__).resolve().with_name("enter_host.sh")


# --- the launch wrapper ------------------------------------------------------------------

def wrapper_directory(name: str) -> Path:
    return state_directory() / name


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
