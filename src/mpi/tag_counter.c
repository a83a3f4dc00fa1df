/* tag_counter.c - tags from a counter, as libnbc and MPICH hand them to their non-blocking
 * collectives, instead of a fixed window per operation in flight.
 *
 * Why every rank assigns the same range: MPI requires every rank to make a communicator's
 * collective calls in the same order (MPI-4.1 6.12 for non-blocking posts, 6.13 for
 * persistent inits; starts may come in any order, which is why a persistent request's
 * range is fixed at its init). The counter moves only at those calls, by what each call's
 * schedule needs (the highest tag + 1 over every rank's schedule of the call, which
 * call_plan.c counts once per plan: some algorithms use more tags on some ranks), so the
 * k-th call gets the same range everywhere. Nothing here depends on progress.
 *
 * Wrapping: a post whose range would pass post_last starts again at post_first. Its range
 * may then overlap one that an earlier operation still holds on this rank (the engine
 * knows: operation_claim_tags). The later operation then posts nothing until the earlier
 * one finished on this rank. That cannot deadlock: the earlier operation needs nothing of
 * the later one, and the engine advances every operation in flight, so it finishes. It
 * cannot mismatch: the earlier operation's sends left before any of the later one's, MPI
 * keeps messages of one (source, tag) in order, and each rank's receives of the earlier
 * operation were posted before the later one's (the same wait on the receiving rank). With
 * MPI_TAG_UB = 32767 and a few hundred tags per schedule, hundreds are in flight before a
 * range comes round; nothing is ever refused.
 *
 * Persistent requests take their ranges from a part of their own, never handed out again:
 * freeing a persistent request is local (ranks free at different times), so a range given
 * back by one rank could be handed to a new request while another rank's old one still
 * receives on it. Where that part is used up (about 8000 requests under MPICH's
 * MPI_TAG_UB), or too small to exist (MPI_TAG_UB = 32767), the request duplicates the
 * communicator, as every persistent request did before. */
#include "tag_counter.h"

void tag_counter_prepare(tag_counter *counter, int32_t first, int32_t last) {
    int64_t tags = (int64_t)last - first + 1;
    counter->calls = 0;
    counter->post_first = counter->post_next = first;
    counter->post_last = last;
    counter->persistent_first = counter->persistent_next = 0;
    counter->persistent_last = -1;
    /* half to persistent requests where the other half still holds a whole schedule */
    if (tags / 2 >= TAG_COUNTER_PERSISTENT_TAGS) {
        counter->post_last = (int32_t)(first + tags / 2 - 1);
        counter->persistent_first = counter->post_last + 1;
        counter->persistent_next = counter->persistent_first;
        counter->persistent_last = last;
    }
}

int32_t tag_counter_take(tag_counter *counter, int32_t count, int64_t *place) {
    *place = counter->calls++;
    if (counter->post_next + count - 1 > counter->post_last)
        counter->post_next = counter->post_first;
    int32_t first = (int32_t)counter->post_next;
    counter->post_next += count;
    return first;
}

int32_t tag_counter_reserve(tag_counter *counter, int64_t *place) {
    *place = counter->calls++;
    if (counter->persistent_next + TAG_COUNTER_PERSISTENT_TAGS - 1 > counter->persistent_last)
        return -1;
    int32_t first = (int32_t)counter->persistent_next;
    counter->persistent_next += TAG_COUNTER_PERSISTENT_TAGS;
    return first;
}
