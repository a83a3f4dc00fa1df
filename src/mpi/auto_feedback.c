/* auto_feedback.c - auto's closed loop: a model decision is measured, and where
 * the measurements contradict the model, they win.
 *
 * The cost model (src/core/select.c) picks an algorithm and names the one it compared it
 * with: native where it picked a papcoll algorithm, its best papcoll candidate where it
 * picked native. Where native is weighed against one of papcoll's flat algorithms, which
 * one is measured too (flat_feedback.c); where such a one runs instead of native at the
 * shape, it stands for native against a PAP-aware pick (flat_baseline). Every call of
 * auto is measured: the AUTOMATIC monitor source sends each rank's entry and exit with
 * its period's message (monitor_source_automatic.c; no extra collective), from which every
 * rank computes the call's time from its last arrival (papcoll's own work before the
 * algorithm done) to its completion (the latest exit; monitor_source_automatic.c says why
 * that and not e-bar).
 * The times are kept per decision: shape, lateness level (the call's highest arrival
 * class: one late rank at 3 delta and at 30 delta are apart) and the pair compared; where
 * neither side builds from arrivals (native, ring, rabenseifner, ...), the level is left
 * out, for both then wait for every rank alike. For each, by the uses of the decision:
 *
 *   use 0, 2, 4, ...   the preferred one runs: the model's choice until overruled
 *   use 1, 3 and 5     the other one runs, a probe, so that both are measured early
 *   every 16th call    a probe: the shape's calls are counted (all levels and decisions
 *   of the shape       together), and call 8, 24, 40 ... runs the other side, or, every
 *                      other time where native runs as one of several variants, another
 *                      variant: at most one call in 16 is a probe, of either kind
 *   with 3 measurements of each, each new measurement of the side not run is weighed once
 *   against the one that runs: it is preferred where its median (of the last 5) is lower
 *   by 5 % and 1 us and its times (all kept, or the newest 3) are lower by a one-sided
 *   Mann-Whitney U test at p <= 0.05 (rank_test.c; 3 against 3: all below); a switch needs two
 *   weighings in a row, but at the first weighing a rival 25 % faster takes over at once
 *   (native_feedback.c says why)
 *   a new decision starts from the measurements of the same pair (in either order) within
 *   2 levels, from use 6 (neighbour_levels: below, it says why), else from each side's
 *   times at other levels where they do not depend on the level (level_free_samples)
 *
 *   e.g. the testbed, 64 KiB, one rank late: the model picks straggler, against native
 *     use       0          1       2          3       4          5       6, 7 ..
 *     runs      straggler  native  straggler  native  straggler  native  native (overruled
 *     measured  0.9 ms     0.1 ms  1.0 ms     0.1 ms  0.9 ms     0.1 ms  once the period
 *                                                                         of use 5 is back)
 *
 * Why so slow to switch: on a shared machine calls scatter by 10-20 %, and a 15 % margin on
 * medians alone had auto run 3 to 6 algorithms in a 15-call grid point and probe in 4 to 8
 * of them (docs/benchmarks.md, "A loop that settles in noise").
 *
 * Native is not one algorithm: the MPI library has several (native_variants.h), and its
 * default is not the fastest everywhere. Which one native runs as is measured per shape
 * (native_feedback.c). Native's side of a decision is native as the variant preferred
 * there: its measurements are kept with that variant's name, and only calls that ran it
 * count (a trial of another variant says nothing of how native usually runs). Where that
 * variant changes, native's side starts again; until it has its 3 measurements native is
 * probed every other use where it is the side not run, as in the first uses, and while the
 * shape still tries its variants (after use 5), at every use, to be done with them:
 *
 *   e.g. MPICH, 1 KiB balanced, P = 4 on 2 shared cores: the model picks native, against
 *   papcoll's recursive doubling (41 us). Native's default measures 54 us, so papcoll's
 *   is preferred; native's probes, at uses 6 - 14, try recursive_doubling (31 us),
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

#include "flat_feedback.h"
#include "recency.h"
#include "select.h"
#include "tuning.h"

/* The loop's constants are papcoll_tuning's (input->tuning, or the defaults):
 * samples_to_compare (3), probe_every (16), probe_phase (8), neighbour_levels (2), and
 * native_feedback.c's rule (switch_share, switch_seconds, switch_significance).
 *
 * A new lateness level starts from the measurements of the nearest level measured, up to
 * neighbour_levels (2) levels away (a factor of 4 in lateness; classes double), and skips
 * the early probes (its next is at use probe_phase). Why: where ranks share cores, on-time
 * ranks scatter by up to milliseconds, so "nobody late" comes as levels 1, 2, 3 in turn,
 * and each new level probed the other side 3 times afresh (the testbed, 64 KiB: 8 of 24
 * calls straggler after lateness stopped, each 0.5 - 2 ms slower). The probe slots and
 * every measurement of the level's own calls correct an inheritance that does not hold
 * there. */

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

/* Whether an algorithm's time after the last arrival is the same at every lateness level:
 * native (NULL) and papcoll's algorithms that do not build from arrivals wait for every
 * rank alike. */
static int level_free(const algorithm_entry *algorithm) {
    return algorithm == NULL || !algorithm->info.needs_arrivals;
}

/* Native's times at this shape as the given variant, where there are enough; or NULL. */
static const feedback_samples *shape_times(const native_shape *shape, int native_variant,
                                           const papcoll_tuning *tuning) {
    return shape != NULL && shape->samples[native_variant].filled >= tuning->samples_to_compare
               ? &shape->samples[native_variant]
               : NULL;
}

/* Whether a holds the same shape and pair as b at any level; *swapped where a's model is
 * b's alternative and the other way round (the model's pick differs between levels). */
static int same_pair(const feedback_key *a, const feedback_key *b, int *swapped) {
    feedback_key same = *a;
    same.level = b->level;
    *swapped = 0;
    if (key_equal(&same, b)) return 1;
    same.model = a->alternative;
    same.alternative = a->model;
    *swapped = 1;
    return key_equal(&same, b);
}

/* The measured decision of the same shape and pair (in either order) at the nearest
 * lateness level, at most neighbour_levels away (ties: the lower level), with both sides
 * measured; or NULL. */
static const feedback_entry *neighbour_of(const feedback_table *table,
                                          const feedback_key *key, int native_variant,
                                          const papcoll_tuning *tuning, int *swapped) {
    const feedback_entry *nearest = NULL;
    int nearest_distance = (int)tuning->neighbour_levels + 1;
    for (int i = 0; i < FEEDBACK_ENTRIES; i++) {
        const feedback_entry *entry = &table->entries[i];
        int reversed;
        if (entry->serial == 0 || !same_pair(&entry->key, key, &reversed) ||
            !measured_enough(entry, native_variant, tuning))
            continue;
        int distance = abs(entry->key.level - key->level);
        if (distance < nearest_distance ||
            (nearest != NULL && distance == nearest_distance &&
             entry->key.level < nearest->key.level)) {
            nearest = entry;
            nearest_distance = distance;
            *swapped = reversed;
        }
    }
    return nearest;
}

/* A side's times at this shape from other decisions, where they do not depend on the
 * level: native's as the variant preferred (native_feedback.c; the MPI's only one where it
 * has no variants), a papcoll algorithm's that does not build from arrivals (the latest
 * decision that measured it). Measured from the last arrival, as a decision's are, such an
 * algorithm's time waits for every rank alike, so after the last arrival it is the same at
 * every level. NULL where there are none. */
static const feedback_samples *level_free_samples(const feedback_table *table,
                                                  const feedback_key *key,
                                                  const algorithm_entry *algorithm,
                                                  const native_shape *shape,
                                                  int native_variant,
                                                  const papcoll_tuning *tuning) {
    /* native: the shape's times of the variant preferred (or of the MPI's only one); where
     * no shape is kept (a query before any call of it), its side in other decisions, as a
     * papcoll algorithm's below */
    if (algorithm == NULL && shape != NULL) return shape_times(shape, native_variant, tuning);
    if (!level_free(algorithm)) return NULL;
    const feedback_samples *latest = NULL;
    int64_t latest_use = -1;
    for (int i = 0; i < FEEDBACK_ENTRIES; i++) {
        const feedback_entry *entry = &table->entries[i];
        if (entry->serial == 0 || entry->key.count != key->count ||
            entry->key.extent != key->extent || entry->key.commutative != key->commutative ||
            entry->last_used <= latest_use)
            continue;
        for (int side = 0; side < 2; side++) {
            const feedback_samples *samples = side_samples(entry, side);
            if ((side ? entry->key.alternative : entry->key.model) == algorithm &&
                samples->filled >= tuning->samples_to_compare) {
                latest = samples;
                latest_use = entry->last_used;
            }
        }
    }
    return latest;
}

/* What stands for native against a PAP-aware choice: a flat algorithm of papcoll's that
 * runs instead of native at this shape (the latest measured decision of native against
 * one, where it is overruled), or NULL: native. Both wait for every rank alike, so what
 * was faster without a late rank is faster with one, and a decision of the PAP-aware
 * choice against native that native wins would run the slower of the two: SMPI, P = 16,
 * 256 KiB, ranks late by a uniform share of 5 ms: native in 62 % of the calls, 10.8 ms,
 * where Rabenseifner took 6.7 (docs/smpi.md). The decision is then kept for that pair;
 * native's own decision at the shape keeps weighing native. */
static const algorithm_entry *flat_baseline(const feedback_table *table,
                                            const feedback_key *key, int native_variant,
                                            const papcoll_tuning *tuning) {
    const feedback_entry *latest = NULL;
    for (int i = 0; i < FEEDBACK_ENTRIES; i++) {
        const feedback_entry *entry = &table->entries[i];
        if (entry->serial == 0 || entry->key.count != key->count ||
            entry->key.extent != key->extent || entry->key.commutative != key->commutative ||
            entry->key.model != NULL || entry->key.alternative == NULL ||
            !select_is_flat_stand_in(entry->key.alternative->info.name) ||
            !measured_enough(entry, native_variant, tuning) ||
            (latest != NULL && entry->last_used <= latest->last_used))
            continue;
        latest = entry;
    }
    return latest != NULL && latest->overruled ? latest->key.alternative : NULL;
}

/* Whether, at this shape, another of the flat side's candidates runs instead of native
 * (flat_baseline): then the new one preferred, measured faster than it, does too. */
static int flat_ran_instead(const feedback_table *table, const feedback_key *key,
                            const flat_side *flat, int native_variant,
                            const papcoll_tuning *tuning) {
    if (flat->shape == NULL) return 0;
    const algorithm_entry *baseline = flat_baseline(table, key, native_variant, tuning);
    for (int c = 0; c < flat->count; c++)
        if (flat->candidates[c] == baseline) return 1;
    return 0;
}

/* A new decision's start: its neighbour's measurements (neighbour_of), or where it has
 * none, each side's times that do not depend on the level (level_free_samples). Where the
 * other side's are known, its early probes are skipped. */
static feedback_entry new_entry(const feedback_table *table, const feedback_key *key,
                                const native_shape *shape, const flat_side *flat,
                                int native_variant, const papcoll_tuning *tuning) {
    feedback_entry fresh;
    memset(&fresh, 0, sizeof fresh);
    fresh.native_variant = native_variant;
    int swapped = 0;
    const feedback_entry *neighbour = neighbour_of(table, key, native_variant, tuning, &swapped);
    if (neighbour != NULL) {
        fresh.model = swapped ? neighbour->alternative : neighbour->model;
        fresh.alternative = swapped ? neighbour->model : neighbour->alternative;
        fresh.overruled = swapped ? !neighbour->overruled : neighbour->overruled;
        /* and what was weighed of them, so that the same times are not weighed again */
        fresh.judged[0] = neighbour->judged[swapped];
        fresh.judged[1] = neighbour->judged[!swapped];
        fresh.leaning = neighbour->leaning;
        fresh.uses = 2 * tuning->samples_to_compare; /* its early probes are done */
        return fresh;
    }
    const feedback_samples *model =
        level_free_samples(table, key, key->model, shape, native_variant, tuning);
    const feedback_samples *alternative =
        level_free_samples(table, key, key->alternative, shape, native_variant, tuning);
    if (alternative == NULL && key->model == NULL) alternative = flat_side_times(flat, tuning);
    if (model != NULL) fresh.model = *model;
    if (alternative != NULL) {
        fresh.alternative = *alternative;
        fresh.uses = 2 * tuning->samples_to_compare;
        if (key->model == NULL && flat_ran_instead(table, key, flat, native_variant, tuning)) {
            /* measured faster than a flat candidate that was faster than native: it runs
             * from the start, and its times count as weighed, so that native's first
             * weighing is what may take over (at once only 25 % ahead) */
            fresh.overruled = 1;
            fresh.judged[1] = fresh.alternative.added;
        }
    }
    return fresh;
}

/* Native's side of a decision as the variant preferred now: where the decision's own times
 * are of another variant or too few, the shape's times of the preferred one (level-free:
 * level_free_samples says why), instead of probing native again at every level. */
static void refresh_native_side(feedback_entry *entry, const native_shape *shape,
                                int native_variant, const papcoll_tuning *tuning) {
    int native = native_side(&entry->key);
    const feedback_samples *times = shape_times(shape, native_variant, tuning);
    if (native < 0 || times == NULL) return;
    feedback_samples *side = native ? &entry->alternative : &entry->model;
    if (entry->native_variant == native_variant && side->filled >= tuning->samples_to_compare)
        return;
    int64_t added = side->added; /* still counts up: the times are new to the decision */
    *side = *times;
    side->added = added + side->filled;
    entry->native_variant = native_variant;
}

static feedback_entry *entry_for(feedback_table *table, const feedback_key *key,
                                 const native_shape *shape, const flat_side *flat,
                                 int native_variant, int create, const papcoll_tuning *tuning) {
    for (int i = 0; i < FEEDBACK_ENTRIES; i++) {
        feedback_entry *entry = &table->entries[i];
        if (entry->serial != 0 && key_equal(&entry->key, key)) return entry;
    }
    if (!create) return NULL;
    /* made first: the neighbour may be the entry that makes room */
    feedback_entry fresh = new_entry(table, key, shape, flat, native_variant, tuning);
    feedback_entry *oldest = &table->entries[least_recently_used(
        &table->entries[0].last_used, sizeof table->entries[0], FEEDBACK_ENTRIES, NULL, NULL)];
    *oldest = fresh;
    oldest->key = *key;
    oldest->serial = ++table->serials;
    return oldest;
}

/* Whether the side not run has measurements not yet weighed against the side that runs,
 * and whether they are faster beyond the noise (*faster). */
static int weighed_now(const feedback_entry *entry, int native_variant,
                       const papcoll_tuning *tuning, int *faster) {
    *faster = 0;
    /* the side not run now is weighed once for each new measurement (native_feedback.c:
     * why once) */
    const feedback_samples *rival = side_samples(entry, !entry->overruled);
    if (!measured_enough(entry, native_variant, tuning) ||
        rival->added == entry->judged[!entry->overruled])
        return 0;
    *faster = feedback_clearly_faster(rival, side_samples(entry, entry->overruled), tuning);
    return 1;
}

/* Whether the measurements say: run the alternative (a rival takes over at its first
 * weighing, later at the second in a row that finds it faster). */
static int alternative_preferred(const feedback_entry *entry, int native_variant,
                                 const papcoll_tuning *tuning) {
    int faster;
    if (!weighed_now(entry, native_variant, tuning, &faster)) return entry->overruled;
    return entry->overruled !=
           feedback_takes_over(side_samples(entry, !entry->overruled),
                               side_samples(entry, entry->overruled), faster,
                               entry->judged[0] == 0 && entry->judged[1] == 0, entry->leaning,
                               tuning);
}

/* The early probes: uses 1, 3 and 5 (the samples_to_compare measurements of the other
 * side). */
static int is_early_probe(int64_t use, const papcoll_tuning *tuning) {
    return use < 2 * tuning->samples_to_compare && use % 2 == 1;
}

/* The periodic probe slot: call probe_phase of every probe_every. */
static int is_probe_slot(int64_t call, const papcoll_tuning *tuning) {
    return call % tuning->probe_every == tuning->probe_phase;
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
    /* a shape also where native is the MPI's only algorithm (no variants: Open MPI, SMPI):
     * its times and its probe slot are the shape's, shared by every level and decision;
     * per decision, each new lateness level probed native afresh (SMPI, P = 16, 1 MiB,
     * rand-late: native at 34-41 ms in 3 of 8 calls against 21 for prr). Not for a
     * non-commutative call where the MPI has several: shapes are kept by count and size,
     * and the commutative calls' preferred variant would run it */
    int one_algorithm = natives->count == 1;
    native_shape *shape =
        variants > 1 || one_algorithm
            ? native_shape_for(&table->natives, SHAPE_OF_NATIVE, input->count, input->extent,
                               count_use)
            : NULL;
    /* a query judges a copy: what the call would judge, the table unchanged */
    native_shape asked_shape;
    if (shape != NULL && !count_use) {
        asked_shape = *shape;
        shape = &asked_shape;
    }
    int preferred = shape == NULL ? 0 : native_judge(shape, variants, &tuning);
    int has_alternative = report->alternative[0] != '\0';
    /* where native is weighed against a flat algorithm of papcoll's, which one is measured
     * too (flat_feedback.c): the decision is kept for the one preferred */
    flat_side flat;
    double flat_tag = -1;
    flat_side_for(&table->natives, input,
                  has_alternative && choice->algorithm == NULL
                      ? registry_find(report->alternative)
                      : NULL,
                  count_use, &tuning, &flat);
    if (flat.shape != NULL)
        snprintf(report->alternative, sizeof report->alternative, "%s",
                 flat.candidates[flat.preferred]->info.name);
    feedback_entry *entry = NULL;
    feedback_key key;
    memset(&key, 0, sizeof key);
    int run_alternative = 0;
    /* the periodic slot counts the shape's calls, every level and decision together, so
     * that calls spread over several decisions probe no more often than one; where no shape
     * is kept (a query), the decision's own uses */
    int shape_slot = 0;
    if (shape != NULL && count_use) shape_slot = is_probe_slot(shape->calls++, &tuning);
    int trial = shape_slot; /* native alone: its slots try another variant */
    if (has_alternative) {
        key.count = input->count;
        key.extent = input->extent;
        key.commutative = input->commutative;
        key.model = choice->algorithm;
        key.alternative = registry_find(report->alternative); /* NULL: native */
        /* native against a PAP-aware pick, on either side: a flat algorithm that runs
         * instead of native at the shape stands for it (flat_baseline) */
        int native_against_aware = key.model == NULL ? !level_free(key.alternative)
                                   : key.alternative == NULL && !level_free(key.model);
        const algorithm_entry *baseline =
            native_against_aware ? flat_baseline(table, &key, preferred, &tuning) : NULL;
        if (baseline != NULL && key.model == NULL) {
            key.model = choice->algorithm = baseline;
            snprintf(report->algorithm, sizeof report->algorithm, "%s", baseline->info.name);
        } else if (baseline != NULL) {
            key.alternative = baseline;
            snprintf(report->alternative, sizeof report->alternative, "%s",
                     baseline->info.name);
        }
        /* where neither side builds from arrivals, both wait for every rank alike and the
         * level changes neither's time after the last arrival: one decision for all levels
         * (kept apart, levels that noise makes of balanced calls each learnt it afresh) */
        key.level = level_free(key.model) && level_free(key.alternative) ? 0 : level;
        entry = entry_for(table, &key, shape, &flat, preferred, count_use, &tuning);
    }
    /* a query (count_use 0) works on a copy, the decision as the next call would see it */
    feedback_entry copy;
    if (has_alternative && entry == NULL) {
        copy = new_entry(table, &key, shape, &flat, preferred, &tuning);
        copy.key = key;
        entry = &copy;
    } else if (entry != NULL && !count_use) {
        copy = *entry;
        entry = &copy;
    }
    if (entry != NULL) refresh_native_side(entry, shape, preferred, &tuning);
    if (entry != NULL) {
        /* only a call changes the table: papcoll_resolve_algorithm, which some ranks may
         * call and others not, only asks */
        int overruled = alternative_preferred(entry, preferred, &tuning);
        int64_t use = entry->uses;
        int faster;
        if (count_use && weighed_now(entry, preferred, &tuning, &faster)) {
            entry->leaning = faster && overruled == entry->overruled;
            entry->judged[!entry->overruled] = side_samples(entry, !entry->overruled)->added;
        }
        if (count_use) {
            entry->overruled = overruled;
            entry->uses++;
            entry->last_used = ++table->clock;
        }
        /* native, not run now: while its variants are untried (after the early uses), it
         * runs at every use, to be done with them; while its side is not measured as the
         * variant preferred, every other use (with one variant, the early probes measure it) */
        int native = native_side(&key), waiting = overruled ? native == 0 : native == 1;
        int choosing_variants = variants > 1 && shape != NULL;
        int native_untried_now = waiting && choosing_variants &&
                                 use >= 2 * tuning.samples_to_compare &&
                                 native_upcoming(shape, variants, &tuning) >= 0;
        int native_waits = waiting && choosing_variants &&
                           (native_upcoming(shape, variants, &tuning) >= 0 ||
                            !side_measured(entry, native, preferred, &tuning));
        int periodic = shape != NULL ? shape_slot
                                     : use >= tuning.probe_phase && is_probe_slot(use, &tuning);
        /* one slot for both kinds of probe: where native runs as one of several variants,
         * every other slot tries another variant instead of running the other side */
        trial = 0; /* not in the early probes, nor while the variants are still tried */
        if (count_use && periodic && native >= 0 && !waiting && choosing_variants &&
            !is_early_probe(use, &tuning) && native_upcoming(shape, variants, &tuning) < 0)
            trial = shape->slots++ % 2 == 1;
        /* the flat side likewise: not run now, with candidates untried, it runs at every
         * use after the early ones; run now, every other slot tries another candidate */
        int flat_untried_now = !overruled && use >= 2 * tuning.samples_to_compare &&
                               flat_side_untried(&flat, &tuning);
        int flat_trial = 0;
        if (count_use && periodic && flat.shape != NULL && overruled &&
            !is_early_probe(use, &tuning) && !flat_side_untried(&flat, &tuning))
            flat_trial = flat.shape->slots++ % 2 == 1;
        int side_probe = count_use && !trial && !flat_trial &&
                         (is_early_probe(use, &tuning) || periodic || native_untried_now ||
                          flat_untried_now || (native_waits && use % 2 == 1));
        report->probe = side_probe; /* a trial counts where another variant runs (below) */
        run_alternative = overruled != side_probe;
        report->overruled = overruled && !side_probe;
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
            if (flat.shape != NULL) { /* as which candidate (the preferred, or a try) */
                int candidate = flat_side_next(&flat, count_use, flat_trial, &tuning, &flat_tag);
                choice->algorithm = flat.candidates[candidate];
                if (candidate != flat.preferred) { /* a try, not the measurements' word */
                    report->probe = 1;
                    report->overruled = 0;
                }
                snprintf(report->algorithm, sizeof report->algorithm, "%s",
                         choice->algorithm->info.name);
            }
        }
    }
    int variant = -1; /* for the decision's tag */
    if (choice->algorithm == NULL && shape != NULL) { /* native: as which of the library's */
        int upcoming = native_upcoming(shape, variants, &tuning);
        choice->native_variant = count_use      ? native_next(shape, variants, trial, &tuning)
                                 : upcoming >= 0 ? upcoming
                                                 : preferred;
        snprintf(report->algorithm, sizeof report->algorithm, "%s",
                 natives->names[choice->native_variant]);
        if (count_use) *native_tag_out = native_tag(shape, choice->native_variant);
        if (choice->native_variant == preferred) variant = preferred;
        else if (trial) report->probe = 1; /* a trial of another variant */
    } else if (choice->algorithm == NULL) {
        variant = 0;
    }
    if (flat_tag >= 0) *native_tag_out = flat_tag; /* native did not run: the tag is free */
    if (entry == NULL || !count_use) return -1;
    /* a try of a flat candidate other than the preferred says nothing of the decision's */
    if (run_alternative && choice->algorithm != key.alternative) return -1;
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
                int64_t added = samples->added; /* still counts: new evidence is new */
                memset(samples, 0, sizeof *samples);
                samples->added = added;
                entry->native_variant = variant;
            }
        }
        feedback_samples_add(samples, seconds);
        return;
    }
    /* the decision was pushed out of the table since: its measurement goes with it */
}

void feedback_clear(feedback_table *table) { memset(table, 0, sizeof *table); }
