"""Starting papcoll's programs under SimGrid's SMPI: smpirun with a papcoll network as its
platform (papcoll.smpi describes it; this writes it out and runs it).

A job launched here is a papcoll.lab Launch like mpiexec_command, so the benchmark runs the
same way on this machine, on a testbed or in SMPI: `launch(ranks, program)` gives smpirun's
argv, with the program replaced by the SMPI build of the same name (build/smpi/, `make
smpi`: a program built against a real MPI cannot run in SMPI).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..network import Network
from ..smpi import platform

HOW_TO_GET = "SimGrid's SMPI: apt-get install libsimgrid-dev, then `make smpi`"


class SmpiUnavailable(RuntimeError):
    """smpirun or the SMPI build of a program is missing; the message says how to get it."""


def smpirun_path() -> Path:
    found = shutil.which("smpirun")
    if found is None:
        raise SmpiUnavailable(f"no smpirun on PATH: install {HOW_TO_GET}")
    return Path(found)


def smpi_program(name: str) -> Path:
    """papcoll's program `name` as built for SMPI: $PAPCOLL_SMPI_BUILD/name, else build/smpi/
    of the source tree this package runs from."""
    folder = os.environ.get("PAPCOLL_SMPI_BUILD")
    if folder is None:
        folder = str(Path(__file__).resolve().parents[3] / "build" / "smpi")
    program = Path(folder) / name
    if not program.exists():
        raise SmpiUnavailable(f"{program} is not built: install {HOW_TO_GET}")
    return program


def simgrid_version() -> str:
    """SimGrid's version as smpirun says it ("3.32"), '' where it does not."""
    text = subprocess.run([str(smpirun_path()), "-version"], capture_output=True, text=True,
                          timeout=60).stdout
    found = re.search(r"SimGrid version ([0-9.]+)", text)
    return found.group(1) if found else ""


@dataclass
class SmpiJob:
    """One SMPI job's platform, written into `folder`: `command` is its Launch, `record` what
    every result of it should carry (the network, the selector and every --cfg setting)."""

    network: Network
    selector: str
    allreduce: str | None
    folder: Path

    def command(self, ranks: int, program: Sequence[str]) -> tuple[list[str], dict[str, str]]:
        described = platform(self.network, ranks, self.selector, self.allreduce)
        xml, hosts = self.folder / "platform.xml", self.folder / "hostfile"
        xml.write_text(described.xml)
        hosts.write_text("\n".join(described.rank_hosts) + "\n")
        argv = [str(smpirun_path()), "-np", str(ranks), "-platform", str(xml),
                "-hostfile", str(hosts), *described.cfg_arguments(),
                "--log=root.thres:warning", str(smpi_program(Path(program[0]).name)),
                *program[1:]]
        return argv, dict(os.environ)

    def record(self, ranks: int) -> dict[str, Any]:
        described = platform(self.network, ranks, self.selector, self.allreduce)
        return {"network": self.network.name, "simgrid": simgrid_version(),
                "settings": described.settings}


@contextmanager
def smpi_job(network: Network, selector: str = "mpich",
             allreduce: str | None = None) -> Iterator[SmpiJob]:
    """An SMPI job on `network` for the duration of the block (its files removed after)."""
    smpirun_path()  # the missing simulator said before anything runs
    with tempfile.TemporaryDirectory(prefix="papcoll-smpi-") as folder:
        yield SmpiJob(network, selector, allreduce, Path(folder))
