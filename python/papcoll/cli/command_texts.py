"""Every subcommand's one-line help (what `papcoll --help` lists) and its description (what
`papcoll COMMAND --help` opens with), declared once, in the order `papcoll --help` shows
them. `add_command` (options.py) reads a command's texts here by its name; the command's
own module declares its options. Read together, the texts say what the command line does
as a whole (test_cli's test_every_command_has_its_texts_row_and_every_row_a_command keeps
the table and the commands one to one)."""

from __future__ import annotations

from typing import NamedTuple


class CommandTexts(NamedTuple):
    help: str
    description: str


COMMAND_TEXTS: dict[str, CommandTexts] = {
    "algorithms": CommandTexts(
        help="list the algorithms",
        description="The algorithms: description, source, the ops they take, their limitations "
                    "and the parameters they read."),
    "parameters": CommandTexts(
        help="list the algorithms' parameters",
        description="The algorithms' parameters: kind, range, default, option and the "
                    "algorithms that read each (declared once, in the C core)."),
    "settings": CommandTexts(
        help="list every setting: PAPCOLL_* variables, config fields, CMake options",
        description="Every setting papcoll reads: its environment variable and its C, Python "
                    "and CMake names, who reads it and when, its default, what it accepts and "
                    "what it does."),
    "verify": CommandTexts(
        help="prove an algorithm's schedules correct",
        description="Builds every rank's schedule and proves it: each rank ends with the "
                    "reduction of all contributions, no deadlock. Prints one JSON object; "
                    "exits 1 on a violation."),
    "schedule": CommandTexts(
        help="print one rank's schedule",
        description="One rank's schedule in the text format `papcoll verify --schedule-files` "
                    "reads (docs/schedules.md)."),
    "bench": CommandTexts(
        help="the Proficz 2018 mini-benchmark (Fig. 9) over mpiexec, against native MPI",
        description="Runs papcoll-bench under mpiexec: e-bar of each algorithm when rank 1 "
                    "(one-late) or every rank (rand-late) arrives up to --max-delay late."),
    "calibrate": CommandTexts(
        help="measure this machine's simulator parameters with real MPI",
        description="Runs papcoll-calibrate under mpiexec (ping-pong sweep, the fan-out of "
                    "Ruefenacht et al. 2017, reduction speed per datatype), fits latency, "
                    "overhead and time per byte, prints them with the fit's residuals and "
                    "writes a network file for `papcoll sim --network FILE` "
                    "(docs/simulator.md, Calibration)."),
    "sim": CommandTexts(
        help="simulate algorithms on a modelled network (discrete-event engine)",
        description="Runs the schedules of all ranks in the simulator: e-bar, makespan and the "
                    "lower bound per algorithm and delay."),
    "validate": CommandTexts(
        help="the simulator's e-bar against real runs (mpiexec), per case",
        description="Runs every algorithm x size x arrival mode in papcoll-bench and in the "
                    "simulator (replaying the measured arrivals) and prints the relative error "
                    "per case and its geometric mean per algorithm and overall. With "
                    "--testbed, give --network too: the network the simulator models, "
                    "calibrated on that testbed (docs/testbed.md)."),
    "schedules": CommandTexts(
        help="list the recursive multiplying schedules of P (Ruefenacht et al. 2017)",
        description="Every factored, split (collapse/expand) and merged schedule of P."),
    "search": CommandTexts(
        help="simulate every recursive multiplying schedule of P and rank them",
        description="Simulates each schedule of `papcoll schedules` on a network (balanced "
                    "arrivals) and ranks them by e-bar, against MPICH's recursive doubling; "
                    "prints the optimal fan-out of Ruefenacht et al. 2017 Eq. 5 for the "
                    "network."),
    "reproduce": CommandTexts(
        help="a paper's table in the simulator (docs/reproductions.md)",
        description="seed004-table2: Ruefenacht et al. 2017, Table 2 (recursive multiplying); "
                    "seed003-table1: Proficz et al., Table 1 (hierarchical all-reduce across "
                    "two sites); seed001-crossover: Patarasuk & Yuan 2009, Section 5 "
                    "(contention-free ring vs butterfly on a tree); seed002-tables: Gavahi, "
                    "Tables 1-2 (priority-aware reduce-scatter). The names number the papers "
                    "as docs/references.md does; results and how they compare: "
                    "docs/reproductions.md."),
    "testbed": CommandTexts(
        help="an emulated cluster on this machine: network namespaces, shaped links",
        description="Builds, lists, checks and removes emulated clusters: one network "
                    "namespace per host of a network (preset or file, as `papcoll sim "
                    "--network`), bridges for its switches, links shaped with tc tbf. Needs "
                    "root."),
    "demo": CommandTexts(
        help="verified schedules, then papcoll against MPI_Allreduce with a rank late",
        description="Verifies every algorithm's schedule (one line), then (unless --no-bench) "
                    "a short `papcoll bench` with rank 1 late and one `papcoll sim` line, and "
                    "ends with one sentence: papcoll's auto against MPI_Allreduce."),
    "report": CommandTexts(
        help="print the report of libpapcoll_pmpi.so (PAPCOLL_REPORT=FILE)",
        description="Prints what libpapcoll_pmpi.so saw in a run: per communicator and call "
                    "site the call (MPI_Allreduce, MPI_Iallreduce, or persistent: "
                    "MPI_Allreduce_init and its starts), the calls, their size, time inside "
                    "the call (for non-blocking and persistent calls: the post or start only, "
                    "not the wait), the arrival imbalance, what ran in the calls papcoll "
                    "decided (native there: auto chose MPI's own), the calls passed straight "
                    "to MPI and why, the cost model's saving (modelled, not measured), and "
                    "auto's closed loop: its probes, the calls where measurements overruled "
                    "the model, and the last choice's predicted and measured times. The table "
                    "shows the busiest call sites (and says how many it leaves out); --json "
                    "FILE writes every one. Counts that contradict each other are flagged on "
                    "stderr. docs/pmpi.md."),
    "preload": CommandTexts(
        help="print the path of libpapcoll_pmpi.so, for LD_PRELOAD",
        description="Prints the path of libpapcoll_pmpi.so: LD_PRELOAD=$(papcoll preload) "
                    "mpiexec -n 4 ./app gives an unmodified MPI program papcoll's all-reduce. "
                    "docs/pmpi.md."),
}
