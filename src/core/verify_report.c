/* verify_report.c - how the verifier reports: the first violation (rank, op, reason), an
 * allocation that failed, and the names of op kinds and buffers in reasons. Its own unit, at
 * the bottom of the verifier, because every part reports: verify.c (the symbolic run),
 * verify_checks.c and verify_values.c all call down into it, and it calls none of them. */
#include <stdarg.h>
#include <stdio.h>

#include "growth.h"
#include "message.h"
#include "verifier.h"

void fail_at(verifier *v, int32_t rank, int32_t op, const char *format, ...) {
    if (v->failed) return;
    v->failed = 1;
    v->report->ok = 0;
    v->report->violation_rank = rank;
    v->report->violation_op = op;
    char message[224];
    va_list arguments;
    va_start(arguments, format);
    message_vwrite(message, sizeof message, format, arguments);
    va_end(arguments);
    if (op >= 0)
        snprintf(v->report->reason, sizeof v->report->reason, "%.20srank %d op %d: %.200s", v->mode,
                 rank, op, message);
    else if (rank >= 0)
        snprintf(v->report->reason, sizeof v->report->reason, "%.20srank %d: %.200s", v->mode, rank,
                 message);
    else
        snprintf(v->report->reason, sizeof v->report->reason, "%.20s%.200s", v->mode, message);
}

/* grow_array, reporting a failure as the verifier's out-of-memory violation. 0 or -1. */
int verifier_grow(verifier *v, void *items, size_t *capacity, int64_t needed, size_t item_size) {
    if (grow_array(items, capacity, (size_t)needed, item_size) == 0) return 0;
    v->out_of_memory = 1;
    fail_at(v, -1, -1, "out of memory");
    return -1;
}

const char *kind_name(int kind) {
    static const char *names[] = {"SEND", "RECV", "REDUCE", "COPY"};
    return names[kind & 3];
}

const char *buffer_name(int buffer, char *space, size_t size) {
    if (buffer == SCHED_SEND_BUFFER) return "send";
    if (buffer == SCHED_RECV_BUFFER) return "recv";
    snprintf(space, size, "scratch%d", buffer - SCHED_FIRST_SCRATCH);
    return space;
}
