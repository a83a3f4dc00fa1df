"""PyTorch integration: papcoll's all-reduce behind DistributedDataParallel (CPU tensors).

DDP averages each bucket of gradients with an all-reduce after the backward pass reaches it;
a communication hook replaces that all-reduce (PyTorch's own `allreduce_hook` calls the
process group's). Ours calls papcoll, so a data-parallel training loop whose ranks do not
arrive together (one slow rank stalls every step: Proficz 2018, Sect. 6) can run PRR or SLT:

    import papcoll, papcoll.torch
    papcoll.torch.init_process_group()              # gloo, only for DDP's own set-up
    model = DistributedDataParallel(net)
    communicator = papcoll.Communicator(MPI.COMM_WORLD, algorithm="prr")
    predictor = papcoll.torch.ArrivalPredictor(communicator, net.fc1)
    model.register_comm_hook(papcoll.torch.HookState(communicator, predictor),
                             papcoll.torch.allreduce_hook)
    for inputs, labels in batches:
        predictor.step_begin()                      # compute_begin()
        loss_function(model(inputs), labels).backward()   # edge() at net.fc1, then the hook
        optimizer.step(); optimizer.zero_grad()

The PAP-aware algorithms need each rank's predicted arrival before the all-reduce
(Proficz 2018, Sect. 3): `ArrivalPredictor` calls `compute_begin()` when a step begins and
`edge(fraction)` when the backward pass reaches a chosen layer (the paper does it before the
last layer, at about 44 % of an iteration). The fraction is given, or measured: the share of
the step this rank had done at that layer in its recent steps. Measuring it per rank is our
choice (the paper fixes 44 %): a slow rank's share differs from a fast one's, and a fraction f
used where the true share is s misplaces the prediction by (time spent) x |1/f - 1/s|.

`allreduce_hook` runs the all-reduce to completion before it returns an already-completed
Future, as the paper's blocking all-reduce does: DDP then cannot overlap the bucket's
communication with the rest of the backward pass. `overlapping_allreduce_hook`
posts papcoll's non-blocking all-reduce instead and returns at once; one completer thread
per HookState waits for the posted all-reduces in order (papcoll_wait, which advances every
papcoll operation while it waits, so it is also their progress thread) and completes each
Future, which DDP waits for at the end of the backward pass. It needs
MPI_THREAD_MULTIPLE (mpi4py's default).
"""

from __future__ import annotations

import collections
import queue
import socket
import threading
import time
import warnings
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist
from mpi4py import MPI

from .communicator import Communicator
from .core import algorithm


@dataclass
class HookState:
    """The state of `allreduce_hook`: the communicator, an optional ArrivalPredictor (told
    when each step's all-reduce begins), and the seconds each all-reduce call took."""

    communicator: Communicator
    predictor: ArrivalPredictor | None = None
    allreduce_seconds: list[float] = field(default_factory=list)
    completer: _Completer | None = None  # overlapping_allreduce_hook's, made on first use


def _hook_state(state: Communicator | HookState, hook: str) -> HookState:
    hook_state = state if isinstance(state, HookState) else HookState(state)
    if not isinstance(hook_state.communicator, Communicator):
        raise TypeError(f"{hook}'s state must be a papcoll Communicator or a "
                        f"papcoll.torch.HookState, not {type(state).__name__}")
    return hook_state


def _bucket_tensor(bucket: dist.GradBucket, hook: str) -> torch.Tensor:
    """The bucket's gradients, refused by name where papcoll cannot reduce them: on a
    device, or of a dtype numpy has no view of (bfloat16: papcoll's buffers said only "numpy
    cannot view this DLPack object"). Every rank refuses alike: DDP checks at construction
    that the ranks' parameters have the same shapes and dtypes, and it lays the buckets out
    alike (rank 0's layout, after the first step)."""
    tensor = bucket.buffer()
    if tensor.device.type != "cpu":
        raise ValueError(f"papcoll reduces CPU tensors; this gradient bucket is on "
                         f"{tensor.device}")
    try:
        torch.empty(0, dtype=tensor.dtype).numpy()
    except TypeError:
        raise TypeError(f"{hook}: this gradient bucket holds {tensor.dtype} gradients, which "
                        "papcoll cannot reduce (numpy has no such dtype); train in float32 or "
                        "float64 (model.float()), or use DDP's own all-reduce") from None
    return tensor


def allreduce_hook(state: Communicator | HookState,
                   bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    """A DDP communication hook: averages the bucket's gradients through papcoll.

    Like PyTorch's `allreduce_hook` it divides by the number of ranks, then sums; the
    Future it returns is already complete. `state` is a Communicator (spanning the same
    ranks as DDP's process group) or a HookState.
    """
    hook_state = _hook_state(state, "allreduce_hook")
    communicator = hook_state.communicator
    tensor = _bucket_tensor(bucket, "allreduce_hook")
    if hook_state.predictor is not None:
        hook_state.predictor.arrived()
    start = time.perf_counter()
    tensor.div_(communicator.size)
    communicator.allreduce(MPI.IN_PLACE, tensor.detach())
    hook_state.allreduce_seconds.append(time.perf_counter() - start)
    future: torch.futures.Future[torch.Tensor] = torch.futures.Future()
    future.set_result(tensor)
    return future


class _Completer:
    """One thread that waits for posted all-reduces in the order they were posted (the
    order DDP posts buckets, the same on every rank) and completes their Futures."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[tuple[Any, ...]] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="papcoll-ddp-completer",
                                        daemon=True)
        self._thread.start()

    def submit(self, request: Any, future: torch.futures.Future[torch.Tensor],
               tensor: torch.Tensor, seconds: list[float], start: float) -> None:
        self._queue.put((request, future, tensor, seconds, start))

    def _run(self) -> None:
        while True:
            request, future, tensor, seconds, start = self._queue.get()
            try:
                request.wait()  # papcoll_wait: cffi releases the GIL while it waits
                seconds.append(time.perf_counter() - start)
                future.set_result(tensor)
            except BaseException as error:  # noqa: BLE001 - handed to DDP through the Future
                future.set_exception(error)


def overlapping_allreduce_hook(state: Communicator | HookState,
                               bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    """A DDP communication hook that overlaps: posts papcoll's non-blocking all-reduce of
    the bucket (divided by the number of ranks, as allreduce_hook does) and returns a
    Future that the state's completer thread completes; DDP goes on with the backward pass
    meanwhile. allreduce_seconds then holds each all-reduce's time from post to completion,
    overlapped time included."""
    if not isinstance(state, HookState):
        # the completer thread lives in the state: one made per call would start a thread
        # per bucket and lose the order of completion
        raise TypeError("overlapping_allreduce_hook's state must be a papcoll.torch.HookState "
                        f"(it keeps the completer thread), not {type(state).__name__}")
    hook_state = _hook_state(state, "overlapping_allreduce_hook")
    if MPI.Query_thread() != MPI.THREAD_MULTIPLE:
        raise RuntimeError("overlapping_allreduce_hook completes all-reduces on a second "
                           "thread, which needs MPI_THREAD_MULTIPLE (mpi4py's default "
                           "unless mpi4py.rc.thread_level is changed)")
    tensor = _bucket_tensor(bucket, "overlapping_allreduce_hook")
    if hook_state.predictor is not None:
        hook_state.predictor.arrived()
    start = time.perf_counter()
    tensor.div_(hook_state.communicator.size)
    request = hook_state.communicator.iallreduce(MPI.IN_PLACE, tensor.detach())
    future: torch.futures.Future[torch.Tensor] = torch.futures.Future()
    if hook_state.completer is None:
        hook_state.completer = _Completer()
    hook_state.completer.submit(request, future, tensor, hook_state.allreduce_seconds, start)
    return future


# DDP checks a hook's annotations when it is registered, comparing them with the objects;
# under `from __future__ import annotations` they are strings, so give it the objects.
for _hook in (allreduce_hook, overlapping_allreduce_hook):
    _hook.__annotations__.update(bucket=dist.GradBucket, state=Any,
                                 **{"return": torch.futures.Future[torch.Tensor]})


class ArrivalPredictor:
    """Feeds papcoll's arrival monitor from a training loop (Proficz 2018, Sect. 3).

    For auto and the PAP-aware algorithms (slt, prr, straggler; it refuses a communicator
    running anything else, which would leave the predictions unreceived). step_begin() at
    the start of each step calls compute_begin(); a backward pre-hook on `layer` calls
    edge(fraction) the first time the backward pass reaches it in the step.
    With `fraction` None it is measured: the mean, over this rank's last `window` steps, of
    (time at the layer) / (time at the all-reduce), both counted from step_begin(). Until
    one step has been measured no prediction is made (papcoll then runs the plain ring on
    every rank). The all-reduce's begin is reported by `allreduce_hook` (through HookState)
    or by calling arrived().
    """

    def __init__(self, communicator: Communicator, layer: torch.nn.Module,
                 fraction: float | None = None, window: int = 8) -> None:
        if fraction is not None and not 0.0 < fraction <= 1.0:
            raise ValueError(f"fraction must be in (0, 1], not {fraction}")
        if window < 1:
            raise ValueError(f"window must be at least 1, not {window}")
        self.communicator = communicator
        self.fixed_fraction = fraction
        self._shares: collections.deque[float] = collections.deque(maxlen=window)
        self._begin: float | None = None
        self._edge_time: float | None = None
        self._arrived = True
        self._checked_algorithm = ""
        self._warned = False
        # A hook on the gradient of the layer's output fires when the backward pass reaches
        # the layer. (A full backward pre-hook would wrap the output in a view, which breaks
        # models that modify it in place, such as nn.ReLU(inplace=True).)
        self._handle = layer.register_forward_hook(self._on_forward)

    @property
    def fraction(self) -> float | None:
        """The fraction edge() is called with (None: not measured yet)."""
        if self.fixed_fraction is not None:
            return self.fixed_fraction
        return sum(self._shares) / len(self._shares) if self._shares else None

    def step_begin(self) -> None:
        """A step (compute phase) begins: calls compute_begin()."""
        self._check_algorithm()
        self.communicator.compute_begin()
        self._begin, self._edge_time, self._arrived = time.perf_counter(), None, False

    def _on_forward(self, module: torch.nn.Module, inputs: Any, output: Any) -> None:
        outputs = output if isinstance(output, (tuple, list)) else (output,)
        tensor = next((item for item in outputs
                       if isinstance(item, torch.Tensor) and item.requires_grad), None)
        if tensor is not None:  # None in evaluation under torch.no_grad()
            tensor.register_hook(self._on_backward)

    def _on_backward(self, gradient: torch.Tensor) -> None:
        if self._begin is None or self._edge_time is not None or self._arrived:
            return
        self._edge_time = time.perf_counter()
        fraction = self.fraction
        if fraction is not None:
            self.communicator.edge(fraction)

    def _check_algorithm(self) -> None:
        """Only auto and the PAP-aware algorithms consume predictions: edge() before any
        other call would leave its messages unreceived (the monitor's protocol counts their
        calls only)."""
        name = self.communicator.algorithm
        if name != self._checked_algorithm:
            if name != "auto" and not algorithm(name).needs_arrivals:
                raise ValueError(f"ArrivalPredictor feeds auto and the PAP-aware algorithms "
                                 f"(slt, prr, straggler); the communicator runs '{name}', "
                                 "which takes no predictions: set its algorithm or drop the "
                                 "predictor")
            self._checked_algorithm = name

    def arrived(self) -> None:
        """This step's all-reduce begins: measures the step's share done at the layer."""
        if self._arrived or self._begin is None:
            return
        self._arrived = True
        if self._edge_time is None and not self._warned:
            self._warned = True
            warnings.warn(
                "papcoll ArrivalPredictor: the all-reduce began before the backward pass "
                "reached the predictor's layer, so no prediction was made (prr/slt run the "
                "plain ring). DDP's first gradient bucket holds only 1 MiB after the first "
                "step unless bucket_cap_mb is given: choose a layer nearer the output, or "
                "pass DistributedDataParallel(..., bucket_cap_mb=...) large enough for the "
                "model", RuntimeWarning, stacklevel=2)
        if self._edge_time is not None:
            elapsed = time.perf_counter() - self._begin
            share = (self._edge_time - self._begin) / elapsed if elapsed > 0 else 1.0
            self._shares.append(min(1.0, max(share, 1e-3)))

    def remove(self) -> None:
        """Removes the backward hook from the layer."""
        self._handle.remove()


def init_process_group(comm: MPI.Intracomm | None = None, backend: str = "gloo",
                       timeout_seconds: float = 300.0) -> None:
    """torch.distributed's process group over the ranks of `comm` (default COMM_WORLD),
    for programs started by mpiexec (no MASTER_ADDR to read): rank 0 opens a TCP store and
    sends its address to the others through MPI. DDP needs the group for its own set-up
    (broadcasting the initial parameters); the gradients then go through papcoll."""
    comm = MPI.COMM_WORLD if comm is None else comm
    hosts = comm.allgather(socket.gethostname())
    host = "127.0.0.1" if len(set(hosts)) == 1 else hosts[0]
    timeout = timedelta(seconds=timeout_seconds)
    store = None
    if comm.Get_rank() == 0:
        # wait_for_workers=False: the others learn the port only after this returns
        store = dist.TCPStore(host, 0, comm.Get_size(), is_master=True, timeout=timeout,
                              wait_for_workers=False)
    port = comm.bcast(store.port if store is not None else None, root=0)
    if store is None:
        store = dist.TCPStore(host, port, comm.Get_size(), is_master=False, timeout=timeout)
    dist.init_process_group(backend, store=store, rank=comm.Get_rank(),
                            world_size=comm.Get_size(), timeout=timeout)
