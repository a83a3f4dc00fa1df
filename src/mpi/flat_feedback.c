/* flat_feedback.c - which of papcoll's flat algorithms stands as native's alternative.
 *
 * Where the model picks native (balanced arrivals, or no PAP-aware candidate within its
 * uncertainty), the closed loop measures native against one of papcoll's flat algorithms
 * (choose.c: the fixed rule's, or the stand-in its closed form says is clearly faster).
 * Measured against native alone, that one could win or lose, but a third was never run:
 * SMPI, P = 16, ethernet-1g, 1 MiB, each rank arriving later by a jitter of 200 us mean:
 * auto ran ring (20.3 ms), the fixed rule's from 1 MiB and 7 % behind Rabenseifner in the
 * closed form, where Rabenseifner took 16.6 (docs/smpi.md, "auto's loop with noise
 * injected"). The model cannot tell them apart; the machine can.
 *
 * So where several stand-ins lie within alternative_share of the named one in the closed
 * form (select_flat_candidates), which one stands as native's alternative is measured per
 * shape, as native's variants are (native_feedback.c, the same code on a record of its own
 * kind): whenever the flat side runs,
 *
 *   first          the named one, 3 times (the decision's early probes of it)
 *   then           each other candidate 3 times, the one tried least first; while some
 *                  are untried the flat side runs at every call (auto_feedback.c), to be
 *                  done with them
 *   then           the preferred (the named one until another is faster beyond the noise:
 *                  feedback_clearly_faster, each new measurement weighed once; a
 *                  candidate's first weighing decides on that alone, where native's
 *                  variants need two in a row or a 25 % lead), and where the flat side is
 *                  what auto runs, every other probe slot another candidate in turn instead
 *                  of native
 *
 * Why the first weighing decides: the candidates lie within 25 % of each other in the
 * model, so a clear difference (a median 5 % lower and all 3 times below the other's 3) is
 * what there is to find, and waiting for a second weighing held the switch until past the
 * warm-up (SMPI, P = 16, 1 MiB, jitter 200 us: Rabenseifner in 78 % of the 32 timed calls,
 * 3 algorithms, 4 probes). Between candidates alike but for noise a wrong first pick (1 in
 * 20) costs nothing, and later weighings correct it.
 *
 * The decision of the closed loop is then kept per (native, the candidate preferred): where
 * that changes, a new decision starts from both sides' times (native's shape, this shape's
 * record), and where the flat side ran instead of native before, it does now (the new one
 * was measured faster than the old, which was faster than native).
 *
 * Cost: 3 runs of each candidate other than the named one, once per shape (1 or 2 more
 * candidates: 3 - 6 calls), and 3 more of one whose weighing found it faster but needs a
 * second (native_upcoming). Where the model is not calibrated (no measured numbers), only
 * the named one.
 */
#include "flat_feedback.h"

#include <string.h>

#include "select.h"

void flat_side_for(native_feedback *table, const choice_input *input,
                   const algorithm_entry *named, int count_use, const papcoll_tuning *tuning,
                   flat_side *out) {
    memset(out, 0, sizeof *out);
    if (named == NULL) return;
    out->count = 1;
    out->candidates[0] = named;
    if (!input->calibrated || input->ranks < 2) return;
    papcoll_sim_model model;
    choice_model(input->latency, input->seconds_per_byte, input->reduce_seconds_per_byte,
                 &model);
    const char *names[FLAT_CANDIDATES_MOST];
    int found = select_flat_candidates(input->ranks, input->count, input->extent,
                                       input->commutative, &model, tuning->alternative_share,
                                       named->info.name, names);
    if (found < 2) return;
    for (int i = 1; i < found; i++) {
        const algorithm_entry *candidate = registry_find(names[i]);
        if (candidate != NULL) out->candidates[out->count++] = candidate;
    }
    if (out->count < 2) return;
    shape_kind kind = input->commutative ? SHAPE_OF_FLAT_COMMUTATIVE : SHAPE_OF_FLAT;
    out->shape = native_shape_for(table, kind, input->count, input->extent, count_use);
    if (out->shape == NULL) return;
    if (!count_use) { /* a query judges a copy: what the call would, the table unchanged */
        out->asked = *out->shape;
        out->shape = &out->asked;
    }
    out->preferred = native_judge(out->shape, out->count, tuning);
}

int flat_side_next(flat_side *flat, int count_use, int trial, const papcoll_tuning *tuning,
                   double *tag) {
    *tag = -1;
    if (flat->shape == NULL) return flat->preferred;
    if (!count_use) {
        int upcoming = native_upcoming(flat->shape, flat->count, tuning);
        return upcoming >= 0 ? upcoming : flat->preferred;
    }
    int candidate = native_next(flat->shape, flat->count, trial, tuning);
    *tag = native_tag(flat->shape, candidate);
    return candidate;
}

int flat_side_untried(const flat_side *flat, const papcoll_tuning *tuning) {
    return flat->shape != NULL && native_upcoming(flat->shape, flat->count, tuning) >= 0;
}

const feedback_samples *flat_side_times(const flat_side *flat, const papcoll_tuning *tuning) {
    if (flat->shape == NULL) return NULL;
    const feedback_samples *times = &flat->shape->samples[flat->preferred];
    return times->filled >= tuning->samples_to_compare ? times : NULL;
}
