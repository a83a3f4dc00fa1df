"""`papcoll bench`: the Proficz 2018 mini-benchmark (Fig. 9) over mpiexec, papcoll's algorithms
against the MPI library's own; the engine is papcoll.lab.bench."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from rich.console import Console
from rich.markup import escape
from rich.measure import Measurement
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn
from rich.table import Table

from ..datatypes import DATATYPES, OPS
from ..lab.bench import (
    DEFAULT_BASELINE,
    JSON_ONLY_KEYS,
    NEGATIVE_EXCESS_TOLERANCE_MS,
    NO_BASELINE,
    BenchOptions,
    format_bytes,
    measurement_warnings,
    native_algorithm_names,
    plot,
    run_benchmark,
    saving_summary,
)
from ..lab.launcher import Launch, NativeTuning, mpiexec_command
from ..lab.smpi_bench import run_smpi_benchmark
from ..lab.smpi_launcher import SmpiUnavailable
from ..lab.testbed import CpuMeter, Testbed, TestbedError, link_bytes
from ..network import Network, load_network
from .context_options import add_parameter_option, check_schedule, group_layout, groups_for
from .options import (
    EXIT_OK,
    EXIT_VIOLATION,
    INT32_MAX,
    MOST_COMPUTE_MS,
    UsageError,
    add_algorithms,
    add_command,
    add_count,
    add_datatype,
    add_iterations,
    add_osu_sizes,
    add_ranks,
    add_sizes,
    add_warmup,
    bench_algorithm,
    durations,
    element_counts,
    integer_in_range,
    milliseconds,
    one_duration,
)
from .output_options import add_csv, add_json, console_for, write_csv, write_json
from .run_options import add_smpi, add_testbed, add_timeout, launch_for

# papcoll-bench takes at most this many algorithms, sizes and delays (bench_options.h)
MOST_ITEMS = 32


def add_parser(commands: Any) -> None:
    # auto's grid (sizes x arrival patterns x delays in multiples of each size's own delta,
    # every contender, four figures) is a script over this engine
    bench = add_command(
        commands, command_bench, "bench",
        epilog="auto's whole grid (auto against every papcoll algorithm and native "
               "variant, balanced, one-late and rand-late, delays 0-100 x delta) and its "
               "four figures (never slower, right choice, wins when it can, learns fast): "
               "python bench/auto_grid.py --help (in a papcoll checkout; "
               "docs/benchmarks.md).")
    add_ranks(bench, 4096, default=4)
    add_algorithms(bench, "ring,rabenseifner,native", native=True)
    bench.add_argument("--baseline", type=baseline_algorithm, default=DEFAULT_BASELINE,
                       help="the algorithm the others are compared with, as e-bar / the "
                            "baseline's e-bar (below 1 is faster), added to the run if "
                            f"--algorithms lacks it, or {NO_BASELINE} for no comparison "
                            f"(default {DEFAULT_BASELINE})")
    # --sizes (bytes, OSU/IMB style), OSU's -m or --count (elements, as before): one of them
    amount = bench.add_mutually_exclusive_group()
    add_sizes(amount)
    add_osu_sizes(amount)
    add_count(amount, "1M", many=True)
    bench.add_argument("--mode", choices=("one-late", "rand-late"), default="one-late",
                       help="rank 1 late (one-late) or every rank late by a random share "
                            "(rand-late) of the maximum delay (default one-late)")
    bench.add_argument("--max-delay", type=durations, default=durations("0,10,50ms"),
                       help="maximum arrival delays, e.g. 0,1,5,10,50ms (default 0,10,50ms)")
    add_iterations(bench, 20)
    add_warmup(bench, 2)
    bench.add_argument("--compute-ms", type=milliseconds(MOST_COMPUTE_MS), default=100.0,
                       help="emulated compute phase per iteration (default 100, as the paper)")
    add_datatype(bench, tuple(DATATYPES), default="float", metavar="TYPE",
                 why="one of MPI's predefined numeric types, named as MPI names it without "
                     "MPI_ (and _T), in lower case: " + ", ".join(DATATYPES))
    bench.add_argument("--op", choices=OPS, default="sum",
                       help="the reduction: band, bor, bxor on integer types only, min and "
                            "max not on complex ones (default sum)")
    bench.add_argument("--seed", type=integer_in_range("seed", 0, INT32_MAX), default=1,
                       help="for rand-late delays and --jitter (default 1)")
    bench.add_argument("--jitter", type=one_duration, default=0.0, metavar="MEAN",
                       help="noise: every rank arrives later by an exponential draw of this "
                            "mean each call, e.g. 200us, which no prediction knows (as papcoll "
                            "sim --noise does to operations; default none)")
    bench.add_argument("--mispredict", action="store_true",
                       help="one-late: every rank predicts rank 2 late instead of rank 1 "
                            "(the PAP-aware algorithms and auto then build for the wrong "
                            "rank: correct, only slower)")
    bench.add_argument("--preload", action="store_true",
                       help="run the job with libpapcoll_pmpi.so preloaded: the MPI_Allreduce "
                            "of 'native' contenders goes through papcoll as in an unmodified "
                            "program (docs/pmpi.md); rows get its report's totals")
    add_parameter_option(bench, "schedule")
    # --groups as `papcoll sim` takes it (group_layout) and resolves it (groups_for), on the
    # testbed's topology; passed on as papcoll-bench --group-colors
    bench.add_argument("--groups", type=group_layout, default=None, metavar="LAYOUT",
                       help="hr1, hr2, smp_*, pap_hierarchical: the group of every rank, as "
                            "in `papcoll sim`: g0,g1,... or blocks:K, or with --testbed host, "
                            "switch or site of its network's topology (default there: sim's, "
                            "the sites where the network marks them). Without --testbed the "
                            "default is MPI's shared-memory nodes (papcoll-bench "
                            "--group-colors)")
    add_testbed(bench)
    add_smpi(bench)
    bench.add_argument("--stream", action="store_true",
                       help="print a line as each algorithm, size and delay is done, as OSU "
                            "prints a size: the time in microseconds, OSU's order: t_avg "
                            "(e-bar, OSU's Avg Latency) first, then t_min and t_max (IMB's: "
                            "the fastest and the slowest rank's mean); the table follows as "
                            "the summary")
    add_json(bench)
    add_csv(bench)
    bench.add_argument("--plot", metavar="FILE.png",
                       help="plot e-bar relative to the baseline (e-bar / the baseline's e-bar, "
                            "below 1 is faster) against size and max delay")
    add_timeout(bench, 3600)


def baseline_algorithm(text: str) -> str:
    """--baseline: an algorithm --algorithms takes, or none."""
    return text if text == NO_BASELINE else bench_algorithm(text)


def _unit(rows: list[dict[str, Any]]) -> tuple[str, float]:
    """us when every e-bar is below a millisecond (small messages, no delay), else ms."""
    return ("us", 1e3) if max(row["max_ms"] for row in rows) < 1 else ("ms", 1.0)


def print_table(rows: list[dict[str, Any]], console: Console) -> None:
    first = rows[0]
    unit, scale = _unit(rows)
    # the network's bound where a testbed ran the job; in shared memory it is e-bar_lo
    network = [f"net bound {unit}", f"net excess {unit}"] if first.get("testbed") else []
    # e-bar / the baseline's e-bar, below 1 faster (the one ratio convention of papcoll's
    # output); no such columns where there is none to show (--baseline none): not a column
    # of "-"
    ratios = any(row["time_vs_baseline"] is not None for row in rows)
    compared = [f"e-bar / {first['baseline']}", "of medians"] if ratios else []
    table = Table(title=f"e-bar of all-reduce ({first['op']}, {first['datatype']}), "
                        f"P = {first['ranks']}, {first['mode']}, compute "
                        f"{first['compute_ms']:g} ms"
                        + (f", jitter {first['jitter_ms']:g} ms" if first.get("jitter_ms") else "")
                        + f", {first['iterations']} iterations"
                        + (f", times relative to {first['baseline']}: below 1 is faster"
                           if ratios else "")
                        + f" ({first['mpi_library']})")
    for column in ("algorithm", "bytes", "max delay ms", f"e-bar {unit}", f"+-2 sigma {unit}",
                   f"min {unit}", f"median {unit}", f"max {unit}", f"e-bar_lo {unit}",
                   f"excess {unit}", *network, *compared, "correct"):
        if column == "algorithm":
            table.add_column(column, no_wrap=True, min_width=12)
        else:
            table.add_column(column, justify="right")
    ordered = sorted(rows, key=lambda row: (row["bytes"], row["max_delay_ms"]))
    previous = None
    for row in ordered:
        key = (row["bytes"], row["max_delay_ms"])
        if previous is not None and key != previous:
            table.add_section()
        previous = key
        ratio, of_medians = row["time_vs_baseline"], row["median_time_vs_baseline"]
        table.add_row(row["algorithm"], format_bytes(row["bytes"]), f"{row['max_delay_ms']:g}",
                      f"{row['avg_elapsed_ms'] * scale:.3f}",
                      f"{2 * row['stddev_ms'] * scale:.3f}",
                      *(f"{row[field] * scale:.3f}" for field in (
                          "min_ms", "median_ms", "max_ms", "lower_bound_ms")),
                      # below e-bar_lo cannot be: marked, and a warning under the table says why
                      f"{row['excess_ms'] * scale:.3f}"
                      + (" [yellow](!)[/]" if row["excess_ms"] < -NEGATIVE_EXCESS_TOLERANCE_MS
                         else ""),
                      *(f"{row[field] * scale:.3f}" for field in (
                          ("network_bound_ms", "network_excess_ms") if network else ())),
                      *(["-" if ratio is None else f"{ratio:.2f}",
                         "-" if of_medians is None else f"{of_medians:.2f}"] if ratios
                        else []),
                      "[green]yes[/]" if row["correct"] else "[red]NO[/]")
    # as wide as the table wants, so that no header wraps ("e-bar / native" over two lines)
    # and no cell folds: the widest name and the largest time set it; the lines after it
    # keep the console's width
    wanted = Measurement.get(console, console.options.update(width=1 << 16), table).maximum
    width = console.width
    console.width = max(width, wanted)
    console.print(table)
    console.width = width
    for line in saving_summary(rows):
        console.print(line)


def tuning_line(tuning: NativeTuning) -> str:
    """What native MPI ran with, for the header of --stream and the line after the table:
    its settings, who set them, and whether the ranks outnumbered the cores (where MPICH's
    default shared-memory collectives spin: papcoll.lab.launcher)."""
    crowd = f"{tuning.ranks} ranks on {tuning.cores} cores" + (
        ", oversubscribed" if tuning.oversubscribed else "")
    if not tuning.settings:
        return f"native MPI ran with the MPI library's defaults ({crowd})"
    ours = set(tuning.by_papcoll)
    who = ("set by papcoll's launcher" if ours == set(tuning.settings) else
           "from your environment" if not ours else "partly set by papcoll's launcher")
    line = f"native MPI ran with {tuning.summary()} ({who}; {crowd})"
    if tuning.oversubscribed and any(name.endswith("_POSIX_INTRA_ALGORITHM") for name in ours):
        line += ("; without it MPICH's default shared-memory collectives spin where ranks "
                 "outnumber cores (512 KiB at P = 4 on 2 cores: 650 ms a call, with it 9.4 "
                 "ms): set it in your own such runs too (docs/benchmarks.md)")
    return line


def runs_native(options: BenchOptions) -> bool:
    """Whether the run calls the MPI's own all-reduce (native, native:NAME, auto where it
    passes a call on, everything under --preload), whose tuning the run then reports."""
    return options.preload or any(name == "auto" or name.startswith("native")
                                  for name in options.algorithms)


class StreamPrinter:
    """--stream: OSU's way of reporting, a line as each algorithm, size and delay is done
    (flushed at once, so a long sweep shows as it goes), times in microseconds in OSU's
    order: t_avg (e-bar, OSU's "Avg Latency", what its readers read first), then IMB's t_min
    and t_max (the fastest and the slowest rank's mean time in the call).
    Lines that are not results start with '#', as OSU's header does."""

    def __init__(self, out: TextIO, options: BenchOptions) -> None:
        self.out = out
        self.options = options

    def _print(self, line: str) -> None:
        print(line, file=self.out, flush=True)

    def started(self, tuning: NativeTuning) -> None:
        o = self.options
        self._print(f"# papcoll bench: all-reduce ({o.op}, {o.datatype}), P = {o.ranks}, "
                    f"{o.mode}, compute {o.compute_ms:g} ms"
                    + (f", jitter {o.jitter_ms:g} ms" if o.jitter_ms else "")
                    + f", {o.iterations} iterations after "
                    f"{o.warmup} warm-up")
        if runs_native(o):
            self._print(f"# {tuning_line(tuning)}")
        self._print(f"# {'algorithm':<24} {'size':>10} {'max delay(ms)':>14} "
                    f"{'t_avg(us)':>12} {'t_min(us)':>12} {'t_max(us)':>12} {'correct':>8}")

    def finished(self, summary: dict[str, Any]) -> None:
        self._print(f"{summary['algorithm']:<26} {summary['bytes']:>10} "
                    f"{summary['max_delay_ms']:>14g} "
                    f"{summary['avg_elapsed_ms'] * 1e3:>12.2f} "
                    f"{summary['t_min_ms'] * 1e3:>12.2f} {summary['t_max_ms'] * 1e3:>12.2f} "
                    f"{'yes' if summary['correct'] else 'NO':>8}")


def _run(options: BenchOptions, console: Console, stream: bool, launch: Launch = mpiexec_command,
         network: Network | None = None, simulated: bool = False,
         ) -> tuple[list[dict[str, Any]], NativeTuning]:
    """papcoll.lab.bench.run_benchmark behind a progress bar, or with --stream its lines
    (the lines are the progress there); returns its rows and the native tuning it ran
    with."""
    tunings: list[NativeTuning] = []
    if stream:
        printer = StreamPrinter(console.file, options)

        def started(tuning: NativeTuning) -> None:
            tunings.append(tuning)
            printer.started(tuning)

        rows = run_benchmark(options, None, launch, network, started=started,
                             finished=printer.finished, simulated=simulated)
        return rows, tunings[0]
    progress = Progress("[progress.description]{task.description}", BarColumn(),
                        MofNCompleteColumn(), TimeElapsedColumn(), console=console,
                        transient=True)
    with progress:
        task = progress.add_task(f"P = {options.ranks}, {', '.join(options.algorithms)}",
                                 total=None)
        rows = run_benchmark(options, lambda done, total: progress.update(
            task, completed=done, total=total), launch, network, started=tunings.append,
            simulated=simulated)
    return rows, tunings[0]


def check_native_names(algorithms: list[str], baseline: str) -> None:
    """Refuses, before any job starts, a native:NAME the MPI library does not have, naming
    the ones it has (papcoll.lab.bench.native_algorithm_names). Where the library does not
    tell before MPI_Init, the job's own check stays."""
    wanted = [("--algorithms", name) for name in algorithms if name.startswith("native:")]
    if baseline.startswith("native:") and baseline not in algorithms:
        wanted.append(("--baseline", baseline))
    known = native_algorithm_names() if wanted else None
    if known is None:
        return
    library, names = known
    for option, name in wanted:
        if name.removeprefix("native:") not in names:
            raise UsageError(f"{option}: {name} is not one of the all-reduce algorithms of "
                             f"this MPI ({library}); native:NAME takes {', '.join(names)}")


def group_colors(arguments: argparse.Namespace, network: Network | None) -> list[int] | None:
    """The group of every rank for papcoll-bench --group-colors: --groups resolved as
    `papcoll sim` resolves it (groups_for), on the topology of the --testbed network for
    --ranks ranks (the testbed places ranks as the simulator does: block, host by host; a
    site-marked network groups by site where sim's default does). None (no --groups, no
    testbed or a crossbar one): MPI's shared-memory nodes, which on a testbed are its
    hosts."""
    topology = network.topology(arguments.ranks) if network is not None else None
    if arguments.groups is None and topology is None:
        return None
    if isinstance(arguments.groups, str) and not arguments.groups.startswith("blocks:") \
            and topology is None:
        raise UsageError(f"--groups {arguments.groups} is a layout of a network's topology: "
                         "it needs --testbed with a network file that has one (else give "
                         "g0,g1,... or blocks:K)")
    return groups_for(arguments.groups, arguments.ranks, topology)


def _check_placement(network: Network, ranks: int, testbed: Testbed) -> None:
    """The colors were computed on the simulator's placement of the ranks: refuses a
    testbed whose launch would put them on other hosts (it cannot, as plan() builds it)."""
    topology = network.topology(ranks)
    if topology is None:
        return
    simulated = [topology.names[vertex] for vertex in topology.rank_vertex]
    launched = [testbed.plan.hosts[host] for host in testbed.rank_hosts(ranks)]
    if simulated != launched:
        raise TestbedError(f"testbed {testbed.plan.name} places the ranks on {launched}, "
                           f"its network's topology on {simulated}")


def command_bench(arguments: argparse.Namespace) -> int:
    check_schedule(arguments.schedule, arguments.algorithms)
    if arguments.json == "-" and arguments.csv == "-":
        raise UsageError("--json - and --csv - would both write to stdout: give one a file")
    datatype = DATATYPES[arguments.datatype]
    if arguments.op not in datatype.ops():
        raise UsageError(f"--op {arguments.op} is not defined on --datatype "
                         f"{arguments.datatype} (it takes {', '.join(datatype.ops())})")
    if arguments.mode == "one-late" and arguments.ranks < 2:
        raise UsageError("one-late delays rank 1, so it needs --ranks 2 or more")
    if arguments.plot and arguments.baseline == NO_BASELINE:
        raise UsageError("--plot draws e-bar relative to the baseline: it needs one, not "
                         f"--baseline {NO_BASELINE}")
    counts = element_counts(arguments, DATATYPES[arguments.datatype].size,
                            f"{arguments.datatype} elements", INT32_MAX)
    algorithms = list(arguments.algorithms)
    adding = arguments.baseline not in algorithms and arguments.baseline != NO_BASELINE
    if adding:
        algorithms.append(arguments.baseline)
    size_option = "-m" if arguments.osu_sizes else "--sizes" if arguments.sizes else "--count"
    for option, items in (("--algorithms", algorithms), (size_option, counts),
                          ("--max-delay", arguments.max_delay)):
        if len(items) > MOST_ITEMS:
            raise UsageError(f"{option}: {len(items)} of them; one run takes at most "
                             f"{MOST_ITEMS}" + (" (with the baseline)" if adding and
                                                option == "--algorithms" else ""))
    if arguments.smpi and (arguments.testbed or arguments.preload):
        raise UsageError(f"--smpi runs the job in SimGrid's simulator: not with "
                         f"{'--testbed' if arguments.testbed else '--preload'}")
    if not arguments.smpi:  # SMPI's names are checked by SMPI, in the job of each
        check_native_names(arguments.algorithms, arguments.baseline)
    where = arguments.testbed or arguments.smpi
    network = load_network(where) if where else None
    colors = group_colors(arguments, network)
    # a testbed adds the network's bound and excess: two columns more (print_table widens
    # the console further where the table needs it)
    console = console_for(arguments, 180 if arguments.testbed else 160)
    if adding:
        console.print(f"[dim]adding '{arguments.baseline}', the reference of the e-bar ratios[/]")
    options = BenchOptions(
        ranks=arguments.ranks, algorithms=algorithms, counts=counts,
        mode=arguments.mode, max_delays_ms=arguments.max_delay,
        iterations=arguments.iterations, warmup=arguments.warmup,
        compute_ms=arguments.compute_ms, jitter_ms=arguments.jitter * 1e3,
        datatype=arguments.datatype, op=arguments.op,
        seed=arguments.seed, mispredict=arguments.mispredict, baseline=arguments.baseline,
        schedule=arguments.schedule, group_colors=colors, preload=arguments.preload,
        timeout=arguments.timeout)
    if arguments.smpi:
        assert network is not None
        return _bench_in_smpi(arguments, options, network, console)
    try:
        with launch_for(arguments, arguments.ranks) as (launch, testbed), \
                CpuMeter() as cpu:
            if testbed and network is not None:
                _check_placement(network, arguments.ranks, testbed)
            before = link_bytes(testbed.plan) if testbed else {}
            rows, tuning = _run(options, console, arguments.stream, launch, network)
            after = link_bytes(testbed.plan) if testbed else {}
    except RuntimeError as error:  # the MPI job failed: its message says how
        raise UsageError(str(error)) from None
    for row in rows:
        row["cpu_busy_percent"] = cpu.busy_percent
        row["testbed"] = arguments.testbed
    print_table(rows, console)
    console.print(f"CPU busy during the run: {cpu.busy_percent:.0f} % of this machine's "
                  f"{cpu.cores} cores" + (" (near 100 %: the timings measure the CPU, not "
                                          "the network)" if cpu.busy_percent > 90 else ""))
    if runs_native(options):
        console.print(tuning_line(tuning), markup=False, highlight=False)
    for warning in measurement_warnings(rows, cpu.cores):
        console.print(f"[yellow]warning:[/] {escape(warning)}")
    if testbed:
        moved = sum(after[h][0] - before[h][0] for h in after)
        console.print(f"testbed {testbed.plan.network}: {len(after)} hosts, "
                      f"{moved / 2**20:.0f} MiB sent over their shaped links")
    return _write(arguments, rows, console)


def _write(arguments: argparse.Namespace, rows: list[dict[str, Any]], console: Console) -> int:
    """--json, --csv and --plot, then the exit status: a wrong result is a violation."""
    if arguments.json:
        write_json(rows, arguments.json)
    if arguments.csv:
        write_csv(rows, arguments.csv, JSON_ONLY_KEYS)
    if arguments.plot:
        plot(rows, arguments.plot)
        console.print(f"plot written to {arguments.plot}")
    return EXIT_OK if all(row["correct"] for row in rows) else EXIT_VIOLATION


def _bench_in_smpi(arguments: argparse.Namespace, options: BenchOptions, network: Network,
                   console: Console) -> int:
    """The benchmark in SimGrid's SMPI (papcoll.lab.smpi_bench): a job per native:NAME."""
    def run(job_options: BenchOptions, launch: Launch) -> list[dict[str, Any]]:
        return _run(job_options, console, arguments.stream, launch, network, simulated=True)[0]

    try:
        rows = run_smpi_benchmark(options, network, arguments.smpi_selector, run)
    except (RuntimeError, SmpiUnavailable) as error:
        raise UsageError(str(error)) from None
    print_table(rows, console)
    settings = rows[0]["smpi"] if rows else {}
    console.print(f"SMPI {settings.get('simgrid', '')} on {network.name}, selector "
                  f"{arguments.smpi_selector}: simulated time, the same every run "
                  "(each row's \"smpi\" holds its job's settings)", markup=False,
                  highlight=False)
    return _write(arguments, rows, console)
