"""Calibration: this machine's simulator parameters, measured with real MPI by
papcoll-calibrate (bench/papcoll_calibrate.c) and fitted to the simulator's model
(papcoll.model.SimModel), written as a network file that `papcoll sim --network FILE` and
`papcoll search --network FILE` read. The command is papcoll.cli.calibrate.

The fit. The simulator charges one message L + o + o_r + bytes x G on a crossbar (sim.py
`_path_time`: latency, the sender's and the receiver's overhead, seconds per byte) and gives
the program's fan-out, b pipelined 8-byte messages answered by 8 bytes,
2 L + (b + 1) o + 2 o_r + 16 G. Each parameter is taken from the measurements that
determine it:
  1. G: the slope of the one-way time over the large messages (LARGE_MESSAGE_BYTES and up),
     least squares in absolute time. There the time is bytes on the wire; a joint fit
     weighted to relative error let the microsecond points pick G, and on the testbed it
     found 3.9 ns/B for a 1 Gb/s link (8.3 ns/B measured at 16 MiB), since tbf's bucket lets
     a message of up to 125 KB leave at memory speed (papcoll.lab.testbed).
  2. o (the sender's): the slope of the fan-out's time in b (what one more message costs
     the sender).
  3. o_r (the receiver's) and L share what a small one-way message costs beyond o (the
     median over the messages of at most SMALL_MESSAGE_BYTES, less o and bytes x G; at
     least 0, since the simulator refuses negative times). o_r is measured directly too
     (MPI_Recv of a message already there) and takes its measured value up to that share;
     L is the rest. Over TCP one o at both ends cannot fit: a send is a system call of
     ~7 us, so o = 7 us would put 14 us on a message measured at 8.4 us one way. The
     direct o_r (8.6 us over libfabric's tcp provider) is an upper bound: a receive that
     finds the message in the socket pays a poll and a read, while in a ping-pong the
     receiver is already polling and pays ~1 us; L + o_r = 1.3 us is what the ping-pong
     leaves, so o_r = 1.3 us and L = 0 on the testbed.
Ruefenacht et al. 2017's pipelining postal parameters are the same numbers under the project's
mapping (model.py): alpha_p = L, alpha_r = o.

Residuals: for each set of measurements, (model - measured) / measured at every point; the
table reports their root mean square and the largest magnitude. The reduction and copy
speeds are measured directly (medians), not fitted, and have no residual.

The arrival monitor (src/mpi/monitor_tau.c, by the core's src/core/tau_model.c) computes
its tau from three numbers it measures at the first monitored call; PAPCOLL_TAU_MODEL gives
it this calibration's instead (MonitorModel,
Calibration.monitor_model): latency = L + o + o_r, the model's one-way small message (the
monitor's latency is half a round trip of 8 bytes), seconds_per_byte = G and
reduce_seconds_per_byte = gamma. The text writes each number exactly (repr: strtod reads
back the same double), and MonitorModel.parse and MonitorModel.tau are the core's parser
and formula themselves (papcoll_tau_model_parse, papcoll_tau_model_tau), so the tau the
library uses is Calibration.tau to the last bit.

Not calibrated: the NIC gap g (written as 0: the fan-out's slope is o + g in the model,
and the sweep cannot tell them apart) and the eager limit (the base preset's, all eager).
"""

from __future__ import annotations

import datetime
import json
import math
import platform
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy

from .._core import ffi, lib
from ..datatypes import DATATYPES
from ..errors import PapcollError, c_string
from ..model import SimModel
from .bench import stop_job
from .launcher import Launch, mpiexec_command, program_path

# The datatype whose reduction speed goes into the model's gamma unless the caller names
# another: papcoll-bench's default and the monitor's own calibration (src/mpi/monitor_tau.c).
DEFAULT_DATATYPE = "float"
# The base preset of a written network file; every parameter it would give is overridden
# except the eager limit (all eager), which the calibration does not measure.
BASE = "hockney"
FAN_OUT_MESSAGE_BYTES = 8
# the ping-pong sizes that give G (step 1 of the fit) and L (step 3)
LARGE_MESSAGE_BYTES = 1 << 20
SMALL_MESSAGE_BYTES = 1024
# statistic -> the fields of papcoll-calibrate's ping-pong and fan-out rows it fits
STATISTICS = {"median": ("one_way_seconds", "done_seconds"),
              "minimum": ("minimum_seconds", "done_minimum_seconds")}


def calibrate_program() -> Path:
    """The papcoll-calibrate of this MPI's build (launcher.program_path:
    $PAPCOLL_CALIBRATE, the build tree, the pip install, PATH)."""
    return program_path("papcoll-calibrate", "PAPCOLL_CALIBRATE")


def check_datatypes(datatypes: Sequence[str]) -> list[str]:
    """The names, checked against papcoll-bench's types; an unknown one is refused."""
    unknown = [name for name in datatypes if name not in DATATYPES]
    if unknown:
        raise ValueError(f"unknown datatype '{unknown[0]}' (known: {', '.join(DATATYPES)})")
    if not datatypes:
        raise ValueError("no datatypes to measure")
    return list(dict.fromkeys(datatypes))


def measure(ranks: int = 2, quick: bool = False, datatypes: Sequence[str] | None = None,
            launch: Launch = mpiexec_command, timeout: float = 600) -> dict[str, Any]:
    """Runs papcoll-calibrate on `ranks` processes through `launch` (this machine's mpiexec,
    or an emulated cluster's: papcoll.lab.testbed.Testbed.mpiexec_command) and returns its JSON.
    """
    if isinstance(ranks, bool) or not isinstance(ranks, int) or ranks < 2:
        raise ValueError(f"calibration needs at least 2 ranks (a ping-pong has two ends), "
                         f"not {ranks}")
    names = check_datatypes(list(datatypes) if datatypes is not None else list(DATATYPES))
    with tempfile.TemporaryDirectory(prefix="papcoll-calibrate-") as directory:
        json_path = Path(directory) / "calibration.json"
        program = [str(calibrate_program()), "--json", str(json_path),
                   "--datatypes", ",".join(names), *(["--quick"] if quick else [])]
        argv, environment = launch(ranks, program)
        process = subprocess.Popen(argv, env=environment, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            stop_job(process)  # SIGTERM first: mpiexec passes it on to the ranks
            raise RuntimeError(f"papcoll-calibrate did not finish in {timeout:g} s") from None
        except BaseException:
            stop_job(process)
            raise
        if process.returncode != 0 or not json_path.exists():
            raise RuntimeError(f"papcoll-calibrate failed (exit {process.returncode}):\n"
                               + (stderr[-3000:] + stdout[-1000:]).strip())
        measured: dict[str, Any] = json.loads(json_path.read_text())
    return measured


@dataclass(frozen=True)
class Residuals:
    """How far a fitted model lies from the measurements it was fitted to, relative."""

    points: int
    relative_rms: float
    relative_max: float

    @staticmethod
    def of(predicted: Sequence[float], measured: Sequence[float]) -> Residuals:
        relative = [(float(p) - m) / m for p, m in zip(predicted, measured, strict=True)]
        return Residuals(len(relative), math.sqrt(sum(r * r for r in relative) / len(relative)),
                         max(abs(r) for r in relative))


@dataclass(frozen=True)
class Parameter:
    """One row of the calibration table: a model parameter, where it came from, and the
    residuals of the fit that gave it (None: measured directly)."""

    name: str          # SimModel field, or a name of its own for reported-only values
    value: float
    unit: str
    source: str
    residuals: Residuals | None = None


# PAPCOLL_TAU_MODEL's names, the arrival monitor's three numbers (src/core/tau_model.c)
MONITOR_ENVIRONMENT = "PAPCOLL_TAU_MODEL"
MONITOR_FIELDS = ("latency", "seconds_per_byte", "reduce_seconds_per_byte")


@dataclass(frozen=True)
class MonitorModel:
    """The arrival monitor's model of tau (src/core/tau_model.c), as PAPCOLL_TAU_MODEL gives it:
    tau = latency + segment bytes x (seconds_per_byte + reduce_seconds_per_byte)."""

    latency: float                  # half a round trip of a small message: L + o + o_r
    seconds_per_byte: float         # G
    reduce_seconds_per_byte: float  # gamma of one datatype

    def text(self) -> str:
        """PAPCOLL_TAU_MODEL's value; repr writes each double so that strtod reads it back
        exactly."""
        return ",".join(f"{name}={getattr(self, name)!r}" for name in MONITOR_FIELDS)

    @staticmethod
    def parse(text: str) -> MonitorModel:
        """PAPCOLL_TAU_MODEL's value read by the monitor's own parser (the core's
        papcoll_tau_model_parse): each name once, each value a finite number >= 0;
        ValueError naming the problem otherwise."""
        model = ffi.new("double[3]")
        why = ffi.new("char[]", 200)
        try:
            encoded = c_string(text, MONITOR_ENVIRONMENT)
        except PapcollError as error:  # a NUL or a lone surrogate: malformed text too
            raise ValueError(error.message) from None
        if lib.papcoll_tau_model_parse(encoded, model, why, 200) != lib.PAPCOLL_OK:
            raise ValueError(f"{MONITOR_ENVIRONMENT}: {ffi.string(why).decode()}")
        return MonitorModel(*model)

    def tau(self, ranks: int, count: int, elem_size: int) -> float:
        """The monitor's tau for `count` elements of `elem_size` bytes on `ranks` ranks, by
        its own formula (papcoll_tau_model_tau; the segment is ceil(count / P) elements)."""
        segment = float(-(-count // ranks) * elem_size)
        return float(lib.papcoll_tau_model_tau(
            [self.latency, self.seconds_per_byte, self.reduce_seconds_per_byte], segment))


@dataclass(frozen=True)
class Calibration:
    model: SimModel                              # gamma from `datatype`
    datatype: str
    reduce_seconds_per_byte: dict[str, float]    # every datatype measured
    parameters: list[Parameter]
    measurements: dict[str, Any]                 # papcoll-calibrate's JSON, as it came
    ping_pong_residuals: Residuals
    fan_out_residuals: Residuals
    statistic: str = "median"
    date: str = field(default_factory=lambda: datetime.datetime.now(
        datetime.timezone.utc).isoformat(timespec="seconds"))

    def model_for(self, datatype: str) -> SimModel:
        """The model with the reduction speed of `datatype` (one that was measured)."""
        if datatype not in self.reduce_seconds_per_byte:
            raise ValueError(f"datatype '{datatype}' was not measured (measured: "
                             f"{', '.join(self.reduce_seconds_per_byte)})")
        return replace(self.model, reduce_seconds_per_byte=self.reduce_seconds_per_byte[datatype])

    def monitor_model(self, datatype: str | None = None) -> MonitorModel:
        """The arrival monitor's three numbers from this calibration (see the module's
        docstring), gamma of `datatype` (default: the model's)."""
        model = self.model_for(datatype or self.datatype)
        # L + (o + o_r), grouped as papcoll.sim.tau groups it, so that the two agree exactly
        return MonitorModel(model.latency + model.overheads, model.seconds_per_byte,
                            model.reduce_seconds_per_byte)

    def tau_model_text(self, datatype: str | None = None) -> str:
        """PAPCOLL_TAU_MODEL's value for this calibration."""
        return self.monitor_model(datatype).text()

    def tau(self, ranks: int, count: int, datatype: str | None = None) -> float:
        """The arrival monitor's tau (Proficz 2018, Sect. 4: seconds to move and reduce one of P
        segments) for an all-reduce of `count` elements of `datatype` on `ranks` ranks,
        from this calibration: L + o + o_r + segment bytes x (G + gamma), the half round
        trip the monitor measures itself plus the segment's transfer and reduction. The
        library computes the same, bit for bit, under PAPCOLL_TAU_MODEL=tau_model_text(),
        and papcoll.sim.tau on the calibrated model too."""
        name = datatype or self.datatype
        return self.monitor_model(name).tau(ranks, count, DATATYPES[name].size)

    def network(self, description: str | None = None) -> dict[str, Any]:
        """The network file's contents: `papcoll.network.load_network` reads the base and the
        model; the calibration block records what the numbers came from."""
        model = self.model
        monitor = self.monitor_model()
        library = " ".join(str(self.measurements.get("mpi_library", "MPI")).split())
        return {
            "description": description or (
                f"calibrated {self.date} on {platform.node() or 'this machine'}: "
                f"{library}, {self.measurements.get('ranks')} ranks"),
            "base": BASE,
            "model": {"latency": model.latency, "overhead": model.overhead,
                      "receive_overhead": model.receive_overhead, "gap": model.gap,
                      "burst_bytes": model.burst_bytes,
                      "burst_seconds_per_byte": model.burst_seconds_per_byte,
                      "seconds_per_byte": model.seconds_per_byte,
                      "reduce_seconds_per_byte": model.reduce_seconds_per_byte,
                      "copy_seconds_per_byte": model.copy_seconds_per_byte},
            "calibration": {
                "date": self.date,
                "host": platform.node(),
                "mpi_library": self.measurements.get("mpi_library"),
                "ranks": self.measurements.get("ranks"),
                "quick": self.measurements.get("quick"),
                "model_datatype": self.datatype,
                "statistic": self.statistic,
                "reduce_seconds_per_byte": self.reduce_seconds_per_byte,
                # the arrival monitor's tau model (src/core/tau_model.c), gamma of model_datatype
                "monitor": {**{name: getattr(monitor, name) for name in MONITOR_FIELDS},
                            "environment": f"{MONITOR_ENVIRONMENT}={monitor.text()}"},
                "residuals": {"ping_pong": _residual_record(self.ping_pong_residuals),
                              "fan_out": _residual_record(self.fan_out_residuals)},
                "measurements": self.measurements,
            },
        }

    def write_network(self, path: str | Path, description: str | None = None) -> None:
        target = Path(path)
        if target.suffix != ".json":
            raise ValueError(f"a calibrated network file is JSON and ends in .json, not "
                             f"'{target.name}'")
        target.write_text(json.dumps(self.network(description), indent=1) + "\n")


def _residual_record(residuals: Residuals) -> dict[str, float]:
    return {"points": residuals.points, "relative_rms": residuals.relative_rms,
            "relative_max": residuals.relative_max}


def _line(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float]:
    """Intercept and slope of the least-squares line through (xs, ys)."""
    slope, intercept = numpy.polyfit(numpy.asarray(xs, float), numpy.asarray(ys, float), 1)
    return float(intercept), float(slope)


def fit(measurements: dict[str, Any], datatype: str | None = None,
        statistic: str = "median", burst_bytes: float = 0.0) -> Calibration:
    """The simulator's model fitted to papcoll-calibrate's measurements (see the module's
    docstring); `datatype` picks the model's reduction speed (default float, else the first
    one measured). `statistic`: fit the medians of the samples, or their minimums, which a
    machine busy with other work disturbs far less (noise only ever adds time;
    Ruefenacht et al. 2017, Table 1 gives both)."""
    if statistic not in STATISTICS:
        raise ValueError(f"unknown statistic '{statistic}' ({', '.join(STATISTICS)})")
    one_way, done = STATISTICS[statistic]
    ping_pong = measurements["ping_pong"]
    fan_out = measurements["fan_out"]
    reduce = {row["datatype"]: float(row["seconds_per_byte"]) for row in measurements["reduce"]}
    if not ping_pong or not fan_out or not reduce:
        raise ValueError("the measurements lack a ping-pong, fan-out or reduction")
    if datatype is None:
        datatype = DEFAULT_DATATYPE if DEFAULT_DATATYPE in reduce else next(iter(reduce))
    elif datatype not in reduce:
        raise ValueError(f"datatype '{datatype}' was not measured")
    measured = ([float(row[one_way]) for row in ping_pong]
                + [float(row[done]) for row in fan_out])
    if not all(math.isfinite(t) and t > 0 for t in measured):
        raise ValueError("a measured time is not a positive number")
    by_size = sorted(ping_pong, key=lambda row: row["bytes"])
    large = [row for row in by_size if row["bytes"] >= LARGE_MESSAGE_BYTES]
    if len(large) < 2:  # a --quick sweep stops at 1 MiB: its two largest sizes
        large = by_size[-2:]
    small = [row for row in by_size if row["bytes"] <= SMALL_MESSAGE_BYTES] or by_size[:1]
    if len(large) < 2 or large[0]["bytes"] == large[-1]["bytes"] or len(fan_out) < 2:
        raise ValueError("the fit needs two ping-pong sizes and two fan-out widths")
    per_byte = max(0.0, _line([row["bytes"] for row in large],
                              [row[one_way] for row in large])[1])
    overhead = max(0.0, _line([row["messages"] for row in fan_out],
                              [row[done] for row in fan_out])[1])
    # measured directly where the program did (o_r); else one o at both ends
    receive = measurements.get("receive_overhead")
    receive_overhead = (float(receive["seconds" if statistic == "median" else
                                      "minimum_seconds"]) if receive else overhead)
    # a shaped link's bucket lets messages of up to burst_bytes through at the unshaped
    # path's speed: the slope over the sizes it covers (from SMALL_MESSAGE_BYTES up)
    covered = [row for row in by_size
               if SMALL_MESSAGE_BYTES < row["bytes"] <= burst_bytes]
    burst_per_byte = (max(0.0, _line([row["bytes"] for row in covered],
                                     [row[one_way] for row in covered])[1])
                      if len(covered) >= 2 else 0.0)

    def wire(nbytes: float) -> float:
        return shaped_wire(nbytes, burst_bytes, burst_per_byte, per_byte)

    # L + o_r is what a small one-way message costs beyond the sender's o
    rest = max(0.0, float(numpy.median([row[one_way] - wire(row["bytes"]) for row in small]))
               - overhead)
    receive_overhead = min(receive_overhead, rest)
    latency = rest - receive_overhead
    model = SimModel(latency=latency, overhead=overhead, gap=0.0, seconds_per_byte=per_byte,
                     reduce_seconds_per_byte=reduce[datatype],
                     copy_seconds_per_byte=float(measurements["copy"]["seconds_per_byte"]),
                     eager_limit_bytes=-1, receive_overhead=receive_overhead,
                     burst_bytes=burst_bytes, burst_seconds_per_byte=burst_per_byte)
    predicted_ping_pong, predicted_fan_out = _predicted(model, ping_pong, fan_out)
    split = len(ping_pong)
    ping_pong_residuals = Residuals.of(predicted_ping_pong, measured[:split])
    fan_out_residuals = Residuals.of(predicted_fan_out, measured[split:])
    # Ruefenacht et al. 2017's own reading, reported beside the model: the slope of the time to
    # post b sends (LogP's send overhead), from the same fan-out.
    post_intercept, post_slope = _line([row["messages"] for row in fan_out],
                                       [row["post_seconds"] for row in fan_out])
    post_residuals = Residuals.of(
        [post_intercept + post_slope * row["messages"] for row in fan_out],
        [row["post_seconds"] for row in fan_out])
    parameters = [
        Parameter("latency", latency, "s", "small ping-pongs less o and o_r (alpha_p, L)",
                  ping_pong_residuals),
        Parameter("overhead", overhead, "s", "fan-out slope (alpha_r, o, o_s)",
                  fan_out_residuals),
        Parameter("receive_overhead", receive_overhead, "s",
                  "MPI_Recv of a message in, capped by the ping-pong (o_r)" if receive
                  else "= overhead, capped by the ping-pong"),
        Parameter("seconds_per_byte", per_byte, "s/B",
                  f"ping-pong slope from {LARGE_MESSAGE_BYTES >> 20} MiB (G, beta)",
                  ping_pong_residuals),
        *([Parameter("burst_seconds_per_byte", burst_per_byte, "s/B",
                     f"ping-pong slope within the {burst_bytes:g}-byte bucket",
                     ping_pong_residuals)] if burst_bytes > 0 else []),
        Parameter("reduce_seconds_per_byte", reduce[datatype], "s/B",
                  f"MPI_Reduce_local, {datatype} (gamma)"),
        Parameter("copy_seconds_per_byte", model.copy_seconds_per_byte, "s/B", "memcpy"),
        Parameter("send_post_seconds", max(post_slope, 0.0), "s",
                  "slope of MPI_Isend posting time (reported, not in the model)",
                  post_residuals),
    ]
    return Calibration(model, datatype, reduce, parameters, measurements,
                       ping_pong_residuals, fan_out_residuals, statistic)


def measured_times(calibration: Calibration) -> tuple[list[float], list[float]]:
    """The ping-pong and fan-out times the fit used (its statistic), in order."""
    one_way, done = STATISTICS[calibration.statistic]
    return ([row[one_way] for row in calibration.measurements["ping_pong"]],
            [row[done] for row in calibration.measurements["fan_out"]])


def shaped_wire(nbytes: float, burst_bytes: float, burst_seconds_per_byte: float,
                seconds_per_byte: float) -> float:
    """Wire seconds of one message through a full token bucket (the simulator's
    transfer.c): the bucket's bytes go at the burst's speed and refill meanwhile, so they
    carry B G / (G - G_b) bytes; the rest pays G."""
    if burst_bytes <= 0:
        return nbytes * seconds_per_byte
    carried = (burst_bytes * seconds_per_byte / (seconds_per_byte - burst_seconds_per_byte)
               if burst_seconds_per_byte < seconds_per_byte else nbytes)
    covered = min(nbytes, carried)
    return covered * burst_seconds_per_byte + (nbytes - covered) * seconds_per_byte


def _predicted(model: SimModel, ping_pong: Sequence[dict[str, Any]],
               fan_out: Sequence[dict[str, Any]]) -> tuple[list[float], list[float]]:
    """The model's one-way ping-pong times (L + o + o_r + bytes G) and fan-out times
    (b sends' o, L, o_r to receive, o to send the answer, L, o_r to receive it:
    2 L + (b + 1) o + 2 o_r + 16 G) at the measured points, in their order."""
    receive = float(model.receive_overhead or 0.0)

    def wire(nbytes: float) -> float:  # a full token bucket lets burst_bytes go unshaped
        return shaped_wire(nbytes, model.burst_bytes, model.burst_seconds_per_byte,
                           model.seconds_per_byte)

    return ([model.latency + model.overhead + receive + wire(row["bytes"]) for row in ping_pong],
            [2 * model.latency + (row["messages"] + 1) * model.overhead + 2 * receive
             + 2 * wire(FAN_OUT_MESSAGE_BYTES) for row in fan_out])


def predicted_times(calibration: Calibration) -> tuple[list[float], list[float]]:
    """What the residuals compare: _predicted at the calibration's own points."""
    return _predicted(calibration.model, calibration.measurements["ping_pong"],
                      calibration.measurements["fan_out"])


def calibrate(ranks: int = 2, quick: bool = False, datatypes: Sequence[str] | None = None,
              datatype: str | None = None, launch: Launch = mpiexec_command,
              timeout: float = 600, statistic: str = "median",
              burst_bytes: float = 0.0) -> Calibration:
    """Measures (papcoll-calibrate through `launch`) and fits. `burst_bytes`: the token
    bucket of shaped links (a testbed's, which it knows: testbed.bucket_bytes), which the
    model then has too."""
    if statistic not in STATISTICS:
        raise ValueError(f"unknown statistic '{statistic}' ({', '.join(STATISTICS)})")
    if datatype is not None:
        check_datatypes([datatype])
        if datatypes is not None and datatype not in datatypes:
            datatypes = [datatype, *datatypes]
    return fit(measure(ranks, quick, datatypes, launch, timeout), datatype, statistic,
               burst_bytes)
