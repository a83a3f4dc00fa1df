/* clock_offsets.h - every rank's clock put on rank 0's, the one clock sync of papcoll (the
 * way LogGOPSim keeps its sync in liballprof/sync.h): the arrival monitor (monitor.c) puts
 * predictions on rank 0's clock with it, papcoll-bench its measured arrivals, and the MPI
 * tests (tests/mpi/monitor.c) check it. MPI_WTIME_IS_GLOBAL is not assumed: Open MPI's
 * MPI_Wtime even counts from each process's own start.
 *
 * Pure MPI (nothing of papcoll), so it is compiled into libpapcoll and into the programs
 * (CMakeLists.txt: PAPCOLL_PROGRAM_SOURCES) alike; one source, not two copies. */
#ifndef PAPCOLL_MPI_CLOCK_OFFSETS_H
#define PAPCOLL_MPI_CLOCK_OFFSETS_H

#include <mpi.h>

/* Exchanges per rank; the one with the shortest round trip is kept. */
enum { CLOCK_OFFSETS_ROUNDS = 8 };

/* Collective over comm, with messages of `tag`. Rank 0 ping-pongs CLOCK_OFFSETS_ROUNDS
 * times with every other rank in turn and keeps, per rank, the exchange with the shortest
 * round trip: offset_r = (t_send + t_receive) / 2 - t_r, so MPI_Wtime() + offset_r on rank r
 * is the time on rank 0's clock, within half that round trip. Every rank gets its own
 * offset in *own (rank 0: 0). On rank 0, offsets and round_trips (each NULL or P doubles)
 * get every rank's offset and shortest round trip; elsewhere they are not touched. Returns
 * MPI_SUCCESS or the code of the first call that failed. */
int clock_offsets_measure(MPI_Comm comm, int tag, double *own, double *offsets,
                          double *round_trips);

#endif /* PAPCOLL_MPI_CLOCK_OFFSETS_H */
