/* ping_pong.h - round trips between ranks 0 and 1, the exchange behind every transfer time
 * papcoll measures: the arrival monitor's latency and bandwidth for tau (monitor_tau.c),
 * papcoll-bench's delta (the lower bound's one transfer) and papcoll-calibrate's sweep. The
 * callers time it and pick their statistic (best, median); the exchange is written once.
 * Pure MPI, compiled into libpapcoll and into the programs alike (clock_offsets.h says why). */
#ifndef PAPCOLL_MPI_PING_PONG_H
#define PAPCOLL_MPI_PING_PONG_H

#include <mpi.h>

/* `trips` round trips of count x datatype in buffer, with messages of `tag` on comm: rank 0
 * sends and receives the answer, rank 1 receives and answers, other ranks do nothing.
 * Returns MPI_SUCCESS or the code of the first call that failed. */
int ping_pong(MPI_Comm comm, void *buffer, int count, MPI_Datatype datatype, int tag,
              int trips);

#endif /* PAPCOLL_MPI_PING_PONG_H */
