/* auto_feedback.c - auto's closed loop: a model decision is measured, and where
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
 *   6 (neighbour_levels: below, it says why)
 *
 *   e.g. the testbed, 64 KiB, one rank late: the model picks straggler, against native
 *     use       0          1       2          3       4          5       6, 7 ..
 *     runs      straggler  native  straggler  native  straggler  native  native (overruled
 *     measured  0.9 ms     0.1 ms  1.0 ms     0.1 ms  0.9 ms     0.1 ms  once the period
 *                                                                         of use 5 is back)
 *
 * Native is not one algorithm: the MPI library has several (native_variants.h), and its
 * default is not the fastest everywhere. Which one native runs as is measured per shape
 * (native_feedback.c). Native's side of a decision is native as the variant preferred
 * there: its measurements are kept with that variant's name, and only calls that ran it
 * count (a trial of another variant says nothing of how native usually runs). Where that
 * variant changes, native's side starts again; until it has its 3 measurements, or while
 * the shape still tries its variants, native is probed every other use where it is the
 * side not run, as in the first uses:
 *
 *   e.g. MPICH, 1 KiB balanced, P = 4 on 2 shared cores: the model picks native, against
 *   papcoll's recursive doubling (41 us). Native's default measures 54 us, so papcoll's
 *   runs from use 6; native's probes, every other use, try recursive_doubling (31 us),
 *   reduce_scatter_allgather (40 us), ring (45 us); once recursive_doubling is preferred
 *   and measured 3 times as native's side, native runs again, as recursive_doubling.
 *   Where nothing is compared with native (one rank; vectors beyond 16 MiB with balanced
 *   arrivals, choose.c), only the variants are chosen (no decision is kept).
 *
 * Measurements come back with a period's messages, so a decision is corrected at most a
 * period (MONITOR_PERIOD_MOST_CALLS calls) after its probes. Every rank holds the same
 * table (the same decisions, tags and measurements), so every rank decides alike without a
 * message. Calls native cannot run (choice_input.native_runs: beyond INT_MAX elements, a
 * post or a start in SMPI) are not compared.
 */
#include "auto_feedback.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recency.h"
#include "tuning.h"

/* The loop's constants are papcoll_tuning's (input->tuning, or the defaults):
 * samples_to_compare (3), probe_every (16), probe_phase (8), neighbour_levels (2), and
 * native_feedback.c's margin (switch_share, switch_seconds).
 *
 * A new lateness level starts from the measurements of the nearest level measured, up to
 * neighbour_levels (2) levels away (a factor of 4 in lateness; classes double), and skips
 * the early probes (its next is at use probe_phase). Why: where ranks share cores, on-time
 * ranks scatter by up to milliseconds, so "nobody late" comes as levels 1, 2, 3 in turn, and
 * each new level probed the other side 3 times afresh (the testbed, 64 KiB: 8 of 24 calls straggler after
 * lateness stopped, each 0.5 - 2 ms slower). The probe at use 8 and every measurement of
 * the level's own calls correct an inheritance that does not hold there. */

static int key_equal(const feedback_key *a, const feedback_key *b) {
    return a->count == b->count && a->extent == b->extent &&
           a->commutative == b->commutative && a->level == b->level &&
           a->model == b->model && a->alternative == b->alternative;
}

/* Which side of the decision is native: 0 the model's, 1 the alternative, -1 neither. */
static int native_side(const feedback_key *key) {
    return key->model == NULL ? 0 : key->alternative == NULL ? 1 : -1;
}

/* A side's measurements, and whether there are enough to compare: native's count only
 * where they are of the variant preferred now (native_variant). */
static const feedback_samples *side_samples(const feedback_entry *entry, int alternative) {
    return alternative ? &entry->alternative : &entry->model;
}

/* How many of a side's measurements the rule counts (side_measured's view). */
static int counted_calls(const feedback_entry *entry, int alternative, int native_variant) {
    if (native_side(&entry->key) == alternative && entry->native_variant != native_variant)
        return 0;
    return side_samples(entry, alternative)->filled;
}

static int side_measured(const feedback_entry *entry, int alternative, int native_variant,
                         const papcoll_tuning *tuning) {
    return counted_calls(entry, alternative, native_variant) >= tuning->samples_to_compare;
}

static int measured_enough(const feedback_entry *entry, int native_variant,
                           const papcoll_tuning *tuning) {
    return side_measured(entry, 0, native_variant, tuning) &&
           side_measured(entry, 1, native_variant, tuning);
}

/* The measured decision of the same shape and pair at the nearest lateness level, at most
 * neighbour_levels away (ties: the lower level), with both sides measured; or NULL. */
static const feedback_entry *neighbour_of(const feedback_table *table,
                                          const feedback_key *key, int native_variant,
                                          const papcoll_tuning *tuning) {
    const feedback_entry *nearest = NULL;
    int nearest_distance = (int)tuning->neighbour_levels + 1;
    for (int i = 0; i < FEEDBACK_ENTRIES; i++) {
        const feedback_entry *entry = &table->entries[i];
        feedback_key same_level = entry->key;
        same_level.level = key->level;
        if (entry->serial == 0 || !key_equal(&same_level, key) ||
            !measured_enough(entry, native_variant, tuning))
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
                                 int native_variant, int create,
                                 const papcoll_tuning *tuning) {
    for (int i = 0; i < FEEDBACK_ENTRIES; i++) {
        feedback_entry *entry = &table->entries[i];
        if (entry->serial != 0 && key_equal(&entry->key, key)) return entry;
    }
    if (!create) return NULL;
    feedback_entry *oldest = &table->entries[least_recently_used(
        &table->entries[0].last_used, sizeof table->entries[0], FEEDBACK_ENTRIES, NULL, NULL)];
    const feedback_entry *neighbour = neighbour_of(table, key, native_variant, tuning);
    feedback_entry inherited;
    memset(&inherited, 0, sizeof inherited);
    inherited.native_variant = native_variant;
    if (neighbour != NULL) { /* copied first: it may be the entry that makes room */
        inherited.model = neighbour->model;
        inherited.alternative = neighbour->alternative;
        inherited.overruled = neighbour->overruled;
        inherited.uses = 2 * tuning->samples_to_compare; /* its early probes are done */
    }
    *oldest = inherited;
    oldest->key = *key;
    oldest->serial = ++table->serials;
    return oldest;
}

/* Whether the measurements say: run the alternative (with the margin against the side
 * preferred now). */
static int alternative_preferred(const feedback_entry *entry, int native_variant,
                                 const papcoll_tuning *tuning) {
    if (!measured_enough(entry, native_variant, tuning)) return entry->overruled;
    double model = feedback_median(&entry->model);
    double alternative = feedback_median(&entry->alternative);
    if (entry->overruled) return !feedback_clearly_faster(model, alternative, tuning);
    return feedback_clearly_faster(alternative, model, tuning);
}

/* uses 1, 3 and 5 (the samples_to_compare measurements of the other side), then every
 * probe_every-th */
static int is_probe(int64_t use, const papcoll_tuning *tuning) {
    return (use < 2 * tuning->samples_to_compare && use % 2 == 1) ||
           (use >= tuning->probe_phase && use % tuning->probe_every == tuning->probe_phase);
}

/* A call's tag for the decision: which entry, which side, and for native's side which
 * variant (native_variant, or -1: a trial of another, not measured for the decision). */
static double tag_of(const feedback_entry *entry, int alternative, int variant) {
    return ((double)entry->serial * 2 + alternative) * (NATIVE_VARIANTS_MOST + 1) +
           (variant + 1);
}

double feedback_decide(feedback_table *table, const choice_input *input, int level,
                       const native_variants *natives, int count_use, auto_choice *choice,
                       double *native_tag_out) {
    papcoll_choice *report = &choice->report;
    *native_tag_out = -1;
    choice->native_variant = 0;
    if (!input->native_runs) return -1;
    papcoll_tuning tuning = tuning_in_force(input->tuning);
    /* MPICH's named algorithms reorder operands: only commutative ops try them */
    int variants = input->commutative ? natives->count : 1;
    native_shape *shape =
        variants > 1 ? native_shape_for(&table->natives, input->count, input->extent,
                                        count_use)
                     : NULL;
    int preferred = shape != NULL ? native_preferred(shape, variants, &tuning) : 0;
    int has_alternative = report->alternative[0] != '\0';
    feedback_entry *entry = NULL;
    feedback_key key;
    memset(&key, 0, sizeof key);
    int run_alternative = 0;
    if (has_alternative) {
        key.count = input->count;
        key.extent = input->extent;
        key.commutative = input->commutative;
        key.level = level;
        key.model = choice->algorithm;
        key.alternative = registry_find(report->alternative); /* NULL: native */
        entry = entry_for(table, &key, preferred, count_use, &tuning);
    }
    if (entry != NULL) {
        /* only a call changes the table: papcoll_resolve_algorithm, which some ranks may
         * call and others not, only asks */
        int overruled = alternative_preferred(entry, preferred, &tuning);
        int64_t use = entry->uses;
        if (count_use) {
            entry->overruled = overruled;
            entry->uses++;
            entry->last_used = ++table->clock;
        }
        /* native, not run now, and its variants untried or its side not measured as the
         * variant preferred: probed every other use, as in the first uses */
        int native = native_side(&key), waiting = overruled ? native == 0 : native == 1;
        int native_waits = waiting && shape != NULL &&
                           (native_untried(shape, variants, &tuning) ||
                            !side_measured(entry, native, preferred, &tuning));
        report->probe = count_use && (is_probe(use, &tuning) || (native_waits && use % 2 == 1));
        run_alternative = overruled != report->probe;
        report->overruled = overruled && !report->probe;
        /* the report shows what the rule weighs: native's measurements of a variant no
         * longer preferred count as none (papcoll_choice keeps their median; the drop-in's
         * report writes null where a side counts none) */
        report->observed_seconds = feedback_median(&entry->model);
        report->observed_calls = counted_calls(entry, 0, preferred);
        report->alternative_observed_seconds = feedback_median(&entry->alternative);
        report->alternative_observed_calls = counted_calls(entry, 1, preferred);
        if (run_alternative) {
            choice->algorithm = key.alternative;
            snprintf(report->algorithm, sizeof report->algorithm, "%s", report->alternative);
        }
    }
    int variant = -1; /* for the decision's tag */
    if (choice->algorithm == NULL && shape != NULL) { /* native: as which of the library's */
        choice->native_variant = count_use ? native_next(shape, variants, &tuning) : preferred;
        snprintf(report->algorithm, sizeof report->algorithm, "%s",
                 natives->names[choice->native_variant]);
        if (count_use) *native_tag_out = native_tag(shape, choice->native_variant);
        if (choice->native_variant == preferred) variant = preferred;
    } else if (choice->algorithm == NULL) {
        variant = 0;
    }
    if (entry == NULL || !count_use) return -1;
    return tag_of(entry, run_alternative, choice->algorithm == NULL ? variant : 0);
}

void feedback_observe(feedback_table *table, double tag, double native_tag,
                      double seconds) {
    native_observe(&table->natives, native_tag, seconds);
    if (!(tag >= 0) || !isfinite(seconds)) return;
    int64_t code = (int64_t)tag;
    int variant = (int)(code % (NATIVE_VARIANTS_MOST + 1)) - 1;
    int alternative = (int)((code / (NATIVE_VARIANTS_MOST + 1)) % 2);
    int64_t serial = code / (NATIVE_VARIANTS_MOST + 1) / 2;
    for (int i = 0; i < FEEDBACK_ENTRIES; i++) {
        feedback_entry *entry = &table->entries[i];
        if (entry->serial != serial) continue;
        feedback_samples *samples = alternative ? &entry->alternative : &entry->model;
        if (native_side(&entry->key) == alternative) {
            if (variant < 0) return; /* a trial of another variant */
            if (variant != entry->native_variant) { /* the preferred one changed */
                memset(samples, 0, sizeof *samples);
                entry->native_variant = variant;
            }
        }
        feedback_samples_add(samples, seconds);
        return;
    }
    /* the decision was pushed out of the table since: its measurement goes with it */
}

void feedback_clear(feedback_table *table) { memset(table, 0, sizeof *table); }
