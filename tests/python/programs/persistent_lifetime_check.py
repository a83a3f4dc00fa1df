"""Run under mpiexec: a PersistentRequest's life in Python where the program lets go of it.

A PersistentRequest dropped (inactive, or with a start that was never waited for), or a
start's Request dropped along with it, is freed by papcoll once its start completed, so the
Communicator it came from can still be freed; and a dropped start's buffers stay alive until
it completed. The calls after free() say the request was freed. Every rank does the same
thing in the same order (freeing a Communicator is collective). Prints "N passed, M failed"
and exits 1 if any failed.
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import papcoll
from mpi4py import MPI
from tally import Tally

world = MPI.COMM_WORLD
rank, size = world.Get_rank(), world.Get_size()
tally = Tally(world)
check, expect_error = tally.check, tally.expect_error
COUNT = 4099
TOTAL = np.arange(COUNT, dtype=np.float64) * size + size * (size - 1) / 2


def persistent(pc: papcoll.Communicator) -> tuple[papcoll.PersistentRequest, np.ndarray]:
    send = np.arange(COUNT, dtype=np.float64) + rank
    receive = np.zeros(COUNT)
    return pc.allreduce_init(send, receive), receive


def freed_cleanly(label: str, pc: papcoll.Communicator) -> None:
    try:
        pc.free()
    except papcoll.PapcollError as error:
        check(label, False, f"Communicator.free() raised: {error}")
        return
    check(label, True)


def dropped_inactive() -> None:
    pc = papcoll.Communicator(world, algorithm="ring")
    request, _ = persistent(pc)
    request.Start()
    request.Wait()
    del request
    freed_cleanly("a dropped inactive PersistentRequest", pc)


def dropped_never_started() -> None:
    pc = papcoll.Communicator(world)
    request, _ = persistent(pc)
    del request
    freed_cleanly("a dropped PersistentRequest never started", pc)


def dropped_while_started(form: str) -> None:
    """Start() (or start(), its Request dropped too) and no Wait(): the start completes,
    its buffers alive until then, and the request is freed after it."""
    pc = papcoll.Communicator(world, algorithm="ring")
    request, receive = persistent(pc)
    watched = weakref.ref(receive)
    if form == "Start":
        request.Start()
    else:
        request.start()
    del request, receive
    gc.collect()
    check(f"a dropped {form}'s receive buffer is kept while it may be written",
          watched() is not None)
    freed_cleanly(f"a PersistentRequest dropped after {form}() without a wait", pc)
    gc.collect()
    check(f"a dropped {form}'s receive buffer is let go once it completed", watched() is None)


def dropped_in_a_cycle() -> None:
    """A request only a reference cycle holds is not collected until the garbage collector
    runs: Communicator.free() runs it rather than refuse."""
    pc = papcoll.Communicator(world)
    request, _ = persistent(pc)
    holder: dict[str, object] = {"request": request}
    holder["self"] = holder
    del request, holder
    freed_cleanly("a PersistentRequest dropped in a reference cycle", pc)


def kept_and_not_freed() -> None:
    """A request the program still holds is its to free: refused, as in C."""
    pc = papcoll.Communicator(world)
    request, receive = persistent(pc)
    expect_error("a Communicator with a live persistent request", papcoll.PapcollError,
                 "not freed", pc.free)
    request.Start()
    request.Wait()
    check("the result after the refused free", np.array_equal(receive, TOTAL))
    request.Free()
    freed_cleanly("the Communicator after its request was freed", pc)


def calls_after_free() -> None:
    with papcoll.Communicator(world, algorithm="auto") as pc:
        request, _ = persistent(pc)
        request.Start()
        request.Wait()
        check("last_choice() before free()", request.last_choice().algorithm != "")
        request.free()
        for name, call in (("last_choice", request.last_choice), ("Start", request.Start),
                           ("start", request.start)):
            expect_error(f"{name}() after free()", ValueError,
                         "this PersistentRequest has been freed", call)
        check("Wait() after free() returns at once", request.Wait() is True)
        request.free()  # again: nothing
    expect_error("Communicator.last_choice() after free()", ValueError,
                 "this papcoll Communicator has been freed", pc.last_choice)


dropped_inactive()
dropped_never_started()
dropped_while_started("Start")
dropped_while_started("start")
dropped_in_a_cycle()
kept_and_not_freed()
calls_after_free()
tally.finish()
