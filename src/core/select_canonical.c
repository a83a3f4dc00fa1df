/* select_canonical.c - `auto` in reproducible mode (docs/reproducible.md): the
 * candidates are the algorithms that keep the canonical order (papcoll_algorithm_info.
 * canonical_order), and native is never one (MPI_Allreduce promises no order), so there is
 * no margin to beat: the least predicted e-bar runs.
 *
 *   context->arrivals NULL, or all equal   -> the arrival-blind ones (canonical_gather,
 *                                             canonical_scatter, linear_tree) and the
 *                                             PAP-aware ones on balanced arrivals
 *   uneven arrivals                        -> every one, the PAP-aware ones built from them
 *
 * A tie goes to the earlier in the registry. Each candidate is simulated on the context's
 * tree, like select.c's, and skipped where it holds more than a million operations (the
 * decision is kept per shape by the caller; canonical_gather is P (P - 1) messages, the
 * others O(P^2) too, so the cap binds only from P of a few hundred).
 *
 * Why a model here and not only select.c's fixed size line: the crossover between the one
 * round of canonical_gather ((P - 1) x the vector a rank) and the two phases of the
 * scatter (2 (P - 1) / P x the vector, 2 (P - 1) rounds) moves with P, the latency and the
 * per-byte costs; a fixed 64 KiB of copies picked the slower one at P = 4 for 8 B on the
 * 2-core VM (docs/reproducible.md's cost table).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "papcoll_core.h"

static const int64_t most_simulated_operations = 1000000;

int papcoll_choose_reproducible(int32_t ranks, int64_t count, int32_t elem_size,
                                const papcoll_context *context, const papcoll_sim_model *model,
                                papcoll_choice *choice) {
    if (choice == NULL || model == NULL || context == NULL || ranks < 1 || count < 0 ||
        elem_size < 1)
        return PAPCOLL_ERR_ARGUMENT;
    memset(choice, 0, sizeof *choice);
    choice->decided_by = -1;
    papcoll_context candidate_context = *context;
    candidate_context.keep_order = 1; /* the canonical order is an operand order too */
    /* the PAP-aware candidates need predictions: balanced ones where none are given */
    double *balanced = NULL;
    int uneven = 0;
    if (context->arrivals == NULL || context->arrival_count != ranks) {
        if ((balanced = calloc((size_t)ranks, sizeof *balanced)) == NULL)
            return PAPCOLL_ERR_NO_MEMORY;
        candidate_context.arrivals = balanced;
        candidate_context.arrival_count = ranks;
        if (!(candidate_context.tau > 0)) candidate_context.tau = model->latency + 1e-9;
    } else {
        for (int32_t r = 1; r < ranks; r++)
            if (context->arrivals[r] != context->arrivals[0]) uneven = 1;
    }
    choice->from_arrivals = uneven;
    double last = -INFINITY, wait = 0;
    for (int32_t r = 0; r < ranks; r++) last = fmax(last, candidate_context.arrivals[r]);
    for (int32_t r = 0; r < ranks; r++) wait += (last - candidate_context.arrivals[r]) / ranks;
    choice->wait_seconds = wait;
    papcoll_sim_options options;
    memset(&options, 0, sizeof options);
    options.max_operations = most_simulated_operations;
    options.topology = context->parameters.tree;
    double best = INFINITY;
    for (int32_t i = 0; i < papcoll_algorithm_count(); i++) {
        papcoll_algorithm_info info;
        papcoll_algorithm_get(i, &info);
        if (!info.canonical_order || info.needs_groups || info.reduce_scatter) continue;
        papcoll_sim_result result;
        memset(&result, 0, sizeof result);
        int status = papcoll_simulate(info.name, ranks, count, elem_size, &candidate_context,
                                      model, &options, candidate_context.arrivals, NULL,
                                      &result, NULL, 0);
        double seconds = status == PAPCOLL_OK ? result.average_elapsed : INFINITY;
        papcoll_sim_result_release(&result);
        if (seconds < best) {
            best = seconds;
            snprintf(choice->algorithm, sizeof choice->algorithm, "%s", info.name);
        }
    }
    free(balanced);
    if (!isfinite(best)) return PAPCOLL_ERR_UNSUPPORTED; /* none builds: not for a shape
                                                            papcoll_allreduce takes */
    choice->predicted_seconds = best;
    snprintf(choice->model_algorithm, sizeof choice->model_algorithm, "%s", choice->algorithm);
    return PAPCOLL_OK;
}
