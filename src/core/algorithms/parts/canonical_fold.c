/* canonical_fold.c - see canonical_fold.h. */
#include "canonical_fold.h"

#include <stdlib.h>

int32_t canonical_fold(papcoll_schedule *out, int32_t ranks, int32_t rank, sched_region folded,
                       int32_t ready, const int32_t *read_by, int32_t read_by_count, int32_t tag) {
    int64_t length = folded.length;
    int32_t slots = sched_add_scratch(out, (int64_t)ranks * length);
    int32_t *landed = malloc((size_t)ranks * sizeof *landed);
    int32_t *before_overwrite = malloc(((size_t)read_by_count + 2) * sizeof *before_overwrite);
    if (landed == NULL || before_overwrite == NULL) {
        free(landed);
        free(before_overwrite);
        sched_fail(out, PAPCOLL_ERR_NO_MEMORY, "out of memory");
        return SCHED_NONE;
    }
    /* rank q's contribution lands in slot q; this rank's own is saved there, unless it is
     * rank 0's, where the fold starts (and stays) */
    for (int32_t q = 0; q < ranks; q++) {
        sched_region slot = sched_region_of(slots, (int64_t)q * length, length);
        if (q != rank)
            landed[q] = sched_recv(out, q, tag, slot, SCHED_FIRST);
        else if (rank == 0 || length == 0)
            landed[q] = ready;
        else
            landed[q] = sched_copy(out, folded, slot, SCHED_AFTER(ready));
    }
    /* the first write into folded: rank 0's contribution copied in, or on rank 0 the first
     * reduction; either waits for the sends that read folded */
    int32_t waits = 0;
    for (int32_t i = 0; i < read_by_count; i++) before_overwrite[waits++] = read_by[i];
    int32_t step = ready;
    if (rank != 0 && length > 0) {
        before_overwrite[waits++] = landed[0];
        before_overwrite[waits++] = landed[rank];
        step = sched_copy(out, sched_region_of(slots, 0, length), folded, before_overwrite,
                          waits);
        waits = 0;
    }
    for (int32_t q = 1; q < ranks && length > 0; q++) { /* folded = fold(x0..x(q-1)) op x_q */
        before_overwrite[waits++] = step;
        before_overwrite[waits++] = landed[q];
        step = sched_reduce(out, sched_region_of(slots, (int64_t)q * length, length), folded,
                            SCHED_TARGET_LEFT, before_overwrite, waits);
        waits = 0;
    }
    free(landed);
    free(before_overwrite);
    return step;
}
