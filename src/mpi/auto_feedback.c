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
           a->model == b->model && a->alternative == b->alternative;
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
        if (entry->serial == 0 || !key_equal(&same_level, key) ||
            entry->model.filled < SAMPLES_TO_COMPARE ||
            entry->alternative.filled < SAMPLES_TO_COMPARE)
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
        inherited.model = neighbour->model;
        inherited.alternative = neighbour->alternative;
        inherited.overruled = neighbour->overruled;
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
    if (entry->model.filled < SAMPLES_TO_COMPARE ||
        entry->alternative.filled < SAMPLES_TO_COMPARE)
        return entry->overruled;
    double model = median(&entry->model), alternative = median(&entry->alternative);
    if (entry->overruled)
        return !(model < alternative * (1 - switch_share) - switch_seconds);
    return alternative < model * (1 - switch_share) - switch_seconds;
}

/* uses 1, 3 and 5 (the SAMPLES_TO_COMPARE measurements of the other side), then every
 * PROBE_EVERY-th */
static int is_probe(int64_t use) {
    return (use < 2 * SAMPLES_TO_COMPARE && use % 2 == 1) ||
           (use >= PROBE_PHASE && use % PROBE_EVERY == PROBE_PHASE);
}

double feedback_decide(feedback_table *table, const choice_input *input, int level,
                       int count_use, auto_choice *choice) {
    papcoll_choice *report = &choice->report;
    if (report->alternative[0] == '\0' || input->count > INT_MAX) return -1;
    feedback_key key;
    memset(&key, 0, sizeof key);
    key.count = input->count;
    key.extent = input->extent;
    key.commutative = input->commutative;
    key.level = level;
    key.model = choice->algorithm;
    key.alternative = registry_find(report->alternative); /* NULL: native */
    feedback_entry *entry = entry_for(table, &key, count_use);
    if (entry == NULL) return -1; /* only asked, and never measured: the model's choice */
    /* only a call changes the table: papcoll_resolve_algorithm, which some ranks may call
     * and others not, only asks */
    int overruled = alternative_preferred(entry);
    int64_t use = entry->uses;
    if (count_use) {
        entry->overruled = overruled;
        entry->uses++;
        entry->last_used = ++table->clock;
    }
    report->probe = count_use && is_probe(use);
    int run_alternative = overruled != report->probe;
    report->overruled = overruled && !report->probe;
    report->observed_seconds = median(&entry->model);
    report->observed_calls = entry->model.filled;
    report->alternative_observed_seconds = median(&entry->alternative);
    report->alternative_observed_calls = entry->alternative.filled;
    if (run_alternative) {
        choice->algorithm = key.alternative;
        snprintf(report->algorithm, sizeof report->algorithm, "%s", report->alternative);
    }
    return (double)entry->serial * 2 + run_alternative;
}

void feedback_observe(feedback_table *table, double tag, double seconds) {
    if (!(tag >= 0) || !isfinite(seconds)) return;
    int64_t serial = (int64_t)(tag / 2);
    int alternative = (int64_t)tag % 2 == 1;
    for (int i = 0; i < FEEDBACK_ENTRIES; i++) {
        feedback_entry *entry = &table->entries[i];
        if (entry->serial != serial) continue;
        feedback_samples *samples = alternative ? &entry->alternative : &entry->model;
        samples->seconds[samples->next] = seconds;
        samples->next = (samples->next + 1) % FEEDBACK_SAMPLES;
        if (samples->filled < FEEDBACK_SAMPLES) samples->filled++;
        return;
    }
    /* the decision was pushed out of the table since: its measurement goes with it */
}

void feedback_clear(feedback_table *table) { memset(table, 0, sizeof *table); }
