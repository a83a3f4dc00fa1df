/* call_plan.c - the plan a call runs (call_plan.h): from a plan cache when its key (shape,
 * operand order, predicted arrival class) was built before, else built now; shared by the
 * blocking call (communicator.c) and the non-blocking and persistent ones. */
#include <stdlib.h>
#include <string.h>

#include "arrival_class.h"
#include "call_plan.h"

/* The most tags any rank's schedule of this call uses (*tag_count holds this rank's): a
 * post takes that many from its communicator's counter (tag_counter.h), which must move
 * alike on every rank, and some algorithms' schedules use more tags on some ranks than on
 * others (priority_rabenseifner at P = 5: 5 on rank 0, 6 on the others; slt, pap_hierarchical
 * alike). Each other rank's schedule is built once, for the plan, and dropped. */
static int widest_tag_count(const papcoll_comm *pc, const char *name, int64_t count,
                            int32_t elem_size, const papcoll_context *context,
                            int32_t *tag_count) {
    char error[256];
    for (int32_t rank = 0; rank < pc->size; rank++) {
        if (rank == pc->rank) continue;
        papcoll_schedule *other = NULL;
        int status = papcoll_schedule_build(name, pc->size, rank, count, elem_size, context,
                                            &other, error, sizeof error);
        if (status != PAPCOLL_OK)
            return record_error(MPI_ERR_NO_MEM, "papcoll: rank %d's schedule of %s, built to "
                                "count its tags: %s", (int)rank, name, error);
        for (int32_t i = 0; i < other->op_count; i++)
            if ((other->ops[i].kind == SCHED_SEND || other->ops[i].kind == SCHED_RECV) &&
                other->ops[i].u.message.tag >= *tag_count)
                *tag_count = other->ops[i].u.message.tag + 1;
        papcoll_schedule_free(other);
    }
    return MPI_SUCCESS;
}

/* The plan for this call: from the cache when its key was built before, else built now.
 * classes and arrivals (P each) are the predicted arrival class and its representative
 * arrivals for a PAP-aware algorithm, else NULL. */
int call_plan_prepare(papcoll_comm *pc, plan_cache *cache, const algorithm_entry *algorithm,
                      int64_t count, int64_t extent, int keep_order, const uint8_t *classes,
                      const double *arrivals, double tau, executor_plan **out) {
    plan_key key = {algorithm, count, extent, keep_order, (uint8_t *)classes, pc->size};
    if ((*out = plan_cache_find(cache, &key)) != NULL) return MPI_SUCCESS;
    executor_plan *plan = plan_cache_free_slot(cache);
    /* Every cached plan is in use by operations in flight: this one gets a plan of its
     * own, marked uncached (nonblocking.c frees it with the operation). Refusing would
     * depend on how far this rank got, and the others would hang. */
    int uncached = plan == NULL;
    if (uncached && (plan = calloc(1, sizeof *plan)) == NULL)
        return record_error(MPI_ERR_NO_MEM, "papcoll: out of memory for a plan");
    papcoll_context context;
    memset(&context, 0, sizeof context);
    context.parameters = pc->parameters.parameters;
    context.groups = pc->groups;
    context.group_count = pc->size;
    context.keep_order = keep_order;
    if (arrivals != NULL) {
        context.arrivals = arrivals;
        context.arrival_count = pc->size;
        context.tau = tau;
    }
    char error[256];
    /* elem_size only sizes byte counts in the schedule; cap it so huge extents still fit */
    int32_t elem_size = extent > INT32_MAX ? INT32_MAX : (int32_t)extent;
    int status = papcoll_schedule_build(algorithm->info.name, pc->size, pc->rank, count,
                                        elem_size, &context, &plan->schedule, error,
                                        sizeof error);
    if (status != PAPCOLL_OK) {
        if (uncached) free(plan);
        return record_error(status == PAPCOLL_ERR_NO_MEMORY ? MPI_ERR_NO_MEM
                            : status == PAPCOLL_ERR_UNSUPPORTED && keep_order ? MPI_ERR_OP
                                                                              : MPI_ERR_ARG,
                            "papcoll: %s", error);
    }
    key.arrival_class = NULL;
    if (classes != NULL && (key.arrival_class = malloc((size_t)pc->size)) != NULL)
        memcpy(key.arrival_class, classes, (size_t)pc->size);
    plan->key = key;
    if ((classes != NULL && key.arrival_class == NULL) || !executor_plan_prepare(plan, pc->config.tuning.synchronous_send_bytes)) {
        executor_plan_release(plan);
        if (uncached) free(plan);
        return record_error(MPI_ERR_NO_MEM, "papcoll: out of memory preparing a schedule");
    }
    int code = cache->tags_alike ? widest_tag_count(pc, algorithm->info.name, count, elem_size,
                                                    &context, &plan->tag_count)
                                 : MPI_SUCCESS;
    if (code != MPI_SUCCESS) {
        executor_plan_release(plan);
        if (uncached) free(plan);
        return code;
    }
    plan->uncached = uncached;
    *out = plan;
    return MPI_SUCCESS;
}

int call_plan_for_call(papcoll_comm *pc, plan_cache *cache,
                               const algorithm_entry *algorithm, int64_t count, int64_t extent,
                               int commutative, const double *arrivals, double tau,
                               executor_plan **out) {
    if (!algorithm->info.needs_arrivals)
        return call_plan_prepare(pc, cache, algorithm, count, extent, !commutative,
                                         NULL, NULL, 0, out);
    if (arrivals == NULL) /* no usable prediction: the arrival-blind counterpart, which
                             for an algorithm of the canonical order keeps that order */
        return call_plan_prepare(pc, cache,
                                 registry_find(algorithm->info.canonical_order
                                                   ? "canonical_scatter" : "ring"),
                                 count, extent, !commutative && algorithm->info.canonical_order,
                                 NULL, NULL, 0, out);
    arrival_class_of(arrivals, pc->size, arrival_unit(tau),
                     pc->config.tuning.arrival_jitter_seconds, pc->call_classes,
                     pc->call_arrivals);
    return call_plan_prepare(pc, cache, algorithm, count, extent, 0, pc->call_classes,
                                     pc->call_arrivals, tau, out);
}

