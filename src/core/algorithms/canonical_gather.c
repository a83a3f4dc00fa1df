/* canonical_gather.c - the small-vector all-reduce of reproducible mode
 * (docs/reproducible.md): every rank sends its whole vector to every other rank and folds
 * the P vectors itself in the canonical order ((x0 op x1) op x2) ... op x(P-1). One round:
 * where a vector costs less to send than a message's latency, that beats every log P
 * exchange, whose combining order differs from rank to rank (recursive doubling forms
 * (x0 op x1) op (x2 op x3) at P = 4, which is not the canonical fold).
 *
 * Worked example, P = 3 (x_r: rank r's vector; "->" a message; all in one round):
 *
 *   0 -x0-> 1   0 -x0-> 2
 *   1 -x1-> 0   1 -x1-> 2
 *   2 -x2-> 0   2 -x2-> 1
 *   every rank: result = (x0 op x1) op x2, the same bits on all
 *
 * Cost: (P - 1) x count elements sent and received a rank, P - 1 reductions of the whole
 * vector: for small vectors only (auto in reproducible mode runs it where the copies to the
 * other P - 1 ranks fit in 64 KiB, src/mpi/reproducible.c).
 *
 * Choices. The schedule copies send -> recv and sends from recv (safe with MPI_IN_PLACE);
 * the fold (parts/canonical_fold) overwrites recv only after those sends, landing the
 * incoming vectors in P - 1 scratch slots so they arrive in any order.
 */
#include <stdlib.h>

#include "../schedule.h"
#include "parts/canonical_fold.h"

enum { GATHER_TAG = 0 };

static int canonical_gather_build(int32_t ranks, int32_t rank, int64_t count,
                                  int32_t elem_size, const papcoll_context *context,
                                  papcoll_schedule *out) {
    (void)elem_size;
    (void)context;
    int32_t copied = sched_copy_own_vector(out);
    if (ranks == 1) return sched_finish(out);
    int32_t *sends = malloc((size_t)ranks * sizeof *sends);
    if (sends == NULL) return sched_fail(out, PAPCOLL_ERR_NO_MEMORY, "out of memory");
    int32_t sent = 0;
    for (int32_t peer = 0; peer < ranks; peer++)
        if (peer != rank)
            sends[sent++] = sched_send(out, peer, GATHER_TAG, SCHED_RECV_REGION(0, count),
                                       SCHED_AFTER(copied));
    canonical_fold(out, ranks, rank, SCHED_RECV_REGION(0, count), copied, sends, sent,
                   GATHER_TAG);
    free(sends);
    return sched_finish(out);
}

const algorithm_entry canonical_gather_algorithm = {
    .info = {
        .name = "canonical_gather",
        .description = "every rank sends its vector to every other rank and folds all P in "
                       "rank order; reproducible, one round (small vectors)",
        .source = "papcoll's reproducible mode",
        .limitations = "none; sends (P - 1) x count elements a rank; scratch (P - 1) x count",
        .canonical_order = 1,
    },
    .build = canonical_gather_build,
};
