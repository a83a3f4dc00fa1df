/* build.c - building one rank's schedule by algorithm name (papcoll_schedule_build), and the
 * checks of the per-call context it is built from (the parameters' own checks are in
 * parameter_checks.c). The registry (registry.c) says which builder a name means. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "message.h"
#include "parameter_table.h"
#include "schedule.h"

/* The per-call part of a context, and what the algorithm needs of it. */
static const char *context_check_shape(const papcoll_context *context, int32_t ranks,
                                       const algorithm_entry *entry, char *text, size_t size) {
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
    return parameters_check_shape(&context->parameters, ranks, text, size);
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
    char shape[200];
    if (ranks < 1) problem = "the number of ranks must be at least 1";
    else if (rank < 0 || rank >= ranks) problem = "rank must lie in 0 .. ranks-1";
    else if (count < 0) problem = "count must not be negative";
    else if (elem_size < 1) problem = "element size must be at least 1 byte";
    else if (count > INT64_MAX / elem_size) problem = "count x element size overflows 64 bits";
    else problem = context_check_shape(context, ranks, entry, shape, sizeof shape);
    if (problem != NULL) return message_write(error, error_size, PAPCOLL_ERR_ARGUMENT, "%s", problem);
    papcoll_schedule *schedule = malloc(sizeof *schedule);
    if (schedule == NULL) return message_write(error, error_size, PAPCOLL_ERR_NO_MEMORY, "out of memory");
    sched_init(schedule, ranks, rank, count, elem_size);
    int status = entry->build(ranks, rank, count, elem_size, context, schedule);
    if (status == PAPCOLL_OK) status = schedule->status;
    if (status == PAPCOLL_OK) status = sched_order_sends(schedule);
    if (status != PAPCOLL_OK) {
        message_write(error, error_size, status, "%.40s: %.200s", entry->info.name,
               schedule->error[0] ? schedule->error : papcoll_status_name(status));
        papcoll_schedule_free(schedule);
        return status;
    }
    *out = schedule;
    return PAPCOLL_OK;
}
