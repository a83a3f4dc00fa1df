"""bench/auto_grid.py, auto's grid command: its figures on hand-made rows whose answers
are known (so a wrong threshold or a wrong "best" fails here, not in a long measured run),
the saved-run path (--from-json), and one tiny real run that proves the plumbing."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import types
from pathlib import Path

import pytest
from conftest import COMMAND_TIMEOUT_SECONDS, hang_guard

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
import auto_grid  # noqa: E402 - from bench/, which the line above puts on the path
import auto_grid_figures as figures  # noqa: E402

SHM = "shared memory"
TESTBED = "testbed ethernet-1g"


def row(algorithm, ebar_ms, excess_ms=0.1, *, size=1 << 20, mode="balanced", multiple=0,
        setting=SHM):
    return {"setting": setting, "grid_mode": mode, "bytes": size, "delay_multiple": multiple,
            "algorithm": algorithm, "median_ms": ebar_ms, "excess_ms": excess_ms,
            "p2p_ms": 0.05, "delta_ms": 0.05}


def point_rows(auto, native, straggler, *, native_ring=None, **where):
    """auto, native, straggler (and native:ring) at one grid point: (e-bar, excess) each."""
    rows = [row("auto", *auto, **where), row("native", *native, **where),
            row("straggler", *straggler, **where)]
    if native_ring is not None:
        rows.append(row("native:ring", *native_ring, **where))
    return rows


def test_never_slower_counts_a_4_percent_miss_and_names_it():
    rows = []
    for size in (1 << 16, 1 << 20, 1 << 22):  # auto at 1.02 x native: met
        rows += point_rows((1.02, 0.1), (1.0, 0.1), (2.0, 0.1), size=size)
    # 4 % over the best native variant (native:ring, not native) and 40 us over: a miss
    rows += point_rows((1.04, 0.1), (1.2, 0.1), (2.0, 0.1), native_ring=(1.0, 0.1),
                       size=1 << 24)
    result = figures.figures(figures.points(rows))[SHM]["never_slower"]
    assert (result["met"], result["total"]) == (3, 4)
    assert result["misses"] == ["16 MiB balanced 0 (1.04 x native:ring)"]


def test_against_mpi_allreduce_itself_and_the_geometric_means():
    # auto 1.02 x native (MPI_Allreduce) but 1.2 x native:ring, the best variant; then
    # 1.5 x both: met against MPI_Allreduce once, and the means of 1.02, 1.5 and 1.2, 1.5
    rows = point_rows((1.02, 0.1), (1.0, 0.1), (2.0, 0.1), native_ring=(0.85, 0.1))
    rows += point_rows((1.5, 0.1), (1.0, 0.1), (2.0, 0.1), native_ring=(1.0, 0.1),
                       size=1 << 22)
    result = figures.figures(figures.points(rows))[SHM]
    assert result["never_slower_than_mpi_allreduce"]["met"] == 1
    assert result["never_slower_than_mpi_allreduce"]["misses"] == ["4 MiB balanced 0 (1.50 x)"]
    assert result["geometric_mean_over_mpi_allreduce"] == pytest.approx((1.02 * 1.5) ** 0.5)
    assert result["geometric_mean_over_best_native"] == pytest.approx((1.02 / 0.85 * 1.5) ** 0.5)


@pytest.mark.parametrize(("setting", "met"), [(SHM, 0), (TESTBED, 1)])
def test_never_slower_forgives_the_settings_absolute_floor(setting, met):
    # 1.5 x native but 50 us over: within the testbed's 100 us, not shared memory's 20 us
    rows = point_rows((0.15, 0.1), (0.10, 0.1), (0.2, 0.1), size=1024, setting=setting)
    assert figures.figures(figures.points(rows))[setting]["never_slower"]["met"] == met
    close = point_rows((0.115, 0.1), (0.10, 0.1), (0.2, 0.1), size=1024, setting=setting)
    assert figures.figures(figures.points(close))[setting]["never_slower"]["met"] == 1


def test_right_choice_is_the_share_within_5_percent_of_any_contender():
    rows = []
    for multiple in (1, 3, 10):  # straggler best, auto 4 % over it: met
        rows += point_rows((1.04, 0.1), (2.0, 0.1), (1.0, 0.1), mode="one-late",
                           multiple=multiple)
    # 6 % over straggler (though faster than native): a miss
    rows += point_rows((1.06, 0.1), (2.0, 0.1), (1.0, 0.1), mode="one-late", multiple=30)
    result = figures.figures(figures.points(rows))[SHM]
    assert (result["right_choice"]["met"], result["right_choice"]["total"]) == (3, 4)
    assert result["right_choice"]["share"] == pytest.approx(0.75)
    assert result["right_choice"]["misses"] == ["1 MiB one-late 30 delta (1.06 x straggler)"]
    assert result["never_slower"]["met"] == 4


def test_wins_only_where_they_can_against_the_least_native_excess():
    late = {"mode": "one-late", "size": 1 << 16}
    rows = (point_rows((1, 0.29), (1, 1.0), (1, 0.2), native_ring=(1.1, 2.0), multiple=3,
                       **late)  # 0.29 of the least native excess: met
            + point_rows((1, 0.31), (1, 1.0), (1, 0.2), multiple=10, **late)  # 0.31: missed
            + point_rows((1, 5.0), (1, 1.0), (1, 0.2), multiple=1, **late)  # 1 delta: n/a
            + point_rows((1, 5.0), (1, 1.0), (1, 0.2), multiple=3, mode="one-late",
                         size=16384)  # under 64 KiB: n/a
            + point_rows((1, 0.59), (1, 1.0), (1, 0.2), multiple=3, mode="rand-late",
                         size=1 << 16)  # rand-late asks 0.6: met
            + point_rows((1, 0.01), (1, -0.02), (1, 0.2), multiple=30, **late))  # no ratio
    result = figures.figures(figures.points(rows))[SHM]["wins"]
    assert (result["met"], result["total"], result["cells"]) == (2, 3, 4)
    assert result["misses"] == ["64 KiB one-late 10 delta (ratio 0.31)"]
    assert result["undefined"] == ["64 KiB one-late 30 delta"]


def test_excess_is_the_median_over_calls_of_ebar_less_each_calls_bound():
    one = row("auto", 1.0, excess_ms=99.0)
    one.update(p2p_ms=0.1, ebar_ms=[1.0, 5.0, 2.0],
               arrival_offsets_ms=[[0, 0, 0, 0], [0, 0, 0, 4.0], [0, 0, 0, 1.0]])
    # bounds: 0.1, 3.1, 0.85; excess 0.9, 1.9, 1.15
    assert figures.median_excess_ms(one) == pytest.approx(1.15)
    assert figures.median_excess_ms(row("auto", 1.0, excess_ms=0.3)) == 0.3


def saved_run(tmp_path, learning=None):
    rows = (point_rows((1.04, 0.1), (1.0, 0.1), (2.0, 0.1))
            + point_rows((1.0, 0.2), (1.0, 1.0), (1.0, 0.5), mode="one-late", multiple=3))
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"rows": rows, "learning": learning or []}))
    return path


def test_from_json_prints_the_figures_and_writes_the_tables(tmp_path, capsys):
    markdown = tmp_path / "tables.md"
    assert auto_grid.main(["--from-json", str(saved_run(tmp_path)),
                           "--markdown", str(markdown), "--json", str(tmp_path / "o.json")]) == 0
    out = capsys.readouterr().out
    assert "shared memory: never slower 1/2 points (target all); misses: 1 MiB balanced 0" in out
    assert "shared memory: wins when it can 1/1 cells" in out
    assert "shared memory: learns fast not measured" in out
    tables = markdown.read_text()
    assert "#### shared memory, balanced" in tables and "#### shared memory, one-late" in tables
    balanced = next(line for line in tables.splitlines() if line.startswith("| 1 MiB | 0 "))
    assert balanced == ("| 1 MiB | 0 | 0.100 | 0.100 | native 0.100 | 1.00 | 1.04 | 0.52 |  | "
                        "**no** | yes | - |")
    assert json.loads((tmp_path / "o.json").read_text())["figures"][SHM]["wins"]["met"] == 1


def test_learning_figure_counts_changes_recovered_within_8_calls(tmp_path, capsys,
                                                                  monkeypatch):
    recovery = [{"change": "late rank moves", "calls_to_recover": 3},
                {"change": "lateness stops", "calls_to_recover": 9},
                {"change": "lateness returns", "calls_to_recover": None}]
    fake = types.ModuleType("auto_learning")
    fake.recovery_table = lambda rows: recovery  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "auto_learning", fake)
    path = saved_run(tmp_path, [{"setting": SHM, "size_bytes": 1 << 20, "rows": [],
                                 "recovery": []}])
    assert auto_grid.main(["--from-json", str(path)]) == 0
    assert ("shared memory: learns fast 1/3 changes within 8 calls; misses: lateness stops "
            "(9 calls), lateness returns (never)") in capsys.readouterr().out


def test_contenders_come_from_the_registrys_properties():
    from papcoll.core import algorithms
    contenders = auto_grid.registry_contenders()
    assert contenders[0] == "auto" and "native" in contenders
    for info in algorithms():
        applies = not info.needs_groups and not info.reduce_scatter
        assert (info.name in contenders) == applies, info.name
    assert auto_grid.chosen_contenders("native,straggler,auto") == ["auto", "straggler",
                                                                      "native"]
    with pytest.raises(argparse.ArgumentTypeError, match="keep auto"):
        auto_grid.chosen_contenders("straggler,native")
    with pytest.raises(argparse.ArgumentTypeError, match="not a contender here: hr1"):
        auto_grid.chosen_contenders("auto,native,hr1")


def test_a_tiny_real_grid_runs_end_to_end(tmp_path):
    saved = tmp_path / "grid.json"
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "auto_grid.py"), "--sizes", "1K,16K",
         "--modes", "one-late", "--iterations", "2", "--warmup", "1",
         "--algorithms", "auto,native,straggler", "--json", str(saved),
         "--plot-folder", str(tmp_path)],
        capture_output=True, text=True,
        timeout=hang_guard(COMMAND_TIMEOUT_SECONDS))
    assert result.returncode == 0, result.stderr[-3000:]
    assert "shared memory: never slower" in result.stdout
    run = json.loads(saved.read_text())
    assert {(r["bytes"], r["delay_multiple"]) for r in run["rows"]} == {
        (size, multiple) for size in (1024, 16384) for multiple in (1, 3, 10, 30, 100)}
    assert {r["algorithm"] for r in run["rows"]} == {"auto", "native", "straggler"}
    assert len(run["points"]) == 10 and (tmp_path / "auto_grid_shm_one-late.png").exists()


def test_model_beside_the_grid_simulates_each_contender_as_its_counterpart(tmp_path):
    # bench/auto_grid_model.py: native:ring is the simulator's ring, native the best of its
    # stand-ins, a papcoll algorithm itself; one-late puts rank 1 late by delay x delta;
    # measured / predicted is what the summary's median says for a single point
    import auto_grid_model
    from papcoll.network import load_network
    from papcoll.sim import NATIVE_STAND_INS, simulate

    model = load_network(str(ROOT / "docs" / "networks" / "shared-memory-2core.json")).model
    rows = point_rows((2.0, 0.5), (3.0, 0.5), (1.5, 0.5), native_ring=(2.5, 0.5),
                      mode="one-late", multiple=10, size=1 << 16)
    compared = auto_grid_model.compare(figures.points(rows), model, ranks=4)
    arrivals = [0.0, 10 * 0.05e-3, 0.0, 0.0]
    predicted = compared[0]["predicted_ms"]
    count = (1 << 16) // 4
    assert predicted["native:ring"] == pytest.approx(
        simulate("ring", 4, count, 4, model, arrivals).average_elapsed * 1e3)
    assert predicted["straggler"] == pytest.approx(
        simulate("straggler", 4, count, 4, model, arrivals).average_elapsed * 1e3)
    assert predicted["native"] == pytest.approx(min(
        simulate(name, 4, count, 4, model, arrivals).average_elapsed for name in
        NATIVE_STAND_INS) * 1e3)
    summary = auto_grid_model.summary(compared)
    assert summary["measured_over_predicted"]["straggler"]["median"] == pytest.approx(
        1.5 / predicted["straggler"])
    # the model's fastest of native, native:ring and straggler, measured: right where it is
    # straggler (measured fastest), else not
    pick = min(("native", "native:ring", "straggler"), key=predicted.__getitem__)
    assert summary["model_right"] == (pick == "straggler") and summary["auto_right"] == 0


def _bad_files(folder: Path) -> dict[str, Path]:
    """--from-json files that are not a saved grid: missing, empty, not JSON, JSON of
    something else, rows of something else, a point without auto."""
    files = {"missing": folder / "absent.json"}
    for name, text in {"empty": "", "not JSON": "{rows: [", "a list": "[1, 2]",
                       "rows of another command": '{"rows": [{"algorithm": "ring"}]}',
                       "no auto": json.dumps({"rows": [row("native", 1.0), row("ring", 1.0)]}),
                       }.items():
        files[name] = folder / f"{name.replace(' ', '_')}.json"
        files[name].write_text(text)
    return files


@pytest.mark.parametrize(("arguments", "option"), [
    (["--ranks", "0"], "--ranks"), (["--ranks", "1"], "--ranks"),
    (["--iterations", "0"], "--iterations"), (["--iterations", "-3"], "--iterations"),
    (["--warmup", "-1"], "--warmup"), (["--compute-ms", "nan"], "--compute-ms"),
    (["--compute-ms", "-1"], "--compute-ms"), (["--timeout", "-1"], "--timeout"),
    (["--timeout", "0"], "--timeout"), (["--timeout", "nan"], "--timeout"),
    (["--learning-size", "0"], "--learning-size"), (["--testbed", "bogus"], "--testbed"),
    (["--modes", "sideways"], "--modes"), (["--algorithms", "auto,bogus"], "--algorithms"),
    *[(["--from-json", name], "--from-json") for name in (
        "missing", "empty", "not JSON", "a list", "rows of another command", "no auto")],
])
def test_each_bad_option_is_one_line_naming_it_and_exit_2(arguments, option, tmp_path, capsys):
    files = _bad_files(tmp_path)
    arguments = [str(files[value]) if value in files else value for value in arguments]
    with pytest.raises(SystemExit) as stopped:  # any other exception is the traceback
        auto_grid.main(arguments)
    assert stopped.value.code == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and option in lines[0] and "Traceback" not in captured.err, lines
    assert captured.out == ""


def test_a_bad_option_from_the_shell_is_one_line_and_exit_2(tmp_path):
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "auto_grid.py"), "--from-json",
         str(tmp_path / "absent.json")],
        capture_output=True, text=True, timeout=COMMAND_TIMEOUT_SECONDS)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == (
        f"bench/auto_grid.py: --from-json: cannot read {tmp_path / 'absent.json'}: No such file "
        "or directory (see `bench/auto_grid.py --help`)")
