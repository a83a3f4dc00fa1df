"""Run under mpiexec: papcoll.torch's DDP hooks misused, each misuse ending on every rank
with a clear message (an exception naming the problem), never a hang or a wrong result.

The misuses: a hook registered twice on one model; DDP over a model whose ranks hold
different parameter shapes; gradients of a dtype papcoll cannot reduce (bfloat16, which
numpy has no dtype for); bucket_cap_mb differing between ranks (DDP keeps the
buckets alike: the mean must still be right); a HookState whose communicator was freed; the
overlapping hook given a bare Communicator; DDP before init_process_group. Prints
"N passed, M failed"; exits 1 if any failed.
"""

from __future__ import annotations

import sys

import papcoll
import papcoll.torch
import torch
import torch.distributed as dist
from mpi4py import MPI
from tally import Tally
from torch.nn.parallel import DistributedDataParallel

world = MPI.COMM_WORLD
rank, size = world.Get_rank(), world.Get_size()
torch.set_num_threads(1)
tally = Tally(world)
check, expect_error = tally.check, tally.expect_error
HOOKS = {"blocking": papcoll.torch.allreduce_hook,
         "overlapping": papcoll.torch.overlapping_allreduce_hook}


def network(width: int = 32, dtype: torch.dtype = torch.float32) -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(12, width), torch.nn.ReLU(),
                               torch.nn.Linear(width, 3)).to(dtype)


def backward(model: torch.nn.Module, dtype: torch.dtype = torch.float32) -> None:
    inputs = torch.randn(8, 12, generator=torch.Generator().manual_seed(rank)).to(dtype)
    model(inputs).sum().backward()


# before init_process_group: DDP needs the default group, and says so
expect_error("DDP before init_process_group", (RuntimeError, ValueError),
             "init_process_group", lambda: DistributedDataParallel(network()))
# a short timeout: DDP's own check of the parameter shapes (below) leaves the ranks that
# found nothing wrong in gloo until it expires
papcoll.torch.init_process_group(world, timeout_seconds=20)

for hook_name, hook in HOOKS.items():
    with papcoll.Communicator(world, algorithm="ring") as communicator:
        # registered twice: DDP refuses the second
        model = DistributedDataParallel(network())
        state = papcoll.torch.HookState(communicator)
        model.register_comm_hook(state, hook)
        expect_error(f"{hook_name}: a hook registered twice", RuntimeError, "only be called once",
                     lambda model=model, state=state, hook=hook:
                     model.register_comm_hook(state, hook))
        backward(model)  # the first registration still works
        check(f"{hook_name}: the model still trains after the refused registration",
              all(p.grad is not None for p in model.parameters()))

        # gradients papcoll cannot reduce: refused by name in the hook, on every rank
        for dtype, words in ((torch.bfloat16, "bfloat16"),):
            model = DistributedDataParallel(network(dtype=dtype))
            model.register_comm_hook(papcoll.torch.HookState(communicator), hook)
            expect_error(f"{hook_name}: {words} gradients", Exception, words,
                         lambda model=model, dtype=dtype: backward(model, dtype))

        # bucket_cap_mb that differs between ranks: DDP lays the buckets out as rank 0's
        # after the first step, so the hook gets the same bucket on every rank and the
        # mean is right
        cap = 0.0005 if rank == 0 else 25.0
        model = DistributedDataParallel(network(), bucket_cap_mb=cap)
        model.register_comm_hook(papcoll.torch.HookState(communicator), hook)
        for _ in range(2):
            model.zero_grad()
            backward(model)
        reference = network()
        backward(reference)
        for mine, local in zip(model.parameters(), reference.parameters(), strict=True):
            mean = torch.from_numpy(world.allreduce(local.grad.numpy())) / size
            check(f"{hook_name}: bucket_cap_mb differing between ranks, the mean gradient",
                  torch.allclose(mine.grad, mean, rtol=1e-5, atol=1e-6))

    # a freed communicator: refused by name
    model = DistributedDataParallel(network())
    model.register_comm_hook(papcoll.torch.HookState(communicator), hook)
    expect_error(f"{hook_name}: a freed communicator", Exception, "has been freed",
                 lambda model=model: backward(model))

# the overlapping hook keeps its completer in a HookState
with papcoll.Communicator(world) as communicator:
    model = DistributedDataParallel(network())
    model.register_comm_hook(communicator, papcoll.torch.overlapping_allreduce_hook)
    expect_error("overlapping hook with a bare Communicator", Exception, "HookState",
                 lambda: backward(model))

# different parameter shapes on different ranks: DDP's own check, before any hook runs,
# raises on every rank, naming the sizes where they differ from rank 0's and with gloo's
# timeout (init_process_group's timeout_seconds) on rank 0
if size > 1:
    expect_error("parameter shapes that differ between ranks", RuntimeError,
                 "appears not to match sizes" if rank > 0 else "Timed out",
                 lambda: DistributedDataParallel(network(width=32 + rank)))
dist.destroy_process_group()
tally.finish()
sys.exit(0)
