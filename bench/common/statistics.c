/* statistics.c - the summaries of statistics.h. */
#include "statistics.h"

#include <math.h>
#include <stdlib.h>

static int compare_doubles(const void *left, const void *right) {
    double a = *(const double *)left, b = *(const double *)right;
    return (a > b) - (a < b);
}

double median(double *samples, int count, double *minimum) {
    qsort(samples, (size_t)count, sizeof *samples, compare_doubles);
    if (minimum) *minimum = samples[0];
    return count % 2 ? samples[count / 2] : (samples[count / 2 - 1] + samples[count / 2]) / 2;
}

statistics summarize(double *values, int n) {
    statistics s = {0, 0, 0, 0, 0};
    for (int i = 0; i < n; i++) s.mean += values[i] / n;
    for (int i = 0; i < n; i++) s.standard_deviation += (values[i] - s.mean) * (values[i] - s.mean);
    s.standard_deviation = n > 1 ? sqrt(s.standard_deviation / (n - 1)) : 0;
    s.median = median(values, n, &s.minimum);
    s.maximum = values[n - 1];
    return s;
}
