/* bench_timing.c - delta and e-bar_lo (bench_timing.h). e-bar_lo is computed per iteration
 * from the recorded arrivals (sleeps overshoot, ranks are descheduled, rand-late's delays
 * are random) and averaged like e-bar; the intended arrivals would give rand-late only
 * delta. */
#include "bench_timing.h"

#include <math.h>
#include <stddef.h>

#include "common/statistics.h"
#include "ping_pong.h"

enum { DELTA_TAG = 7, DELTA_ROUNDS = 9 };

double point_to_point_ms(void *buffer, int count, MPI_Datatype datatype) {
    int ranks;
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    double halves[DELTA_ROUNDS] = {0};
    for (int round = 0; round < DELTA_ROUNDS && ranks > 1; round++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double start = MPI_Wtime();
        ping_pong(MPI_COMM_WORLD, buffer, count, datatype, DELTA_TAG, 1);
        halves[round] = (MPI_Wtime() - start) / 2 * 1e3;
    }
    double middle = median(halves, DELTA_ROUNDS, NULL);
    MPI_Bcast(&middle, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return middle;
}

double lower_bound_ms(const double *arrivals_ms, int ranks, double p2p_ms) {
    double last = -INFINITY, waiting = 0;
    for (int r = 0; r < ranks; r++) last = fmax(last, arrivals_ms[r]);
    for (int r = 0; r < ranks; r++) waiting += (last - arrivals_ms[r]) / ranks;
    return waiting + p2p_ms;
}
