"""Every setting papcoll reads, in one table: its environment variable (`PAPCOLL_*`), its C
and Python names, where and when it is read, its default, what it accepts and what it does;
what `papcoll settings` prints (like `ompi_info --param` or Intel MPI's `mpivars`) and what
docs/settings.md is made from.

The table is the one place these facts are written for a reader. tests/python/
test_settings_listing.py holds it to the code: every `PAPCOLL_*` name that src/ passes to
getenv (or papcoll_environment_switch) or that python/papcoll reads from os.environ is a row
here and every row's variable is read where the row says; every field of papcoll_config
(include/papcoll.h) and of Python's Config is a row; every option and `PAPCOLL_*` cache
variable of CMakeLists.txt is a row. The algorithms' parameters (segments, schedule, tree,
...) have their own table, declared in the C core: `papcoll parameters`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ._core import ffi, lib
from .errors import _text
from .tuning import tuning_constants

# Who reads a setting, in the order `papcoll settings` lists them.
LIBRARY = "libpapcoll"            # the C library (papcoll.h), and through it Python's Communicator
DROP_IN = "libpapcoll_pmpi"       # the drop-in library for unmodified programs (docs/pmpi.md)
PYTHON = "python package"         # papcoll's Python package and its command line
BUILD = "build"                   # CMake, when the C libraries are configured
TESTS = "tests"                   # papcoll's own test suite
READERS = (LIBRARY, DROP_IN, PYTHON, BUILD, TESTS)

SWITCH = "1/0, true/false, yes/no, on/off (any case); empty: unset"
BYTE_COUNT = "a byte count >= 0: a number, optionally with K, M or G (x 1024), also written KB " \
             "or KiB"


def c_grammar(variable: str) -> str | None:
    """What the C libraries' one parser of environment values (src/core/environment_table.c,
    papcoll_setting_parse) takes for `variable`, in words, from its row; None for a variable
    without a row, or one whose grammar is its own (PAPCOLL_TUNING's: the row says it)."""
    info = ffi.new("papcoll_setting_info *")
    for index in range(lib.papcoll_setting_count()):
        lib.papcoll_setting_get(index, info)
        if _text(info.name) != variable:
            continue
        note = f" ({_text(info.note)})" if _text(info.note) else ""
        return {lib.PAPCOLL_SETTING_SWITCH: SWITCH,
                lib.PAPCOLL_SETTING_WHOLE_NUMBER:
                    f"{_text(info.noun)} from {info.minimum} to {info.maximum}{note}",
                lib.PAPCOLL_SETTING_CHOICE: ", ".join(_text(info.choices).split(",")),
                lib.PAPCOLL_SETTING_BYTE_COUNT: BYTE_COUNT}.get(info.kind)
    return None


def c_setting_names() -> list[str]:
    """Every variable of the C libraries' table of environment settings."""
    info = ffi.new("papcoll_setting_info *")
    names = []
    for index in range(lib.papcoll_setting_count()):
        lib.papcoll_setting_get(index, info)
        names.append(_text(info.name))
    return names


def _accepted(variable: str, more: str) -> str:
    """A row's `accepted` from the C table's grammar, then what the row adds."""
    grammar = c_grammar(variable)
    assert grammar is not None, variable
    return f"{grammar}; {more}" if more else grammar


@dataclass(frozen=True)
class Setting:
    """One setting: every name it goes by, who reads it and when, and what it accepts."""

    reader: str                   # one of READERS
    when: str                     # when it is read (and checked)
    default: str                  # what holds when nothing sets it
    accepted: str                 # its range or the forms it takes
    meaning: str                  # what it changes, and why a user would set it
    read_in: tuple[str, ...]      # the source files that read it (the test holds them)
    environment: str | None = None  # the PAPCOLL_* environment variable
    c: str | None = None          # the papcoll_config field (C, papcoll.h)
    python: str | None = None     # the Python name: a field of papcoll.Config or a keyword
    cmake: str | None = None      # the CMake option or cache variable (-DNAME=...)
    docs: str = ""                # the page that says more (relative to the repository)

    @property
    def name(self) -> str:
        """How a user would first name it: the variable, else the CMake, C or Python name."""
        return self.names[0]

    @property
    def names(self) -> list[str]:
        """Every name it goes by, as a user would write it."""
        return [name for name in (
            self.environment,
            f"-D{self.cmake}" if self.cmake else None,
            f"papcoll_config.{self.c}" if self.c else None,
            *(self.python or "").split(", ")) if name]

    def describe(self) -> dict[str, Any]:
        """The row as `papcoll settings --json` writes it."""
        row = asdict(self)
        row["read_in"] = list(self.read_in)
        return {"name": self.name, "names": self.names, **row}


def _config_python(field: str) -> str:
    return f"Config.{field}"


SETTINGS: tuple[Setting, ...] = (
    # ---- the C library (also under Python's Communicator and the drop-in) ----------------
    Setting(
        reader=LIBRARY, when="papcoll_comm_create",
        c="algorithm", python="Communicator(algorithm=...)",
        default="auto", accepted="auto, or a name of `papcoll algorithms`",
        meaning="the algorithm of every call on the communicator; auto chooses per call from "
                "the predicted arrivals (MPI_Allreduce itself when arrivals are balanced)",
        read_in=("src/mpi/communicator.c",), docs="docs/mpi.md"),
    Setting(
        reader=LIBRARY, when="papcoll_comm_create",
        c="parameters", python=_config_python("parameters"),
        default="each parameter's own (`papcoll parameters`)",
        accepted="see `papcoll parameters`: segments, rank order, schedule, inner / outer "
                 "algorithms, tree",
        meaning="the algorithms' parameters, declared once in the C core and listed with their "
                "ranges by `papcoll parameters`",
        read_in=("src/core/parameter_table.c",), docs="docs/architecture.md"),
    Setting(
        reader=LIBRARY, when="papcoll_comm_create",
        c="max_message_elements", python=_config_python("max_message_elements"),
        default="0 (= 2^30 elements)", accepted="0 .. 2^63 - 1; the same on every rank",
        meaning="longer messages are sent as several MPI messages, so counts beyond INT_MAX "
                "work with MPI's int-count calls; the tests lower it to exercise the split",
        read_in=("src/mpi/communicator.c",), docs="docs/mpi.md"),
    Setting(
        reader=LIBRARY, when="papcoll_comm_create",
        c="arrival_source", python=_config_python("arrival_source"),
        default="automatic (PAPCOLL_ARRIVALS_AUTOMATIC)",
        accepted="automatic, edge, history; the same on every rank",
        meaning="where auto and the arrival-aware algorithms (slt, prr, straggler) get their "
                "predicted arrivals: earlier calls' waits and edge() where every rank calls "
                "it, edge() only, or earlier calls' arrival times only",
        read_in=("src/mpi/communicator.c",), docs="docs/mpi.md"),
    Setting(
        reader=LIBRARY, when="papcoll_comm_create",
        c="grouping", python=_config_python("grouping"),
        default="shared_memory (PAPCOLL_GROUPS_SHARED_MEMORY)",
        accepted="shared_memory, color; the same on every rank",
        meaning="the groups of the hierarchical algorithms (hr1, hr2, smp_*): one per "
                "shared-memory node, or by each rank's group_color",
        read_in=("src/mpi/communicator.c", "src/mpi/rank_groups.c"), docs="docs/mpi.md"),
    Setting(
        reader=LIBRARY, when="papcoll_comm_create",
        c="group_color", python=_config_python("group_color"),
        default="0", accepted="0 .. 2^31 - 1; differs between ranks (that is its point)",
        meaning="with grouping = color: this rank's group",
        read_in=("src/mpi/rank_groups.c",), docs="docs/mpi.md"),
    Setting(
        reader=LIBRARY, when="papcoll_comm_create (the drop-in: also at MPI_Init)",
        environment="PAPCOLL_CHECK", c="check_agreement",
        python=_config_python("check_agreement"),
        default="off", accepted=_accepted("PAPCOLL_CHECK", "one rank asking turns it on for all"),
        meaning="before each call the ranks check that they make the same call (count, "
                "datatype, op, algorithm and its parameters): a mismatch is an error on every "
                "rank instead of a hang or a wrong sum; costs one small MPI_Allreduce a call",
        read_in=("src/mpi/communicator.c", "src/core/environment_table.c"),
        docs="docs/mpi.md"),
    Setting(
        reader=LIBRARY, when="papcoll_comm_create (the drop-in: also at MPI_Init)",
        environment="PAPCOLL_PROGRESS", c="progress", python=_config_python("progress"),
        default="calls", accepted=_accepted("PAPCOLL_PROGRESS", "the same on every rank"),
        meaning="who advances non-blocking and persistent all-reduces: MPI and papcoll calls "
                "(calls), or also a progress thread (thread, which needs "
                "MPI_THREAD_MULTIPLE: refused otherwise, under the drop-in at MPI_Init, "
                "rather than fall back to calls unseen); the variable overrides the config",
        read_in=("src/mpi/communicator.c", "src/pmpi/settings.c"), docs="docs/nonblocking.md"),
    Setting(
        reader=LIBRARY,
        when="papcoll_comm_create, and when the progress thread starts (the drop-in: also at "
             "MPI_Init)",
        environment="PAPCOLL_PROGRESS_CPU",
        default="unset: the thread is not pinned",
        accepted=_accepted("PAPCOLL_PROGRESS_CPU",
                           "one this process may run on (its affinity mask); only with the "
                           "progress thread (refused where the communicator runs without it)"),
        meaning="pins the progress thread (PAPCOLL_PROGRESS=thread) to one core, so it does "
                "not take time from the ranks' own cores",
        read_in=("src/mpi/progress.c", "src/mpi/communicator.c", "src/pmpi/settings.c"),
        docs="docs/nonblocking.md"),
    Setting(
        reader=LIBRARY, when="papcoll_comm_create (the drop-in: also at MPI_Init)",
        environment="PAPCOLL_REPRODUCIBLE", c="reproducible",
        python=_config_python("reproducible") + ", Communicator(reproducible=...)",
        default="off", accepted=_accepted("PAPCOLL_REPRODUCIBLE", "the same on every rank"),
        meaning="reproducible mode: every result is the rank-order left fold's value, bit for "
                "bit, whatever the algorithm, the arrivals or auto's choice; algorithms that "
                "do not keep that order are refused for floating-point data",
        read_in=("src/mpi/reproducible.c", "src/pmpi/settings.c"),
        docs="docs/reproducible.md"),
    Setting(
        reader=LIBRARY,
        when="a communicator's first call of auto or an arrival-aware algorithm (the "
             "drop-in: also checked at MPI_Init)",
        environment="PAPCOLL_TAU_MODEL",
        default="unset: measured by a ping-pong at that first call",
        accepted="latency=S,seconds_per_byte=S,reduce_seconds_per_byte=S (each once, a "
                 "finite number >= 0); rank 0's decides",
        meaning="auto's cost model and the arrival monitor's tau, from `papcoll calibrate` "
                "(it prints the line to export) instead of the start-up measurement",
        read_in=("src/mpi/monitor_tau.c", "src/core/environment_table.c"), docs="docs/mpi.md"),
    Setting(
        reader=LIBRARY,
        when="papcoll_comm_create (the drop-in: MPI_Init, where MPI_COMM_WORLD's is made)",
        environment="PAPCOLL_RULES", c="rules_file",
        python=_config_python("rules_file"),
        default="unset: auto's model decides every call",
        accepted="the path of a rules file (JSON, docs/rules.md) whose contents are the same "
                 "on every rank; the config's path, where given, is used instead; needs "
                 "algorithm auto, not with reproducible mode",
        meaning="forces auto's choice per call shape (communicator size, bytes, datatype, op, "
                "call kind, arrival class, lateness): the first matching rule names papcoll's "
                "algorithm, native, native:NAME or auto; a malformed, contradictory or "
                "inapplicable rule is refused naming its line. Under the drop-in it also "
                "makes PAPCOLL_MIN_BYTES default to 0, so the rules decide small calls too",
        read_in=("src/mpi/communicator.c", "src/pmpi/settings.c"), docs="docs/rules.md"),
    Setting(
        reader=LIBRARY, when="papcoll_comm_create",
        environment="PAPCOLL_NATIVE_VARIANTS",
        default="MPICH below MPI_THREAD_MULTIPLE: recursive_doubling,"
                "reduce_scatter_allgather,ring; else none",
        accepted="a comma list of the MPI library's own all-reduce algorithms, or none; the "
                 "same on every rank",
        meaning="the MPI library's algorithms auto may run where it runs native, measured "
                "against each other so native runs as the fastest",
        read_in=("src/mpi/native_variants.c",), docs="docs/mpi.md"),
    Setting(
        reader=LIBRARY, when="papcoll_comm_create (the drop-in: also at MPI_Init)",
        environment="PAPCOLL_TAG_LIMIT",
        default="MPI's MPI_TAG_UB",
        accepted=_accepted("PAPCOLL_TAG_LIMIT",
                           "only ever lowers MPI_TAG_UB; the same on every rank"),
        meaning="the highest tag papcoll's non-blocking and persistent all-reduces use: the "
                "tests set 32767, the least MPI_TAG_UB MPI allows, under MPICH",
        read_in=("src/mpi/communicator.c",), docs="docs/nonblocking.md"),
    Setting(
        reader=LIBRARY, when="papcoll_comm_create (the drop-in: also at MPI_Init)",
        environment="PAPCOLL_TUNING", c="tuning", python=_config_python("tuning"),
        default="every constant's default (the section below)",
        accepted="name=value,name=value,... of the constants below, each in its range; an "
                 "unknown name, a value that is not a number or one out of range is refused "
                 "naming it; the same on every rank. Of: " + ", ".join(
                     f"{constant.name} ({constant.shown(constant.minimum)} .. "
                     f"{constant.shown(constant.maximum)}, default "
                     f"{constant.shown(constant.default)})" for constant in tuning_constants()),
        meaning="auto's tuning constants, field by field over papcoll_config.tuning: the "
                "margin a PAP-aware algorithm must beat native by, the decision's budget, "
                "what the closed loop measures",
        read_in=("src/mpi/communicator.c",), docs="docs/settings.md"),
    # ---- the drop-in library (LD_PRELOAD=$(papcoll preload)) -------------------------------
    Setting(
        reader=DROP_IN, when="MPI_Init (every rank must agree)",
        environment="PAPCOLL_ALGORITHM",
        default="auto",
        accepted="auto, native, or an all-reduce of `papcoll algorithms` (with "
                 "PAPCOLL_REPRODUCIBLE, one that keeps the canonical order)",
        meaning="what the drop-in runs for the calls it takes; native turns interception off "
                "(calls are still counted in the report)",
        read_in=("src/pmpi/settings.c",), docs="docs/pmpi.md"),
    Setting(
        reader=DROP_IN, when="MPI_Init (every rank must agree)",
        environment="PAPCOLL_MIN_BYTES",
        default="65536 (64 KiB); 0 with PAPCOLL_RULES",
        accepted=_accepted("PAPCOLL_MIN_BYTES", ""),
        meaning="calls moving fewer bytes go to MPI_Allreduce: below 64 KiB auto was never "
                "measured faster than MPI_Allreduce, the call is too short to save more than "
                "a schedule costs",
        read_in=("src/pmpi/settings.c",), docs="docs/pmpi.md"),
    Setting(
        reader=DROP_IN, when="MPI_Init (checked; set on every rank or on none); written at "
                             "MPI_Finalize",
        environment="PAPCOLL_REPORT",
        default="unset: no report",
        accepted="a path: a new file in an existing folder, or an existing regular one (not a "
                 "link, directory, FIFO or device), at most 4095 characters; world rank 0's "
                 "is used, and its folder and kind of file are checked there alone",
        meaning="world rank 0 writes the JSON report there (per communicator and call site: "
                "what ran and what it saved); `papcoll report FILE` prints it",
        read_in=("src/pmpi/settings.c",), docs="docs/pmpi.md"),
    # ---- the Python package and its command line --------------------------------------------
    Setting(
        reader=PYTHON, when="`papcoll preload`, papcoll.pmpi",
        environment="PAPCOLL_PMPI_LIBRARY",
        default="the package's own libpapcoll_pmpi.so", accepted="the path of an existing file; "
                                                                 "empty: unset",
        meaning="the drop-in library `papcoll preload` prints for LD_PRELOAD",
        read_in=("python/papcoll/pmpi.py",), docs="docs/pmpi.md"),
    Setting(
        reader=PYTHON, when="`import papcoll`",
        environment="PAPCOLL_LIBRARY",
        default="the package's own libpapcoll_core.so", accepted="the path of a built "
                                                                  "libpapcoll_core.so",
        meaning="the MPI-free core the package loads (cffi): e.g. a sanitizer build",
        read_in=("python/papcoll/_core.py",), docs="docs/python.md"),
    Setting(
        reader=PYTHON, when="the first papcoll.Communicator",
        environment="PAPCOLL_MPI_LIBRARY",
        default="the package's own libpapcoll.so", accepted="the path of a built libpapcoll.so",
        meaning="the MPI library the package loads for Communicator; it must be built "
                "against the MPI mpi4py uses",
        read_in=("python/papcoll/_core.py",), docs="docs/python.md"),
    Setting(
        reader=PYTHON, when="`papcoll bench`, `papcoll validate`, `papcoll demo`",
        environment="PAPCOLL_BENCH",
        default="build/<mpi>/papcoll-bench of this checkout, else the installed one, else PATH",
        accepted="the path of a papcoll-bench program",
        meaning="which benchmark program the command line runs under mpiexec",
        read_in=("python/papcoll/lab/bench.py",), docs="docs/benchmarks.md"),
    Setting(
        reader=PYTHON, when="`papcoll bench --smpi`",
        environment="PAPCOLL_SMPI_BUILD",
        default="build/smpi of this checkout (`make smpi`)",
        accepted="a folder holding papcoll's programs built for SimGrid's SMPI",
        meaning="where `--smpi` takes the SMPI build of the program it runs (a program "
                "built against a real MPI cannot run in SMPI)",
        read_in=("python/papcoll/lab/smpi_launcher.py",), docs="docs/smpi.md"),
    Setting(
        reader=PYTHON, when="`papcoll calibrate`",
        environment="PAPCOLL_CALIBRATE",
        default="build/<mpi>/papcoll-calibrate of this checkout, else the installed one, else "
                "PATH",
        accepted="the path of a papcoll-calibrate program",
        meaning="which calibration program `papcoll calibrate` runs under mpiexec",
        read_in=("python/papcoll/lab/calibrate.py",), docs="docs/simulator.md"),
    Setting(
        reader=PYTHON, when="`papcoll testbed`, `--testbed`",
        environment="PAPCOLL_TESTBED_STATE",
        default="/run/papcoll/testbeds", accepted="a directory; empty: unset",
        meaning="where the emulated clusters' state files are kept",
        read_in=("python/papcoll/lab/testbed/state.py",), docs="docs/testbed.md"),
    # ---- the build ----------------------------------------------------------------------------
    Setting(
        reader=BUILD, when="cmake configure (pip: -C cmake.define.NAME=VALUE)",
        cmake="PAPCOLL_MPI", default="ON", accepted="ON, OFF",
        meaning="OFF builds and installs only the MPI-free core (libpapcoll_core): a machine "
                "without MPI can still build, install and use it",
        read_in=("CMakeLists.txt",), docs="README.md"),
    Setting(
        reader=BUILD, when="cmake configure",
        cmake="BUILD_TESTING", default="ON", accepted="ON, OFF",
        meaning="builds the C and MPI test programs and the example (CMake's own name; "
                "-DPAPCOLL_TESTS, the name before it, still works and wins where given)",
        read_in=("CMakeLists.txt",), docs="README.md"),
    Setting(
        reader=BUILD, when="cmake configure",
        cmake="PAPCOLL_SANITIZE", default="OFF", accepted="ON, OFF",
        meaning="AddressSanitizer and UndefinedBehaviorSanitizer on every target, any report "
                "fatal (`make test-sanitizers`)",
        read_in=("CMakeLists.txt",), docs="README.md"),
    Setting(
        reader=BUILD, when="cmake configure",
        cmake="PAPCOLL_SMPI", default="OFF", accepted="ON, OFF (ON with "
        "-DCMAKE_C_COMPILER=smpicc)",
        meaning="builds papcoll and papcoll-bench for SimGrid's SMPI instead of a real MPI "
                "(`make smpi`: build/smpi)",
        read_in=("CMakeLists.txt",), docs="docs/smpi.md"),
    Setting(
        reader=BUILD, when="cmake configure",
        cmake="PAPCOLL_LIBRARY_FOLDER", default="the build folder's lib/",
        accepted="a folder",
        meaning="where the shared libraries and their headers are built (the Makefile names "
                "python/papcoll/_lib, the folder the Python package loads them from)",
        read_in=("CMakeLists.txt",), docs="docs/architecture.md"),
    # ---- papcoll's tests -------------------------------------------------------------------
    Setting(
        reader=TESTS, when="pytest start-up",
        environment="PAPCOLL_FUZZ_SEED",
        default="a random seed, printed in pytest's summary", accepted="a whole number",
        meaning="repeats a run of the property tests (hypothesis) with the seed it printed",
        read_in=("tests/python/conftest.py",), docs="README.md"),
    Setting(
        reader=TESTS, when="pytest, the tests that run MPI programs",
        environment="PAPCOLL_MPI",
        default="the flavour of the mpiexec found (mpich or openmpi)",
        accepted="mpich, openmpi",
        meaning="which build folder (build/mpich, build/openmpi) the tests take their C "
                "programs from; not the CMake option -DPAPCOLL_MPI=ON/OFF",
        read_in=("tests/python/test_mpi.py", "tests/python/test_house_rules.py"),
        docs="README.md"),
)


def setting_rows() -> list[dict[str, Any]]:
    """The table as JSON may hold it (`papcoll settings --json`)."""
    return [setting.describe() for setting in SETTINGS]


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def settings_markdown() -> str:
    """docs/settings.md: the table, a section per reader (the test keeps the file current)."""
    lines = ["# Settings", "",
             "Every setting papcoll reads, from one table (`python/papcoll/settings.py`); "
             "`papcoll settings` prints it, `papcoll settings --json -` gives it to programs. "
             "This page is made from it: `papcoll settings --markdown docs/settings.md`. "
             "The algorithms' own parameters (segments, schedule, tree, ...) are listed by "
             "`papcoll parameters`.", "",
             "The C libraries' environment variables with a grammar (switches, numbers, "
             "words, sizes, PAPCOLL_TUNING, PAPCOLL_TAU_MODEL) have one parser, declared "
             "once in `src/core/environment_table.c`: a value is taken as written, so spaces "
             "around it (`' 1'`) are refused for every one of them, and empty means unset. "
             "The drop-in checks every one at MPI_Init, whatever the communicator size or "
             "PAPCOLL_ALGORITHM, and stops the program there with one line naming it.", ""]
    titles = {LIBRARY: "The C library (and Python's Communicator)",
              DROP_IN: "The drop-in library (`LD_PRELOAD=$(papcoll preload)`)",
              PYTHON: "The Python package and the command line",
              BUILD: "The build (CMake)", TESTS: "papcoll's tests"}
    for reader in READERS:
        lines += [f"## {titles[reader]}", "",
                  "| names | read | default | accepted | meaning |", "|---|---|---|---|---|"]
        for setting in SETTINGS:
            if setting.reader != reader:
                continue
            names = "<br>".join(f"`{name}`" for name in setting.names)
            more = f" ([more]({setting.docs.removeprefix('docs/')}))" if setting.docs else ""
            if setting.docs == "README.md":
                more = " ([more](../README.md))"
            lines.append(f"| {names} | {_cell(setting.when)} | {_cell(setting.default)} | "
                         f"{_cell(setting.accepted)} | {_cell(setting.meaning)}{more} |")
        lines.append("")
    return "\n".join(lines + tuning_markdown())


def tuning_markdown() -> list[str]:
    """docs/settings.md's section on auto's tuning constants, from the core's table."""
    lines = ["## auto's tuning constants (`PAPCOLL_TUNING`, `papcoll_config.tuning`)", "",
             "Declared once, in `src/core/tuning_table.c`; `PAPCOLL_TUNING=\"margin=0.1,"
             "budget_floor=65536\"` sets them field by field over the config's.", "",
             "| name | default | range | read in | meaning |", "|---|---|---|---|---|"]
    for constant in tuning_constants():
        lines.append(f"| `{constant.name}` | {constant.shown(constant.default)} | "
                     f"{constant.shown(constant.minimum)} .. {constant.shown(constant.maximum)} "
                     f"| `{constant.read_in}` | {_cell(constant.help)} |")
    lines.append("")
    return lines
