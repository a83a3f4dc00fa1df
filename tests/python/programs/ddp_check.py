"""Run under mpiexec: papcoll.torch's DDP hook and ArrivalPredictor on CPU tensors.

For ring and prr through papcoll.torch.allreduce_hook, and ring and auto through
overlapping_allreduce_hook (non-blocking, several small buckets in flight): a DDP model must
get, after each backward pass, the mean over ranks of the gradients each rank computes on
its own batch (computed here on a plain copy of the model and averaged with mpi4py), and
all ranks must hold bitwise identical weights after the SGD steps. With prr the
ArrivalPredictor must have measured a fraction in (0, 1] and the calls after the first
must have run on predictions. Prints "N passed, M failed"; exits 1 if any failed.
"""

from __future__ import annotations

import copy
import hashlib
import warnings

import numpy as np
import papcoll
import papcoll.torch
import torch
from mpi4py import MPI
from tally import Tally
from torch.nn.parallel import DistributedDataParallel

world = MPI.COMM_WORLD
rank, size = world.Get_rank(), world.Get_size()
torch.set_num_threads(1)
papcoll.torch.init_process_group(world)
tally = Tally(world)
check, expect_error = tally.check, tally.expect_error


def mean_over_ranks(tensor: torch.Tensor) -> np.ndarray:
    local = tensor.detach().numpy().astype(np.float64)
    total = np.empty_like(local)
    world.Allreduce(local, total, op=MPI.SUM)
    return total / size


STEPS = 4
HOOKS = {"blocking": papcoll.torch.allreduce_hook,
         "overlapping": papcoll.torch.overlapping_allreduce_hook}
for algorithm, hook in (("ring", "blocking"), ("prr", "blocking"), ("ring", "overlapping"),
                        ("auto", "overlapping")):
    torch.manual_seed(0)
    # The predictor's layer feeds an in-place ReLU, as in torchvision's models.
    network = torch.nn.Sequential(torch.nn.Linear(12, 32), torch.nn.ReLU(inplace=True),
                                  torch.nn.Linear(32, 3))
    reference = copy.deepcopy(network)  # the same weights, no DDP: local gradients only
    # overlapping: buckets of about 500 bytes, so several are in flight at once
    model = DistributedDataParallel(network, **({"bucket_cap_mb": 0.0005}
                                                if hook == "overlapping" else {}))
    communicator = papcoll.Communicator(world, algorithm=algorithm)
    predictor = (papcoll.torch.ArrivalPredictor(communicator, network[0])
                 if algorithm == "prr" else None)
    state = papcoll.torch.HookState(communicator, predictor)
    model.register_comm_hook(state, HOOKS[hook])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    reference_optimizer = torch.optim.SGD(reference.parameters(), lr=0.1)
    predictions = []
    for step in range(STEPS):
        generator = torch.Generator().manual_seed(1000 * step + rank)
        inputs = torch.randn(8, 12, generator=generator)
        labels = torch.randint(0, 3, (8,), generator=generator)
        if predictor is not None:
            predictor.step_begin()
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(inputs), labels).backward()
        reference_optimizer.zero_grad()
        torch.nn.functional.cross_entropy(reference(inputs), labels).backward()
        for (name, parameter), local in zip(network.named_parameters(),
                                            reference.parameters()):
            expected = mean_over_ranks(local.grad)
            check(f"{algorithm} {hook} step {step} {name}: gradient is the mean over ranks",
                  np.allclose(parameter.grad.numpy(), expected, rtol=1e-5, atol=1e-6),
                  f"max error {np.abs(parameter.grad.numpy() - expected).max()}")
            local.grad.copy_(parameter.grad)  # keep the two models in step
        optimizer.step()
        reference_optimizer.step()
        predictions.append(communicator.last_prediction().predicted)
    digest = hashlib.sha256(b"".join(p.detach().numpy().tobytes()
                                     for p in network.parameters())).hexdigest()
    check(f"{algorithm} {hook}: identical weights on every rank",
          len(set(world.allgather(digest))) == 1)
    calls = len(state.allreduce_seconds)
    check(f"{algorithm} {hook}: " + ("one all-reduce per step" if hook == "blocking"
                                     else "several buckets per step"),
          # (DDP rebuilds its buckets after the first step: the count per step may change)
          calls == STEPS if hook == "blocking" else calls > STEPS,
          str(calls))
    if predictor is not None:
        fraction = predictor.fraction
        check("prr: measured edge fraction in (0, 1]",
              fraction is not None and 0 < fraction <= 1, str(fraction))
        check("prr: the first step has no measured fraction, so it runs the ring",
              not predictions[0])
        check("prr: later steps ran on predictions", all(predictions[1:]), str(predictions))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            predictor.step_begin()
            predictor.arrived()  # an all-reduce before the layer was reached: warned
        check("prr: a step without edge() before its all-reduce is warned about",
              any("before the backward pass reached" in str(w.message) for w in caught))
        predictor.remove()
    communicator.free()

with papcoll.Communicator(world, algorithm="ring") as spare:
    layer = torch.nn.Linear(1, 1)
    expect_error("fraction 1.5 refused", ValueError, "(0, 1]",
                 lambda: papcoll.torch.ArrivalPredictor(spare, layer, fraction=1.5))
    ring_predictor = papcoll.torch.ArrivalPredictor(spare, layer)
    expect_error("a predictor on a ring communicator refused", ValueError,
                 "runs 'ring', which takes no predictions", ring_predictor.step_begin)
    # torch tensors straight into Communicator.allreduce, through DLPack
    tensor = torch.arange(5, dtype=torch.float32) + rank
    expected = np.arange(5) * size + size * (size - 1) / 2
    result = spare.allreduce(tensor)
    check("torch tensor in, numpy array out", isinstance(result, np.ndarray)
          and np.array_equal(result, expected), str(result))
    returned = spare.allreduce(MPI.IN_PLACE, tensor)
    check("torch tensor in place", returned is tensor
          and np.array_equal(tensor.numpy(), expected), str(tensor))
    expect_error("a bfloat16 tensor", TypeError, "numpy cannot view",
                 lambda: spare.allreduce(torch.ones(3, dtype=torch.bfloat16)))
    expect_error("a tensor that requires grad", TypeError, "detach",
                 lambda: spare.allreduce(torch.ones(3, requires_grad=True)))

tally.finish()
