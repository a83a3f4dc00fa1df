/* auto_feedback.c - auto's closed loop (issue 32): a model decision is measured, and where
 * the measurements contradict the model, they win.
 *
 * The cost model (src/core/select.c) picks an algorithm and names the one it compared it
 * with: native where it picked a papcoll algorithm, its best papcoll candidate where it
 * picked native. Every call of auto is measured: the AUTOMATIC monitor source sends each
 * rank's entry and exit with its period's message (monitor_source_automatic.c; no extra
 * collective), from which every rank computes the call's time from its last arrival to its
 * completion (the latest exit; monitor_source_automatic.c says why that and not e-bar).
 * The times are kept per decision: shape, lateness level (the call's highest arrival
 * class: one late rank at 3 delta and at 30 delta are apart) and the pair compared. For
 * each, by the uses of the decision:
 *
 *   use 0, 2, 4, ...   the preferred one runs: the model's choice until overruled
 *   use 1, 3 and 5     the other one runs, a probe, so that both are measured early
 *   use 8, 24, 40 ...  the other one again (every 16th use: a machine or program that
 *                      changed is noticed, at the cost of one call in 16)
 *   with 3 measurements of each, the preferred one is the one whose median of the last 5
 *   is lower by more than 15 % and 1 us (the margin keeps noise from flipping it back and
 *   forth)
 *   a new lateness level within 2 of a measured one starts from its measurements, from use
 *   6 (NEIGHBOUR_LEVELS says why)
 *
 *   e.g. the testbed, 64 KiB, one rank late: the model picks straggler, against native
 *     use       0          1       2          3       4          5       6, 7 ..
 *     runs      straggler  native  straggler  native  straggler  native  native (overruled
 *     measured  0.9 ms     0.1 ms  1.0 ms     0.1 ms  0.9 ms     0.1 ms  once the period
 *                                                                         of use 5 is back)
 *
 * Native is not one algorithm: the MPI library has several (native_variants.h), and its
 * default is not the fastest everywhere. Native's side of a decision holds a median for
 * each, and its median is that of the one measured fastest. Every run of native (a probe
 * of native too) serves to try them:
 *
 *   native runs   first             the default, 3 times (the pair is compared as soon as
 *                                   it was without variants)
 *                 then              the others, each 3 times
 *                 then              the fastest: the default until another's median is
 *                                   lower by the same margin (15 % and 1 us)
 *                 every 16th        one other, in turn (the machine or program changed)
 *
 *   e.g. MPICH, 1 KiB balanced, P = 4 on 2 shared cores: the model picks native, against
 *   papcoll's recursive doubling (41 us). Native's default measures 54 us, so papcoll's
 *   runs from about use 12, and native only in probes; those try recursive_doubling
 *   (31 us), reduce_scatter_allgather (40 us), ring (45 us); once recursive_doubling has
 *   its 3, native's side is 31 us, and native runs again, as recursive_doubling.
 *   Where the model picks native and nothing is compared with it, a decision is still kept
 *   for the variants alone (has_alternative 0).
 *
 * Measurements come back with a period's messages, so a decision is corrected at most a
 * period (MONITOR_PERIOD_MOST_CALLS calls) after its probes. Every rank holds the same
 * table (the same decisions, tags and measurements), so every rank decides alike without a
 * message. Calls beyond INT_MAX elements are not compared: native cannot run them.
 */
#include "auto_feedback.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The measured gain that overrules the preferred algorithm: relative and absolute. 15 %:
 * calls on ranks that share cores scatter 10-20 % (docs/benchmarks.md), and with a margin
 * of 5 % the loop followed that noise (1 MiB, balanced: straggler in 46 of 200 calls,
 * auto 1.12 x native); the model errors the loop is for are larger (6-15 x on the testbed
 * at 64 KiB). */
static const double switch_share = 0.15, switch_seconds = 1e-6;
enum { PROBE_EVERY = 16, PROBE_PHASE = 8, SAMPLES_TO_COMPARE = 3 };

/* A new lateness level starts from the measurements of the nearest level measured, up to
 * two levels away (a factor of 4 in lateness; classes double), and skips the early probes
 * (its next is at use PROBE_PHASE). Why: where ranks share cores, on-time ranks scatter by
 * up to milliseconds, so "nobody late" comes as levels 1, 2, 3 in turn, and each new level
 * probed the other side 3 times afresh (the testbed, 64 KiB: 8 of 24 calls straggler after
 * lateness stopped, each 0.5 - 2 ms slower). The probe at use 8 and every measurement of
 * the level's own calls correct an inheritance that does not hold there. */
enum { NEIGHBOUR_LEVELS = 2 };

static double median(const feedback_samples *samples) {
    double sorted[FEEDBACK_SAMPLES];
    int n = samples->filled;
    memcpy(sorted, samples->seconds, (size_t)n * sizeof *sorted);
    for (int i = 1; i < n; i++) /* insertion sort: five numbers at most */
        for (int j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
            double swap = sorted[j];
            sorted[j] = sorted[j - 1];
            sorted[j - 1] = swap;
        }
    if (n == 0) return 0;
    return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

static int key_equal(const feedback_key *a, const feedback_key *b) {
    return a->count == b->count && a->extent == b->extent &&
           a->commutative == b->commutative && a->level == b->level &&
           a->model == b->model && a->alternative == b->alternative &&
           a->has_alternative == b->has_alternative;
}

static void samples_add(feedback_samples *samples, double seconds) {
    samples->seconds[samples->next] = seconds;
    samples->next = (samples->next + 1) % FEEDBACK_SAMPLES;
    if (samples->filled < FEEDBACK_SAMPLES) samples->filled++;
}

/* A side's measurements: native's are those of the variant it runs as. */
static const feedback_samples *side_samples(const feedback_entry *entry, int alternative) {
    const algorithm_entry *algorithm = alternative ? entry->key.alternative : entry->key.model;
    if (algorithm == NULL) return &entry->native[entry->native_preferred];
    return alternative ? &entry->alternative : &entry->model;
}

static int measured_enough(const feedback_entry *entry) {
    return side_samples(entry, 0)->filled >= SAMPLES_TO_COMPARE &&
           (!entry->key.has_alternative ||
            side_samples(entry, 1)->filled >= SAMPLES_TO_COMPARE);
}

/* Whether candidate seconds (a median) beat incumbent by the margin. */
static int clearly_faster(double candidate, double incumbent) {
    return candidate < incumbent * (1 - switch_share) - switch_seconds;
}

/* The measured decision of the same shape and pair at the nearest lateness level, at most
 * NEIGHBOUR_LEVELS away (ties: the lower level), with both sides measured; or NULL. */
static const feedback_entry *neighbour_of(const feedback_table *table,
                                          const feedback_key *key) {
    const feedback_entry *nearest = NULL;
    int nearest_distance = NEIGHBOUR_LEVELS + 1;
    for (int i = 0; i < FEEDBACK_ENTRIES; i++) {
        const feedback_entry *entry = &table->entries[i];
        feedback_key same_level = entry->key;
        same_level.level = key->level;
        if (entry->serial == 0 || !key_equal(&same_level, key) || !measured_enough(entry))
            continue;
        int distance = abs(entry->key.level - key->level);
        if (distance < nearest_distance ||
            (nearest != NULL && distance == nearest_distance &&
             entry->key.level < nearest->key.level)) {
            nearest = entry;
            nearest_distance = distance;
        }
    }
    return nearest;
}

static feedback_entry *entry_for(feedback_table *table, const feedback_key *key,
                                 int create) {
    feedback_entry *oldest = &table->entries[0];
    for (int i = 0; i < FEEDBACK_ENTRIES; i++) {
        feedback_entry *entry = &table->entries[i];
        if (entry->serial != 0 && key_equal(&entry->key, key)) return entry;
        if (entry->last_used < oldest->last_used) oldest = entry;
    }
    if (!create) return NULL;
    const feedback_entry *neighbour = neighbour_of(table, key);
    feedback_entry inherited;
    memset(&inherited, 0, sizeof inherited);
    if (neighbour != NULL) { /* copied first: it may be the entry that makes room */
        inherited = *neighbour;
        inherited.uses = 2 * SAMPLES_TO_COMPARE; /* its early probes are done */
    }
    *oldest = inherited;
    oldest->key = *key;
    oldest->serial = ++table->serials;
    return oldest;
}

/* Whether the measurements say: run the alternative (with the margin against the side
 * preferred now). */
static int alternative_preferred(const feedback_entry *entry) {
    if (!entry->key.has_alternative || !measured_enough(entry)) return entry->overruled;
    double model = median(side_samples(entry, 0)), alternative = median(side_samples(entry, 1));
    if (entry->overruled) return !clearly_faster(model, alternative);
    return clearly_faster(alternative, model);
}

/* The native variant with the lowest median of those measured enough, where it beats the
 * one preferred now by the margin; else the one preferred now. */
static int fastest_variant(const feedback_entry *entry, int variants) {
    const feedback_samples *kept = &entry->native[entry->native_preferred];
    if (kept->filled < SAMPLES_TO_COMPARE) return entry->native_preferred;
    int best = entry->native_preferred;
    double kept_seconds = median(kept), best_seconds = kept_seconds;
    for (int v = 0; v < variants; v++) {
        const feedback_samples *samples = &entry->native[v];
        if (v == entry->native_preferred || samples->filled < SAMPLES_TO_COMPARE) continue;
        double seconds = median(samples);
        if (seconds < best_seconds && clearly_faster(seconds, kept_seconds)) {
            best = v;
            best_seconds = seconds;
        }
    }
    return best;
}

/* The variant a run of native uses: while some variant has run fewer than
 * SAMPLES_TO_COMPARE times, the default first (so that the pair is compared as soon as
 * without variants), then the one run least (lowest first); then the fastest, and another
 * in turn every PROBE_EVERY-th run. Runs are counted as they are made, not as their
 * measurements come back, so every variant is tried its 3 times while the first
 * measurements are still in flight. */
static int next_variant(feedback_entry *entry, int variants) {
    int least = 0;
    for (int v = 1; v < variants && entry->native_tries[0] >= SAMPLES_TO_COMPARE; v++)
        if (entry->native_tries[v] < entry->native_tries[least]) least = v;
    if (entry->native_tries[least] < SAMPLES_TO_COMPARE) {
        entry->native_tries[least]++;
        return least;
    }
    int64_t run = entry->native_uses++;
    if (run % PROBE_EVERY != PROBE_PHASE) return entry->native_preferred;
    int other = (int)((run / PROBE_EVERY) % (variants - 1));
    return other < entry->native_preferred ? other : other + 1;
}

/* uses 1, 3 and 5 (the SAMPLES_TO_COMPARE measurements of the other side), then every
 * PROBE_EVERY-th */
static int is_probe(int64_t use) {
    return (use < 2 * SAMPLES_TO_COMPARE && use % 2 == 1) ||
           (use >= PROBE_PHASE && use % PROBE_EVERY == PROBE_PHASE);
}

static int variants_untried(const feedback_entry *entry, int variants) {
    for (int v = 0; v < variants; v++)
        if (entry->native_tries[v] < SAMPLES_TO_COMPARE) return 1;
    return 0;
}

/* A call's tag: which decision, which side, which native variant. */
static double tag_of(const feedback_entry *entry, int alternative, int variant) {
    return ((double)entry->serial * 2 + alternative) * NATIVE_VARIANTS_MOST + variant;
}

double feedback_decide(feedback_table *table, const choice_input *input, int level,
                       const native_variants *natives, int count_use, auto_choice *choice) {
    papcoll_choice *report = &choice->report;
    /* MPICH's named algorithms reorder operands: only commutative ops try them */
    int variants = input->commutative ? natives->count : 1;
    int has_alternative = report->alternative[0] != '\0';
    choice->native_variant = 0;
    if (input->count > INT_MAX || (!has_alternative && (choice->algorithm != NULL ||
                                                        variants < 2)))
        return -1;
    feedback_key key;
    memset(&key, 0, sizeof key);
    key.count = input->count;
    key.extent = input->extent;
    key.commutative = input->commutative;
    key.level = level;
    key.model = choice->algorithm;
    key.has_alternative = has_alternative;
    key.alternative = has_alternative ? registry_find(report->alternative) : NULL; /* NULL: native */
    feedback_entry *entry = entry_for(table, &key, count_use);
    if (entry == NULL) return -1; /* only asked, and never measured: the model's choice */
    /* only a call changes the table: papcoll_resolve_algorithm, which some ranks may call
     * and others not, only asks */
    int overruled = alternative_preferred(entry);
    int native_preferred = fastest_variant(entry, variants);
    int64_t use = entry->uses;
    if (count_use) {
        entry->overruled = overruled;
        entry->native_preferred = native_preferred;
        entry->uses++;
        entry->last_used = ++table->clock;
    }
    /* while native's variants are being tried and native is the side not run, it is
     * probed every other use, as in the first uses: else its variants would wait for the
     * probes every 16th use (at 1 KiB: 100 uses at papcoll's 41 us before native's 31) */
    int native_waits = variants > 1 && variants_untried(entry, variants) &&
                       (overruled ? key.model == NULL : key.alternative == NULL);
    report->probe = has_alternative && count_use &&
                    (is_probe(use) || (native_waits && use % 2 == 1));
    int run_alternative = has_alternative && overruled != report->probe;
    report->overruled = overruled && !report->probe;
    report->observed_seconds = median(side_samples(entry, 0));
    report->observed_calls = side_samples(entry, 0)->filled;
    report->alternative_observed_seconds = has_alternative ? median(side_samples(entry, 1)) : 0;
    report->alternative_observed_calls = has_alternative ? side_samples(entry, 1)->filled : 0;
    const algorithm_entry *runs = run_alternative ? key.alternative : key.model;
    if (run_alternative)
        snprintf(report->algorithm, sizeof report->algorithm, "%s", report->alternative);
    if (runs == NULL) { /* native: as which of the library's algorithms */
        int variant = count_use && variants > 1 ? next_variant(entry, variants)
                                                : native_preferred;
        choice->native_variant = variant;
        snprintf(report->algorithm, sizeof report->algorithm, "%s", natives->names[variant]);
    }
    choice->algorithm = runs;
    return tag_of(entry, run_alternative, choice->native_variant);
}

void feedback_observe(feedback_table *table, double tag, double seconds) {
    if (!(tag >= 0) || !isfinite(seconds)) return;
    int64_t code = (int64_t)tag;
    int variant = (int)(code % NATIVE_VARIANTS_MOST);
    int alternative = (int)((code / NATIVE_VARIANTS_MOST) % 2);
    int64_t serial = code / NATIVE_VARIANTS_MOST / 2;
    for (int i = 0; i < FEEDBACK_ENTRIES; i++) {
        feedback_entry *entry = &table->entries[i];
        if (entry->serial != serial) continue;
        const algorithm_entry *ran = alternative ? entry->key.alternative : entry->key.model;
        if (ran == NULL)
            samples_add(&entry->native[variant], seconds);
        else
            samples_add(alternative ? &entry->alternative : &entry->model, seconds);
        return;
    }
    /* the decision was pushed out of the table since: its measurement goes with it */
}

void feedback_clear(feedback_table *table) { memset(table, 0, sizeof *table); }
