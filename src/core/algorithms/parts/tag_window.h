/* tag_window.h - one direction of one link of a ring or a chain (parts/ring_phases.c, linear_tree.c):
 * message m on the link carries tag m mod W and waits for message m - W there, the previous
 * one with that tag. Same-tag messages are thus ordered by the DAG, so MPI's matching never
 * depends on timing, and up to W messages are in flight. The ops an op must wait for besides
 * are the caller's (the data is ready, the landing slot is free). */
#ifndef PAPCOLL_ALGORITHMS_PARTS_TAG_WINDOW_H
#define PAPCOLL_ALGORITHMS_PARTS_TAG_WINDOW_H

#include <stdint.h>

#include "../../hidden.h"
#include "../../schedule.h"

#define TAG_WINDOW_MAX 4 /* the largest W: deeper pipelines gain nothing measurable */

typedef struct tag_window_link {
    int32_t peer;
    int32_t window;                  /* W, 1 .. TAG_WINDOW_MAX */
    int64_t messages;                /* sent (or received) so far */
    int32_t recent[TAG_WINDOW_MAX];  /* the op of the last message with each tag */
} tag_window_link;

/* A link to (or from) `peer` with window W = `window`, no messages yet. */
PAPCOLL_HIDDEN
tag_window_link tag_window_open(int32_t peer, int32_t window);

/* The link's next message: a SEND of `region` once op `ready` is done. Returns the op. */
PAPCOLL_HIDDEN
int32_t tag_window_send(papcoll_schedule *out, tag_window_link *link, sched_region region,
                        int32_t ready);

/* The link's next message: a RECV into `region` once op `region_free` is done (the last
 * reader of the region). Returns the op. */
PAPCOLL_HIDDEN
int32_t tag_window_recv(papcoll_schedule *out, tag_window_link *link, sched_region region,
                        int32_t region_free);

#endif /* PAPCOLL_ALGORITHMS_PARTS_TAG_WINDOW_H */
