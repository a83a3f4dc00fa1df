/* bench_options.h - papcoll-bench's command line (papcoll_bench.c's header describes the
 * benchmark): the options, their defaults and the checks that need no MPI handles (the
 * datatype and op are checked in main, where the MPI's handles exist). The command line is
 * an interface: python/papcoll/lab/bench.py writes it. */
#ifndef PAPCOLL_BENCH_OPTIONS_H
#define PAPCOLL_BENCH_OPTIONS_H

#include <stdint.h>

#define MAX_ITEMS 32

typedef struct options {
    char *algorithm_names[MAX_ITEMS];
    int algorithm_count;
    int64_t counts[MAX_ITEMS];
    int count_count;
    double max_delays_ms[MAX_ITEMS];
    int max_delay_count;
    int one_late;              /* else rand-late */
    int mispredict;            /* one-late: every rank predicts rank 2 late, not rank 1 */
    int iterations, warmup;
    double compute_ms;
    double jitter_ms;          /* mean of each rank's exponential arrival noise a call */
    unsigned seed;
    const char *datatype_name;
    const char *op_name;
    const char *json_path;     /* NULL: table on stdout */
    int progress;
    const char *schedule;      /* recursive_multiplying's schedule, or NULL */
    int32_t *group_colors;     /* --group-colors: one per rank; NULL: shared-memory groups */
} options;

/* Parses argv into *o for a run of `ranks` ranks; a bad command line ends the program
 * (usage_error). */
void parse_options(int argc, char **argv, int ranks, options *o);

#endif /* PAPCOLL_BENCH_OPTIONS_H */
