"""A testbed's state (papcoll.lab.testbed): the Plan (every name, address and rate a testbed
is made of) and the state file that records it, <state directory>/<name>.json, written by
`up` before anything is made so that `down` finds every piece.

The file is read as untrusted input: a file cut short, nested past any plan, of the wrong
shape, or naming a namespace or interface that is not the testbed's own is refused with one
message that names the file, what is wrong with it and how to recover (DamagedStateError),
the same for `status`, `up`, `check` and `down`. A testbed's own pieces are the namespaces
papcoll-<name>-<host> and the interfaces pc<name>s<i> (bridges), pc<name>h<k>, pc<name>d<i>
and pc<name>u<i> (veth ends); own_namespace and own_interface_kind say which names those are,
and `down` removes nothing else.

The state directory is $PAPCOLL_TESTBED_STATE, read at every use (a test points it at a
temporary directory), else /run/papcoll/testbeds: a tmpfs, emptied at boot along with the
namespaces and interfaces the files describe.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

DEFAULT_STATE_DIRECTORY = Path("/run/papcoll/testbeds")
STATE_DIRECTORY_VARIABLE = "PAPCOLL_TESTBED_STATE"
# namespaces on a 2-core machine; well inside one /24 (hosts .1 .. .64, mpiexec at .254)
MAX_HOSTS = 64
ADDRESS_PREFIX = "10.213"   # 10.213.K.0/24 per testbed
ROOT_ADDRESS_HOST = 254     # the root namespace's address on the root switch
NAME_PATTERN = re.compile(r"[a-z0-9]{1,6}")
# a network's host name as it goes into a namespace's name and a hostname
HOST_NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}"
# A plan of MAX_HOSTS hosts takes about 30 KB: a bigger file is not a state file, and is
# refused before it is parsed.
MAX_STATE_BYTES = 1 << 20
# the kind (`ip -d link`'s linkinfo) of each interface a testbed makes, by the letter after
# pc<name>: bridges for switches, veth ends for links (h: host, d: a switch's uplink at its
# parent, u: its other end)
INTERFACE_KINDS = {"s": "bridge", "h": "veth", "d": "veth", "u": "veth"}


class TestbedError(RuntimeError):
    """A testbed that cannot be made, found or used; the message says why."""


class DamagedStateError(TestbedError):
    """A state file that cannot be trusted: unreadable, not a plan, or naming pieces that
    are not the testbed's own (`foreign`: those names, which `down` leaves alone). `path`
    and `problem` (what is wrong, a phrase) are also in the message."""

    def __init__(self, message: str, path: Path, problem: str,
                 foreign: list[str] | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.problem = problem
        self.foreign = foreign or []


@dataclass(frozen=True)
class Link:
    """One shaped veth pair: `inner` in namespace `namespace` (None: the root namespace)
    joined to bridge `bridge` through `outer`; both ends limited to rate_bits. A host's link
    gives `inner` an address; a switch's link puts `inner` on the switch's own bridge."""

    inner: str
    outer: str
    namespace: str | None
    bridge: str
    rate_bits: int
    address: str | None = None
    inner_bridge: str | None = None


@dataclass(frozen=True)
class Plan:
    """Everything a testbed is made of, as written to its state file."""

    name: str
    network: str
    subnet: int                  # K of 10.213.K.0/24
    hosts: list[str]             # the network's host names, in rank order
    namespaces: list[str]        # one per host
    addresses: list[str]
    cores: list[int]             # ranks each host holds
    bridges: list[str]           # one per switch; bridges[0] is the root
    links: list[Link]
    root_address: str

    @property
    def ranks(self) -> int:
        return sum(self.cores)


def check_name(name: str) -> str:
    if not NAME_PATTERN.fullmatch(name):
        raise TestbedError(f"testbed name '{name}' must be 1 to 6 lower-case letters or digits "
                           "(it goes into interface names, which Linux limits to 15 bytes)")
    return name


def state_directory() -> Path:
    return Path(os.environ.get(STATE_DIRECTORY_VARIABLE) or DEFAULT_STATE_DIRECTORY)


def state_file(name: str) -> Path:
    return state_directory() / f"{name}.json"


def own_namespace(name: str, namespace: str) -> bool:
    """Whether `namespace` is a name testbed `name` gives one of its hosts."""
    return re.fullmatch(rf"papcoll-{re.escape(name)}-{HOST_NAME_PATTERN}", namespace) is not None


def own_interface_kind(name: str, interface: str) -> str | None:
    """The kind of interface testbed `name` makes under this name ("bridge" or "veth"), or
    None when the name is not one of the testbed's."""
    match = re.fullmatch(rf"pc{re.escape(name)}([shdu])\d+", interface)
    return INTERFACE_KINDS[match.group(1)] if match else None


def recovery(name: str) -> str:
    return (f"`papcoll testbed down --name {name}` removes the testbed's own namespaces "
            f"(papcoll-{name}-*) and interfaces (pc{name}*) and then the file")


class _Damage(Exception):
    """What is wrong with a state file's contents (a phrase for DamagedStateError)."""


def _kind_of(value: object) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
            type(None): "null"}.get(type(value), "a number")


def _text(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise _Damage(f"{what} is {_kind_of(value)}, not a string")
    return value


def _whole(value: object, what: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _Damage(f"{what} is {_kind_of(value)}, not a whole number")
    if not low <= value <= high:
        raise _Damage(f"{what} is {value}, outside {low}..{high}")
    return value


def _list(value: object, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise _Damage(f"{what} is {_kind_of(value)}, not a list")
    return value


def _texts(value: object, what: str) -> list[str]:
    return [_text(item, f"{what}[{k}]") for k, item in enumerate(_list(value, what))]


def _fields_of(value: object, names: list[str], required: list[str],
               what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _Damage(f"{what} is {_kind_of(value)}, not an object")
    missing = [key for key in required if key not in value]
    unknown = [key for key in value if key not in names]
    if missing:
        raise _Damage(f"{what} lacks {', '.join(missing)}")
    if unknown:
        raise _Damage(f"{what} has unknown fields {', '.join(map(repr, unknown[:3]))}")
    return value


def _link(value: object, what: str) -> Link:
    names = [field.name for field in fields(Link)]
    data = _fields_of(value, names, names[:5], what)
    optional = {key: None if data.get(key) is None else _text(data[key], f"{what}.{key}")
                for key in ("namespace", "address", "inner_bridge")}
    return Link(_text(data["inner"], f"{what}.inner"), _text(data["outer"], f"{what}.outer"),
                optional["namespace"], _text(data["bridge"], f"{what}.bridge"),
                _whole(data["rate_bits"], f"{what}.rate_bits", 1, 10**15),
                optional["address"], optional["inner_bridge"])


def _plan(data: object, name: str) -> Plan:
    """The Plan the parsed file holds, its shape checked (not yet whose names it gives)."""
    names = [field.name for field in fields(Plan)]
    data = _fields_of(data, names, names, "the file")
    if _text(data["name"], "name") != name:
        raise _Damage(f"it is the state of testbed {data['name']!r}, not of '{name}'")
    plan = Plan(name, _text(data["network"], "network"),
                _whole(data["subnet"], "subnet", 0, 255),
                _texts(data["hosts"], "hosts"), _texts(data["namespaces"], "namespaces"),
                _texts(data["addresses"], "addresses"),
                [_whole(cores, f"cores[{k}]", 1, 1 << 20)
                 for k, cores in enumerate(_list(data["cores"], "cores"))],
                _texts(data["bridges"], "bridges"),
                [_link(link, f"links[{k}]")
                 for k, link in enumerate(_list(data["links"], "links"))],
                _text(data["root_address"], "root_address"))
    hosts = len(plan.hosts)
    if not 1 <= hosts <= MAX_HOSTS:
        raise _Damage(f"it has {hosts} hosts, not 1..{MAX_HOSTS}")
    for what in ("namespaces", "addresses", "cores"):
        if len(getattr(plan, what)) != hosts:
            raise _Damage(f"it has {len(getattr(plan, what))} {what} for {hosts} hosts")
    if not plan.bridges:
        raise _Damage("it has no bridges (a testbed has at least its root switch)")
    subnet = f"{ADDRESS_PREFIX}.{plan.subnet}"
    expected = [f"{subnet}.{k + 1}" for k in range(hosts)]
    if plan.addresses != expected or plan.root_address != f"{subnet}.{ROOT_ADDRESS_HOST}":
        raise _Damage(f"its addresses are not those of subnet {subnet}.0/24")
    host_links = [link for link in plan.links if link.namespace is not None]
    if [link.namespace for link in host_links] != plan.namespaces:
        raise _Damage("its host links do not match its namespaces one to one")
    for link in plan.links:
        bridges = [link.bridge] + ([] if link.namespace is not None else [link.inner_bridge])
        if any(bridge not in plan.bridges for bridge in bridges):
            raise _Damage(f"link {link.outer} joins a bridge the file does not list")
    return plan


def _foreign(plan: Plan) -> list[str]:
    """The namespaces and interfaces the plan names that are not the testbed's own."""
    name = plan.name
    foreign = [f"namespace {namespace}" for namespace in plan.namespaces
               if not own_namespace(name, namespace)]
    interfaces = list(plan.bridges) + [link.outer for link in plan.links] + [
        link.inner for link in plan.links if link.namespace is None]
    expected = {bridge: "bridge" for bridge in plan.bridges}
    expected.update({interface: "veth" for interface in interfaces if interface not in expected})
    foreign += [f"interface {interface}" for interface, kind in expected.items()
                if own_interface_kind(name, interface) != kind]
    # the host's end lives inside the host's namespace, which goes with it
    foreign += [f"interface {link.inner} in {link.namespace}" for link in plan.links
                if link.namespace is not None and link.inner != "eth0"]
    return foreign


def load(name: str) -> Plan:
    """The plan of testbed `name` from its state file. TestbedError when there is none;
    DamagedStateError when the file cannot be trusted."""
    check_name(name)
    path = state_file(name)

    def damaged(what: str, foreign: list[str] | None = None) -> DamagedStateError:
        how = recovery(name) if not foreign else (
            f"`papcoll testbed down --name {name}` removes only the testbed's own pieces and "
            "keeps the file: remove it by hand once you have checked those")
        return DamagedStateError(f"testbed '{name}': its state file {path} {what}; {how}",
                                 path, what, foreign)

    try:
        with path.open("rb") as file:
            raw = file.read(MAX_STATE_BYTES + 1)
    except FileNotFoundError:
        if path.is_symlink():
            raise damaged("is a link to a file that does not exist") from None
        raise TestbedError(f"no testbed named '{name}' (papcoll testbed status lists them)") \
            from None
    except OSError as error:
        raise damaged(f"cannot be read ({error.strerror or error})") from None
    if len(raw) > MAX_STATE_BYTES:
        raise damaged(f"is damaged (over {MAX_STATE_BYTES} bytes: no plan is that large)")
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise damaged(f"is damaged (not UTF-8 text: {error.reason} at byte {error.start})") \
            from None
    except RecursionError:
        raise damaged("is damaged (JSON nested deeper than any plan)") from None
    except ValueError as error:
        raise damaged(f"is damaged (not JSON: {error})") from None
    try:
        plan = _plan(data, name)
    except _Damage as error:
        raise damaged(f"is damaged ({error})") from None
    foreign = _foreign(plan)
    if foreign:
        listed = ", ".join(foreign[:4]) + (f" and {len(foreign) - 4} more" if len(foreign) > 4
                                           else "")
        raise damaged(f"names {listed}, which are not the testbed's own (papcoll touches "
                      f"only namespaces papcoll-{name}-<host> and interfaces pc{name}<letter>"
                      "<number>)", foreign)
    return plan


class StrayStateError(TestbedError):
    """A file in the state directory whose name no testbed has."""


def check_state_name(name: str) -> None:
    """StrayStateError when <name>.json in the state directory cannot be a testbed's."""
    if not NAME_PATTERN.fullmatch(name):
        raise StrayStateError(f"{state_file(name)} is not a testbed's state file ('{name}' is "
                              "not a name papcoll gives a testbed): remove it by hand")


def state_names() -> list[str]:
    """The names of every state file in the state directory, whether or not it loads."""
    directory = state_directory()
    if not directory.is_dir():
        return []
    return sorted(path.stem for path in directory.glob("*.json"))


def survey() -> tuple[list[Plan], list[TestbedError]]:
    """Every testbed whose state file loads, and what is wrong with each one that does not
    (a damaged file, or a file whose name is no testbed's)."""
    plans: list[Plan] = []
    problems: list[TestbedError] = []
    for name in state_names():
        try:
            check_state_name(name)
            plans.append(load(name))
        except (DamagedStateError, StrayStateError) as error:
            problems.append(error)
        except TestbedError:  # removed since it was listed: a testbed no more
            continue
    return plans, problems


def existing() -> list[Plan]:
    """Every testbed whose state file exists and loads (made by this machine since its last
    boot); survey() also says what is wrong with the others."""
    return survey()[0]
