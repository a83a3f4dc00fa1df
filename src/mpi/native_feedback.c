/* native_feedback.c - which of the MPI library's algorithms native runs as (the closed
 * loop: "never slower than the best native variant"; native_variants.h says why there is a
 * choice).
 *
 * The cost model knows papcoll's schedules, not the MPI library's, so this is measured
 * only, per call shape (count and element size): not per lateness level or per pair of the
 * closed loop's decisions (auto_feedback.c), because trying V algorithms 3 times each costs
 * 3 V runs, and paid per level it was never done: where ranks share cores, balanced calls
 * come as levels 0 - 3 in turn, and the grid's 8 timed calls a point still held the tries
 * (docs/benchmarks.md). Every native algorithm waits for the last rank alike; what differs
 * is the time after it. By the shape's runs of native:
 *
 *   first          the default, 3 times (the closed loop compares native with its
 *                  alternative as soon as it did without variants)
 *   then           the one tried least, until each has run 3 times (runs are counted as
 *                  they are made, not as their measurements come back a period later)
 *   then           the preferred: the default until another's median is lower by the
 *                  loop's margin (15 % and 1 us), and every 16th run another, in turn (the
 *                  machine or the program changed)
 *
 *   e.g. MPICH, 1 KiB, P = 4 on 2 shared cores (V = 4: the default, recursive_doubling,
 *   reduce_scatter_allgather, ring), medians 54, 31, 40, 45 us: runs 0 - 2 the default,
 *   3 - 11 the others in turn, then recursive_doubling, with the default at run 20,
 *   reduce_scatter_allgather at 36, ring at 52, ... (runs counted from the 12th)
 *
 * The times come from the AUTOMATIC monitor source with the period's messages (the call's
 * time from its last arrival to its completion, rank 0's clock), so every rank holds the
 * same table and picks the same variant without a message.
 */
#include "native_feedback.h"

#include <math.h>
#include <string.h>

#include "median.h"
#include "recency.h"

/* The margin that overrules (papcoll_tuning's switch_share and switch_seconds): relative
 * and absolute. 15 %: calls on ranks that share cores scatter 10-20 % (docs/benchmarks.md),
 * and with a margin of 5 % the loop followed that noise (1 MiB, balanced: straggler in 46 of
 * 200 calls, auto 1.12 x native); the model errors the loop is for are larger (6-15 x on
 * the testbed at 64 KiB). */

double feedback_median(const feedback_samples *samples) {
    return median_of(samples->seconds, samples->filled);
}

void feedback_samples_add(feedback_samples *samples, double seconds) {
    samples->seconds[samples->next] = seconds;
    samples->next = (samples->next + 1) % FEEDBACK_SAMPLES;
    if (samples->filled < FEEDBACK_SAMPLES) samples->filled++;
}

int feedback_clearly_faster(double candidate, double incumbent, const papcoll_tuning *tuning) {
    return candidate < incumbent * (1 - tuning->switch_share) - tuning->switch_seconds;
}

native_shape *native_shape_for(native_feedback *table, int64_t count, int64_t extent,
                               int create) {
    for (int i = 0; i < NATIVE_FEEDBACK_SHAPES; i++) {
        native_shape *shape = &table->shapes[i];
        if (shape->serial != 0 && shape->count == count && shape->extent == extent) {
            if (create) shape->last_used = ++table->clock;
            return shape;
        }
    }
    if (!create) return NULL;
    native_shape *oldest = &table->shapes[least_recently_used(
        &table->shapes[0].last_used, sizeof table->shapes[0], NATIVE_FEEDBACK_SHAPES, NULL,
        NULL)];
    memset(oldest, 0, sizeof *oldest);
    oldest->count = count;
    oldest->extent = extent;
    oldest->serial = ++table->serials;
    oldest->last_used = ++table->clock;
    return oldest;
}

int native_preferred(const native_shape *shape, int variants, const papcoll_tuning *tuning) {
    const feedback_samples *kept = &shape->samples[shape->preferred];
    if (kept->filled < tuning->samples_to_compare) return shape->preferred;
    int best = shape->preferred;
    double kept_seconds = feedback_median(kept), best_seconds = kept_seconds;
    for (int v = 0; v < variants; v++) {
        const feedback_samples *samples = &shape->samples[v];
        if (v == shape->preferred || samples->filled < tuning->samples_to_compare) continue;
        double seconds = feedback_median(samples);
        if (seconds < best_seconds && feedback_clearly_faster(seconds, kept_seconds, tuning)) {
            best = v;
            best_seconds = seconds;
        }
    }
    return best;
}

int native_untried(const native_shape *shape, int variants, const papcoll_tuning *tuning) {
    for (int v = 0; v < variants; v++)
        if (shape->tries[v] < tuning->samples_to_compare) return 1;
    return 0;
}

int native_next(native_shape *shape, int variants, const papcoll_tuning *tuning) {
    shape->preferred = native_preferred(shape, variants, tuning);
    int least = 0;
    for (int v = 1; v < variants && shape->tries[0] >= tuning->samples_to_compare; v++)
        if (shape->tries[v] < shape->tries[least]) least = v;
    if (shape->tries[least] < tuning->samples_to_compare) {
        shape->tries[least]++;
        return least;
    }
    int64_t run = shape->runs++;
    if (variants < 2 || run % tuning->probe_every != tuning->probe_phase)
        return shape->preferred;
    int other = (int)((run / tuning->probe_every) % (variants - 1));
    return other < shape->preferred ? other : other + 1; /* the others, in turn */
}

double native_tag(const native_shape *shape, int variant) {
    return (double)shape->serial * NATIVE_VARIANTS_MOST + variant;
}

void native_observe(native_feedback *table, double tag, double seconds) {
    if (!(tag >= 0) || !isfinite(seconds)) return;
    int64_t serial = (int64_t)(tag / NATIVE_VARIANTS_MOST);
    int variant = (int)((int64_t)tag % NATIVE_VARIANTS_MOST);
    for (int i = 0; i < NATIVE_FEEDBACK_SHAPES; i++)
        if (table->shapes[i].serial == serial) {
            feedback_samples_add(&table->shapes[i].samples[variant], seconds);
            return;
        }
}
