#!/usr/bin/env python3
"""Data-parallel SGD through papcoll: Proficz 2018 Section 6 (Table 5) on a small CNN.

Every rank trains the same CNN on its share of each global mini-batch of scikit-learn's
handwritten digits (1797 8x8 images that ship inside the package: nothing is downloaded);
DistributedDataParallel averages the gradients after every backward pass through papcoll's
DDP hook (papcoll.torch.allreduce_hook). One rank can be made slow (`--straggler`), which
is what makes the ranks arrive at the all-reduce apart, as the paper's imbalanced
CIFAR-10 training did. PRR and SLT get each rank's predicted arrival from
papcoll.torch.ArrivalPredictor: compute_begin() when a step begins, edge() when the backward
pass reaches the first fully connected layer (reached after the last layer's backward, as
the paper calls edge() before its last layer).

    python examples/train_sgd.py --ranks 4 --algorithm ring,prr --straggler 1:20
    python examples/train_sgd.py --ranks 4 --algorithm straggler,auto,native --straggler 1:10
    mpiexec -n 4 python examples/train_sgd.py --algorithm ring,prr,slt --straggler random:20

It prints Table 5's columns: the all-reduce's average elapsed time e-bar (per call, from
a rank's arrival at the all-reduce to its return, averaged over ranks and steps) and the
total training time, each also relative to ring's (papcoll's ratio convention: the
algorithm's time / ring's, below 1 is faster; the paper gives the inverse, a speedup), and
the accuracy on the held-out test images, plus whether every rank ended with bitwise
identical weights. Ring always runs, as the baseline; "native" is MPI_Allreduce itself
(mpi4py's, in a DDP hook timed like papcoll's), "auto" papcoll's choice from the arrivals
it saw in earlier calls (the table's note says what it ran). With --repeats N the
algorithms run interleaved (ring, prr, ring, prr, ...) and the table gives medians. The
straggler sleeps at the start of its forward pass, before the layer where edge() is
called, so its slowness is in the prediction, as a slow rank's longer compute would be.

With --reproducible papcoll runs in reproducible mode (docs/reproducible.md): every
all-reduce gives the canonical order's bits, so the final weights are the same whatever the
algorithm or the slow rank; the baseline is then canonical_scatter (ring does not keep the
order and is refused), and the table's "weights" column shows each run's weight digest
(examples/reproducible_training.py compares them across runs).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

# Set by the MPI launchers papcoll supports (MPICH's Hydra, Open MPI): already under mpiexec.
_LAUNCHED_VARIABLES = ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK")


@dataclass(frozen=True)
class Straggler:
    """Which rank is late by how many seconds at a step: a fixed rank, or a random one per
    step (seeded, the same choice on every rank)."""

    rank: int | None   # None: a random rank each step
    seconds: float
    ranks: int

    @staticmethod
    def parse(text: str, ranks: int) -> Straggler | None:
        if text == "none":
            return None
        who, _, milliseconds = text.partition(":")
        try:
            seconds = float(milliseconds) / 1000.0
            rank = None if who == "random" else int(who)
        except ValueError:
            raise SystemExit(f"--straggler must be RANK:MS, random:MS or none, not "
                             f"{text!r}") from None
        if not seconds >= 0 or (rank is not None and not 0 <= rank < ranks):
            raise SystemExit(f"--straggler {text!r}: the rank must be in 0..{ranks - 1} and "
                             "the delay a non-negative number of milliseconds")
        return Straggler(rank, seconds, ranks)

    def delay(self, rank: int, step: int, seed: int) -> float:
        """This rank's delay at this step, in seconds."""
        import numpy as np

        late = self.rank
        if late is None:
            late = int(np.random.default_rng([seed, step]).integers(self.ranks))
        return self.seconds if rank == late else 0.0


@dataclass
class RunResult:
    algorithm: str
    repeat: int
    ebar_seconds: float          # the all-reduce's average elapsed time, over ranks and steps
    ebar_seconds_per_rank: list[float]  # the same per rank (the late rank waits least)
    training_seconds: float      # the training loop, from a barrier to a barrier
    test_accuracy: float
    identical_weights: bool
    steps: int
    predicted_calls: int         # slt/prr/straggler calls that ran on predictions (rank 0's)
    ran: dict[str, int] = field(default_factory=dict)  # auto: what it ran, calls (rank 0's)
    weights_digest: str = ""     # SHA-256 of the final weights (the same on every rank)


@dataclass
class NativeHookState:
    """The state of native_allreduce: the communicator and the seconds of each call."""

    comm: Any
    allreduce_seconds: list[float] = field(default_factory=list)


def native_allreduce(state: NativeHookState, bucket: Any) -> Any:
    """A DDP communication hook that averages the bucket with MPI_Allreduce itself
    (mpi4py), timed as papcoll.torch.allreduce_hook times papcoll's calls."""
    import torch
    from mpi4py import MPI

    tensor = bucket.buffer()
    start = time.perf_counter()
    tensor.div_(state.comm.Get_size())
    state.comm.Allreduce(MPI.IN_PLACE, tensor.detach().numpy())
    state.allreduce_seconds.append(time.perf_counter() - start)
    future: Any = torch.futures.Future()
    future.set_result(tensor)
    return future


def gloo_allreduce(state: NativeHookState, bucket: Any) -> Any:
    """PyTorch's own way, as DDP does without a hook: torch.distributed's asynchronous
    all-reduce on the gloo process group (its own thread, so it overlaps the backward
    pass); timed from post to completion."""
    import torch.distributed as dist

    tensor = bucket.buffer()
    start = time.perf_counter()
    tensor.div_(state.comm.Get_size())
    future = dist.all_reduce(tensor, async_op=True).get_future()

    def done(completed: Any) -> Any:
        state.allreduce_seconds.append(time.perf_counter() - start)
        return completed.value()[0]

    return future.then(done)


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=None,
                        help="start this many ranks with mpiexec (omit under mpiexec)")
    parser.add_argument("--algorithm", default="ring,prr",
                        help="comma-separated papcoll algorithms (ring|prr|slt|straggler|"
                             "auto|...), each with +overlap for the overlapping hook "
                             "(non-blocking all-reduce), native (MPI_Allreduce) or gloo "
                             "(torch.distributed's own); ring always runs as the baseline")
    parser.add_argument("--straggler", default="none",
                        help="RANK:MS (that rank is MS ms late every step), random:MS "
                             "(a random rank each step) or none")
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=16, help="images per rank per step")
    parser.add_argument("--learning-rate", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=1,
                        help="training runs per algorithm, interleaved; medians reported")
    parser.add_argument("--edge-fraction", type=float, default=None,
                        help="the fraction edge() reports (default: measured per rank)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads per rank")
    parser.add_argument("--reproducible", action="store_true",
                        help="papcoll's reproducible mode: identical weights whatever the "
                             "algorithm or arrivals (the baseline becomes canonical_scatter)")
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    arguments = parser.parse_args()
    for name in ("epochs", "batch_size", "repeats", "threads"):
        if getattr(arguments, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if arguments.edge_fraction is not None and not 0 < arguments.edge_fraction <= 1:
        parser.error("--edge-fraction must be in (0, 1]")
    return arguments


def launch(ranks: int) -> int:
    """Runs this script on `ranks` processes through papcoll's launcher; its exit code."""
    from papcoll.lab.launcher import mpiexec_command

    arguments = sys.argv[1:]
    index = arguments.index("--ranks") if "--ranks" in arguments else None
    if index is not None:
        del arguments[index : index + 2]
    else:
        arguments = [a for a in arguments if not a.startswith("--ranks=")]
    argv, environment = mpiexec_command(ranks, [sys.executable, __file__, *arguments])
    return subprocess.run(argv, env=environment).returncode


def load_digits_split(seed: int) -> tuple[Any, Any, Any, Any]:
    """scikit-learn's digits as float32 tensors (N, 1, 8, 8), 80 % train / 20 % test."""
    import numpy as np
    import torch
    from sklearn.datasets import load_digits

    digits = load_digits()
    images = torch.from_numpy((digits.images / 16.0).astype(np.float32)).unsqueeze(1)
    labels = torch.from_numpy(digits.target.astype(np.int64))
    order = torch.from_numpy(np.random.default_rng(seed).permutation(len(labels)))
    cut = int(0.8 * len(labels))
    train, test = order[:cut], order[cut:]
    return images[train], labels[train], images[test], labels[test]


def make_network() -> Any:
    """Two convolutions, a pooling and two fully connected layers (137,962 parameters)."""
    from torch import nn

    class DigitsNetwork(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(),
                nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
            self.fc1 = nn.Linear(16 * 4 * 4, 512)
            self.fc2 = nn.Linear(512, 10)

        def forward(self, images: Any) -> Any:
            hidden = self.features(images).flatten(1)
            return self.fc2(nn.functional.relu(self.fc1(hidden)))

    return DigitsNetwork()


def train_once(algorithm: str, repeat: int, data: tuple[Any, Any, Any, Any],
               straggler: Straggler | None, arguments: argparse.Namespace) -> RunResult:
    import papcoll
    import papcoll.torch
    import torch
    from mpi4py import MPI
    from torch.nn.parallel import DistributedDataParallel

    world = MPI.COMM_WORLD
    rank, size = world.Get_rank(), world.Get_size()
    train_images, train_labels, test_images, test_labels = data
    torch.manual_seed(arguments.seed)  # the same initial weights for every algorithm
    network = make_network()
    model = DistributedDataParallel(network)
    communicator: papcoll.Communicator | None = None
    predictor: papcoll.torch.ArrivalPredictor | None = None
    state: papcoll.torch.HookState | NativeHookState
    name, overlap = algorithm.removesuffix("+overlap"), algorithm.endswith("+overlap")
    if algorithm in ("native", "gloo"):
        state = NativeHookState(world)
        baseline = native_allreduce if algorithm == "native" else gloo_allreduce
        # a lambda: DDP compares a hook's annotations with its own types, and ours are text
        model.register_comm_hook(state, lambda hook_state, bucket:
                                 baseline(hook_state, bucket))
    else:
        communicator = papcoll.Communicator(world, algorithm=name,
                                            reproducible=arguments.reproducible)
        # "auto" takes its arrivals from earlier calls' waits; the predictor's edge() feeds
        # the algorithms that need arrivals (slt, prr, straggler) and refuses the others.
        needs_arrivals = name != "auto" and papcoll.algorithm(name).needs_arrivals
        predictor = (papcoll.torch.ArrivalPredictor(communicator, network.fc1,
                                                    fraction=arguments.edge_fraction)
                     if needs_arrivals else None)
        state = papcoll.torch.HookState(communicator, predictor)
        model.register_comm_hook(state, papcoll.torch.overlapping_allreduce_hook if overlap
                                 else papcoll.torch.allreduce_hook)
    optimizer = torch.optim.SGD(model.parameters(), lr=arguments.learning_rate, momentum=0.9)
    loss_function = torch.nn.CrossEntropyLoss()
    global_batch = size * arguments.batch_size
    steps_per_epoch = len(train_labels) // global_batch
    predicted_calls = step = 0
    ran: Counter[str] = Counter()

    world.Barrier()
    start = time.perf_counter()
    for epoch in range(arguments.epochs):
        order = torch.randperm(len(train_labels),
                               generator=torch.Generator().manual_seed(arguments.seed + epoch))
        for batch in range(steps_per_epoch):
            first = batch * global_batch + rank * arguments.batch_size
            indices = order[first : first + arguments.batch_size]
            if predictor is not None:
                predictor.step_begin()
            if straggler is not None and (delay := straggler.delay(rank, step, arguments.seed)):
                time.sleep(delay)
            loss = loss_function(model(train_images[indices]), train_labels[indices])
            optimizer.zero_grad()
            loss.backward()  # edge() at fc1, then the hook's papcoll all-reduce
            optimizer.step()
            if predictor is not None and predictor.communicator.last_prediction().predicted:
                predicted_calls += 1
            if name == "auto" and communicator is not None and not overlap:
                ran[communicator.last_choice().algorithm] += 1
            step += 1
    world.Barrier()
    training_seconds = time.perf_counter() - start

    with torch.no_grad():
        predictions = network(test_images).argmax(dim=1)
    accuracy = float((predictions == test_labels).float().mean())
    digest = hashlib.sha256(b"".join(p.detach().numpy().tobytes()
                                     for p in network.parameters())).hexdigest()
    identical = len(set(world.allgather(digest))) == 1
    per_rank = world.allgather(statistics.fmean(state.allreduce_seconds))
    ebar = statistics.fmean(per_rank)
    if predictor is not None:
        predictor.remove()
    if communicator is not None:
        communicator.free()
    return RunResult(algorithm, repeat, ebar, per_rank, training_seconds, accuracy, identical,
                     step, predicted_calls, dict(ran.most_common()), digest)


def baseline_algorithm(arguments: argparse.Namespace) -> str:
    """ring, or in reproducible mode canonical_scatter: ring does not keep its order."""
    return "canonical_scatter" if arguments.reproducible else "ring"


def print_table(results: list[RunResult], arguments: argparse.Namespace, ranks: int) -> None:
    from rich.console import Console
    from rich.table import Table

    by_algorithm: dict[str, list[RunResult]] = {}
    for result in results:
        by_algorithm.setdefault(result.algorithm, []).append(result)
    baseline = baseline_algorithm(arguments)
    ring_ebar = statistics.median(r.ebar_seconds for r in by_algorithm[baseline])
    ring_total = statistics.median(r.training_seconds for r in by_algorithm[baseline])
    mode = ", reproducible mode" if arguments.reproducible else ""
    table = Table(title=f"Data-parallel SGD, digits CNN, P = {ranks}, straggler "
                        f"{arguments.straggler}{mode}, {by_algorithm[baseline][0].steps} "
                        f"steps, medians of {arguments.repeats} (Proficz 2018 Table 5; times "
                        f"relative to {baseline}: below 1 is faster)",
                  caption="same weights: every rank ended with the same weights; weights "
                          "digest: the final weights' SHA-256 (first 8 hex digits), one per "
                          "run")
    ratios = (f"e-bar / {baseline}", f"time / {baseline}")  # kept whole: a / split is unreadable
    # two columns were headed "weights": whether every rank ended with the same weights,
    # and the weights' digest (which tells runs apart: reproducible mode's point)
    for column in ("algorithm", "all-reduce e-bar (ms)", ratios[0], "training time (s)",
                   ratios[1], "test accuracy", "same weights", "weights digest"):
        table.add_column(column, justify="left" if column == "algorithm" else "right",
                         no_wrap=column in (*ratios, "test accuracy"))
    for algorithm, runs in by_algorithm.items():
        ebar = statistics.median(r.ebar_seconds for r in runs)
        total = statistics.median(r.training_seconds for r in runs)
        table.add_row(algorithm, f"{ebar * 1e3:.2f}", f"{ebar / ring_ebar:.3f}",
                      f"{total:.2f}", f"{total / ring_total:.3f}",
                      f"{statistics.median(r.test_accuracy for r in runs):.3f}",
                      "yes" if all(r.identical_weights for r in runs) else "NO",
                      ",".join(sorted({r.weights_digest[:8] for r in runs})))
    console = Console(width=120)
    console.print(table)
    if "auto" in by_algorithm:
        ran = sum((Counter(run.ran) for run in by_algorithm["auto"]), Counter())
        # plain text: rich would colour the numbers where mpiexec hands it a terminal
        # (Open MPI's does), and a reader of the output should see them as written
        console.print("auto ran " + ", ".join(f"{name} in {calls}" for name, calls in
                                              ran.most_common())
                      + f" of {sum(ran.values())} steps", highlight=False)
    line = verdict(by_algorithm, arguments.straggler)
    if line:
        console.print(line, highlight=False)


def verdict(by_algorithm: dict[str, list[RunResult]], straggler: str) -> str | None:
    """The run's last line: papcoll's auto against MPI_Allreduce (native), by training time
    and all-reduce time: faster or slower only where every repeat of one lies below every
    repeat of the other, else "no clear difference" (the repeats' ranges overlap), with the
    median ratio and its range. None without both auto and native."""
    if "auto" not in by_algorithm or "native" not in by_algorithm:
        return None

    def compared(what: str, ours: list[float], theirs: list[float]) -> str:
        ratios = sorted(a / b for a, b in zip(ours, theirs, strict=False))
        shown = (f"{statistics.median(ratios):.2f} x MPI_Allreduce's"
                 + (f" ({ratios[0]:.2f}-{ratios[-1]:.2f} over {len(ratios)} repeats)"
                    if len(ratios) > 1 else ""))
        if max(ours) < min(theirs):
            return f"{what} faster, {shown}"
        if min(ours) > max(theirs):
            return f"{what} slower, {shown}"
        return f"{what} no clear difference, {shown}"

    auto, native = by_algorithm["auto"], by_algorithm["native"]
    who, _, delay = straggler.partition(":")
    late = ("no slow rank" if straggler == "none" else
            f"{'rank ' + who if who.isdigit() else 'a random rank'} {delay} ms late a step")
    return ("Verdict, with " + late + ": papcoll's auto against MPI_Allreduce: "
            + compared("training", [r.training_seconds for r in auto],
                       [r.training_seconds for r in native]) + "; "
            + compared("all-reduce", [r.ebar_seconds for r in auto],
                       [r.ebar_seconds for r in native])
            + " (faster or slower only where the repeats' ranges do not overlap).")


def main() -> int:
    arguments = parse_arguments()
    launched = any(variable in os.environ for variable in _LAUNCHED_VARIABLES)
    if arguments.ranks is not None and not launched:
        return launch(arguments.ranks)

    import papcoll
    from mpi4py import MPI

    world = MPI.COMM_WORLD
    algorithms = [name.strip() for name in arguments.algorithm.split(",") if name.strip()]
    for algorithm in algorithms:
        name = algorithm.removesuffix("+overlap")
        if name not in ("auto", "native", "gloo"):
            try:
                info = papcoll.algorithm(name)
            except papcoll.PapcollError as error:
                raise SystemExit(f"--algorithm: {error}") from None
            if info.reduce_scatter:
                raise SystemExit(f"--algorithm: '{name}' is a reduce-scatter, not an "
                                 "all-reduce")
        if algorithm.endswith("+overlap") and name in ("native", "gloo"):
            raise SystemExit(f"--algorithm: '{algorithm}': +overlap is for papcoll's "
                             "algorithms (gloo overlaps already; native is blocking)")
    baseline = baseline_algorithm(arguments)
    algorithms = [baseline] + [name for name in algorithms if name != baseline]
    straggler = Straggler.parse(arguments.straggler, world.Get_size())
    import papcoll.torch  # torch takes seconds to import: after the checks above
    import torch

    torch.set_num_threads(arguments.threads)
    data = load_digits_split(arguments.seed)
    if len(data[1]) < world.Get_size() * arguments.batch_size:
        raise SystemExit(f"--batch-size {arguments.batch_size} x {world.Get_size()} ranks "
                         f"exceeds the {len(data[1])} training images")
    papcoll.torch.init_process_group(world)  # gloo, for DDP's own set-up only
    results = [train_once(algorithm, repeat, data, straggler, arguments)
               for repeat in range(arguments.repeats) for algorithm in algorithms]
    if world.Get_rank() == 0:
        print_table(results, arguments, world.Get_size())
        if arguments.json is not None:
            arguments.json.write_text(json.dumps(
                {"ranks": world.Get_size(), "straggler": arguments.straggler,
                 "runs": [asdict(result) for result in results]}, indent=2) + "\n")
    return 0 if all(result.identical_weights for result in results) else 1


if __name__ == "__main__":
    sys.exit(main())
