"""Measuring on a testbed (papcoll.lab.testbed): the bytes each host's shaped link carried
(the tbf counters), the bandwidth a TCP stream gets from one host to another (stream.py, run
inside the two namespaces), and how busy this machine's cores were meanwhile.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from . import stream
from .launch import run_in_host
from .planning import Plan, TestbedError, run_command


def link_bytes(testbed: Plan) -> dict[str, tuple[int, int]]:
    """Bytes each host's link carried so far: host -> (sent up, sent down), from the tbf
    counters at both ends (`tc -s`); what proves traffic crossed the shaped links."""
    counters: dict[str, tuple[int, int]] = {}
    host_links = [link for link in testbed.links if link.namespace is not None]
    for host, link in zip(testbed.hosts, host_links, strict=True):
        up_bytes = _tbf_bytes(link.inner, link.namespace)
        down_bytes = _tbf_bytes(link.outer, None)
        counters[host] = (up_bytes, down_bytes)
    return counters


def _tbf_bytes(device: str, namespace: str | None) -> int:
    prefix = ["ip", "netns", "exec", namespace] if namespace else []
    text = run_command([*prefix, "tc", "-s", "qdisc", "show", "dev", device]).stdout
    match = re.search(r"Sent (\d+) bytes", text)
    return int(match.group(1)) if match else 0



# A TCP stream from one host to another, timed from the sender's first byte to the
# receiver's last (stream.py: one clock for both, the connection's set-up not counted): the
# bandwidth a host's link gives a bulk transfer, which must come within 10 % of the shaped
# rate (TCP/IP headers take 4.4 % of a 1500-byte frame), and can never exceed it by more than
# the token bucket's burst, however busy the machine. Each end runs stream.py by path inside
# its host's namespace.
STREAM = stream.__file__


def stream_bandwidth(testbed: Plan, source: int, destination: int,
                     mebibytes: int = 64) -> float:
    """Bytes per second of a `mebibytes` MiB TCP stream from host `source` to host
    `destination` (indices into testbed.hosts)."""
    for host in (source, destination):
        if not 0 <= host < len(testbed.hosts):
            raise TestbedError(f"host {host}: testbed '{testbed.name}' has hosts 0.."
                               f"{len(testbed.hosts) - 1}")
    if source == destination:
        raise TestbedError("a stream needs two different hosts")
    address = testbed.addresses[destination]
    receiver = run_in_host(testbed, destination,
                           [sys.executable, STREAM, "receive", address], stdout=subprocess.PIPE)
    try:
        assert receiver.stdout is not None
        if receiver.stdout.readline().strip() != "listening":
            raise TestbedError("the receiver of the stream did not start")
        sender = run_in_host(testbed, source, [sys.executable, STREAM, "send", address,
                                               str(mebibytes)], stdout=subprocess.PIPE)
        try:
            started, _ = sender.communicate(timeout=120)
            if sender.returncode != 0:
                raise TestbedError(f"the stream from host {source} to host {destination} "
                                   "failed")
        except subprocess.TimeoutExpired:
            raise TestbedError(f"the stream from host {source} to host {destination} did "
                               "not end in 120 s") from None
        finally:
            sender.kill()
            sender.wait()
        received, ended = receiver.communicate(timeout=60)[0].split()
    finally:
        receiver.kill()
        receiver.wait()
    if int(received) != mebibytes << 20:
        raise TestbedError(f"the stream delivered {received} of {mebibytes << 20} bytes")
    return int(received) / (float(ended) - float(started))


class CpuMeter:
    """How busy this machine's cores were during a `with` block (from /proc/stat): a
    testbed's timings measure the network only while the cores have time to spare."""

    def __init__(self) -> None:
        self.cores = os.cpu_count() or 1
        self.busy_percent = 0.0

    @staticmethod
    def _times() -> tuple[int, int]:
        try:
            fields = [int(x) for x in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
        except (OSError, ValueError):
            return 0, 0
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + waiting for I/O
        return sum(fields[:8]), idle

    def __enter__(self) -> CpuMeter:
        self._start = self._times()
        return self

    def __exit__(self, *_: object) -> None:
        total, idle = self._times()
        elapsed = total - self._start[0]
        if elapsed > 0:
            self.busy_percent = 100.0 * (elapsed - (idle - self._start[1])) / elapsed
