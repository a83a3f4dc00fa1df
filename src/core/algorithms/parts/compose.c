/* compose.c - see compose.h. The embedded ops are copied one by one with their peers, tags,
 * buffers and dependencies translated; a final empty COPY waits for every op of the
 * sub-schedule that nothing in it waits for, so the caller has one op to wait for. */
#include "compose.h"

#include <stdlib.h>
#include <string.h>

int compose_check_flat(const char *algorithm, papcoll_schedule *out) {
    const algorithm_entry *entry = registry_find(algorithm);
    if (entry == NULL)
        return sched_fail(out, PAPCOLL_ERR_UNKNOWN_ALGORITHM, "unknown inner or outer "
                          "algorithm '%.40s'", algorithm);
    if (!registry_is_flat(entry))
        return sched_fail(out, PAPCOLL_ERR_UNSUPPORTED, "'%s' cannot run inside a hierarchy: "
                          "inner and outer algorithms must be flat all-reduces (not PAP-aware, "
                          "not hierarchical, not a reduce-scatter)", algorithm);
    return PAPCOLL_OK;
}

int32_t compose_embed(papcoll_schedule *out, const char *algorithm, const int32_t *members,
                      int32_t member_count, int32_t me, int64_t count, int32_t elem_size,
                      int32_t tag_base, int32_t tag_limit, const int32_t *after,
                      int32_t after_count) {
    if (compose_check_flat(algorithm, out) != PAPCOLL_OK) return SCHED_NONE;
    papcoll_schedule *sub = NULL;
    char error[256];
    papcoll_context none;
    memset(&none, 0, sizeof none);
    int status = papcoll_schedule_build(algorithm, member_count, me, count, elem_size, &none,
                                        &sub, error, sizeof error);
    if (status != PAPCOLL_OK) {
        sched_fail(out, status, "%s", error);
        return SCHED_NONE;
    }
    int32_t n = sub->op_count, base = out->op_count;
    int32_t buffer_map[SCHED_FIRST_SCRATCH + SCHED_MAX_SCRATCH];
    buffer_map[SCHED_SEND_BUFFER] = buffer_map[SCHED_RECV_BUFFER] = SCHED_RECV_BUFFER;
    for (int32_t k = 0; k < sub->scratch_count; k++)
        buffer_map[SCHED_FIRST_SCRATCH + k] = sched_add_scratch(out, sub->scratch_elements[k]);
    char *has_dependent = calloc((size_t)n + 1, 1);
    size_t room = (size_t)sub->dependency_count > (size_t)n ? (size_t)sub->dependency_count
                                                             : (size_t)n;
    int32_t *dependencies = malloc((room + (size_t)after_count + 1) * sizeof *dependencies);
    if (has_dependent == NULL || dependencies == NULL)
        sched_fail(out, PAPCOLL_ERR_NO_MEMORY, "out of memory");
    for (int32_t i = 0; i < n && out->status == PAPCOLL_OK; i++) {
        const sched_op *op = &sub->ops[i];
        int32_t own;
        const int32_t *waits = sched_dependencies(sub, i, &own);
        int32_t total = 0;
        for (int32_t d = 0; d < own; d++) {
            dependencies[total++] = base + waits[d];
            has_dependent[waits[d]] = 1;
        }
        if (own == 0)
            for (int32_t d = 0; d < after_count; d++) dependencies[total++] = after[d];
        sched_region source = sched_region_of(buffer_map[op->buffer], op->offset, op->length);
        if (op->kind == SCHED_SEND || op->kind == SCHED_RECV) {
            int32_t tag = tag_base + op->u.message.tag;
            if (tag >= tag_limit) {
                sched_fail(out, PAPCOLL_ERR_LIMIT, "'%s' uses tag %d, beyond the %d tags a "
                           "phase of a hierarchy has", algorithm, op->u.message.tag,
                           tag_limit - tag_base);
                break;
            }
            int32_t peer = members[op->u.message.peer];
            if (op->kind == SCHED_SEND) {
                int32_t sent = sched_send(out, peer, tag, source, dependencies, total);
                if (op->flags & SCHED_SEND_PACED) sched_pace(out, sent);
            } else sched_recv(out, peer, tag, source, dependencies, total);
        } else {
            sched_region target = sched_region_of(buffer_map[op->target_buffer],
                                                  op->u.target_offset, op->length);
            if (op->kind == SCHED_REDUCE)
                sched_reduce(out, source, target, op->flags, dependencies, total);
            else
                sched_copy(out, source, target, dependencies, total);
        }
    }
    int32_t last = SCHED_NONE;
    if (out->status == PAPCOLL_OK) {
        /* one op the caller can wait for: an empty copy after every sink of the sub-schedule */
        int32_t total = 0;
        for (int32_t i = 0; i < n; i++)
            if (!has_dependent[i]) dependencies[total++] = base + i;
        if (n == 0)
            for (int32_t d = 0; d < after_count; d++) dependencies[total++] = after[d];
        last = sched_copy(out, SCHED_RECV_REGION(0, 0), SCHED_RECV_REGION(0, 0), dependencies,
                          total);
    }
    free(has_dependent);
    free(dependencies);
    papcoll_schedule_free(sub);
    return last;
}
