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
 *   then           the preferred: the default until another is faster beyond the noise
 *                  (the loop's margin and rank test: feedback_clearly_faster, each new
 *                  measurement of another weighed once; one found faster at a weighing
 *                  but not by 25 % runs 3 more times at once, for the second weighing a
 *                  switch needs), and every
 *                  16th run another, in turn (the machine or the program changed); where a
 *                  decision of the closed loop runs native, its probe calls say when
 *                  (auto_feedback.c: one probe in 16 calls in all, not one of each kind)
 *
 *   e.g. MPICH, 1 KiB, P = 4 on 2 shared cores (V = 4: the default, recursive_doubling,
 *   reduce_scatter_allgather, ring), medians 54, 31, 40, 45 us, native alone: runs 0 - 2
 *   the default, 3 - 11 the others in turn, then recursive_doubling, with the default at
 *   the shape's call 24, reduce_scatter_allgather at 40, ring at 56, ... (the probe calls,
 *   8 + 16 k, counted from the shape's first call; those within the tries try nothing)
 *
 * The times come from the AUTOMATIC monitor source with the period's messages (the call's
 * time from its last arrival, papcoll's own work done, to its completion, rank 0's
 * clock), so every rank holds the same table and picks the same variant without a message.
 */
#include "native_feedback.h"

#include <math.h>
#include <string.h>

#include "median.h"
#include "rank_test.h"
#include "recency.h"

/* What overrules (papcoll_tuning's switch_share, switch_seconds and switch_significance): a
 * median (of the last 5) lower by 5 % and 1 us, and times lower by a one-sided
 * Mann-Whitney U test at p <= 0.05 (rank_test.c), over all kept times or over the newest
 * samples_to_compare (3; 3 against 3: all below).
 *
 * Why both: calls on ranks that share cores scatter 10-20 % (docs/benchmarks.md), so
 * medians of 3 to 5 calls differ by 5 % at random, and with the margin alone the loop
 * followed that noise: at 15 % (the old default) a 15-call grid point ran 3 to 6
 * algorithms. The test asks that the times themselves be apart, and so lets the margin be as
 * small as the difference worth a switch.
 *
 * The newest times too, not only all 5: a side tried once in 48 calls keeps times of long
 * ago, and a test over them alone waited for 5 new ones (240 calls) to see a change. A
 * rival's measurements are weighed once, when they are new: the side that runs changes its
 * newest times every call, and a test repeated at every call against the same rival's
 * times finds at one of them the 1 chance in 20 (with 4 sides alike but for noise, the
 * preferred one changed every 20 - 40 calls). Even so, 1 weighing in 20 of sides alike
 * finds one faster: so a switch needs two weighings in a row that find the rival faster
 * (feedback_takes_over; between equals, 1 in 400), but for the first weighing (of a
 * decision; of each of native's variants) of a rival faster by more than alternative_share
 * (25 %, the model's own uncertainty, select.c), which decides at once: the model's errors
 * the loop is for are that large (6 - 15 x on the testbed at 64 KiB). */
double feedback_median(const feedback_samples *samples) {
    return median_of(samples->seconds, samples->filled);
}

void feedback_samples_add(feedback_samples *samples, double seconds) {
    samples->seconds[samples->next] = seconds;
    samples->next = (samples->next + 1) % FEEDBACK_SAMPLES;
    if (samples->filled < FEEDBACK_SAMPLES) samples->filled++;
    samples->added++;
}

/* The newest `most` of samples' times, into newest[] (at most FEEDBACK_SAMPLES); how many. */
static int newest_seconds(const feedback_samples *samples, int most, double *newest) {
    int n = samples->filled < most ? samples->filled : most;
    for (int k = 0; k < n; k++)
        newest[k] =
            samples->seconds[(samples->next - 1 - k + FEEDBACK_SAMPLES) % FEEDBACK_SAMPLES];
    return n;
}

int feedback_takes_over(const feedback_samples *rival, const feedback_samples *incumbent,
                        int faster, int first, int leaning, const papcoll_tuning *tuning) {
    int far =
        feedback_median(rival) < feedback_median(incumbent) * (1 - tuning->alternative_share);
    return faster && (leaning || (first && far));
}

int feedback_clearly_faster(const feedback_samples *candidate,
                            const feedback_samples *incumbent, const papcoll_tuning *tuning) {
    if (!(feedback_median(candidate) < feedback_median(incumbent) * (1 - tuning->switch_share) -
                                           tuning->switch_seconds))
        return 0;
    /* the kept times apart, or the newest (a change the older ones hide) */
    double whole = rank_test_lower_p(candidate->seconds, candidate->filled, incumbent->seconds,
                                     incumbent->filled);
    double candidate_newest[FEEDBACK_SAMPLES], incumbent_newest[FEEDBACK_SAMPLES];
    int most = (int)tuning->samples_to_compare;
    int candidates = newest_seconds(candidate, most, candidate_newest);
    int incumbents = newest_seconds(incumbent, most, incumbent_newest);
    double newest = rank_test_lower_p(candidate_newest, candidates, incumbent_newest, incumbents);
    return fmin(whole, newest) <= tuning->switch_significance;
}

native_shape *native_shape_for(native_feedback *table, shape_kind kind, int64_t count,
                               int64_t extent, int create) {
    for (int i = 0; i < NATIVE_FEEDBACK_SHAPES; i++) {
        native_shape *shape = &table->shapes[i];
        if (shape->serial != 0 && shape->kind == kind && shape->count == count &&
            shape->extent == extent) {
            if (create) shape->last_used = ++table->clock;
            return shape;
        }
    }
    if (!create) return NULL;
    native_shape *oldest = &table->shapes[least_recently_used(
        &table->shapes[0].last_used, sizeof table->shapes[0], NATIVE_FEEDBACK_SHAPES, NULL,
        NULL)];
    memset(oldest, 0, sizeof *oldest);
    oldest->kind = kind;
    oldest->count = count;
    oldest->extent = extent;
    oldest->serial = ++table->serials;
    oldest->last_used = ++table->clock;
    return oldest;
}

/* Whether variant v has measurements not yet weighed against the preferred one, and
 * whether they are faster beyond the noise (*faster). */
static int weighed_now(const native_shape *shape, int v, const papcoll_tuning *tuning,
                       int *faster) {
    const feedback_samples *kept = &shape->samples[shape->preferred];
    const feedback_samples *samples = &shape->samples[v];
    *faster = 0;
    if (v == shape->preferred || kept->filled < tuning->samples_to_compare ||
        samples->filled < tuning->samples_to_compare || samples->added == shape->judged[v])
        return 0;
    *faster = feedback_clearly_faster(samples, kept, tuning);
    return 1;
}

static int native_preferred(const native_shape *shape, int variants,
                            const papcoll_tuning *tuning) {
    int best = shape->preferred;
    double best_seconds = feedback_median(&shape->samples[shape->preferred]);
    for (int v = 0; v < variants; v++) {
        int faster;
        if (!weighed_now(shape, v, tuning, &faster)) continue;
        int first = shape->judged[v] == 0;
        /* papcoll's flat candidates: the first weighing decides on a clear difference alone
         * (flat_feedback.c says why) */
        int takes_over = feedback_takes_over(&shape->samples[v],
                                             &shape->samples[shape->preferred], faster, first,
                                             shape->leaning[v], tuning) ||
                         (first && faster && shape->kind != SHAPE_OF_NATIVE);
        if (!takes_over) continue;
        double seconds = feedback_median(&shape->samples[v]);
        if (seconds < best_seconds) {
            best = v;
            best_seconds = seconds;
        }
    }
    return best;
}

int native_judge(native_shape *shape, int variants, const papcoll_tuning *tuning) {
    int best = native_preferred(shape, variants, tuning);
    for (int v = 0; v < variants; v++) {
        int faster;
        if (!weighed_now(shape, v, tuning, &faster)) continue;
        shape->leaning[v] = faster && v != best;
        shape->judged[v] = shape->samples[v].added;
    }
    if (best != shape->preferred) memset(shape->leaning, 0, sizeof shape->leaning);
    shape->preferred = best;
    return best;
}

int native_upcoming(const native_shape *shape, int variants, const papcoll_tuning *tuning) {
    int least = 0;
    for (int v = 1; v < variants && shape->tries[0] >= tuning->samples_to_compare; v++)
        if (shape->tries[v] < shape->tries[least]) least = v;
    if (shape->tries[least] < tuning->samples_to_compare) return least;
    /* a rival a weighing found faster, but not by alternative_share, runs again at once
     * for the second weighing a switch needs (feedback_takes_over), instead of at its
     * next probe slot: made-up times in tests/mpi/feedback_rule.c, MPICH's default 54 us
     * and the last variant in the trials' turn 46 us, it runs in 15 of 16 calls from
     * call 27, without this not within 64 calls; once per variant */
    for (int v = 0; v < variants; v++)
        if (shape->leaning[v] && shape->tries[v] < 2 * tuning->samples_to_compare) return v;
    return -1;
}

int native_next(native_shape *shape, int variants, int trial, const papcoll_tuning *tuning) {
    int tried = native_upcoming(shape, variants, tuning);
    if (tried >= 0) {
        shape->tries[tried]++;
        return tried;
    }
    if (variants < 2 || !trial) return shape->preferred;
    int other = (int)(shape->trials++ % (variants - 1));
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
