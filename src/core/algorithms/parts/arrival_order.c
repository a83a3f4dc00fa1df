/* arrival_order.c - see arrival_order.h. */
#include "arrival_order.h"

#include <math.h>
#include <stdlib.h>

typedef struct arrival {
    double time;
    int32_t rank;
} arrival;

static int earlier(const void *a, const void *b) {
    const arrival *x = a, *y = b;
    if (x->time != y->time) return x->time < y->time ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

int time_order(const double *times, int32_t count, int32_t *order, double *sorted_times) {
    arrival *sorted = malloc((size_t)(count > 0 ? count : 1) * sizeof *sorted);
    if (sorted == NULL) return 0;
    for (int32_t i = 0; i < count; i++) sorted[i] = (arrival){times[i], i};
    qsort(sorted, (size_t)count, sizeof *sorted, earlier);
    for (int32_t i = 0; i < count; i++) {
        order[i] = sorted[i].rank;
        if (sorted_times) sorted_times[i] = sorted[i].time;
    }
    free(sorted);
    return 1;
}

int arrival_order(const papcoll_context *context, int32_t ranks, const char *algorithm,
                  int32_t *order, double *sorted_arrivals, papcoll_schedule *out) {
    if (context->arrivals == NULL || context->arrival_count != ranks) {
        sched_fail(out, PAPCOLL_ERR_ARGUMENT,
                   "%s needs one predicted arrival time per rank (%d), got %d", algorithm,
                   ranks, context->arrivals == NULL ? 0 : context->arrival_count);
        return 0;
    }
    for (int32_t r = 0; r < ranks; r++)
        if (!isfinite(context->arrivals[r])) {
            sched_fail(out, PAPCOLL_ERR_ARGUMENT,
                       "%s: the arrival estimate of rank %d is not a finite number", algorithm,
                       r);
            return 0;
        }
    if (!time_order(context->arrivals, ranks, order, sorted_arrivals)) {
        sched_fail(out, PAPCOLL_ERR_NO_MEMORY, "out of memory sorting arrivals");
        return 0;
    }
    return 1;
}

int latency_bound_vector(int64_t count, int32_t elem_size, int32_t ranks) {
    const int64_t small_mode_bytes = 64 * 1024;
    /* count x elem_size x (P - 1) <= small_mode_bytes, without overflowing */
    return count < ranks || count <= small_mode_bytes / elem_size / (ranks > 1 ? ranks - 1 : 1);
}

int32_t late_rank_count(const double *sorted, int32_t ranks, double tau) {
    int32_t best = 0;
    double best_finish = INFINITY;
    for (int32_t late = 0; late < ranks; late++) {
        int32_t core = ranks - late;
        double block = tau * (double)ranks / (double)core;
        double x = sorted[core - 1] + (double)(core - 1) * block;
        for (int32_t t = 1; t <= late; t++) x = fmax(x, sorted[core - 1 + t]) + block;
        double finish = x + (double)(late + core - 1) * block;
        if (finish < best_finish) { /* strict: ties keep the smaller m */
            best_finish = finish;
            best = late;
        }
    }
    return best;
}
