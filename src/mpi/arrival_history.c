/* arrival_history.c - see arrival_history.h. */
#include "arrival_history.h"

#include <math.h>
#include <stdlib.h>

#include "arrival_class.h"
#include "median.h"

_Static_assert((int)PAPCOLL_TUNING_MOST_HISTORY_STARTS <= (int)MEDIAN_MOST_VALUES,
               "median_of takes the history");

int arrival_history_init(arrival_history *history, int32_t ranks,
                         const papcoll_tuning *tuning) {
    history->ranks = ranks;
    history->starts = (int32_t)tuning->history_starts;
    history->jitter = tuning->arrival_jitter_seconds;
    history->recorded = history->judged = 0;
    history->rows = calloc((size_t)history->starts * (size_t)ranks, sizeof(double));
    history->predicted = calloc((size_t)ranks, sizeof(double));
    return history->rows != NULL && history->predicted != NULL;
}

void arrival_history_release(arrival_history *history) {
    free(history->rows);
    free(history->predicted);
    history->rows = history->predicted = NULL;
}

/* Judges the prediction the start ran on (history->predicted still holds it) against row,
 * what happened, on what auto's choice rests: which rank comes last, and about how late. A
 * prediction that named a late rank hit when that rank arrived within one on-time unit of
 * the last arrival (or in the last arrival's class) and in its predicted arrival class or
 * one beside it (a factor of two to four: auto decides on classes, arrival_class.h); a
 * balanced one (no rank an on-time unit
 * late) hit when no rank was. The unit is arrival_class.h's (the larger of tau and the
 * jitter of ranks sharing cores), so the scheduling noise among on-time ranks never counts
 * as a miss. Why the class: on a loaded machine the medians of a moving late rank's starts
 * kept milliseconds of noise above a unit of 0.6 ms, and the rank with the most noise,
 * named as late by 1.5 ms, came last by 200 ms one start in three: hits by chance, which
 * made auto trust a pattern it could not foretell. */
static void judge(arrival_history *history, const double *row, double tau) {
    int32_t ranks = history->ranks, named = 0;
    double unit = arrival_on_time(arrival_unit(tau), history->jitter), latest = 0;
    for (int32_t r = 0; r < ranks; r++) {
        if (history->predicted[r] > history->predicted[named]) named = r;
        if (row[r] > latest) latest = row[r];
    }
    int predicted_level = arrival_class_level(history->predicted[named], unit);
    int named_level = arrival_class_level(row[named], unit);
    /* last: within a unit of the last arrival, or in its class (two late ranks that swap
     * last place by a few milliseconds of noise, where the unit is tau) */
    int last = row[named] >= latest - unit || named_level == arrival_class_level(latest, unit);
    int hit = predicted_level == 0 ? latest < unit
                                   : last && abs(named_level - predicted_level) <= 1;
    history->missed[history->judged % history->starts] = !hit;
    history->judged++;
}

void arrival_history_record(arrival_history *history, const double *times, int stride,
                            double tau) {
    int32_t ranks = history->ranks;
    double earliest = INFINITY;
    for (int32_t r = 0; r < ranks; r++) earliest = fmin(earliest, times[(size_t)r * stride]);
    double *row = &history->rows[(history->recorded % history->starts) * ranks];
    for (int32_t r = 0; r < ranks; r++) row[r] = times[(size_t)r * stride] - earliest;
    /* the first start ran on no prediction: nothing to judge */
    if (history->recorded >= 1) judge(history, row, tau);
    history->recorded++;
}

int arrival_history_predict(arrival_history *history) {
    int32_t ranks = history->ranks;
    if (history->recorded == 0) return 0;
    int64_t kept = history->recorded < history->starts ? history->recorded : history->starts;
    double values[PAPCOLL_TUNING_MOST_HISTORY_STARTS], least = INFINITY;
    for (int32_t r = 0; r < ranks; r++) {
        for (int64_t k = 0; k < kept; k++) values[k] = history->rows[k * ranks + r];
        history->predicted[r] = median_of(values, (int)kept);
        least = fmin(least, history->predicted[r]);
    }
    /* medians need not keep a zero: relative to the earliest again */
    for (int32_t r = 0; r < ranks; r++) history->predicted[r] -= least;
    int64_t judged = history->judged < history->starts ? history->judged : history->starts;
    int misses = 0;
    for (int64_t k = 0; k < judged; k++) misses += history->missed[k];
    return 2 * misses <= judged; /* most of the last judged predictions were right */
}
