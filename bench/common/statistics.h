/* statistics.h - the summaries papcoll's measuring programs give of repeated samples:
 * papcoll-bench's mean, spread and median of e-bar, papcoll-calibrate's medians (a busy
 * machine makes samples late, never early, so a median or minimum is robust). */
#ifndef PAPCOLL_BENCH_STATISTICS_H
#define PAPCOLL_BENCH_STATISTICS_H

typedef struct statistics {
    double mean, standard_deviation, median, minimum, maximum;
} statistics;

/* Summary of values[0 .. n), n >= 1 (sorts values in place). */
statistics summarize(double *values, int n);
/* The median, and the smallest sample in *minimum unless NULL (sorts samples in place). */
double median(double *samples, int count, double *minimum);

#endif /* PAPCOLL_BENCH_STATISTICS_H */
