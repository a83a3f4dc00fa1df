"""`papcoll calibrate`: a real, quick calibration under mpiexec, the fit checked
against its own measurements and against data made from a known model, the network file
read back and simulated with, and bad input refused."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from papcoll.lab.calibrate import MonitorModel, fit, measure, measured_times, predicted_times
from papcoll.model import SimModel
from papcoll.network import NetworkError, load_network
from papcoll.sim import tau

DATATYPES = "float,double,int32,int64"


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One quick 2-rank calibration through the command, as a user runs it."""
    from conftest import run_papcoll

    folder = tmp_path_factory.mktemp("calibrate")
    network, record = folder / "calibrated.json", folder / "record.json"
    finished = run_papcoll("calibrate", "--ranks", "2", "--quick", "--datatypes", DATATYPES,
                           "--output", str(network), "--json", str(record))
    assert finished.returncode == 0, finished.stderr
    return {"network": network, "record": json.loads(record.read_text()),
            "stdout": finished.stdout}


def test_the_table_names_every_parameter_with_residuals(calibrated):
    for name in ("latency", "overhead", "seconds_per_byte", "reduce_seconds_per_byte",
                 "copy_seconds_per_byte", "residual rms", "alpha_p"):
        assert name in calibrated["stdout"]


def test_fitted_parameters_are_finite_and_not_negative(calibrated):
    model = calibrated["record"]["model"]
    assert all(math.isfinite(value) and value >= 0 for value in model.values())
    # measured directly: a time over a byte count
    for name in ("reduce_seconds_per_byte", "copy_seconds_per_byte"):
        assert model[name] > 0
    # Shared memory may have no wire latency, but a message always costs something and a
    # byte too. The fit's slopes are differences of medians, which a loaded machine can
    # drive to zero (a late 256 KiB sample against an on-time 1 MiB one); the same
    # measurements' minimums, which noise only ever adds to, must show both costs.
    by_minimums = fit(calibrated["record"]["calibration"]["measurements"],
                      statistic="minimum").model
    # the model's one-way small message: L + o + o_r
    assert by_minimums.latency + by_minimums.overhead + by_minimums.receive_overhead > 0, \
        by_minimums
    assert by_minimums.seconds_per_byte > 0, by_minimums
    speeds = calibrated["record"]["calibration"]["reduce_seconds_per_byte"]
    assert set(speeds) == set(DATATYPES.split(","))
    assert all(math.isfinite(value) and value > 0 for value in speeds.values())


def test_the_fit_reproduces_its_measurements_within_its_residuals(calibrated):
    calibration = fit(calibrated["record"]["calibration"]["measurements"])
    for predicted, measured, residuals in zip(
            predicted_times(calibration), measured_times(calibration),
            (calibration.ping_pong_residuals, calibration.fan_out_residuals), strict=True):
        relative = [(p - m) / m for p, m in zip(predicted, measured, strict=True)]
        assert len(relative) == residuals.points
        assert max(abs(r) for r in relative) <= residuals.relative_max * (1 + 1e-9)
        rms = math.sqrt(sum(r * r for r in relative) / len(relative))
        assert rms == pytest.approx(residuals.relative_rms, rel=1e-9)
    # the file holds what the fit gives
    written = calibrated["record"]["model"]
    assert written["overhead"] == pytest.approx(calibration.model.overhead, rel=1e-12)
    assert written["receive_overhead"] == pytest.approx(calibration.model.receive_overhead,
                                                        rel=1e-12)


def _measurements_of(model: SimModel) -> dict[str, Any]:
    """What papcoll-calibrate would write on a machine that is exactly `model`."""
    sizes = [0] + [4 ** k for k in range(1, 11)]
    receive = float(model.receive_overhead or 0.0)
    return {
        "ranks": 2, "quick": True, "mpi_library": "made up",
        "ping_pong": [{"bytes": n, "one_way_seconds": model.latency + model.overhead
                       + receive + n * model.seconds_per_byte, "minimum_seconds": 0.0}
                      for n in sizes],
        "fan_out": [{"messages": b, "message_bytes": 8,
                     "done_seconds": 2 * model.latency + (b + 1) * model.overhead
                     + 2 * receive + 16 * model.seconds_per_byte, "post_seconds": 1e-7 * b}
                    for b in range(1, 9)],
        "receive_overhead": {"seconds": receive, "minimum_seconds": receive},
        "reduce": [{"datatype": "float", "seconds_per_byte": model.reduce_seconds_per_byte},
                   {"datatype": "double", "seconds_per_byte": 1e-10}],
        "copy": {"seconds_per_byte": model.copy_seconds_per_byte},
    }


@pytest.mark.parametrize("model", [
    SimModel(latency=1.34e-6, overhead=0.34e-6, seconds_per_byte=1e-10,
             reduce_seconds_per_byte=2.5e-10, copy_seconds_per_byte=1e-10),
    SimModel(latency=50e-6, overhead=5e-6, seconds_per_byte=8e-9,
             reduce_seconds_per_byte=5e-10, copy_seconds_per_byte=1e-10),
    # over TCP a send costs a system call, a receive far less
    SimModel(latency=2e-6, overhead=7e-6, receive_overhead=1e-6, seconds_per_byte=8.4e-9,
             reduce_seconds_per_byte=7e-11, copy_seconds_per_byte=2e-11),
], ids=["aries", "ethernet-1g", "tcp-testbed"])
def test_the_fit_recovers_a_known_model(model):
    calibration = fit(_measurements_of(model))
    assert calibration.model.latency == pytest.approx(model.latency, rel=1e-6)
    assert calibration.model.overhead == pytest.approx(model.overhead, rel=1e-6)
    assert calibration.model.receive_overhead == pytest.approx(model.receive_overhead,
                                                               rel=1e-6)
    assert calibration.model.seconds_per_byte == pytest.approx(model.seconds_per_byte, rel=1e-6)
    assert calibration.model.reduce_seconds_per_byte == model.reduce_seconds_per_byte
    assert calibration.ping_pong_residuals.relative_max < 1e-9
    assert calibration.fan_out_residuals.relative_max < 1e-9


def test_a_negative_latency_is_held_at_zero():
    # overhead alone explains the times better than any latency >= 0 would
    measurements = _measurements_of(SimModel(overhead=1e-6, seconds_per_byte=1e-10))
    for row in measurements["ping_pong"]:
        row["one_way_seconds"] -= 0.2e-6
    calibration = fit(measurements)
    assert calibration.model.latency == 0.0
    assert calibration.model.overhead > 0


def test_the_network_file_loads_and_simulates(calibrated, papcoll_command):
    network = load_network(str(calibrated["network"]))
    assert network.model.overhead == pytest.approx(calibrated["record"]["model"]["overhead"])
    finished = papcoll_command("sim", "--network", str(calibrated["network"]), "--ranks", "4",
                               "--count", "64K", "--json", "-")
    assert finished.returncode == 0, finished.stderr
    rows = json.loads(finished.stdout)
    assert rows and all(row["avg_elapsed_ms"] > 0 for row in rows)


def test_tau_comes_from_the_calibrated_model():
    calibration = fit(_measurements_of(SimModel(latency=1e-6, overhead=0.5e-6,
                                                seconds_per_byte=1e-10,
                                                reduce_seconds_per_byte=3e-10)))
    assert calibration.tau(4, 1 << 20) == tau(calibration.model, 4, 1 << 20, 4)
    # double's own reduction speed, 8-byte elements
    expected = 1e-6 + 2 * 0.5e-6 + (1 << 18) * 8 * (1e-10 + 1e-10)
    assert calibration.tau(4, 1 << 20, "double") == pytest.approx(expected)
    with pytest.raises(ValueError, match="not measured"):
        calibration.tau(4, 1024, "int8")


@pytest.mark.parametrize("model", [
    SimModel(latency=1e-6, overhead=0.5e-6, seconds_per_byte=1e-10,
             reduce_seconds_per_byte=3e-10),
    SimModel(latency=2e-6, overhead=7e-6, receive_overhead=1.3e-6, seconds_per_byte=8.37e-9,
             reduce_seconds_per_byte=6.4e-11, copy_seconds_per_byte=2e-11),
], ids=["one-overhead", "tcp-testbed"])
def test_the_monitor_model_is_the_calibrated_tau(model):
    calibration = fit(_measurements_of(model))
    fitted = calibration.model
    monitor = calibration.monitor_model()
    # the monitor's latency is a half round trip: the model's one-way small message
    assert monitor.latency == fitted.latency + fitted.overheads
    assert monitor.latency == pytest.approx(model.latency + model.overheads, rel=1e-6)
    assert monitor.seconds_per_byte == fitted.seconds_per_byte
    assert monitor.reduce_seconds_per_byte == fitted.reduce_seconds_per_byte
    # the text parses back to the same doubles (as strtod reads them in the core's
    # papcoll_tau_model_parse, src/core/tau_model.c)
    text = calibration.tau_model_text()
    assert text.startswith("latency=") and text.count(",") == 2
    assert MonitorModel.parse(text) == monitor
    assert MonitorModel.parse(calibration.tau_model_text("double")).reduce_seconds_per_byte \
        == 1e-10
    for ranks, count, datatype in [(2, 1, "float"), (4, 1 << 20, "float"), (3, 1001, "double"),
                                   (7, 10 ** 9 + 7, "float")]:
        numbers = MonitorModel.parse(calibration.tau_model_text(datatype))
        elem_size = 4 if datatype == "float" else 8
        segment = float(-(-count // ranks) * elem_size)  # ceil(count / P) x size, as in C
        c_formula = numbers.latency + segment * (numbers.seconds_per_byte
                                                 + numbers.reduce_seconds_per_byte)
        assert calibration.tau(ranks, count, datatype) == c_formula
        assert tau(calibration.model_for(datatype), ranks, count, elem_size) == c_formula


def test_the_network_file_records_the_monitor_model():
    calibration = fit(_measurements_of(SimModel(latency=1e-6, overhead=0.5e-6,
                                                seconds_per_byte=1e-10,
                                                reduce_seconds_per_byte=3e-10)))
    record = calibration.network()["calibration"]["monitor"]
    assert record["environment"] == "PAPCOLL_TAU_MODEL=" + calibration.tau_model_text()
    assert MonitorModel(record["latency"], record["seconds_per_byte"],
                        record["reduce_seconds_per_byte"]) == calibration.monitor_model()


def test_the_command_prints_the_monitor_model_it_records(calibrated):
    # the export line, whole on one line whatever the terminal's width
    lines = [line for line in calibrated["stdout"].splitlines()
             if line.startswith("export PAPCOLL_TAU_MODEL=")]
    assert len(lines) == 1
    printed = MonitorModel.parse(lines[0].removeprefix("export PAPCOLL_TAU_MODEL="))
    record = calibrated["record"]["calibration"]["monitor"]
    assert record["environment"] == lines[0].removeprefix("export ")
    model = calibrated["record"]["model"]
    assert printed == MonitorModel(record["latency"], record["seconds_per_byte"],
                                   record["reduce_seconds_per_byte"])
    assert printed.latency == model["latency"] + (model["overhead"]
                                                  + model["receive_overhead"])
    assert printed.seconds_per_byte == model["seconds_per_byte"]
    assert printed.reduce_seconds_per_byte == model["reduce_seconds_per_byte"]


@pytest.mark.parametrize(("text", "message"), [
    ("latency=1e-6,seconds_per_byte=1e-9,reduce_seconds_per_byte=1e-10,gap=0",
     "unknown name 'gap'"),
    ("latency=,seconds_per_byte=1e-9,reduce_seconds_per_byte=1e-10", "latency has no value"),
    ("latency=1e-6,seconds_per_byte=-1e-9,reduce_seconds_per_byte=1e-10", "is negative"),
    ("latency=nan,seconds_per_byte=1e-9,reduce_seconds_per_byte=1e-10", "not a finite"),
    ("latency=1e-6,seconds_per_byte=1e-9", "reduce_seconds_per_byte is missing"),
    ("latency=1e-6,latency=1e-6,seconds_per_byte=1e-9,reduce_seconds_per_byte=0",
     "given twice"),
])
def test_a_malformed_monitor_model_is_refused(text, message):
    with pytest.raises(ValueError, match=message):
        MonitorModel.parse(text)


@pytest.mark.parametrize(("arguments", "message"), [
    (["--ranks", "1"], "2 or more"),
    (["--datatypes", "float,quaternion"], "unknown datatype 'quaternion'"),
    (["--output", "/nonexistent-folder/calibrated.json"], "no directory"),
    (["--output", "calibrated.toml"], "ends in .json"),
])
def test_bad_input_is_refused_with_a_message(papcoll_command, arguments, message):
    finished = papcoll_command("calibrate", "--quick", *arguments)
    assert finished.returncode == 2
    assert message in finished.stderr


def test_the_library_refuses_one_rank_and_unknown_datatypes():
    with pytest.raises(ValueError, match="at least 2 ranks"):
        measure(1)
    with pytest.raises(ValueError, match="unknown datatype"):
        measure(2, datatypes=["float", "bogus"])


def test_a_calibration_block_must_be_an_object(tmp_path: Path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"base": "hockney", "calibration": [1, 2]}))
    with pytest.raises(NetworkError, match="calibration must be a table"):
        load_network(str(path))
    path.write_text(json.dumps({"base": "hockney", "calibrations": {}}))
    with pytest.raises(NetworkError, match="unknown key 'calibrations'"):
        load_network(str(path))
