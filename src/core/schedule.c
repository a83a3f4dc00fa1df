/* schedule.c - building schedules (the IR of schedule.h): ops, dependencies, scratch, the
 * sticky failure. Building one rank's schedule by algorithm name is in build.c, beside the
 * registry; the text format (papcoll_schedule_dump / _parse) is in schedule_text.c. */
#include "schedule.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "growth.h"
#include "message.h"

void sched_init(papcoll_schedule *schedule, int32_t ranks, int32_t rank, int64_t count,
                int32_t elem_size) {
    memset(schedule, 0, sizeof *schedule);
    schedule->ranks = ranks;
    schedule->rank = rank;
    schedule->count = count;
    schedule->elem_size = elem_size;
    schedule->result_offset = 0;
    schedule->result_length = count;
}

void sched_release(papcoll_schedule *schedule) {
    free(schedule->ops);
    free(schedule->dependencies);
    schedule->ops = NULL;
    schedule->dependencies = NULL;
    schedule->op_count = schedule->op_capacity = 0;
    schedule->dependency_count = schedule->dependency_capacity = 0;
}

int sched_fail(papcoll_schedule *schedule, int code, const char *format, ...) {
    if (schedule->status != PAPCOLL_OK) return schedule->status; /* keep the first */
    schedule->status = code;
    va_list arguments;
    va_start(arguments, format);
    message_vwrite(schedule->error, sizeof schedule->error, format, arguments);
    va_end(arguments);
    return code;
}

int32_t sched_add_scratch(papcoll_schedule *schedule, int64_t elements) {
    if (schedule->scratch_count >= SCHED_MAX_SCRATCH) {
        sched_fail(schedule, PAPCOLL_ERR_LIMIT, "more than %d scratch buffers",
                   SCHED_MAX_SCRATCH);
        return SCHED_FIRST_SCRATCH;
    }
    if (elements < 0) elements = 0;
    schedule->scratch_elements[schedule->scratch_count] = elements;
    return SCHED_FIRST_SCRATCH + schedule->scratch_count++;
}

static int reserve(papcoll_schedule *schedule, int32_t after_count) {
    if (schedule->op_count >= INT32_MAX / 2) {
        sched_fail(schedule, PAPCOLL_ERR_LIMIT, "schedule exceeds 2^30 operations");
        return 0;
    }
    if (grow_array((void **)&schedule->ops, &schedule->op_capacity,
                   (size_t)schedule->op_count + 1, sizeof *schedule->ops) != 0 ||
        grow_array((void **)&schedule->dependencies, &schedule->dependency_capacity,
                   (size_t)schedule->dependency_count + (size_t)after_count,
                   sizeof *schedule->dependencies) != 0) {
        sched_fail(schedule, PAPCOLL_ERR_NO_MEMORY, "out of memory building a schedule");
        return 0;
    }
    return 1;
}

static int region_valid(papcoll_schedule *schedule, sched_region region, const char *what) {
    if (region.buffer < 0 || region.buffer >= SCHED_FIRST_SCRATCH + schedule->scratch_count) {
        sched_fail(schedule, PAPCOLL_ERR_ARGUMENT, "%s names buffer %d, which is not declared",
                   what, (int)region.buffer);
        return 0;
    }
    if (region.offset < 0 || region.length < 0) {
        sched_fail(schedule, PAPCOLL_ERR_ARGUMENT, "%s has a negative offset or length", what);
        return 0;
    }
    return 1;
}

/* Appends one op whose fields other than the dependencies are already filled. */
static int32_t append(papcoll_schedule *schedule, const sched_op *op, const int32_t *after,
                      int32_t after_count) {
    if (schedule->status != PAPCOLL_OK || !reserve(schedule, after_count)) return SCHED_NONE;
    int32_t index = schedule->op_count;
    sched_op *slot = &schedule->ops[index];
    *slot = *op;
    slot->first_dependency = schedule->dependency_count;
    for (int32_t i = 0; i < after_count; i++) {
        int32_t dependency = after[i];
        if (dependency == SCHED_NONE) continue;
        if (dependency < 0 || dependency >= index) {
            sched_fail(schedule, PAPCOLL_ERR_ARGUMENT,
                       "op %d waits for op %d, which does not precede it", index, dependency);
            return SCHED_NONE;
        }
        int duplicate = 0;
        for (uint32_t d = slot->first_dependency; d < schedule->dependency_count; d++)
            duplicate |= schedule->dependencies[d] == dependency;
        if (!duplicate) schedule->dependencies[schedule->dependency_count++] = dependency;
    }
    schedule->op_count++;
    return index;
}

static int32_t add_message(papcoll_schedule *schedule, int kind, int32_t peer, int32_t tag,
                           sched_region region, const int32_t *after, int32_t after_count) {
    const char *what = kind == SCHED_SEND ? "SEND" : "RECV";
    if (!region_valid(schedule, region, what)) return SCHED_NONE;
    if (peer < 0 || peer >= schedule->ranks || peer == schedule->rank) {
        sched_fail(schedule, PAPCOLL_ERR_ARGUMENT, "%s peer %d is not another rank of %d",
                   what, peer, schedule->ranks);
        return SCHED_NONE;
    }
    if (tag < 0 || tag > SCHED_MAX_TAG) {
        sched_fail(schedule, PAPCOLL_ERR_LIMIT, "%s tag %d outside 0..%d", what, tag,
                   SCHED_MAX_TAG);
        return SCHED_NONE;
    }
    sched_op op = {0};
    op.kind = (uint8_t)kind;
    op.buffer = (uint8_t)region.buffer;
    op.offset = region.offset;
    op.length = region.length;
    op.u.message.peer = peer;
    op.u.message.tag = tag;
    return append(schedule, &op, after, after_count);
}

int32_t sched_send(papcoll_schedule *schedule, int32_t peer, int32_t tag, sched_region source,
                   const int32_t *after, int32_t after_count) {
    return add_message(schedule, SCHED_SEND, peer, tag, source, after, after_count);
}

int32_t sched_recv(papcoll_schedule *schedule, int32_t peer, int32_t tag, sched_region target,
                   const int32_t *after, int32_t after_count) {
    return add_message(schedule, SCHED_RECV, peer, tag, target, after, after_count);
}

int32_t sched_pace(papcoll_schedule *schedule, int32_t send) {
    if (send == SCHED_NONE) return send;
    if (send < 0 || send >= schedule->op_count || schedule->ops[send].kind != SCHED_SEND) {
        sched_fail(schedule, PAPCOLL_ERR_ARGUMENT, "op %d paced is not a SEND", send);
        return SCHED_NONE;
    }
    schedule->ops[send].flags |= SCHED_SEND_PACED;
    return send;
}

static int32_t add_local(papcoll_schedule *schedule, int kind, int order, sched_region source,
                         sched_region target, const int32_t *after, int32_t after_count) {
    const char *what = kind == SCHED_REDUCE ? "REDUCE" : "COPY";
    if (!region_valid(schedule, source, what) || !region_valid(schedule, target, what))
        return SCHED_NONE;
    if (source.length != target.length) {
        sched_fail(schedule, PAPCOLL_ERR_ARGUMENT, "%s regions differ in length", what);
        return SCHED_NONE;
    }
    if (target.buffer == SCHED_SEND_BUFFER) {
        sched_fail(schedule, PAPCOLL_ERR_ARGUMENT, "%s writes the send buffer", what);
        return SCHED_NONE;
    }
    sched_op op = {0};
    op.kind = (uint8_t)kind;
    op.flags = (uint8_t)order;
    op.buffer = (uint8_t)source.buffer;
    op.target_buffer = (uint8_t)target.buffer;
    op.offset = source.offset;
    op.length = source.length;
    op.u.target_offset = target.offset;
    return append(schedule, &op, after, after_count);
}

int32_t sched_reduce(papcoll_schedule *schedule, sched_region source, sched_region target,
                     int order, const int32_t *after, int32_t after_count) {
    return add_local(schedule, SCHED_REDUCE, order, source, target, after, after_count);
}

int32_t sched_copy(papcoll_schedule *schedule, sched_region source, sched_region target,
                   const int32_t *after, int32_t after_count) {
    return add_local(schedule, SCHED_COPY, SCHED_SOURCE_LEFT, source, target, after,
                     after_count);
}

int32_t sched_copy_own_vector(papcoll_schedule *schedule) {
    return sched_copy(schedule, SCHED_SEND_REGION(0, schedule->count),
                      SCHED_RECV_REGION(0, schedule->count), SCHED_FIRST);
}

const int32_t *sched_dependencies(const papcoll_schedule *schedule, int32_t index,
                                  int32_t *count) {
    uint32_t first = schedule->ops[index].first_dependency;
    uint32_t end = index + 1 < schedule->op_count ? schedule->ops[index + 1].first_dependency
                                                  : schedule->dependency_count;
    *count = (int32_t)(end - first);
    return schedule->dependencies + first;
}

int sched_dependents(const papcoll_schedule *schedule, int32_t *pending,
                     int32_t *dependent_first, int32_t *dependents) {
    int32_t n = schedule->op_count;
    int32_t *filled = calloc((size_t)n + 1, sizeof *filled);
    if (filled == NULL) return 0;
    memset(dependent_first, 0, ((size_t)n + 1) * sizeof *dependent_first);
    for (int32_t i = 0; i < n; i++) {
        int32_t count;
        const int32_t *dependencies = sched_dependencies(schedule, i, &count);
        pending[i] = count;
        for (int32_t d = 0; d < count; d++) dependent_first[dependencies[d] + 1]++;
    }
    for (int32_t i = 0; i < n; i++) dependent_first[i + 1] += dependent_first[i];
    for (int32_t i = 0; i < n; i++) {
        int32_t count;
        const int32_t *dependencies = sched_dependencies(schedule, i, &count);
        for (int32_t d = 0; d < count; d++) {
            int32_t parent = dependencies[d];
            dependents[dependent_first[parent] + filled[parent]++] = i;
        }
    }
    free(filled);
    return 1;
}

int sched_by_key_then_index(const void *a, const void *b) {
    const sched_keyed_index *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

int sched_order_sends(papcoll_schedule *schedule) {
    if (schedule->status != PAPCOLL_OK) return schedule->status;
    int32_t n = schedule->op_count, sends = 0;
    for (int32_t i = 0; i < n; i++)
        sends += schedule->ops[i].kind == SCHED_SEND && schedule->ops[i].length > 0;
    if (sends < 2) return PAPCOLL_OK;
    sched_keyed_index *entries = malloc((size_t)sends * sizeof *entries);
    int32_t *previous = malloc((size_t)n * sizeof *previous);
    int32_t *dependencies =
        malloc(((size_t)schedule->dependency_count + (size_t)sends) * sizeof *dependencies);
    if (entries == NULL || previous == NULL || dependencies == NULL) {
        free(entries);
        free(previous);
        free(dependencies);
        return sched_fail(schedule, PAPCOLL_ERR_NO_MEMORY, "out of memory ordering sends");
    }
    int32_t filled = 0;
    for (int32_t i = 0; i < n; i++) {
        previous[i] = SCHED_NONE;
        if (schedule->ops[i].kind == SCHED_SEND && schedule->ops[i].length > 0)
            entries[filled++] = (sched_keyed_index){schedule->ops[i].u.message.peer, i};
    }
    qsort(entries, (size_t)sends, sizeof *entries, sched_by_key_then_index);
    for (int32_t e = 1; e < sends; e++)
        if (entries[e].key == entries[e - 1].key) previous[entries[e].index] = entries[e - 1].index;
    uint32_t written = 0;
    for (int32_t i = 0; i < n; i++) {
        int32_t count;
        const int32_t *own = sched_dependencies(schedule, i, &count);
        uint32_t first = written;
        int already = 0;
        for (int32_t d = 0; d < count; d++) {
            dependencies[written++] = own[d];
            already |= own[d] == previous[i];
        }
        if (previous[i] != SCHED_NONE && !already) dependencies[written++] = previous[i];
        schedule->ops[i].first_dependency = first;
    }
    free(schedule->dependencies);
    schedule->dependencies = dependencies;
    schedule->dependency_count = written;
    schedule->dependency_capacity = (size_t)schedule->dependency_count;
    free(entries);
    free(previous);
    return PAPCOLL_OK;
}

/* ---- public API ---------------------------------------------------------------------- */

void papcoll_schedule_free(papcoll_schedule *schedule) {
    if (schedule == NULL) return;
    sched_release(schedule);
    free(schedule);
}

int64_t papcoll_schedule_op_count(const papcoll_schedule *schedule) {
    return schedule ? schedule->op_count : 0;
}

const char *papcoll_status_name(int status) {
    switch (status) {
    case PAPCOLL_OK: return "ok";
    case PAPCOLL_ERR_ARGUMENT: return "invalid argument";
    case PAPCOLL_ERR_UNKNOWN_ALGORITHM: return "unknown algorithm";
    case PAPCOLL_ERR_UNSUPPORTED: return "unsupported by this algorithm";
    case PAPCOLL_ERR_NO_MEMORY: return "out of memory";
    case PAPCOLL_ERR_LIMIT: return "size limit exceeded";
    default: return "unknown status";
    }
}

int sched_send_is_synchronous(const papcoll_schedule *schedule, int32_t i,
                              const int32_t *dependent_first, const int32_t *dependents,
                              int64_t synchronous_elements) {
    const sched_op *op = &schedule->ops[i];
    if (op->kind != SCHED_SEND || op->length == 0 || /* empty: no link to share */
        (op->length < synchronous_elements && !(op->flags & SCHED_SEND_PACED)))
        return 0;
    for (int32_t d = dependent_first[i]; d < dependent_first[i + 1]; d++) {
        const sched_op *next = &schedule->ops[dependents[d]];
        if (next->kind == SCHED_SEND && next->u.message.peer == op->u.message.peer) return 1;
    }
    return 0;
}
