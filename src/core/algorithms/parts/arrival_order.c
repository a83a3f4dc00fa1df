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

/* How many of the `late` last ranks may relay: those predicted at least this share of
 * P tau (the time to move and reduce the whole vector) before the last one, and never the
 * last itself, which has nobody after it. A tenth: in the simulator's sweep (
 * bench/late_ranks_sim_table.py, rand-late) shares from 0 to a quarter left 0.90 to 0.94
 * of the excess over e-bar_lo once the model below charges a chain its hop, a tenth 0.92
 * with no cell 5 % worse; it keeps ranks predicted to arrive together out of a chain,
 * where both would hand off at once. */
enum { RELAY_GAP_SHARE_INVERSE = 10 };

static int32_t relay_candidates(const double *sorted, int32_t ranks, int32_t late, double tau) {
    int32_t relays = 0;
    double gap = tau * (double)ranks / RELAY_GAP_SHARE_INVERSE;
    for (int32_t t = 0; t + 1 < late; t++)
        if (sorted[ranks - 1] - sorted[ranks - late + t] >= gap) relays++;
    return relays;
}

int32_t late_rank_layout(const double *sorted, int32_t ranks, double tau,
                         int32_t *relay_count) {
    int32_t best = 0;
    double best_finish = INFINITY;
    if (relay_count) *relay_count = 0;
    for (int32_t late = 0; late < ranks; late++) {
        int32_t core = ranks - late;
        double block = tau * (double)ranks / (double)core;
        double x = sorted[core - 1] + (double)(core - 1) * block;
        for (int32_t t = 1; t <= late; t++) x = fmax(x, sorted[core - 1 + t]) + block;
        /* the finals: one block to each of the other P - 1 ranks, less the r a relay chain
         * serves, plus one block for the chain's hop (so one relay never pays) */
        int32_t candidates = relay_count ? relay_candidates(sorted, ranks, late, tau) : 0;
        for (int32_t relays = 0; relays <= candidates; relays += candidates > 0 ? candidates : 1) {
            double sends = (double)(late + core - 1 - relays) + (relays > 0 ? 1.0 : 0.0);
            double finish = x + sends * block;
            if (finish < best_finish) { /* strict: ties keep the smaller m, then no relays */
                best_finish = finish;
                best = late;
                if (relay_count) *relay_count = relays;
            }
        }
    }
    return best;
}

int32_t late_rank_count(const double *sorted, int32_t ranks, double tau) {
    return late_rank_layout(sorted, ranks, tau, NULL);
}
