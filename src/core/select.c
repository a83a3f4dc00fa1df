/* select.c - `auto`: what it runs for a call, from predicted arrivals and a
 * cost model. The MPI library (src/mpi/choose.c, with its cache and arrival classes) and the
 * simulator (`papcoll sim --algorithms auto`) both decide here, so they decide alike.
 *
 *   no predicted arrivals, or all equal, -> native: MPI_Allreduce, the MPI library's own
 *   and no groups forming a hierarchy       tuned choice; what auto runs without arrivals, so
 *                                           a balanced call never loses to it
 *   groups forming a hierarchy (sites,   -> also every hierarchical algorithm (needs_groups:
 *   nodes) and a tree the ranks            hr1, hr2, smp_*, pap_hierarchical) is simulated
 *   run on (parameters.tree: the            on that tree, balanced or not, and the least
 *   network's topology)                     e-bar runs by the rule below; without a tree
 *                                           the model is a crossbar, where a hierarchy
 *                                           gains nothing, so none is simulated
 *   otherwise                            -> every PAP-aware algorithm that accepts the op
 *                                           (commutative_only ones for commutative ops only)
 *                                           is simulated with the predicted arrivals as both
 *                                           the prediction and the truth, and so is native;
 *                                           the least e-bar runs if it beats native by more
 *                                           than 5 % of what follows the wait for the last
 *                                           arrival (e-bar - mean(a_last - a_i)) and by
 *                                           more than two one-way messages, else native
 *
 * Native's e-bar is taken as the best of recursive doubling, Rabenseifner and ring (ring
 * for commutative ops), the algorithms MPICH and Open MPI choose between for a flat
 * all-reduce. Why only the PAP-aware and hierarchical ones beside it: papcoll's flat
 * algorithms are what native already runs, tuned by the MPI library; where the model still
 * preferred one of them for uneven arrivals (segmented_ring, rand-late, 16 MiB, shared memory), it measured
 * slower than native (excess 11.5 against 8.4 ms), the model's per-byte cost missing what a
 * many-message pipeline costs on ranks that share cores; an algorithm built from the
 * arrivals is where a gain over native lies, and there the model held (straggler 4.9 ms). The 5 % margin keeps auto on native where the model cannot tell them apart;
 * it is taken of the time after the last arrival, because the wait before it is the same
 * for every algorithm and would hide any gain behind a long delay.
 * Candidates whose schedules hold more than 4 million operations in all are skipped (the
 * decision must stay cheap; it is made once per shape and arrival class, and cached by the
 * caller).
 * Shortcuts (the closed loop's; on a crossbar without a token bucket, where select_bounds.c's closed
 * forms and bound hold): native's stand-ins go first; where native's e-bar less the wait is
 * within 1 / (1 - margin) of the lower bound no algorithm beats, no candidate can win by the
 * margin and none is simulated (the same decision, cheaper). And a decision spends at most a
 * budget of operations, built and simulated: 1 % of the 100 calls it serves, at the
 * closed-form call time and 1 us an operation, never under 262144 (every decision up to
 * P = 128 as before). A stand-in beyond it is taken from its closed form plus the wait, a
 * candidate beyond it is not weighed: at P = 1024 a decision took seconds (ring alone is
 * 2 P (P - 1) messages; straggler 5-7 M operations, built and then refused by the cap).
 *
 * The fixed rule below (select_default_algorithm) is what stands in for native where
 * MPI_Allreduce cannot be called (counts beyond INT_MAX), and what the MPI library's closed
 * loop measures native against where this model names nothing (src/mpi/choose.c).
 *   vector <= 2 KiB, or fewer elements than ranks  -> recursive_doubling (log2 P rounds)
 *   commutative op and vector >= 1 MiB and P >= 3  -> ring (bandwidth optimal, Patarasuk & Yuan 2009)
 *   otherwise                                      -> rabenseifner
 * recursive_doubling and rabenseifner keep rank order, so only ring needs a commutative op.
 */
#include "select.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "papcoll_core.h"
#include "tuning.h"

/* The constants below are papcoll_tuning's (src/core/tuning_table.c declares them and their
 * defaults; context->tuning, or the defaults where it is NULL). Why their defaults:
 * margin (5 %): a papcoll algorithm must beat native's predicted e-bar by this share to be
 * chosen. alternative_share (25 %): a candidate that lost by at most this share is still
 * measured against native. The decision's budget (decision_budget): decision_share (1 %) of
 * the calls one decision serves, at the cost of building and simulating one operation. A
 * decision is kept per shape and arrival class (src/mpi/choose.c) and serves every call of
 * that class; calls_per_decision (100) is a conservative count for a training or solver
 * loop. One operation built and simulated costs about 0.4-0.8 us (1.2-2.5 M a second
 * measured on a loaded 2-core machine; operations_per_second, 1e6, is the conservative
 * figure). Below budget_floor (262144) the budget does not bind: every decision up to
 * P = 128 runs as before (some 200 000 operations in all at P = 128), which keeps the gains
 * the full comparison finds there (P = 64, 1 MiB: auto / native 0.83 in the simulator,
 * lost with a floor of 32 768). */

const char *select_default_algorithm(int32_t ranks, int64_t count, int64_t elem_size,
                                     int commutative) {
    const int64_t short_message_bytes = 2048, long_message_bytes = 1 << 20;
    int64_t bytes = count * elem_size;
    if (bytes <= short_message_bytes || count < ranks) return "recursive_doubling";
    if (commutative && bytes >= long_message_bytes && ranks >= 3) return "ring";
    return "rabenseifner";
}

/* What native runs, as the model stands it in: papcoll's flat schedules of the same names. */
static const char *const native_stand_ins[3] = {"recursive_doubling", "rabenseifner", "ring"};

/* Why not the fixed rule alone: its ring from 1 MiB was measured at P = 4, where ring's
 * 2 (P - 1) latencies are few. In SMPI at P = 64 on ethernet-1g, 1 MiB, ring took 24.1 ms
 * and Rabenseifner 17.2 (P = 256: 47.4 and 17.6); their closed forms say the same (22.8 and
 * 17.4 ms at P = 64), while at P = 16 they lie 7 % apart and P = 4 closer still, where the
 * rule's measured choice stands. */
const char *select_flat_alternative(int32_t ranks, int64_t count, int64_t elem_size,
                                    int commutative, const papcoll_sim_model *model,
                                    double share) {
    const char *chosen = select_default_algorithm(ranks, count, elem_size, commutative);
    if (model == NULL || ranks < 2 || count > INT64_MAX / elem_size) return chosen;
    int64_t bytes = count * elem_size;
    double chosen_seconds = select_closed_form_seconds(chosen, ranks, bytes, model);
    const char *best = chosen;
    double best_seconds = chosen_seconds;
    for (int i = 0; i < 3; i++) {
        const char *name = native_stand_ins[i];
        if (strcmp(name, "ring") == 0 && !commutative) continue;
        double seconds = select_closed_form_seconds(name, ranks, bytes, model);
        if (seconds < best_seconds) {
            best = name;
            best_seconds = seconds;
        }
    }
    return isfinite(chosen_seconds) && best_seconds > 0 &&
                   chosen_seconds > (1 + share) * best_seconds
               ? best
               : chosen;
}

/* Where several of native's stand-ins lie close in their closed forms, which one is faster
 * is the machine's to say: SMPI, P = 16, ethernet-1g, 1 MiB, jitter of 200 us a rank: ring
 * (the fixed rule's, 7 % behind in the closed form) 20.3 ms, Rabenseifner 16.6; the closed
 * loop measured ring against native only, so Rabenseifner never ran. The named one first,
 * then each other stand-in whose closed form is within `share` of the named one's (ring and
 * Rabenseifner only where every rank holds an element: below that the fixed rule names
 * recursive doubling). Without a model, the named one alone. */
int select_is_flat_stand_in(const char *name) {
    for (int i = 0; i < 3; i++)
        if (strcmp(name, native_stand_ins[i]) == 0) return 1;
    return 0;
}

int select_flat_candidates(int32_t ranks, int64_t count, int64_t elem_size, int commutative,
                           const papcoll_sim_model *model, double share, const char *named,
                           const char **out) {
    if (!select_is_flat_stand_in(named)) return 0;
    out[0] = named;
    int found = 1;
    if (model == NULL || ranks < 2 || count < ranks || elem_size <= 0 ||
        count > INT64_MAX / elem_size)
        return found;
    int64_t bytes = count * elem_size;
    double named_seconds = select_closed_form_seconds(named, ranks, bytes, model);
    if (!isfinite(named_seconds) || named_seconds <= 0) return found;
    for (int i = 0; i < 3; i++) {
        const char *name = native_stand_ins[i];
        if (strcmp(name, named) == 0 || (strcmp(name, "ring") == 0 && !commutative)) continue;
        if (select_closed_form_seconds(name, ranks, bytes, model) <= (1 + share) * named_seconds)
            out[found++] = name;
    }
    return found;
}

const char *papcoll_select_default(int32_t ranks, int64_t count, int64_t elem_size,
                                   int32_t commutative) {
    return select_default_algorithm(ranks, count, elem_size, commutative);
}

/* The model's e-bar for the candidate, or INFINITY where it does not build or holds more than
 * `limit` operations; adds the operations it simulated to *operations. */
static double predicted_seconds(const char *name, int32_t ranks, int64_t count,
                                int32_t elem_size, const papcoll_context *context,
                                const papcoll_sim_model *model, int64_t limit,
                                int64_t *operations) {
    papcoll_sim_options options;
    memset(&options, 0, sizeof options);
    options.max_operations = limit;
    /* the tree the ranks run on, where the caller knows it (papcoll sim on a network with a
     * topology): what makes a hierarchy pay is the slow links between its groups */
    options.topology = context->parameters.tree;
    papcoll_sim_result result;
    memset(&result, 0, sizeof result);
    int status = papcoll_simulate(name, ranks, count, elem_size, context, model, &options,
                                  context->arrivals, NULL, &result, NULL, 0);
    double seconds = status == PAPCOLL_OK ? result.average_elapsed : INFINITY;
    *operations += result.operations;
    papcoll_sim_result_release(&result);
    return seconds;
}

static int balanced(const papcoll_context *context, int32_t ranks) {
    if (context == NULL || context->arrivals == NULL || context->arrival_count != ranks)
        return 1;
    for (int32_t r = 1; r < ranks; r++)
        if (context->arrivals[r] != context->arrivals[0]) return 0;
    return 1;
}

/* Whether the context's groups form a hierarchy: at least two groups, one of them with
 * more than one rank (one group, or a rank per group, is a flat all-reduce again). */
static int hierarchy(const papcoll_context *context, int32_t ranks) {
    if (context == NULL || context->groups == NULL || context->group_count != ranks) return 0;
    int two_groups = 0, shared_group = 0;
    for (int32_t r = 1; r < ranks && !(two_groups && shared_group); r++) {
        if (context->groups[r] != context->groups[0]) two_groups = 1;
        for (int32_t s = 0; s < r && !shared_group; s++)
            if (context->groups[s] == context->groups[r]) shared_group = 1;
    }
    return two_groups && shared_group;
}


static int stands_for_native(const char *name) {
    for (int i = 0; i < 3; i++)
        if (strcmp(name, native_stand_ins[i]) == 0) return 1;
    return 0;
}

/* What a decision may spend, in operations built and simulated: a share of the calls it
 * serves, at the model's closed-form duration of a call, never less than the floor. */
static int64_t decision_budget(int32_t ranks, int64_t bytes, int32_t commutative,
                               const papcoll_sim_model *model, const papcoll_tuning *tuning) {
    double call = fmin(select_closed_form_seconds("recursive_doubling", ranks, bytes, model),
                       select_closed_form_seconds("rabenseifner", ranks, bytes, model));
    if (commutative) call = fmin(call, select_closed_form_seconds("ring", ranks, bytes, model));
    double affordable = tuning->decision_share * tuning->calls_per_decision * call *
                        tuning->operations_per_second;
    if (!(affordable < (double)tuning->most_simulated_operations))
        return tuning->most_simulated_operations;
    return affordable > (double)tuning->budget_floor ? (int64_t)affordable
                                                      : tuning->budget_floor;
}

/* Whether `name` fits what is left of the budget (spent: simulated so far; what was built to
 * count operations is spent too); counts its operations first (three schedule builds) only
 * where even two operations a rank would fit. */
static int affordable(const char *name, int32_t ranks, int64_t count, int32_t elem_size,
                      const papcoll_context *context, int64_t spent, select_trace *trace) {
    if (spent + trace->built_operations + 2 * (int64_t)ranks > trace->budget_operations)
        return 0;
    int64_t estimate = select_estimated_operations(name, ranks, count, elem_size, context,
                                                   &trace->built_operations);
    return estimate >= 0 &&
           estimate <= trace->budget_operations - spent - trace->built_operations;
}

/* The most operations the next simulation may hold: the fixed cap, and with the shortcuts
 * what is left of the budget (an estimate from three ranks can fall short; the simulator
 * refuses beyond the limit before running, so a decision never spends more). */
static int64_t limit_of(const select_trace *trace, int64_t spent, int shortcuts,
                        int64_t most_simulated_operations) {
    if (!shortcuts) return most_simulated_operations;
    int64_t left = trace->budget_operations - spent - trace->built_operations;
    return left < 1 ? 1 : left < most_simulated_operations ? left : most_simulated_operations;
}

int select_choose(int32_t ranks, int64_t count, int32_t elem_size, int32_t commutative,
                  const papcoll_context *context, const papcoll_sim_model *model,
                  int shortcuts, papcoll_choice *choice, select_trace *trace) {
    select_trace unused;
    if (trace == NULL) trace = &unused;
    memset(trace, 0, sizeof *trace);
    if (choice == NULL || model == NULL || ranks < 1 || count < 0 || elem_size < 1)
        return PAPCOLL_ERR_ARGUMENT;
    memset(choice, 0, sizeof *choice);
    snprintf(choice->algorithm, sizeof choice->algorithm, "native");
    choice->decided_by = -1; /* the MPI library's sharing sets it (papcoll_core.h) */
    /* without a tree the model is a crossbar, where a hierarchy gains nothing: no need to
     * simulate the hierarchical algorithms there */
    int uneven = !balanced(context, ranks);
    int grouped = context->parameters.tree != NULL && hierarchy(context, ranks);
    if (!uneven && !grouped) return PAPCOLL_OK;
    choice->from_arrivals = uneven;
    choice->from_groups = grouped;
    papcoll_tuning tuning = tuning_in_force(context->tuning);
    double margin = tuning.margin;
    int64_t most_operations = tuning.most_simulated_operations;
    papcoll_context candidate_context = *context;
    candidate_context.keep_order = !commutative;
    /* the margin is on what an algorithm can change: e-bar less the wait for the last
     * arrival that every algorithm pays (e-bar_lo's first term) */
    double wait = 0;
    if (uneven) {
        double last = -INFINITY;
        for (int32_t r = 0; r < ranks; r++) last = fmax(last, context->arrivals[r]);
        for (int32_t r = 0; r < ranks; r++) wait += (last - context->arrivals[r]) / ranks;
    }
    int64_t bytes = count > INT64_MAX / elem_size ? INT64_MAX : count * elem_size;
    /* the shortcuts stand on the closed forms and the bound: a crossbar, no token bucket */
    shortcuts = shortcuts && context->parameters.tree == NULL && model->burst_bytes <= 0;
    if (shortcuts) trace->budget_operations = decision_budget(ranks, bytes, commutative, model, &tuning);
    int64_t spent = 0;
    /* native first: the bound may settle the call before any candidate is built */
    double native = INFINITY;
    for (int i = 0; i < 3; i++) { /* the cheapest to simulate first: the budget lasts */
        const char *name = native_stand_ins[i];
        if (strcmp(name, "ring") == 0 && !commutative) continue; /* ring reorders operands */
        double seconds = INFINITY;
        if (!shortcuts ||
            affordable(name, ranks, count, elem_size, &candidate_context, spent, trace))
            seconds = predicted_seconds(name, ranks, count, elem_size, &candidate_context,
                                        model, limit_of(trace, spent, shortcuts, most_operations), &spent);
        if (shortcuts && !isfinite(seconds)) {
            seconds = wait + select_closed_form_seconds(name, ranks, bytes, model);
            trace->closed_form_stand_ins++;
        }
        native = fmin(native, seconds);
    }
    choice->wait_seconds = wait;
    choice->native_seconds = isfinite(native) ? native : 0;
    choice->predicted_seconds = choice->native_seconds;
    snprintf(choice->model_algorithm, sizeof choice->model_algorithm, "native");
    /* no candidate beats the bound, so none can beat native by the margin when native is
     * this close to it: the decision the simulations would reach, without them */
    if (shortcuts && isfinite(native) &&
        native - wait <= select_post_wait_lower_bound(ranks, bytes, model) / (1 - margin)) {
        trace->bound_settled = 1;
        trace->simulated_operations = spent;
        return PAPCOLL_OK;
    }
    double best = INFINITY;
    const char *best_name = NULL;
    for (int32_t i = 0; i < papcoll_algorithm_count(); i++) {
        papcoll_algorithm_info info;
        papcoll_algorithm_get(i, &info);
        /* PAP-aware candidates where the arrivals are uneven, hierarchical ones where the
         * groups form a hierarchy (pap_hierarchical needs both: groups, and arrivals, even
         * if equal); each only where it can build */
        int candidate = info.needs_groups ? grouped && (!info.needs_arrivals ||
                                                        context->arrivals != NULL)
                                          : info.needs_arrivals && uneven;
        if (!candidate || stands_for_native(info.name)) continue;
        if (info.commutative_only && !commutative) continue;
        /* canonical_straggler is for reproducible mode, where auto takes it by rule
         * (src/mpi/reproducible.c); outside the mode it only pays the canonical order's
         * tail (the fold past a late rank waits for it), and straggler does what it does */
        if (info.canonical_order) continue;
        if (shortcuts && !affordable(info.name, ranks, count, elem_size, &candidate_context,
                                     spent, trace)) {
            trace->skipped_candidates++;
            continue;
        }
        double seconds =
            predicted_seconds(info.name, ranks, count, elem_size, &candidate_context, model,
                              limit_of(trace, spent, shortcuts, most_operations), &spent);
        if (seconds < best) {
            best = seconds;
            best_name = info.name;
        }
    }
    trace->simulated_operations = spent;
    /* a gain below two one-way messages is below what the model resolves (its per-message
     * costs are one ping-pong's averages) and below the noise of ranks that share cores */
    double least_gain = 2 * (model->latency + model->overhead + model->receive_overhead);
    int wins = best_name != NULL && best - wait < (1 - margin) * (native - wait) &&
               native - best > least_gain;
    if (wins) {
        snprintf(choice->algorithm, sizeof choice->algorithm, "%s", best_name);
        choice->predicted_seconds = best;
    }
    /* what the MPI library's closed loop measures the choice against (src/mpi/
     * auto_feedback.c): native against a winner; against native, the best candidate where
     * the model puts it within its own uncertainty (25 % of what follows the wait), so that
     * a candidate the model wrongly thinks a little slower is tried, one far slower not */
    int close = best - wait <= (1 + tuning.alternative_share) * (native - wait);
    if (best_name != NULL && isfinite(best) && (wins || close)) {
        snprintf(choice->alternative, sizeof choice->alternative, "%s",
                 wins ? "native" : best_name);
        choice->alternative_seconds = wins ? choice->native_seconds : best;
    }
    snprintf(choice->model_algorithm, sizeof choice->model_algorithm, "%s", choice->algorithm);
    return PAPCOLL_OK;
}

int papcoll_choose(int32_t ranks, int64_t count, int32_t elem_size, int32_t commutative,
                   const papcoll_context *context, const papcoll_sim_model *model,
                   papcoll_choice *choice) {
    return select_choose(ranks, count, elem_size, commutative, context, model, 1, choice,
                         NULL);
}
