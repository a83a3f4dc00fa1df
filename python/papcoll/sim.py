"""The discrete-event simulator from Python (`papcoll sim`): arrival patterns and the e-bar /
makespan of each algorithm, computed by the C engine (src/core/sim/simulate.c) on the very
schedules the MPI executor runs. What it runs on: a cost model (papcoll.model: SimModel and
the crossbar presets) and, optionally, a tree (papcoll.topology.Topology, which
papcoll.network loads from a preset or a file).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ._core import ffi, lib
from .checks import INT32_MAX, INT64_MAX, arrival_times, real_number, whole_number
from .core import Context, _c_context, algorithm, c_string
from .errors import _ERROR_SIZE, _raise
from .model import PRESETS, SimModel

# kept importable from here, their home before papcoll.model: programs written against
# papcoll.sim still run
from .model import preset as preset
from .model import with_parameters as with_parameters
from .model import with_values as with_values
from .topology import Topology
from .tuning import parse_tuning

KINDS = ("send", "recv", "reduce", "copy")


@dataclass(frozen=True)
class Span:
    """One op of the timeline: what a rank did from start to end (seconds)."""

    rank: int
    op: int
    kind: str
    peer: int
    bytes: int
    start: float
    end: float


@dataclass(frozen=True)
class SimResult:
    average_elapsed: float
    max_elapsed: float
    makespan: float
    operations: int
    events: int
    finish: list[float]
    arrivals: list[float] = field(default_factory=list)
    memory_bytes: int = 0
    timeline: list[Span] = field(default_factory=list)
    link_bytes: list[int] = field(default_factory=list)  # [2v] up from vertex v, [2v+1] down
    build_seconds: float = 0.0  # building the schedules (wall clock)
    run_seconds: float = 0.0    # running the events


def arrival_pattern(mode: str, ranks: int, max_delay: float, seed: int = 1) -> list[float]:
    """Seconds: balanced (all 0), one-late (rank 1 late by max_delay), rand-late (uniform)."""
    if mode == "balanced":
        return [0.0] * ranks
    if mode == "one-late":
        return [max_delay if rank == 1 else 0.0 for rank in range(ranks)]
    if mode == "rand-late":
        generator = random.Random(seed)
        return [generator.uniform(0, max_delay) for _ in range(ranks)]
    raise ValueError(f"unknown mode '{mode}' (balanced, one-late, rand-late)")


def tau(model: SimModel, ranks: int, count: int, elem_size: int) -> float:
    """Seconds to move and reduce one of P segments under the model (what prr is given): the
    arrival monitor's formula (papcoll_tau_model_tau, src/core/tau_model.c), with its
    latency L + o + o_r; the segment is ceil(count / P) elements, in integers as there."""
    segment = -(-count // ranks) * elem_size
    return (model.latency + model.overheads
            + segment * (model.seconds_per_byte + model.reduce_seconds_per_byte)) or 1e-9



def _path_time(model: SimModel, topology: Topology | None, first: int, second: int,
               nbytes: int) -> float:
    """One message of nbytes between two vertices (or across the crossbar), alone."""
    if topology is None:
        return model.latency + model.overheads + nbytes * model.seconds_per_byte
    if first == second:
        return (topology.local_latency + model.overheads
                + nbytes * topology.local_seconds_per_byte)
    vertices = [link // 2 for link in topology.vertex_path(first, second)]
    latency = sum(topology.link_latency[vertex] for vertex in vertices)
    per_byte = max(topology.link_seconds_per_byte[vertex] for vertex in vertices)
    return latency + model.overheads + nbytes * per_byte


def transfer_time(model: SimModel, topology: Topology | None, nbytes: int) -> float:
    """delta of Proficz 2018, Sect. 3: one point-to-point transfer of the whole vector. With a
    topology, the fastest pair of ranks (all pairs of the vertices used when there are at most 64
    of them, else the pairs with rank 0), so that e-bar_lo stays a lower bound."""
    if topology is None:
        return _path_time(model, None, 0, 0, nbytes)
    used = sorted(set(topology.rank_vertex))
    shared = len(used) < len(topology.rank_vertex)
    pairs = ([(a, b) for i, a in enumerate(used) for b in used[i + 1:]] if len(used) <= 64
             else [(topology.rank_vertex[0], b) for b in used if b != topology.rank_vertex[0]])
    times = [_path_time(model, topology, a, b, nbytes) for a, b in pairs]
    if shared:
        times.append(_path_time(model, topology, used[0], used[0], nbytes))
    return min(times) if times else 0.0


def lower_bound(arrivals: Sequence[float], delta: float) -> float:
    """e-bar_lo of Proficz 2018, Sect. 3: every rank waits for the last arrival, then one
    transfer. Mean over ranks of (last arrival - a_i) + delta; for one-late that is (P-1)/P D +
    delta."""
    last = max(arrivals)
    return sum(last - a for a in arrivals) / len(arrivals) + delta


def network_lower_bound(arrivals: Sequence[float], model: SimModel, topology: Topology | None,
                        nbytes: int) -> float:
    """e-bar's lower bound that knows where the ranks are: the mean over ranks r of

        bound_r = max( max over s != r of (a_s + T(s, r)),  a_r + min over s != r of T(s, r) )
                  - a_r

    where T(s, r) is one message of nbytes alone from s's vertex to r's (_path_time: the
    path's latencies, o + o_r, and nbytes x the narrowest link's seconds per byte; the local
    numbers when both are on one vertex). 0 for one rank.

    Why it is a lower bound: every element of r's result depends on the same element of
    every rank's vector, and the vector of s exists only from a_s on, so each of its bytes,
    reduced with others or not, crosses every link of the tree path from s to r after a_s:
    f_r >= a_s + T(s, r). The second term is Proficz 2018's e-bar_lo convention: the last rank
    still needs one transfer after it arrives. That holds for vectors above the eager limit,
    whose messages wait for the receive; with eager messages sent to it before it arrives,
    an algorithm could save the last rank part of that transfer, as against e-bar_lo.

    It is >= e-bar_lo for P >= 2: bound_r >= (last arrival - a_r) + the fastest transfer into
    r, and e-bar_lo's delta (transfer_time) is the fastest pair of all (when more than 64
    vertices hold ranks transfer_time tries only the pairs with rank 0's, and the two may
    then differ). On a crossbar every T is the same and it is e-bar_lo, computed by
    lower_bound. On geo-2site with one rank late by D, the late rank's site gets its
    vector one local transfer after D and the other site one WAN crossing after D, where
    e-bar_lo charges every rank the fastest (local) transfer.

    O(P + V^2) for the V vertices that hold ranks: per vertex, its ranks' latest arrival
    and the latest of the others (for the rank that is the latest itself), and one path
    time per pair of vertices."""
    times = arrival_times(arrivals, "arrivals",
                          len(topology.rank_vertex) if topology is not None else None) or []
    whole_number(nbytes, "nbytes", 0, INT64_MAX)
    if not times:
        raise ValueError("arrivals: give the arrival time of every rank (none given)")
    if len(times) == 1:
        return 0.0
    if topology is None:
        return lower_bound(times, transfer_time(model, None, nbytes))
    latest: dict[int, tuple[float, int]] = {}  # vertex -> (latest arrival, its rank)
    second: dict[int, float] = {}               # vertex -> the latest of its other ranks
    for rank, (vertex, arrival) in enumerate(zip(topology.rank_vertex, times, strict=True)):
        if vertex not in latest:
            latest[vertex] = (arrival, rank)
        elif arrival > latest[vertex][0]:
            second[vertex] = latest[vertex][0]
            latest[vertex] = (arrival, rank)
        else:
            second[vertex] = max(second.get(vertex, -math.inf), arrival)
    used = list(latest)
    pair_time: dict[tuple[int, int], float] = {}
    for i, first in enumerate(used):  # paths are the same both ways: each pair once
        for other in used[i + 1:]:
            pair_time[first, other] = pair_time[other, first] = _path_time(
                model, topology, first, other, nbytes)
    # per vertex u: the latest a_s + T(s, u) over ranks s on other vertices, the fastest
    # T(s, u) from them, and one transfer between two of u's own ranks
    reach: dict[int, float] = {}
    fastest: dict[int, float] = {}
    for vertex in used:
        others = [other for other in used if other != vertex]
        reach[vertex] = max((latest[other][0] + pair_time[other, vertex] for other in others),
                            default=-math.inf)
        fastest[vertex] = min((pair_time[other, vertex] for other in others),
                              default=math.inf)
    local = {vertex: _path_time(model, topology, vertex, vertex, nbytes) for vertex in second}
    total = 0.0
    for rank, (vertex, arrival) in enumerate(zip(topology.rank_vertex, times, strict=True)):
        latest_reach, quickest = reach[vertex], fastest[vertex]
        if vertex in second:  # another rank shares r's vertex
            mate = second[vertex] if latest[vertex][1] == rank else latest[vertex][0]
            latest_reach = max(latest_reach, mate + local[vertex])
            quickest = min(quickest, local[vertex])
        total += max(latest_reach, arrival + quickest) - arrival
    return total / len(times)


def exchanged_predictions(algorithm_name: str, ranks: int,
                          model: SimModel) -> list[float] | None:
    """The own work (simulate's own_work) of the MPI library where predictions travel per
    call (edge(); AUTOMATIC where arrivals are spread): an algorithm that needs arrivals
    first receives the other P - 1 ranks' predictions, sent at edge() before the call,
    so each rank pays (P - 1) x o_r from its arrival (src/mpi/monitor_source_edge.c); auto
    too, whose monitor gathers at every call whatever it picks; None for the others, which
    wait for no monitor."""
    if algorithm_name != "auto" and not algorithm(algorithm_name).needs_arrivals:
        return None
    return [(ranks - 1) * model.receive_overhead] * ranks


def simulate(
    algorithm_name: str,
    ranks: int,
    count: int,
    elem_size: int = 4,
    model: SimModel | None = None,
    arrivals: Sequence[float] | None = None,
    context: Context | None = None,
    *,
    topology: Topology | None = None,
    noise_mean: float = 0.0,
    noise_seed: int = 1,
    timeline: bool = False,
    max_operations: int = 0,
    own_work: Sequence[float] | None = None,
) -> SimResult:
    """Simulates one all-reduce. `arrivals` are the true arrival times; slt, prr and
    straggler build from context.arrivals, their predictions (by default the true ones, with
    the model's tau). `topology` (topology.Topology) places the ranks on a tree; None is a
    crossbar. `max_operations` > 0 refuses schedules with more ops in all (about 40 bytes
    each). `own_work` (P seconds): how long after its arrival each rank's schedule starts,
    papcoll's own work there, its CPU busy (exchanged_predictions() gives the MPI library's
    with per-call predictions); e-bar still counts from the arrival."""
    model = model or PRESETS["hockney"]
    arrivals = arrival_times(arrivals, "arrivals", ranks)
    if context is None:
        predictions = list(arrivals) if arrivals is not None else [0.0] * ranks
        context = Context(arrivals=predictions, tau=tau(model, ranks, count, elem_size))
    raw_context, keep = _c_context(context)
    raw_model = ffi.new("papcoll_sim_model *", asdict(model))
    options = ffi.new("papcoll_sim_options *")
    options.noise_mean = noise_mean
    options.noise_seed = noise_seed
    options.record_timeline = int(timeline)
    options.max_operations = max_operations
    own = arrival_times(own_work, "own_work", ranks)
    if own is not None:
        for value in own:
            real_number(value, "every entry of own_work (seconds)", low=0.0)
        raw_own_work = ffi.new("double[]", own)
        keep.append(raw_own_work)  # the struct's pointer does not own it
        options.own_work = raw_own_work
    if topology is not None:
        options.topology = topology.c_struct(keep)
    raw_arrivals = ffi.new("double[]", [float(a) for a in arrivals]) if arrivals else ffi.NULL
    finish = ffi.new("double[]", ranks)
    result = ffi.new("papcoll_sim_result *")
    error = ffi.new("char[]", _ERROR_SIZE)
    status = lib.papcoll_simulate(c_string(algorithm_name, "algorithm name"), ranks, count,
                                  elem_size, raw_context, raw_model, options, raw_arrivals,
                                  finish, result, error, _ERROR_SIZE)
    try:
        _raise(status, error)
        spans = [Span(s.rank, s.op, KINDS[s.kind], s.peer, s.bytes, s.start, s.end)
                 for s in (result.timeline[i] for i in range(result.timeline_count))]
        links = [result.link_bytes[i] for i in range(result.link_count)]
    finally:
        lib.papcoll_sim_result_release(result)
    return SimResult(result.average_elapsed, result.max_elapsed, result.makespan,
                     result.operations, result.events, [finish[r] for r in range(ranks)],
                     [float(a) for a in arrivals] if arrivals else [0.0] * ranks,
                     result.memory_bytes, spans, links, result.build_seconds,
                     result.run_seconds)


# ---- auto (src/core/select.c) -----------------------------------------------------------

#: What MPI_Allreduce is taken to run: the best of these (MPICH's and Open MPI's choices).
NATIVE_STAND_INS = ("recursive_doubling", "rabenseifner", "ring")


@dataclass(frozen=True)
class AutoChoice:
    """What `auto` runs for a call (C: papcoll_choose), and why."""

    algorithm: str             # a registered name, or "native"
    from_arrivals: bool        # the arrivals were uneven and the model compared algorithms
    from_groups: bool          # the groups formed a hierarchy: hierarchical ones weighed too
    predicted_seconds: float   # the model's e-bar for the choice
    native_seconds: float      # the model's e-bar for native
    wait_seconds: float = 0.0  # the mean wait for the last arrival, which no algorithm changes
    alternative: str = ""      # what the MPI library's closed loop would measure it against
    alternative_seconds: float = 0.0  # the model's e-bar for the alternative

    @property
    def predicted_gain(self) -> float:
        """native_seconds / predicted_seconds (1.0 where nothing was simulated)."""
        return self.native_seconds / self.predicted_seconds if self.predicted_seconds > 0 else 1.0


def choose(ranks: int, count: int, elem_size: int, model: SimModel, context: Context,
           commutative: bool = True, reproducible: bool = False,
           tuning: str = "") -> AutoChoice:
    """auto's decision for these predicted arrivals (context.arrivals) under the model:
    the rule the MPI library applies (papcoll_choose). The library gives it the arrivals
    rounded to their class (src/mpi/arrival_class.h) and the monitor's three-number model
    (src/mpi/choose.c); here they are what the caller passes, so a simulated auto may choose
    otherwise than a real run with the same arrivals would.

    reproducible: auto in reproducible mode (papcoll_choose_reproducible,
    docs/reproducible.md): the least predicted e-bar among the algorithms that keep the
    canonical order, never native (commutative is then irrelevant).

    tuning: auto's tuning constants in PAPCOLL_TUNING's form ("margin=0.1"; papcoll.tuning),
    over their defaults, as a communicator with that PAPCOLL_TUNING decides."""
    whole_number(ranks, "ranks", 1, INT32_MAX)
    whole_number(count, "count", 0, INT64_MAX)
    whole_number(elem_size, "elem_size", 1, INT32_MAX)
    if not isinstance(reproducible, bool):
        raise TypeError(f"reproducible must be a bool, not {type(reproducible).__name__}")
    raw_context, _keep = _c_context(context)
    raw_tuning = ffi.new("papcoll_tuning *", parse_tuning(tuning))
    raw_context.tuning = raw_tuning
    raw_model = ffi.new("papcoll_sim_model *", asdict(model))
    raw = ffi.new("papcoll_choice *")
    if reproducible:
        _raise(lib.papcoll_choose_reproducible(ranks, count, elem_size, raw_context, raw_model,
                                               raw),
               ffi.new("char[]", b"papcoll_choose_reproducible: no candidate builds"))
    else:
        _raise(lib.papcoll_choose(ranks, count, elem_size, int(commutative), raw_context,
                                  raw_model, raw),
               ffi.new("char[]", b"papcoll_choose: bad input"))
    return AutoChoice(ffi.string(raw.algorithm).decode(), bool(raw.from_arrivals),
                      bool(raw.from_groups),
                      float(raw.predicted_seconds), float(raw.native_seconds),
                      float(raw.wait_seconds), ffi.string(raw.alternative).decode(),
                      float(raw.alternative_seconds))


def simulate_auto(ranks: int, count: int, elem_size: int, model: SimModel,
                  arrivals: Sequence[float], context: Context,
                  **options: Any) -> tuple[AutoChoice, str, SimResult]:
    """auto as the MPI library runs it, with the context's arrivals as its predictions:
    decides (choose), then simulates what it chose; native is simulated as the best of
    NATIVE_STAND_INS. Returns the choice, the algorithm simulated and its result. The
    choice is made with the model's numbers on the context's tree (parameters.tree; a
    crossbar without one) and weighs the hierarchical algorithms where context.groups form
    a hierarchy (choose(): the library's rule on the unrounded arrivals); the run uses
    options (a topology among them) like simulate()."""
    decided = choose(ranks, count, elem_size, model, context)
    if decided.algorithm != "native":
        return decided, decided.algorithm, simulate(decided.algorithm, ranks, count, elem_size,
                                                    model, arrivals, context, **options)
    runs = [(name, simulate(name, ranks, count, elem_size, model, arrivals, context, **options))
            for name in NATIVE_STAND_INS]
    name, result = min(runs, key=lambda run: run[1].average_elapsed)
    return decided, name, result
