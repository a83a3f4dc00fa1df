/* tag_counter.h - the tags a communicator's non-blocking and persistent all-reduces use,
 * handed out from a counter in the order of the calls (tag_counter.c says why that is the
 * same on every rank, and what happens where a range comes round again). Plain arithmetic:
 * which operations still hold a range is the engine's (operation.c). */
#ifndef PAPCOLL_MPI_TAG_COUNTER_H
#define PAPCOLL_MPI_TAG_COUNTER_H

#include <stdint.h>

/* A persistent request's range: a whole schedule's tags and one for the start times. */
enum { TAG_COUNTER_PERSISTENT_TAGS = 32768 + 1 };

typedef struct tag_counter {
    /* posts take ranges from [post_first, post_last], in turn and wrapping round */
    int32_t post_first, post_last;
    int64_t post_next;         /* 64 bits: a range may end at MPI_TAG_UB = INT_MAX */
    /* persistent requests take ranges from [persistent_first, persistent_last], once each */
    int32_t persistent_first, persistent_last;
    int64_t persistent_next;
    int64_t calls;             /* posts and inits so far: each call's place in the order */
} tag_counter;

/* The tags [first, last] split between posts and persistent requests (persistent requests
 * get a part only where a schedule's tags are left to posts beside it). */
void tag_counter_prepare(tag_counter *counter, int32_t first, int32_t last);
/* A post of `count` tags: the first tag of its range, and its place in the call order. */
int32_t tag_counter_take(tag_counter *counter, int32_t count, int64_t *place);
/* A persistent request's TAG_COUNTER_PERSISTENT_TAGS tags, never handed out again: the first
 * tag, or -1 where none are left (the request then needs a communicator of its own). */
int32_t tag_counter_reserve(tag_counter *counter, int64_t *place);

#endif /* PAPCOLL_MPI_TAG_COUNTER_H */
