/* recency.h - the one least-recently-used rule of the MPI library's small tables: auto's
 * decisions (choose.c), the closed loop's entries (auto_feedback.c) and shapes
 * (native_feedback.c), and the plans (plan_cache.c). Each entry carries its table's clock at
 * its last use (0: never used, so an empty entry goes first), and a new key takes the entry
 * used least recently. A clock of uses, not of time: every rank's tables must keep and drop
 * alike (auto shares a decision by message only where every rank misses it), and the same
 * calls give the same clock on every rank. */
#ifndef PAPCOLL_MPI_RECENCY_H
#define PAPCOLL_MPI_RECENCY_H

#include <stddef.h>
#include <stdint.h>

/* The entry, of count whose stamps lie stride bytes apart from *first_stamp on, used least
 * recently (the first of equals); entries for which in_use(context, index) is nonzero are
 * left out (in_use NULL: none); -1 where every entry is. */
int least_recently_used(const int64_t *first_stamp, size_t stride, int count,
                        int (*in_use)(const void *context, int index), const void *context);

#endif /* PAPCOLL_MPI_RECENCY_H */
