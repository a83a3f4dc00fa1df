/* mpi_features.h - what the MPI papcoll is built against offers beyond MPI 3.1, decided once
 * here from its headers, so that no other file tests an MPI's version macros.
 *
 * SimGrid's SMPI (the simulator papcoll's scale runs use: docs/smpi.md) is told by
 * PAPCOLL_SMPI, which its build defines (cmake/smpi.cmake): SMPI 3.32 declares MPI_T's error
 * codes but none of its calls, so there auto has no MPI_T and runs the library's default
 * all-reduce as native (native_variants.h). */
#ifndef PAPCOLL_MPI_MPI_FEATURES_H
#define PAPCOLL_MPI_MPI_FEATURES_H

#include <mpi.h>

#ifdef PAPCOLL_SMPI
#define PAPCOLL_HAVE_MPI_T 0
#else
#define PAPCOLL_HAVE_MPI_T 1
#endif

/* Whether a non-blocking or persistent all-reduce may run as the MPI's own (auto's native,
 * a rule's native). Not in SMPI 3.32: its MPI_Iallreduce gives ranks sums that differ in
 * their last bits (doubles at P = 4: 2 of 4 ranks differ from rank 0, where MPICH's agree),
 * and with a non-commutative user op results MPI_Allreduce does not (tests/mpi/
 * differential.c, --call nonblocking); a call on which ranks disagree is wrong for
 * papcoll's callers (docs/smpi.md). */
#ifdef PAPCOLL_SMPI
#define PAPCOLL_NONBLOCKING_NATIVE 0
#else
#define PAPCOLL_NONBLOCKING_NATIVE 1
#endif

/* Whether the executor may block in MPI_Waitany while several of its messages are in flight.
 * Not on a real MPI: MPICH spins in MPI_Waitany without giving up the core (executor.c,
 * wait_for_messages, says why it polls instead). In SMPI there is no core to give up, and
 * each poll costs a context switch and simulated time (smpi/test): a rank waiting 20 ms of
 * simulated time for a late peer tested 20,000 times, and a P = 16 grid of 3,000 calls
 * took over 18 minutes of wall time in one job. */
#ifdef PAPCOLL_SMPI
#define PAPCOLL_BLOCKING_WAITS 1
#else
#define PAPCOLL_BLOCKING_WAITS 0
#endif

/* Whether the MPI may open a connection at the first message between two processes, which
 * the monitor's calibration warms up (monitor_tau.c). Not in SMPI: a first message costs
 * what any other does there, and the warm-up's P x (P - 1) messages in flight at once
 * cost SimGrid wall time for nothing (P = 256, a first straggler call: 44 -> 35 s). */
#ifdef PAPCOLL_SMPI
#define PAPCOLL_CONNECTIONS_OPEN_LAZILY 0
#else
#define PAPCOLL_CONNECTIONS_OPEN_LAZILY 1
#endif

/* MPI's persistent all-reduce is MPI 4's; Open MPI 5 has it too, though its mpi.h says 3.1. */
#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
#define PAPCOLL_HAVE_ALLREDUCE_INIT 1
#else
#define PAPCOLL_HAVE_ALLREDUCE_INIT 0
#endif

#endif /* PAPCOLL_MPI_MPI_FEATURES_H */
