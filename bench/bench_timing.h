/* bench_timing.h - what papcoll-bench measures besides the calls themselves: delta, one
 * point-to-point transfer of the whole vector, and e-bar_lo, the lower bound of Proficz
 * 2018, Sect. 3, computed from the arrivals that happened. (Every rank's arrival is put on
 * rank 0's clock by the library's clock sync, src/mpi/clock_offsets.h, compiled in.) */
#ifndef PAPCOLL_BENCH_TIMING_H
#define PAPCOLL_BENCH_TIMING_H

#include <mpi.h>

/* delta of Proficz 2018, Sect. 3: one point-to-point transfer of count x datatype,
 * rank 0 -> 1 (median of 9 half round trips), broadcast to every rank; in milliseconds.
 * Collective. */
double point_to_point_ms(void *buffer, int count, MPI_Datatype datatype);

/* e-bar_lo of one call from the arrivals that actually happened (ms, any origin): no rank
 * can finish before the last one has arrived and one transfer delta has followed, so
 * e-bar >= mean over ranks of (a_last - a_i) + delta. */
double lower_bound_ms(const double *arrivals_ms, int ranks, double p2p_ms);

#endif /* PAPCOLL_BENCH_TIMING_H */
