/* arrival_history.h - a call site's own arrival history, the input a persistent request
 * brings to auto's prediction (auto_call.h): the start times of its last few starts, every
 * rank's, the same on every rank. A persistent request is the one call site that every rank
 * names alike (a blocking call in a preloaded program is not: the drop-in cannot tell two
 * MPI_Allreduce call sites apart), so its history is the site's own pattern, not a mix of
 * every site of the communicator.
 *
 * The prediction for each rank is its median lateness (after the earliest, median.h) over
 * the last `starts` starts (papcoll_tuning's history_starts, 3): one odd start does not move
 * it, and a lasting change shows after starts / 2 + 1 starts.
 *
 * A prediction is used only while it has been right: each start's times also judge the
 * prediction that start ran on: did the rank it named as last come last (within an on-time
 * unit, or in the last arrival's class) and about as late as named (its arrival class or one beside it), or, where it
 * named none, did none. When most of the last `starts`
 * judged predictions missed, the pattern is one the history does not foretell (a late rank
 * drawn at random each call: the median names a rank that was late twice, and straggler
 * then waits for the wrong one), and the start is decided as balanced; predictions are
 * still made and judged, and trusted again once most are right. A one-late pattern is never
 * affected: its predictions hit from the first. Judgments come from the same history on
 * every rank, so they agree. */
#ifndef PAPCOLL_MPI_ARRIVAL_HISTORY_H
#define PAPCOLL_MPI_ARRIVAL_HISTORY_H

#include <stdint.h>

#include "papcoll_core.h"

typedef struct arrival_history {
    int32_t ranks;
    int32_t starts;            /* kept: 1 .. PAPCOLL_TUNING_MOST_HISTORY_STARTS */
    double jitter;             /* the tuning's arrival_jitter_seconds (arrival_class.h) */
    int64_t recorded;          /* starts recorded */
    double *rows;              /* starts x P latenesses, oldest overwritten */
    double *predicted;         /* P: the last prediction (what the next start is judged by) */
    uint8_t missed[PAPCOLL_TUNING_MOST_HISTORY_STARTS]; /* per judged start: it missed */
    int64_t judged;            /* starts whose prediction was judged */
} arrival_history;

/* 1, or 0 out of memory (then release it). tuning: its history_starts and
 * arrival_jitter_seconds (checked at papcoll_comm_create: in range). */
int arrival_history_init(arrival_history *history, int32_t ranks,
                         const papcoll_tuning *tuning);
void arrival_history_release(arrival_history *history);
/* Records one start: every rank's start time on one clock (rank r's at times[r * stride]),
 * judged against the prediction it ran on with the on-time unit of tau (arrival_class.h). */
void arrival_history_record(arrival_history *history, const double *times, int stride,
                            double tau);
/* The prediction for the next start into history->predicted (P seconds after the
 * earliest); 1 when it is to be used (there is a history, and it has been right). */
int arrival_history_predict(arrival_history *history);

#endif /* PAPCOLL_MPI_ARRIVAL_HISTORY_H */
