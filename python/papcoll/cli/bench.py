"""`papcoll bench`: the seed 000 mini-benchmark (Fig. 9) over mpiexec, papcoll's algorithms
against the MPI library's own; the engine is papcoll.lab.bench."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn
from rich.table import Table

from ..lab.bench import (
    DATATYPES,
    DEFAULT_BASELINE,
    OPS,
    BenchOptions,
    format_bytes,
    plot,
    run_benchmark,
    saving_summary,
)
from ..lab.launcher import Launch, mpiexec_command
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
    add_ranks,
    add_sizes,
    bench_algorithm,
    durations,
    integer_in_range,
    milliseconds,
)
from .output_options import add_csv, add_json, console_for, write_csv, write_json
from .run_options import add_testbed, add_timeout, launch_for


def add_parser(commands: Any) -> None:
    bench = add_command(
        commands, command_bench, "bench",
        help="the mini-benchmark (seed 000 Fig. 9) over mpiexec, against native MPI",
        description="Runs papcoll-bench under mpiexec: e-bar of each algorithm when rank 1 "
                    "(one-late) or every rank (rand-late) arrives up to --max-delay late.",
        # the grid of issue 32 (sizes x arrival patterns x delays in multiples of each
        # size's own delta, every contender, four figures) is a script over this engine
        epilog="Issue 32's whole grid (auto against every papcoll algorithm and native "
               "variant, balanced, one-late and rand-late, delays 0-100 x delta) and its "
               "four figures (never slower, right choice, wins when it can, learns fast): "
               "python bench/auto_grid.py --help (in a papcoll checkout; "
               "docs/benchmarks.md).")
    add_ranks(bench, 4096, default=4)
    add_algorithms(bench, "ring,rabenseifner,native", native=True)
    bench.add_argument("--baseline", type=bench_algorithm, default=DEFAULT_BASELINE,
                       help="the algorithm speedups are measured against, added to the run "
                            f"if --algorithms lacks it (default {DEFAULT_BASELINE})")
    # --sizes (bytes, OSU/IMB style) or --count (elements, as before): one or the other
    amount = bench.add_mutually_exclusive_group()
    add_sizes(amount)
    add_count(amount, "1M", many=True)
    bench.add_argument("--mode", choices=("one-late", "rand-late"), default="one-late",
                       help="rank 1 late (one-late) or every rank late by a random share "
                            "(rand-late) of the maximum delay (default one-late)")
    bench.add_argument("--max-delay", type=durations, default=durations("0,10,50ms"),
                       help="maximum arrival delays, e.g. 0,1,5,10,50ms (default 0,10,50ms)")
    bench.add_argument("--iterations", type=integer_in_range("iterations", 1, 1000000),
                       default=20, help="timed iterations (default 20)")
    bench.add_argument("--warmup", type=integer_in_range("warm-up", 0, INT32_MAX), default=2,
                       help="untimed iterations first (default 2)")
    bench.add_argument("--compute-ms", type=milliseconds(MOST_COMPUTE_MS), default=100.0,
                       help="emulated compute phase per iteration (default 100, as the paper)")
    add_datatype(bench, tuple(DATATYPES), default="float", metavar="TYPE",
                 why="one of MPI's predefined numeric types, named as MPI names it without "
                     "MPI_ (and _T), in lower case: " + ", ".join(DATATYPES))
    bench.add_argument("--op", choices=OPS, default="sum",
                       help="the reduction: band, bor, bxor on integer types only, min and "
                            "max not on complex ones (default sum)")
    bench.add_argument("--seed", type=integer_in_range("seed", 0, INT32_MAX), default=1,
                       help="for rand-late delays (default 1)")
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
    add_json(bench)
    add_csv(bench)
    bench.add_argument("--plot", metavar="FILE.png",
                       help="plot the speedup over the baseline against size and max delay")
    add_timeout(bench, 3600)


def _unit(rows: list[dict[str, Any]]) -> tuple[str, float]:
    """us when every e-bar is below a millisecond (small messages, no delay), else ms."""
    return ("us", 1e3) if max(row["max_ms"] for row in rows) < 1 else ("ms", 1.0)


def print_table(rows: list[dict[str, Any]], console: Console) -> None:
    first = rows[0]
    unit, scale = _unit(rows)
    # the network's bound where a testbed ran the job; in shared memory it is e-bar_lo
    network = [f"net bound {unit}", f"net excess {unit}"] if first.get("testbed") else []
    table = Table(title=f"e-bar of all-reduce ({first['op']}, {first['datatype']}), "
                        f"P = {first['ranks']}, {first['mode']}, compute "
                        f"{first['compute_ms']:g} ms, {first['iterations']} iterations, "
                        f"speedup vs {first['baseline']} ({first['mpi_library']})")
    for column in ("algorithm", "bytes", "max delay ms", f"e-bar {unit}", f"+-2 sigma {unit}",
                   f"min {unit}", f"median {unit}", f"max {unit}", f"e-bar_lo {unit}",
                   f"excess {unit}", *network, f"speedup vs {first['baseline']}", "of medians",
                   "correct"):
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
        speedup, of_medians = row["speedup_vs_baseline"], row["median_speedup_vs_baseline"]
        table.add_row(row["algorithm"], format_bytes(row["bytes"]), f"{row['max_delay_ms']:g}",
                      f"{row['avg_elapsed_ms'] * scale:.3f}",
                      f"{2 * row['stddev_ms'] * scale:.3f}",
                      *(f"{row[field] * scale:.3f}" for field in (
                          "min_ms", "median_ms", "max_ms", "lower_bound_ms", "excess_ms",
                          *(("network_bound_ms", "network_excess_ms") if network else ()))),
                      "-" if speedup is None else f"{speedup:.2f}",
                      "-" if of_medians is None else f"{of_medians:.2f}",
                      "[green]yes[/]" if row["correct"] else "[red]NO[/]")
    console.print(table)
    for line in saving_summary(rows):
        console.print(line)


def element_counts(arguments: argparse.Namespace) -> list[int]:
    """Elements per rank: --sizes (bytes) divided by the datatype's size, else --count."""
    if arguments.sizes is None:
        return list(arguments.count)
    size = DATATYPES[arguments.datatype].size
    counts = []
    for total in arguments.sizes:
        if total % size:
            raise UsageError(f"--sizes: {total} bytes is not a whole number of "
                             f"{arguments.datatype} elements ({size} bytes each)")
        if total // size > INT32_MAX:
            raise UsageError(f"--sizes: {total} bytes is more than {INT32_MAX} "
                             f"{arguments.datatype} elements, the most one call takes")
        counts.append(total // size)
    return counts


def _run(options: BenchOptions, console: Console, launch: Launch = mpiexec_command,
         network: Network | None = None) -> list[dict[str, Any]]:
    """papcoll.lab.bench.run_benchmark behind a progress bar."""
    progress = Progress("[progress.description]{task.description}", BarColumn(),
                        MofNCompleteColumn(), TimeElapsedColumn(), console=console,
                        transient=True)
    with progress:
        task = progress.add_task(f"P = {options.ranks}, {', '.join(options.algorithms)}",
                                 total=None)
        return run_benchmark(options, lambda done, total: progress.update(
            task, completed=done, total=total), launch, network)


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
    counts = element_counts(arguments)
    network = load_network(arguments.testbed) if arguments.testbed else None
    colors = group_colors(arguments, network)
    # a testbed adds the network's bound and excess: two columns more
    console = console_for(arguments, 180 if arguments.testbed else 160)
    algorithms = list(arguments.algorithms)
    if arguments.baseline not in algorithms:
        algorithms.append(arguments.baseline)
        console.print(f"[dim]adding '{arguments.baseline}', the baseline of the speedups[/]")
    options = BenchOptions(
        ranks=arguments.ranks, algorithms=algorithms, counts=counts,
        mode=arguments.mode, max_delays_ms=arguments.max_delay,
        iterations=arguments.iterations, warmup=arguments.warmup,
        compute_ms=arguments.compute_ms, datatype=arguments.datatype, op=arguments.op,
        seed=arguments.seed, mispredict=arguments.mispredict, baseline=arguments.baseline,
        schedule=arguments.schedule, group_colors=colors, preload=arguments.preload,
        timeout=arguments.timeout)
    try:
        with launch_for(arguments, arguments.ranks) as (launch, testbed), \
                CpuMeter() as cpu:
            if testbed and network is not None:
                _check_placement(network, arguments.ranks, testbed)
            before = link_bytes(testbed.plan) if testbed else {}
            rows = _run(options, console, launch, network)
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
    if testbed:
        moved = sum(after[h][0] - before[h][0] for h in after)
        console.print(f"testbed {testbed.plan.network}: {len(after)} hosts, "
                      f"{moved / 2**20:.0f} MiB sent over their shaped links")
    if arguments.json:
        write_json(rows, arguments.json)
    if arguments.csv:
        write_csv(rows, arguments.csv)
    if arguments.plot:
        plot(rows, arguments.plot)
        console.print(f"plot written to {arguments.plot}")
    return EXIT_OK if all(row["correct"] for row in rows) else EXIT_VIOLATION
