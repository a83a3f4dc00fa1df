/* build.c - building one rank's schedule by algorithm name (papcoll_schedule_build), and the
 * checks of what it is built from: the user's parameters (papcoll_parameters_check) and the
 * per-call context. The registry (registry.c) says which builder a name means. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "message.h"
#include "schedule.h"

/* The checks that cost O(1): counts and pointers. papcoll_schedule_build runs them for every
 * rank it builds (the simulator builds P schedules, so O(P) checks there would be O(P^2));
 * the O(P) ones (a permutation, a tree, a schedule string) are in parameters_check_deep. */
static const char *parameters_check_shape(const papcoll_parameters *parameters, int32_t ranks) {
    if (parameters->segment_elements < 0) return "segment_elements must not be negative";
    if (parameters->segment_count < 0) return "segment_count must not be negative";
    if (parameters->segment_count > PAPCOLL_MAX_SEGMENTS)
        return "segment_count is above PAPCOLL_MAX_SEGMENTS (every segment costs operations "
               "on every rank)";
    if (parameters->rank_order_count != 0 && parameters->rank_order_count != ranks)
        return "rank_order must list every rank once (rank_order_count 0 or P)";
    if (parameters->rank_order_count != 0 && parameters->rank_order == NULL)
        return "rank_order_count is set but rank_order is NULL";
    return NULL;
}

static int check_flat(const char *algorithm, const char *role, char *error, size_t error_size) {
    if (algorithm == NULL) return PAPCOLL_OK;
    const algorithm_entry *entry = registry_find(algorithm);
    if (entry == NULL)
        return message_write(error, error_size, PAPCOLL_ERR_UNKNOWN_ALGORITHM,
                      "unknown %s algorithm '%.64s' (parameter %s_algorithm; `papcoll "
                      "algorithms` lists them)", role, algorithm, role);
    if (!registry_is_flat(entry))
        return message_write(error, error_size, PAPCOLL_ERR_ARGUMENT,
                      "'%s' cannot be the %s algorithm of a hierarchy (parameter %s_algorithm): "
                      "it must be a flat all-reduce (not PAP-aware, not hierarchical, not a "
                      "reduce-scatter)", algorithm, role, role);
    return PAPCOLL_OK;
}

int papcoll_parameters_check(const papcoll_parameters *parameters, int32_t ranks, char *error,
                             size_t error_size) {
    char detail[200];
    if (parameters == NULL) return PAPCOLL_OK;
    if (ranks < 1)
        return message_write(error, error_size, PAPCOLL_ERR_ARGUMENT,
                      "the number of ranks must be at least 1");
    if (parameters->segment_count > PAPCOLL_MAX_SEGMENTS) /* the shape check, with numbers */
        return message_write(error, error_size, PAPCOLL_ERR_ARGUMENT,
                             "segment_count must be at most %d (PAPCOLL_MAX_SEGMENTS: every "
                             "segment costs operations on every rank), not %d",
                             PAPCOLL_MAX_SEGMENTS, parameters->segment_count);
    const char *problem = parameters_check_shape(parameters, ranks);
    if (problem != NULL) return message_write(error, error_size, PAPCOLL_ERR_ARGUMENT, "%s", problem);
    if (parameters->rank_order != NULL && parameters->rank_order_count == ranks) {
        unsigned char *seen = calloc((size_t)ranks, 1);
        if (seen == NULL) return message_write(error, error_size, PAPCOLL_ERR_NO_MEMORY, "out of memory");
        int32_t bad = -1;
        for (int32_t i = 0; i < ranks && bad < 0; i++) {
            int32_t listed = parameters->rank_order[i];
            if (listed < 0 || listed >= ranks || seen[listed]) bad = i;
            else seen[listed] = 1;
        }
        free(seen);
        if (bad >= 0)
            return message_write(error, error_size, PAPCOLL_ERR_ARGUMENT,
                          "rank_order is not a permutation of 0..%d: entry %d is %d", ranks - 1,
                          bad, parameters->rank_order[bad]);
    }
    const char *schedule = parameters->schedule;
    if (schedule != NULL && schedule[strspn(schedule, " ")] != '\0' &&
        papcoll_rm_check(schedule, ranks, NULL, detail, sizeof detail) != PAPCOLL_OK)
        return message_write(error, error_size, PAPCOLL_ERR_ARGUMENT, "schedule '%.60s': %s", schedule,
                      detail);
    int status = check_flat(parameters->inner_algorithm, "inner", error, error_size);
    if (status == PAPCOLL_OK)
        status = check_flat(parameters->outer_algorithm, "outer", error, error_size);
    if (status != PAPCOLL_OK) return status;
    const papcoll_sim_topology *tree = parameters->tree;
    if (tree != NULL) {
        if (tree->rank_count != ranks)
            return message_write(error, error_size, PAPCOLL_ERR_ARGUMENT,
                          "tree: it places %d ranks, not %d", tree->rank_count, ranks);
        int32_t *order = malloc((size_t)ranks * sizeof *order);
        if (order == NULL) return message_write(error, error_size, PAPCOLL_ERR_NO_MEMORY, "out of memory");
        status = papcoll_tree_ring_order(tree, order, detail, sizeof detail);
        free(order);
        if (status != PAPCOLL_OK)
            return message_write(error, error_size, status, "tree: %s", detail);
    }
    return PAPCOLL_OK;
}

/* The per-call part of a context, and what the algorithm needs of it. */
static const char *context_check_shape(const papcoll_context *context, int32_t ranks,
                                       const algorithm_entry *entry) {
    if (context->arrival_count != 0 && context->arrival_count != ranks)
        return "arrival estimates must give one time per rank";
    if (context->arrival_count != 0 && context->arrivals == NULL)
        return "arrival_count is set but arrivals is NULL";
    if (context->group_count != 0 && context->group_count != ranks)
        return "groups must give the group of every rank (group_count 0 or P)";
    if (context->group_count != 0 && context->groups == NULL)
        return "group_count is set but groups is NULL";
    if (entry->info.needs_groups && context->group_count == 0)
        return "this algorithm needs the group of every rank (context groups; `papcoll` "
               "commands: --groups)";
    for (int32_t r = 0; r < context->group_count; r++)
        if (context->groups[r] < 0) return "group ids must not be negative";
    return parameters_check_shape(&context->parameters, ranks);
}

int papcoll_schedule_build(const char *algorithm, int32_t ranks, int32_t rank, int64_t count,
                           int32_t elem_size, const papcoll_context *context,
                           papcoll_schedule **out, char *error, size_t error_size) {
    if (out == NULL)
        return message_write(error, error_size, PAPCOLL_ERR_ARGUMENT,
                      "no place to store the schedule (out is NULL)");
    *out = NULL;
    const algorithm_entry *entry = algorithm ? registry_find(algorithm) : NULL;
    if (entry == NULL)
        return message_write(error, error_size, PAPCOLL_ERR_UNKNOWN_ALGORITHM,
                      "unknown algorithm '%.64s' (papcoll algorithms lists them)",
                      algorithm ? algorithm : "(null)");
    papcoll_context defaults;
    if (context == NULL) {
        memset(&defaults, 0, sizeof defaults);
        context = &defaults;
    }
    const char *problem = NULL;
    if (ranks < 1) problem = "the number of ranks must be at least 1";
    else if (rank < 0 || rank >= ranks) problem = "rank must lie in 0 .. ranks-1";
    else if (count < 0) problem = "count must not be negative";
    else if (elem_size < 1) problem = "element size must be at least 1 byte";
    else if (count > INT64_MAX / elem_size) problem = "count x element size overflows 64 bits";
    else problem = context_check_shape(context, ranks, entry);
    if (problem != NULL) return message_write(error, error_size, PAPCOLL_ERR_ARGUMENT, "%s", problem);
    papcoll_schedule *schedule = malloc(sizeof *schedule);
    if (schedule == NULL) return message_write(error, error_size, PAPCOLL_ERR_NO_MEMORY, "out of memory");
    sched_init(schedule, ranks, rank, count, elem_size);
    int status = entry->build(ranks, rank, count, elem_size, context, schedule);
    if (status == PAPCOLL_OK) status = schedule->status;
    if (status != PAPCOLL_OK) {
        message_write(error, error_size, status, "%.40s: %.200s", entry->info.name,
               schedule->error[0] ? schedule->error : papcoll_status_name(status));
        papcoll_schedule_free(schedule);
        return status;
    }
    *out = schedule;
    return PAPCOLL_OK;
}
