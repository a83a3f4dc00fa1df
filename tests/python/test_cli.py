"""The `papcoll` command line: the contract later issues and checks rely on."""

from __future__ import annotations

import json
import subprocess
import sys

import papcoll
import pytest
from conftest import COMMAND_TIMEOUT_SECONDS, hang_guard

ALGORITHMS = [info.name for info in papcoll.algorithms()]
EXPECTED = {"linear", "binomial", "linear_tree", "recursive_doubling", "ring",
            "segmented_ring", "rabenseifner"}


def test_algorithms_json_lists_every_algorithm(papcoll_command):
    result = papcoll_command("algorithms", "--json", "-")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert {row["name"] for row in rows} >= EXPECTED
    for row in rows:
        assert row["description"] and row["source"] and row["limitations"]
        assert "\n" not in row["description"]


def test_algorithms_table_names_every_algorithm(papcoll_command):
    result = papcoll_command("algorithms")
    assert result.returncode == 0, result.stderr
    for name in EXPECTED:
        assert name in result.stdout


@pytest.mark.parametrize("name", ALGORITHMS)
def test_verify_prints_one_json_object(papcoll_command, name):
    # arrival estimates: slt and prr need them; groups: hr1, hr2, smp_*; others ignore both
    result = papcoll_command("verify", "--algorithm", name, "--ranks", "13", "--count", "1009",
                             "--arrivals", "random:1", "--groups", "blocks:4", "--json", "-")
    if papcoll.algorithm(name).reduce_scatter:  # P = 13 is not a power of two
        assert result.returncode == 2 and "power of two" in result.stderr
        return
    assert result.returncode == 0, result.stderr
    row = json.loads(result.stdout)
    assert row["ok"] is True
    assert row["algorithm"] == name and row["ranks"] == 13 and row["count"] == 1009
    # ceil(2 * 12/13 * 1009) = 1863 elements of 4 bytes
    assert row["lower_bound_bytes"] == 1863 * 4
    assert row["max_bytes_sent"] >= row["lower_bound_bytes"]
    assert row["rounds"] > 0


def test_verify_count_suffixes_multiply_by_1024(papcoll_command):
    result = papcoll_command("verify", "--algorithm", "ring", "--ranks", "4", "--count", "1K",
                             "--elem-size", "8")
    row = json.loads(result.stdout)
    assert row["count"] == 1024
    assert row["max_bytes_sent"] == row["lower_bound_bytes"] == 2 * 3 * 256 * 8


def test_verify_exits_1_on_a_violation(papcoll_command, tmp_path):
    files = []
    for rank in range(3):
        text = papcoll.schedule_text("ring", 3, rank, 9)
        if rank == 0:  # plant a bug: overwrite instead of reducing
            text = text.replace("6 REDUCE scratch1[0,3) -> recv[0,3) order=source-left",
                                "6 COPY scratch1[0,3) -> recv[0,3)")
            assert "6 COPY" in text
        path = tmp_path / f"rank{rank}.txt"
        path.write_text(text)
        files.append(str(path))
    result = papcoll_command("verify", "--schedule-files", *files)
    assert result.returncode == 1
    row = json.loads(result.stdout)
    assert row["ok"] is False
    assert "misses the contribution of rank 0" in row["reason"]
    assert "violation" in result.stderr


def test_schedule_prints_the_text_dump(papcoll_command):
    result = papcoll_command("schedule", "--algorithm", "recursive_doubling", "--ranks", "6",
                             "--rank", "1", "--count", "100")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("schedule ranks=6 rank=1 count=100")
    assert [int(line.split()[0]) for line in lines[1:]] == list(range(len(lines) - 1))
    # rank 1 takes in rank 0's vector (MPICH's fold for P = 6) and hands the result back
    assert any(" RECV from=0 " in line for line in lines)
    assert any(" SEND to=0 " in line for line in lines)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["verify", "--algorithm", "bogus", "--ranks", "4", "--count", "8"],
         "unknown algorithm 'bogus'"),
        (["verify", "--algorithm", "ring", "--ranks", "0", "--count", "8"], "ranks must be in"),
        (["verify", "--algorithm", "ring", "--ranks", "4", "--count", "-3"],
         "--count must be >= 0"),
        (["verify", "--algorithm", "ring", "--ranks", "4", "--count", "12Q"], "is not a count"),
        (["verify", "--algorithm", "ring", "--ranks", "four", "--count", "8"],
         "must be an integer"),
        (["verify", "--algorithm", "ring", "--ranks", "4", "--count", "8", "--elem-size", "0"],
         "element size must be in"),
        (["verify", "--algorithm", "ring", "--ranks", "4"], "are all required"),
        (["schedule", "--algorithm", "ring", "--ranks", "4", "--rank", "4", "--count", "8"],
         "not below --ranks"),
        (["frobnicate"], "invalid choice"),
        ([], "required"),
    ],
)
def test_bad_input_exits_2_with_a_message(papcoll_command, arguments, message):
    result = papcoll_command(*arguments)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_demo_sums_up_the_verified_schedules_in_one_line(papcoll_command):
    result = papcoll_command("demo", "--ranks", "4,5", "--count", "1000", "--no-bench")
    assert result.returncode == 0, result.stderr
    text = " ".join(result.stdout.split())  # rich wraps long lines
    scatters = sum(papcoll.algorithm(name).reduce_scatter for name in ALGORITHMS)
    proved = 2 * len(ALGORITHMS) - scatters  # a reduce-scatter refuses P = 5
    assert (f"({len(ALGORITHMS)} algorithms at P = 4, 5, 1000 elements of 4 B): the verifier "
            f"proved {proved} correct and found 0 wrong, {scatters} refused") in text
    assert "the bandwidth lower bound (1.00x) in ring" in text
    assert "WRONG" not in text and "papcoll demo` without --no-bench" in text


@pytest.mark.parametrize("name", ["slt", "prr"])
@pytest.mark.parametrize("arrivals", ["0,0,0,0.002", "0.003,0.002,0.001,0", "random:7",
                                      "random:3:1e9", "1,1,1,1"])
def test_pap_aware_algorithms_verify_for_arrival_vectors(papcoll_command, name, arrivals):
    ranks = 4 if "," in arrivals else 13
    result = papcoll_command("verify", "--algorithm", name, "--ranks", str(ranks), "--count",
                             "1009", "--arrivals", arrivals, "--tau", "0.001")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["ok"] is True


def test_prr_follows_fig_8b(papcoll_command):
    # P = 4, the rank at position 3 (here rank 3) late by 2 tau: k = (2, 1, 0, 0), so
    # segments 0, 1, 2 start at position 0 and are finished by the late rank, which only
    # starts segment 3 itself (Proficz 2018, Fig. 8b).
    def schedule(rank: int) -> str:
        result = papcoll_command("schedule", "--algorithm", "prr", "--ranks", "4", "--rank",
                                 str(rank), "--count", "4", "--arrivals", "0,0,0,0.002",
                                 "--tau", "0.001")
        assert result.returncode == 0, result.stderr
        return result.stdout

    late, first = schedule(3), schedule(0)
    for segment in (0, 1, 2):
        assert f"RECV from=2 tag={segment} " in late   # pre-reduced by positions 0..2
        assert f"SEND to=1 tag={segment} " in first    # position 0 starts them
        assert f"RECV from=3 tag={segment} " not in first
    assert "SEND to=0 tag=3 " in late and "RECV from=2 tag=3 " not in late


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--arrivals", "0,1"], "gives 2 times for 3 ranks"),
        (["--arrivals", "0,1,nan"], "must be a finite number"),
        (["--arrivals", "0,x,1"], "is not a list of arrival times"),
        (["--arrivals", "random:x"], "is not random:SEED"),
        (["--arrivals", "0,1,2", "--tau", "0"], "tau must be a positive"),
        ([], "needs one predicted arrival time per rank"),
    ],
)
def test_pap_aware_bad_input_exits_2(papcoll_command, arguments, message):
    result = papcoll_command("verify", "--algorithm", "prr", "--ranks", "3", "--count", "8",
                             *arguments)
    assert result.returncode == 2
    assert message in result.stderr


def test_every_option_of_every_subcommand_has_help():
    import argparse

    from papcoll.cli import build_parser

    commands = next(action for action in build_parser()._actions
                    if isinstance(action, argparse._SubParsersAction))
    assert set(commands.choices) >= {"algorithms", "verify", "schedule", "bench", "sim",
                                     "schedules", "search", "reproduce", "demo"}
    parsers = list(commands.choices.items())
    while parsers:  # and the actions of subcommands that have their own (testbed up, ...)
        name, parser = parsers.pop()
        for action in parser._actions:
            assert action.help, f"papcoll {name} {action.option_strings or action.dest}"
            if isinstance(action, argparse._SubParsersAction):
                parsers += [(f"{name} {sub}", below) for sub, below in action.choices.items()]
        options = {option for action in parser._actions for option in action.option_strings}
        assert "--dtype" not in options
        dispatches = any(isinstance(action, argparse._SubParsersAction)
                         for action in parser._actions)
        assert "--json" in options or dispatches, name


def test_schedule_json_and_datatype_and_arrival_list(papcoll_command, tmp_path):
    result = papcoll_command("schedule", "--algorithm", "ring", "--ranks", "3", "--rank", "0",
                             "--count", "9", "--json", "-")
    assert result.returncode == 0, result.stderr
    dumped = json.loads(result.stdout)
    assert dumped["ranks"] == 3 and dumped["ops"][0].startswith("0 ")
    result = papcoll_command("sim", "--ranks", "4", "--algorithms", "ring,prr", "--count", "1K",
                             "--datatype", "double", "--arrivals", "0,0.001,0,0",
                             "--json", "-")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout[result.stdout.index("["):])
    assert {row["elem_size"] for row in rows} == {8}
    assert {row["mode"] for row in rows} == {"given"}
    assert {row["max_delay_ms"] for row in rows} == {1.0}
    target = tmp_path / "demo.json"
    result = papcoll_command("demo", "--ranks", "4,8", "--count", "64", "--no-bench",
                             "--json", str(target))
    assert result.returncode == 0, result.stderr
    rows = json.loads(target.read_text())
    assert {row["ranks"] for row in rows} == {4, 8} and all(row["ok"] is not False
                                                          for row in rows)


@pytest.mark.parametrize("datatype", ["int8", "long_double", "c_double_complex"])
def test_sim_takes_every_datatype_bench_takes(papcoll_command, datatype):
    from papcoll.datatypes import DATATYPES
    result = papcoll_command("sim", "--ranks", "4", "--algorithms", "ring", "--count", "64",
                             "--datatype", datatype, "--json", "-")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout[result.stdout.index("["):])
    assert {row["elem_size"] for row in rows} == {DATATYPES[datatype].size}


def _bench_row(name, size, delay, ebar, excess, **more):
    return {"algorithm": name, "bytes": size, "max_delay_ms": delay, "avg_elapsed_ms": ebar,
            "excess_ms": excess, "lower_bound_ms": ebar - excess, "ranks": 4,
            "iterations": 10, "correct": True, **more}


def test_demo_ends_in_one_sentence_with_the_ratio_from_the_rows():
    from papcoll.cli.demo import verdict
    rows = [_bench_row("auto", 16384, 0, 50.0, 40.0, chosen={"slt": 10}),  # 0 ms: not used
            _bench_row("native", 16384, 0, 1.0, 0.5),
            _bench_row("auto", 16384, 10, 10.0, 1.0, chosen={"straggler": 10}),
            _bench_row("native", 16384, 10, 15.0, 6.0),
            _bench_row("ring", 16384, 10, 9.0, 0.5),  # only auto against native counts
            _bench_row("auto", 4 << 20, 10, 30.0, 20.0, chosen={"straggler": 9, "native": 1}),
            _bench_row("native", 4 << 20, 10, 15.0, 5.0)]
    text = verdict(rows)
    assert text.startswith("With rank 1 of 4 arriving 10 ms late") and text.endswith(".")
    assert ". " not in text  # one sentence
    # one repeat: the ratio, but no verdict from one job's (outcome)
    assert ("at 16 KiB per rank no clear difference: papcoll's auto took 0.67 x "
            "MPI_Allreduce's time, 10.00 against 15.00 ms a call, running straggler 10") in text
    assert ("at 4 MiB per rank no clear difference: auto took 2.00 x MPI_Allreduce's time, "
            "30.00 against 15.00 ms a call, running straggler 9, native 1") in text
    slower_only = verdict(rows[5:])
    assert "papcoll's auto took 2.00 x MPI_Allreduce's time" in slower_only
    assert "no timing" in verdict([]) and "nothing to compare" in verdict(rows[4:5])


def test_demo_verdict_says_no_clear_difference_unless_most_repeats_agree():
    """Two runs of the demo read 0.78 x then 1.13 x at 16 KiB: a verdict from one run
    flipped. Over repeats (each a job with auto and MPI_Allreduce interleaved), faster or
    slower needs most repeats' ratios on that side of 1 and the median past CLEAR_MARGIN;
    otherwise "no clear difference"; the ranges are shown."""
    from papcoll.cli.demo import outcome, verdict

    def repeats(ours, theirs, size=16384):
        rows = []
        for repeat, (mine, native) in enumerate(zip(ours, theirs, strict=True)):
            rows += [_bench_row("auto", size, 10, mine, 1.0, repeat=repeat, median_ms=mine,
                                chosen={"straggler": 20, "native": 4}),
                     _bench_row("native", size, 10, native, 1.0, repeat=repeat,
                                median_ms=native)]
        return rows

    text = verdict(repeats([9.8, 11.3, 10.2], [10.0, 10.0, 10.5]))
    assert ("at 16 KiB per rank no clear difference: papcoll's auto took 0.98 x "
            "MPI_Allreduce's time (0.97-1.13 over 3 repeats), 10.20 (9.80-11.30) against "
            "10.00 (10.00-10.50) ms a call, running straggler 60, native 12") in text
    assert "was faster" not in text and "was slower" not in text
    assert "faster or slower: in most repeats, by 5% or more in the repeats' median" in text
    assert "was faster: 0.80 x MPI_Allreduce's time (0.70-0.90 over 3 repeats)" in verdict(
        repeats([7.0, 8.0, 9.0], [10.0, 10.0, 10.0]))
    # a busy repeat lifts both sides: the ranges overlap, every repeat has auto faster
    assert "was faster" in verdict(repeats([10.26, 16.09, 10.20], [12.55, 16.48, 11.97]))
    assert outcome([0.999, 0.998, 0.99]) == "no clear difference"  # below 1, by microseconds
    assert outcome([0.92, 0.99]) == "no clear difference"  # median 0.955
    # one repeat of three the other way (auto kept MPI's own there): the median speaks
    assert outcome([0.80, 1.01, 0.85]) == "faster"
    assert outcome([0.80, 1.01, 1.02]) == "no clear difference"
    assert outcome([0.80, 1.01]) == "no clear difference"  # median 0.905, 1 of 2 not most
    assert outcome([1.2, 2.3]) == "slower"
    assert outcome([0.55, 0.75]) == "faster"
    assert outcome([0.5]) == "no clear difference"  # one repeat: what flipped


def test_demo_summaries_name_the_rows_numbers():
    from papcoll.cli.demo import bench_table, schedules_summary, sim_summary
    from rich.console import Console
    verified = [
        {"algorithm": "ring", "ranks": 4, "ok": True, "max_bytes_sent": 600,
         "lower_bound_bytes": 600},
        {"algorithm": "straggler", "ranks": 4, "ok": True, "max_bytes_sent": 660,
         "lower_bound_bytes": 600},
        {"algorithm": "linear", "ranks": 4, "ok": True, "max_bytes_sent": 1800,
         "lower_bound_bytes": 600},
        {"algorithm": "rs_halving", "ranks": 5, "ok": None}]
    line = schedules_summary(verified, 100, 4)
    assert "proved 3 correct and found 0 wrong, 1 refused" in line
    assert ("the bandwidth lower bound (1.00x) in ring, at most 1.10x in straggler, up to "
            "3.00x in linear (P = 4)") in line
    sim_rows = [{"algorithm": name, "max_delay_ms": 100.0, "avg_elapsed_ms": ms,
                 "lower_bound_ms": 130.0, "ranks": 48, "network": "ethernet-1g",
                 "count": 1 << 20, "elem_size": 4, **more}
                for name, ms, more in [("auto", 135.0, {"chosen": "straggler"}),
                                       ("straggler", 135.0, {}), ("ring", 170.0, {})]]
    assert ("rank 1 100 ms late: auto (ran straggler) e-bar 135.0 ms (straggler alone "
            "135.0 ms) against ring 170.0 ms, 0.79 x ring's time; 5.0 ms above e-bar_lo against "
            "ring's 40.0 ms") in sim_summary(sim_rows)
    console = Console(record=True, width=200)
    console.print(bench_table([_bench_row("auto", 16384, 10, 10.0, 1.0,
                                          chosen={"straggler": 9, "native": 1}),
                               _bench_row("native", 16384, 10, 15.0, 6.0)]))
    table = console.export_text()
    assert "straggler 9, native 1" in table and "15.00" in table and "16K" in table
    # repeats: the median and the range of the cell, what auto ran summed over them
    console = Console(record=True, width=200)
    console.print(bench_table([_bench_row("auto", 16384, 10, ebar, 1.0, repeat=repeat,
                                          warmup=12, chosen={"straggler": 10})
                               for repeat, ebar in enumerate((9.0, 10.0, 12.5))]))
    table = " ".join(console.export_text().split())
    assert "10.00 (9.00-12.50)" in table and "straggler 30" in table
    many = {"straggler": 9, "native": 5, "slt": 3, "prr": 2, "ring": 1}
    console = Console(record=True, width=200)
    console.print(bench_table([_bench_row("auto", 16384, 10, 9.0, 1.0, chosen=many)]))
    assert "straggler 9, native 5, slt 3, others 3" in console.export_text()
    assert "10 timed calls after 12 untimed, 3 repeats" in table


def test_every_command_has_its_texts_row_and_every_row_a_command():
    """The subcommands' help and descriptions are one table (cli/command_texts.py), in the
    order `papcoll --help` lists the commands: a row without a command, or a command out of
    the table's order, would leave a table that no longer says what the command line is."""
    import argparse

    from papcoll.cli import build_parser
    from papcoll.cli.command_texts import COMMAND_TEXTS

    commands = next(action for action in build_parser()._actions
                    if isinstance(action, argparse._SubParsersAction))
    assert list(commands.choices) == list(COMMAND_TEXTS)
    listed = {action.dest: action.help for action in commands._choices_actions}
    for name, texts in COMMAND_TEXTS.items():
        assert listed[name] == texts.help
        assert commands.choices[name].description == texts.description


@pytest.mark.parametrize("arguments", [["--version"], ["algorithms", "--json", "-"]])
def test_python_dash_m_papcoll_runs_the_command_line(papcoll_command, arguments):
    """`python -m papcoll` (python/papcoll/__main__.py) is the `papcoll` command, for an
    environment whose scripts folder is not on PATH: the same output, the same status."""
    as_module = subprocess.run([sys.executable, "-m", "papcoll", *arguments],
                               capture_output=True, text=True,
                               timeout=hang_guard(COMMAND_TIMEOUT_SECONDS))
    as_command = papcoll_command(*arguments)
    assert as_module.returncode == as_command.returncode == 0, as_module.stderr
    assert as_module.stdout == as_command.stdout
    if arguments == ["--version"]:
        assert as_module.stdout == f"papcoll {papcoll.__version__}\n", as_module.stdout


def test_python_dash_m_papcoll_refuses_as_the_command_does(papcoll_command):
    as_module = subprocess.run([sys.executable, "-m", "papcoll", "no-such-command"],
                               capture_output=True, text=True,
                               timeout=hang_guard(COMMAND_TIMEOUT_SECONDS))
    as_command = papcoll_command("no-such-command")
    assert as_module.returncode == as_command.returncode == 2
    assert as_module.stderr == as_command.stderr
    assert as_module.stderr.startswith("papcoll: COMMAND: invalid choice: 'no-such-command'")
