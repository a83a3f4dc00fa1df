/* canonical_fold.c - see canonical_fold.h.
 *
 * Rank r folds without copying: the contributions of the ranks before it are folded in the
 * first slot, ((x0 op x1) op ...) op x(r-1), then that prefix is combined into r's own
 * region with the prefix on the left (the fold's next step, x_r), and the ranks after r are
 * added there one by one. Rank 0 starts in its own region. Slots hold the other P - 1
 * contributions (slot of rank q: q, or q - 1 past this rank). */
#include "canonical_fold.h"

#include <stdlib.h>

int32_t canonical_fold(papcoll_schedule *out, int32_t ranks, int32_t rank, sched_region folded,
                       int32_t ready, const int32_t *read_by, int32_t read_by_count,
                       int32_t tag) {
    int64_t length = folded.length;
    int32_t slots = sched_add_scratch(out, (int64_t)(ranks - 1) * length);
    int32_t *landed = malloc((size_t)ranks * sizeof *landed);
    int32_t *waits = malloc(((size_t)read_by_count + 3) * sizeof *waits);
    if (landed == NULL || waits == NULL) {
        free(landed);
        free(waits);
        sched_fail(out, PAPCOLL_ERR_NO_MEMORY, "out of memory");
        return SCHED_NONE;
    }
#define SLOT(q) sched_region_of(slots, (int64_t)((q) < rank ? (q) : (q) - 1) * length, length)
    for (int32_t q = 0; q < ranks; q++) /* any order of arrival: each lands in its slot */
        landed[q] = q == rank ? ready : sched_recv(out, q, tag, SLOT(q), SCHED_FIRST);
    int32_t step = ready;
    if (length > 0) {
        /* the prefix x0 .. x(r-1), in rank 0's slot */
        int32_t prefix = landed[0];
        for (int32_t q = 1; q < rank; q++)
            prefix = sched_reduce(out, SLOT(q), SLOT(0), SCHED_TARGET_LEFT,
                                  SCHED_AFTER(prefix, landed[q]));
        /* the first write into folded (whichever it is) waits for the sends that read it */
        int32_t count = 0;
        for (int32_t i = 0; i < read_by_count; i++) waits[count++] = read_by[i];
        waits[count++] = ready;
        if (rank > 0) { /* folded = prefix op x_r */
            waits[count++] = prefix;
            step = sched_reduce(out, SLOT(0), folded, SCHED_SOURCE_LEFT, waits, count);
            count = 0;
        }
        for (int32_t q = rank + 1; q < ranks; q++) { /* folded = fold(x0..x(q-1)) op x_q */
            waits[count++] = step;
            waits[count++] = landed[q];
            step = sched_reduce(out, SLOT(q), folded, SCHED_TARGET_LEFT, waits, count);
            count = 0;
        }
    }
#undef SLOT
    free(landed);
    free(waits);
    return step;
}
