/* hierarchical.c - the builders shared by hr1, hr2, smp_binomial and smp_butterfly (see
 * those files for the papers' sections and worked examples).
 *
 * Groups: context->groups gives any id per rank; a group's members are its ranks in rank
 * order, member 0 (the lowest rank) is its leader, and groups are numbered by their leaders'
 * ranks. Phases use separate tag ranges (below PHASE_TAGS each) so that no two phases'
 * messages can be confused, whatever the algorithms inside them.
 */
#include "hierarchical.h"

#include <stdlib.h>
#include <string.h>

#include "compose.h"

#define PHASE_TAGS 8192

void hierarchy_free(hierarchy *h) {
    free(h->group_first);
    free(h->members);
}

/* Groups numbered in order of their lowest rank, in O(P log P) whatever the number of
 * groups. 0 and a failure in out when out of memory. */
int hierarchy_of(int32_t ranks, int32_t rank, const papcoll_context *context,
                 hierarchy *h, papcoll_schedule *out) {
    memset(h, 0, sizeof *h);
    int32_t *number = malloc((size_t)ranks * sizeof *number);  /* group number of each rank */
    int32_t *seen = malloc((size_t)ranks * sizeof *seen);      /* group number by sorted run */
    sched_keyed_index *sorted = malloc((size_t)ranks * sizeof *sorted);
    h->group_first = calloc((size_t)ranks + 2, sizeof *h->group_first);
    h->members = malloc((size_t)ranks * sizeof *h->members);
    if (!number || !seen || !sorted || !h->group_first || !h->members) {
        free(number);
        free(seen);
        free(sorted);
        hierarchy_free(h);
        sched_fail(out, PAPCOLL_ERR_NO_MEMORY, "out of memory");
        return 0;
    }
    /* runs of equal ids after sorting are the groups; a group's number is the order of its
     * lowest rank, found by walking the ranks and numbering runs on first sight */
    for (int32_t r = 0; r < ranks; r++) sorted[r] = (sched_keyed_index){context->groups[r], r};
    qsort(sorted, (size_t)ranks, sizeof *sorted, sched_by_key_then_index);
    int32_t *run_of = number; /* first: the run of each rank */
    int32_t runs = 0;
    for (int32_t i = 0; i < ranks; i++) {
        if (i > 0 && sorted[i].key != sorted[i - 1].key) runs++;
        run_of[sorted[i].index] = runs;
    }
    for (int32_t g = 0; g <= runs; g++) seen[g] = -1;
    for (int32_t r = 0; r < ranks; r++) {
        int32_t run = run_of[r];
        if (seen[run] < 0) seen[run] = h->group_count++;
        number[r] = seen[run];
        h->group_first[number[r] + 1]++;
    }
    free(sorted);
    for (int32_t g = 0; g < h->group_count; g++) h->group_first[g + 1] += h->group_first[g];
    int32_t *filled = seen; /* reuse: members placed per group */
    memset(filled, 0, (size_t)ranks * sizeof *filled);
    for (int32_t r = 0; r < ranks; r++) {
        int32_t g = number[r];
        if (r == rank) h->my_group = g, h->my_index = filled[g];
        h->members[h->group_first[g] + filled[g]++] = r;
    }
    free(number);
    free(seen);
    return 1;
}

int32_t hierarchy_group_size(const hierarchy *h, int32_t g) {
    return h->group_first[g + 1] - h->group_first[g];
}

int32_t hierarchy_member(const hierarchy *h, int32_t g, int32_t index) {
    return h->members[h->group_first[g] + index];
}

int hierarchical_reduce_build(int32_t ranks, int32_t rank, int64_t count, int32_t elem_size,
                              const papcoll_context *context, const char *outer,
                              papcoll_schedule *out) {
    hierarchy h;
    /* checked up front: a layout where a phase is skipped must not hide a bad choice */
    if (compose_check_flat(outer, out) != PAPCOLL_OK) return sched_finish(out);
    if (!hierarchy_of(ranks, rank, context, &h, out)) return sched_finish(out);
    const int32_t g = h.my_group, i = h.my_index, n = hierarchy_group_size(&h, g);
    const sched_region all = SCHED_RECV_REGION(0, count);
    int32_t last = sched_copy(out, SCHED_SEND_REGION(0, count), all, SCHED_FIRST);
    /* 1. binomial reduce to member 0: at bit `mask`, members with that bit set hand their
     * partial sum to member i - mask and stop */
    int32_t scratch = SCHED_NONE, scratch_reader = SCHED_NONE, handed = SCHED_NONE;
    for (int32_t mask = 1; mask < n; mask <<= 1) {
        if (i & mask) {
            handed = sched_send(out, hierarchy_member(&h, g, i - mask), 0, all,
                                SCHED_AFTER(last));
            break;
        }
        if (i + mask >= n) continue;
        if (scratch == SCHED_NONE) scratch = sched_add_scratch(out, count);
        int32_t got = sched_recv(out, hierarchy_member(&h, g, i + mask), 0,
                                 sched_region_of(scratch, 0, count), SCHED_AFTER(scratch_reader));
        last = sched_reduce(out, sched_region_of(scratch, 0, count), all, SCHED_SOURCE_LEFT,
                            SCHED_AFTER(got, last));
        scratch_reader = last;
    }
    /* 2. the leaders all-reduce among themselves */
    if (i == 0 && h.group_count > 1) {
        int32_t *leaders = malloc((size_t)h.group_count * sizeof *leaders);
        if (leaders == NULL) {
            hierarchy_free(&h);
            return sched_fail(out, PAPCOLL_ERR_NO_MEMORY, "out of memory");
        }
        for (int32_t k = 0; k < h.group_count; k++) leaders[k] = hierarchy_member(&h, k, 0);
        last = compose_embed(out, outer, leaders, h.group_count, g, count, elem_size,
                             PHASE_TAGS, 2 * PHASE_TAGS, SCHED_AFTER(last));
        free(leaders);
    }
    /* 3. binomial broadcast from member 0: receive from the member that differs in the
     * lowest set bit, then pass on to i + mask for every lower bit */
    int32_t lowest = n; /* member 0 sends for every bit */
    if (i != 0) {
        lowest = i & -i;
        last = sched_recv(out, hierarchy_member(&h, g, i - lowest), 2 * PHASE_TAGS, all,
                          SCHED_AFTER(last, handed));
    }
    for (int32_t mask = sched_floor_power_of_two(lowest < n ? lowest : n); mask >= 1; mask >>= 1)
        if (mask < lowest && i + mask < n)
            sched_send(out, hierarchy_member(&h, g, i + mask), 2 * PHASE_TAGS, all,
                       SCHED_AFTER(last));
    hierarchy_free(&h);
    return sched_finish(out);
}

int hierarchical_allreduce_build(int32_t ranks, int32_t rank, int64_t count, int32_t elem_size,
                                 const papcoll_context *context, const char *inner,
                                 const char *outer, papcoll_schedule *out) {
    hierarchy h;
    if (compose_check_flat(inner, out) != PAPCOLL_OK ||
        compose_check_flat(outer, out) != PAPCOLL_OK)
        return sched_finish(out);
    if (!hierarchy_of(ranks, rank, context, &h, out)) return sched_finish(out);
    const int32_t g = h.my_group, i = h.my_index, n = hierarchy_group_size(&h, g);
    int32_t smallest = n;
    for (int32_t k = 0; k < h.group_count; k++)
        if (hierarchy_group_size(&h, k) < smallest) smallest = hierarchy_group_size(&h, k);
    const sched_region all = SCHED_RECV_REGION(0, count);
    int32_t last = sched_copy(out, SCHED_SEND_REGION(0, count), all, SCHED_FIRST);
    /* 1. all-reduce inside the group */
    if (n > 1)
        last = compose_embed(out, inner, &h.members[h.group_first[g]], n, i, count, elem_size,
                             0, PHASE_TAGS, SCHED_AFTER(last));
    int32_t *column = malloc((size_t)h.group_count * sizeof *column);
    if (column == NULL) {
        hierarchy_free(&h);
        return sched_fail(out, PAPCOLL_ERR_NO_MEMORY, "out of memory");
    }
    if (i < smallest) {
        /* 2. all-reduce with the same-index members of the other groups */
        if (h.group_count > 1) {
            for (int32_t k = 0; k < h.group_count; k++) column[k] = hierarchy_member(&h, k, i);
            last = compose_embed(out, outer, column, h.group_count, g, count, elem_size,
                                 PHASE_TAGS, 2 * PHASE_TAGS, SCHED_AFTER(last));
        }
        /* 3. the members beyond the smallest group's size get the result from us */
        for (int32_t j = i + smallest; j < n; j += smallest)
            sched_send(out, hierarchy_member(&h, g, j), 2 * PHASE_TAGS, all, SCHED_AFTER(last));
    } else {
        sched_recv(out, hierarchy_member(&h, g, i % smallest), 2 * PHASE_TAGS, all,
                   SCHED_AFTER(last));
    }
    free(column);
    hierarchy_free(&h);
    return sched_finish(out);
}
