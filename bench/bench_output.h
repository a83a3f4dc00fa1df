/* bench_output.h - what papcoll-bench reports: rank 0 writes a JSON array (one object per
 * algorithm x count x maxDelay) to --json FILE, or "-" for stdout, and a plain table to
 * stdout otherwise. The JSON is an interface (python/papcoll/lab/bench.py reads it; its tests
 * check the fields), so its format is kept byte for byte. */
#ifndef PAPCOLL_BENCH_OUTPUT_H
#define PAPCOLL_BENCH_OUTPUT_H

#include "bench_options.h"
#include "papcoll.h"

/* What `auto` ran in the timed calls of one series (papcoll_last_choice), for the JSON. */
enum { MOST_CHOSEN = 8 };
typedef struct choice_tally {
    char names[MOST_CHOSEN][64];
    int counts[MOST_CHOSEN];
    int distinct;
    double gain_sum;           /* predicted gain: native_seconds / predicted_seconds */
    int calls;
    int probes, overruled;     /* auto's closed loop: probes, calls it overruled the model */
    double path_sum;           /* seconds in auto's own path (papcoll_choice.path_seconds) */
} choice_tally;

void tally_choice(choice_tally *tally, const papcoll_choice *choice);

/* The measurements of a run; series s = (algorithm x count x max delay) in that nesting. */
typedef struct results {
    int series;
    double *ebars;             /* series x iterations: e-bar of every timed call, ms */
    double *arrivals;          /* rank 0: series x iterations x ranks, ms after the earliest */
    double *own_before;        /* rank 0: the same, papcoll's own work before the algorithm,
                                * ms (papcoll_last_own_seconds) */
    double *own_after;         /* rank 0: the same, after it */
    double *rank_sums;         /* rank 0: series x ranks, each rank's time in the timed calls,
                                * summed, ms: IMB's t_min / t_max over ranks of its mean */
    int *correct;              /* per series: every call's result matched MPI_Allreduce */
    int *predicted_calls;      /* per series: timed calls where every rank had a prediction */
    int *late_rank_predicted;  /* rank 0, per series: of those, the calls whose rank predicted
                                * to come last did (the monitor saw the late rank) */
    choice_tally *tallies;     /* per series: auto's choices */
    double p2p_ms[MAX_ITEMS];  /* delta per count */
} results;

/* Rank 0, with --progress: a line "finished {JSON}" on stderr for each algorithm of count
 * c and max delay d, as soon as they are timed (`papcoll bench --stream` prints them as OSU
 * prints a size: one line as each finishes). The object has algorithm, bytes,
 * max_delay_ms, iterations, avg_elapsed_ms (e-bar, IMB's t_avg), t_min_ms, t_max_ms and
 * correct, as in the final JSON. */
void write_finished(const options *o, const char *const *names, int ranks, int element_size,
                    const results *r, int c, int d);

/* Rank 0: the JSON or the table. names: the algorithms' names in series order. */
void write_results(const options *o, const char *const *names, int ranks, int element_size,
                   const results *r);

#endif /* PAPCOLL_BENCH_OUTPUT_H */
