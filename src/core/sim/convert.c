/* convert.c - every rank's schedule, built, converted into the engine's op records
 * (engine.h) and freed one after the other, so that at P = 2^20 only one schedule is held
 * besides the engine's arrays. Apart from the run loop (simulate.c): the engine never sees
 * a schedule, only 32-byte op records with their channels numbered (matching.c). */
#include <stdlib.h>
#include <string.h>

#include "../growth.h"
#include "../message.h"
#include "../tuning.h"
#include "engine.h"

/* What converting one schedule needs, kept from rank to rank (grown, never shrunk). */
typedef struct build_scratch {
    int32_t *pending, *dependent_first, *dependents;
    size_t pending_capacity, first_capacity, dependents_capacity;
} build_scratch;

/* Builds rank r's schedule and appends its ops to s->ops. */
static int add_rank(simulation *s, build_scratch *scratch, const char *algorithm, int32_t rank,
                    int64_t count, int32_t elem_size, const papcoll_context *context) {
    papcoll_schedule *schedule = NULL;
    int status = papcoll_schedule_build(algorithm, s->ranks, rank, count, elem_size, context,
                                        &schedule, s->error, s->error_size);
    if (status != PAPCOLL_OK) return status;
    int64_t ops = schedule->op_count, links = schedule->dependency_count;
    if (s->op_count + ops > SIM_MAX_OPS || s->dependent_count + links > SIM_MAX_OPS) {
        papcoll_schedule_free(schedule);
        return sim_fail(s, PAPCOLL_ERR_LIMIT, "the schedules of %d ranks hold more than %lld "
                        "operations or dependencies, the engine's limit", s->ranks,
                        (long long)SIM_MAX_OPS);
    }
    if (grow_array((void **)&scratch->pending, &scratch->pending_capacity, (size_t)ops + 1,
                   sizeof(int32_t)) != 0 ||
        grow_array((void **)&scratch->dependent_first, &scratch->first_capacity,
                   (size_t)ops + 2, sizeof(int32_t)) != 0 ||
        grow_array((void **)&scratch->dependents, &scratch->dependents_capacity,
                   (size_t)links + 1, sizeof(int32_t)) != 0 ||
        grow_array((void **)&s->ops, &s->op_capacity, (size_t)(s->op_count + ops) + 1,
                   sizeof(sim_op)) != 0 ||
        grow_array((void **)&s->dependents, &s->dependent_capacity,
                   (size_t)(s->dependent_count + links) + 1, sizeof(uint32_t)) != 0 ||
        !sched_dependents(schedule, scratch->pending, scratch->dependent_first,
                          scratch->dependents)) {
        papcoll_schedule_free(schedule);
        return sim_fail(s, PAPCOLL_ERR_NO_MEMORY, "out of memory for the schedules of %d ranks",
                        s->ranks);
    }
    /* sent as the MPI executor sends it: a chained SEND of synchronous_send_bytes or more
     * (the communicator's tuning, else 16 KiB) goes as MPI_Issend */
    int64_t synchronous_elements =
        tuning_in_force(context != NULL ? context->tuning : NULL).synchronous_send_bytes /
        (elem_size > 0 ? elem_size : 1);
    s->first_op[rank] = s->op_count;
    for (int64_t i = 0; i < ops; i++) {
        const sched_op *from = &schedule->ops[i];
        sim_op *to = &s->ops[s->op_count + i];
        memset(to, 0, sizeof *to);
        to->kind = from->kind;
        to->rank = rank;
        to->pending = scratch->pending[i];
        to->dependents = (uint32_t)(s->dependent_count + scratch->dependent_first[i]);
        to->bytes = (double)from->length * elem_size;
        if (from->kind == SCHED_SEND || from->kind == SCHED_RECV) {
            to->peer = from->u.message.peer;
            to->synchronous = (uint8_t)sched_send_is_synchronous(
                schedule, (int32_t)i, scratch->dependent_first, scratch->dependents,
                synchronous_elements);
            to->channel = from->kind == SCHED_SEND
                              ? sim_channel_of(s, rank, to->peer, from->u.message.tag)
                              : sim_channel_of(s, to->peer, rank, from->u.message.tag);
            if (to->channel < 0) {
                papcoll_schedule_free(schedule);
                return sim_fail(s, PAPCOLL_ERR_NO_MEMORY, "out of memory for the message channels "
                                "of %d ranks", s->ranks);
            }
        } else if (from->kind == SCHED_COPY && from->buffer == from->target_buffer &&
                   from->offset == from->u.target_offset) {
            to->bytes = 0; /* a copy onto itself (MPI_IN_PLACE) moves nothing */
        }
    }
    for (int64_t d = 0; d < links; d++) /* local op indices -> indices in s->ops */
        s->dependents[s->dependent_count + d] = (uint32_t)(s->op_count + scratch->dependents[d]);
    s->op_count += ops;
    s->dependent_count += links;
    s->first_op[rank + 1] = s->op_count;
    s->ops[s->op_count].dependents = (uint32_t)s->dependent_count; /* the sentinel, for now */
    papcoll_schedule_free(schedule);
    return PAPCOLL_OK;
}

int sim_convert_schedules(simulation *s, const char *algorithm, int64_t count,
                          int32_t elem_size, const papcoll_context *context,
                          int64_t max_operations) {
    build_scratch scratch;
    memset(&scratch, 0, sizeof scratch);
    int status = PAPCOLL_OK;
    for (int32_t r = 0; r < s->ranks && status == PAPCOLL_OK; r++) {
        status = add_rank(s, &scratch, algorithm, r, count, elem_size, context);
        if (status == PAPCOLL_OK && max_operations > 0 && s->op_count > max_operations)
            status = sim_fail(s, PAPCOLL_ERR_LIMIT,
                              "%s at P = %d needs more than %lld operations (the limit; ranks "
                              "0..%d alone have %lld): raise the limit if the memory is there, "
                              "about 40 bytes per operation",
                              algorithm, s->ranks, (long long)max_operations, r,
                              (long long)s->op_count);
    }
    free(scratch.pending);
    free(scratch.dependent_first);
    free(scratch.dependents);
    free(s->channel_slots); /* the ops hold their channels now */
    s->channel_slots = NULL;
    return status;
}
