"""The options that say where a command's work runs: the simulator's network (--network,
--param), and for MPI jobs this machine, an emulated testbed (--testbed) or SimGrid's SMPI
(--smpi) and how long the job may take (--timeout). launch_for is the one place a command
gets its mpiexec."""

from __future__ import annotations

import argparse
import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..lab.launcher import Launch, mpiexec_command
from ..lab.testbed import temporary
from ..network import load_network
from ..smpi import SELECTORS


def add_network(parser: argparse.ArgumentParser, default: str) -> None:
    """--network and --param, as `papcoll sim` takes them."""
    parser.add_argument("--network", default=default,
                        help="preset (hockney, ethernet-1g, infiniband-fdr, aries: crossbars; "
                             "geo-2site, geo-3site: two and three sites) or a .json / .toml "
                             "network file "
                             f"(docs/simulator.md; default {default})")
    parser.add_argument("--param",
                        help="override model parameters, e.g. alpha=5e-5,beta=8e-9")


def _timeout_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--timeout must be a number of seconds, not "
                                         f"'{text}'") from None
    if not (0 < value < math.inf):
        raise argparse.ArgumentTypeError(f"--timeout must be a positive number of seconds, "
                                         f"not {text}")
    return value


def add_timeout(parser: argparse.ArgumentParser, default: float) -> None:
    """--timeout: how long the command's MPI job may run before it is stopped."""
    parser.add_argument("--timeout", type=_timeout_seconds, default=default,
                        help=f"stop the MPI job after this many seconds (default {default:g})")


def add_testbed(parser: argparse.ArgumentParser) -> None:
    """--testbed: run the MPI job on an emulated cluster instead of this machine's shared
    memory (papcoll.lab.testbed)."""
    parser.add_argument("--testbed", metavar="NETWORK",
                        help="run on an emulated cluster of this network (a preset or file, "
                             "as --network): one network namespace per host, links shaped "
                             "with tc, MPI over TCP; made for the run and removed after it "
                             "(needs root; docs/testbed.md)")


def add_smpi(parser: argparse.ArgumentParser) -> None:
    """--smpi and --smpi-selector: run the MPI job in SimGrid's SMPI on a simulated network
    (papcoll.lab.smpi_launcher) instead of this machine's MPI."""
    parser.add_argument("--smpi", metavar="NETWORK",
                        help="run the job in SimGrid's SMPI on this network (a preset or "
                             "file, as --network): every rank's real code, the network and "
                             "the clock simulated, the same times every run; P up to 1024 "
                             "and more (needs smpirun and `make smpi`; docs/smpi.md)")
    parser.add_argument("--smpi-selector", choices=SELECTORS, default="mpich",
                        help="with --smpi: whose algorithms SMPI's MPI_Allreduce and other "
                             "collectives pick among (native; default mpich); native:NAME "
                             "runs SMPI's algorithm NAME in a job of its own")


@contextmanager
def launch_for(arguments: argparse.Namespace, ranks: int) -> Iterator[tuple[Launch, Any]]:
    """How to start the command's MPI job: on this machine, or on a testbed of --testbed
    made for `ranks` ranks for the command's duration. Yields (launch, Testbed or None)."""
    if not getattr(arguments, "testbed", None):
        yield mpiexec_command, None
        return
    with temporary(arguments.testbed, ranks) as testbed:
        yield testbed.mpiexec_command, testbed


def network_of(arguments: argparse.Namespace) -> Any:
    """The network of --network with the overrides of --param."""
    network = load_network(arguments.network)
    return network.with_parameters(arguments.param) if arguments.param else network
