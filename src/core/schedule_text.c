/* schedule_text.c - a schedule as text and back (papcoll_schedule_dump, papcoll_schedule_parse
 * in papcoll_core.h): for reading schedules, diffing them, and feeding hand-written or
 * mutated ones to the verifier (tests/c/verify_tool.c, dump_tool.c). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "message.h"
#include "schedule.h"

/* Format (one op per line after a header line):
 *   schedule ranks=4 rank=1 count=1009 elem_size=4 scratch=253,253
 *   0 COPY send[0,1009) -> recv[0,1009)
 *   1 SEND to=2 tag=0 recv[0,253) after 0
 *   2 RECV from=0 tag=0 scratch0[0,253)
 *   3 REDUCE scratch0[0,253) -> recv[253,506) order=source-left after 2,0
 *   4 SEND to=1 tag=5 recv[253,506) paced after 3   (SCHED_SEND_PACED)
 * Regions are half-open element intervals. */

typedef struct text_sink {
    char *text;
    size_t size, length;
} text_sink;

static void emit(text_sink *sink, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void emit(text_sink *sink, const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    size_t room = sink->length < sink->size ? sink->size - sink->length : 0;
    int written = vsnprintf(room ? sink->text + sink->length : NULL, room, format, arguments);
    va_end(arguments);
    if (written > 0) sink->length += (size_t)written;
}

static void emit_region(text_sink *sink, int buffer, int64_t offset, int64_t length) {
    if (buffer == SCHED_SEND_BUFFER) emit(sink, "send");
    else if (buffer == SCHED_RECV_BUFFER) emit(sink, "recv");
    else emit(sink, "scratch%d", buffer - SCHED_FIRST_SCRATCH);
    emit(sink, "[%" PRId64 ",%" PRId64 ")", offset, offset + length);
}

size_t papcoll_schedule_dump(const papcoll_schedule *schedule, char *text, size_t size) {
    text_sink sink = {text, size, 0};
    if (size > 0) text[0] = '\0';
    emit(&sink, "schedule ranks=%d rank=%d count=%" PRId64 " elem_size=%d scratch=",
         schedule->ranks, schedule->rank, schedule->count, schedule->elem_size);
    for (int32_t s = 0; s < schedule->scratch_count; s++)
        emit(&sink, "%s%" PRId64, s ? "," : "", schedule->scratch_elements[s]);
    if (schedule->result_offset != 0 || schedule->result_length != schedule->count)
        emit(&sink, " result=%" PRId64 ",%" PRId64, schedule->result_offset,
             schedule->result_length);
    emit(&sink, "\n");
    for (int32_t i = 0; i < schedule->op_count; i++) {
        const sched_op *op = &schedule->ops[i];
        emit(&sink, "%d ", i);
        switch (op->kind) {
        case SCHED_SEND:
        case SCHED_RECV:
            emit(&sink, "%s %s=%d tag=%d ", op->kind == SCHED_SEND ? "SEND" : "RECV",
                 op->kind == SCHED_SEND ? "to" : "from", op->u.message.peer,
                 op->u.message.tag);
            emit_region(&sink, op->buffer, op->offset, op->length);
            if (op->kind == SCHED_SEND && (op->flags & SCHED_SEND_PACED)) emit(&sink, " paced");
            break;
        default:
            emit(&sink, "%s ", op->kind == SCHED_REDUCE ? "REDUCE" : "COPY");
            emit_region(&sink, op->buffer, op->offset, op->length);
            emit(&sink, " -> ");
            emit_region(&sink, op->target_buffer, op->u.target_offset, op->length);
            if (op->kind == SCHED_REDUCE)
                emit(&sink, " order=%s",
                     op->flags == SCHED_TARGET_LEFT ? "target-left" : "source-left");
        }
        int32_t dependency_count;
        const int32_t *dependencies = sched_dependencies(schedule, i, &dependency_count);
        for (int32_t d = 0; d < dependency_count; d++)
            emit(&sink, "%s%d", d ? "," : " after ", dependencies[d]);
        emit(&sink, "\n");
    }
    return sink.length;
}

/* A tiny cursor-based parser: every failure names the line and what was expected. */
typedef struct parser {
    const char *cursor;
    int line;
    char *error;
    size_t error_size;
    int failed;
} parser;

static int parse_fail(parser *p, const char *expected) {
    if (!p->failed) {
        char message[256];
        snprintf(message, sizeof message, "schedule text, line %d: expected %s near '%.20s'",
                 p->line, expected, p->cursor);
        copy_message(p->error, p->error_size, message);
    }
    p->failed = 1;
    return 0;
}

static void skip_blanks(parser *p) {
    while (*p->cursor == ' ' || *p->cursor == '\t') p->cursor++;
}

static int accept(parser *p, const char *word) {
    skip_blanks(p);
    size_t length = strlen(word);
    if (strncmp(p->cursor, word, length) != 0) return 0;
    p->cursor += length;
    return 1;
}

static int expect(parser *p, const char *word) {
    return accept(p, word) ? 1 : parse_fail(p, word);
}

static int parse_integer(parser *p, int64_t *value, const char *what) {
    skip_blanks(p);
    if (!isdigit((unsigned char)*p->cursor) && *p->cursor != '-') return parse_fail(p, what);
    char *end;
    errno = 0;
    long long parsed = strtoll(p->cursor, &end, 10);
    if (end == p->cursor || errno == ERANGE) return parse_fail(p, what);
    p->cursor = end;
    *value = parsed;
    return 1;
}

static int parse_region(parser *p, sched_region *region) {
    skip_blanks(p);
    int64_t number;
    if (accept(p, "send")) region->buffer = SCHED_SEND_BUFFER;
    else if (accept(p, "recv")) region->buffer = SCHED_RECV_BUFFER;
    else if (accept(p, "scratch")) {
        if (!parse_integer(p, &number, "scratch buffer number")) return 0;
        if (number < 0 || number >= SCHED_MAX_SCRATCH) return parse_fail(p, "scratch number");
        region->buffer = SCHED_FIRST_SCRATCH + (int32_t)number;
    } else return parse_fail(p, "a region (send, recv or scratchN)");
    int64_t start, end;
    if (!expect(p, "[") || !parse_integer(p, &start, "region start") || !expect(p, ",") ||
        !parse_integer(p, &end, "region end") || !expect(p, ")"))
        return 0;
    /* A negative start would let end - start overflow; no buffer has one anyway. */
    if (start < 0) return parse_fail(p, "a region start >= 0");
    if (end < start) return parse_fail(p, "a region whose end is not before its start");
    region->offset = start;
    region->length = end - start;
    return 1;
}

static int parse_dependencies(parser *p, int32_t *dependencies, int32_t *count) {
    *count = 0;
    if (!accept(p, "after")) return 1;
    do {
        int64_t value;
        if (!parse_integer(p, &value, "an op index")) return 0;
        /* Checked here, before the narrowing to int32_t: -1 is SCHED_NONE, which the
         * builder skips silently, and 2^32 would wrap to op 0. */
        if (value < 0 || value > INT32_MAX) return parse_fail(p, "an op index in 0..2^31-1");
        if (*count >= 4096) return parse_fail(p, "at most 4096 dependencies");
        dependencies[(*count)++] = (int32_t)value;
    } while (accept(p, ","));
    return 1;
}

/* The builder's own checks (a peer, a dependency, the scratch limit) fail the schedule, not
 * the parser: report them with the line they are on. */
static int builder_failed(parser *p, const papcoll_schedule *schedule) {
    if (schedule->status == PAPCOLL_OK) return 0;
    if (!p->failed) {
        char message[300];
        snprintf(message, sizeof message, "schedule text, line %d: %.200s", p->line,
                 schedule->error);
        copy_message(p->error, p->error_size, message);
    }
    p->failed = 1;
    return 1;
}

int papcoll_schedule_parse(const char *text, papcoll_schedule **out, char *error,
                           size_t error_size) {
    parser p = {text, 1, error, error_size, 0};
    if (out == NULL || text == NULL) {
        copy_message(error, error_size, "schedule text or out is NULL");
        return PAPCOLL_ERR_ARGUMENT;
    }
    *out = NULL;
    int64_t ranks, rank, count, elem_size;
    if (!expect(&p, "schedule") || !expect(&p, "ranks=") ||
        !parse_integer(&p, &ranks, "ranks") || !expect(&p, "rank=") ||
        !parse_integer(&p, &rank, "rank") || !expect(&p, "count=") ||
        !parse_integer(&p, &count, "count") || !expect(&p, "elem_size=") ||
        !parse_integer(&p, &elem_size, "elem_size") || !expect(&p, "scratch="))
        return PAPCOLL_ERR_ARGUMENT;
    if (ranks < 1 || ranks > INT32_MAX || rank < 0 || rank >= ranks || count < 0 ||
        elem_size < 1 || elem_size > INT32_MAX) {
        parse_fail(&p, "ranks >= 1, 0 <= rank < ranks, count >= 0, elem_size >= 1");
        return PAPCOLL_ERR_ARGUMENT;
    }
    /* As papcoll_schedule_build requires: every buffer's size in bytes fits 64 bits, so the
     * verifier's byte counts of any region inside a buffer do too. */
    if (count > INT64_MAX / elem_size) {
        parse_fail(&p, "count x elem_size within 2^63-1 bytes");
        return PAPCOLL_ERR_ARGUMENT;
    }
    papcoll_schedule *schedule = malloc(sizeof *schedule);
    int32_t *dependencies = malloc(4096 * sizeof *dependencies);
    if (schedule == NULL || dependencies == NULL) {
        free(schedule);
        free(dependencies);
        copy_message(error, error_size, "out of memory");
        return PAPCOLL_ERR_NO_MEMORY;
    }
    sched_init(schedule, (int32_t)ranks, (int32_t)rank, count, (int32_t)elem_size);
    skip_blanks(&p);
    while (!p.failed && (isdigit((unsigned char)*p.cursor) || *p.cursor == '-')) {
        int64_t size;
        if (!parse_integer(&p, &size, "a scratch size")) break;
        /* Scratch obeys the receive buffer's rule: its size in bytes fits 64 bits. */
        if (size < 0 || size > INT64_MAX / elem_size) {
            parse_fail(&p, "a scratch size >= 0 whose bytes (x elem_size) fit 2^63-1");
            break;
        }
        sched_add_scratch(schedule, size);
        if (builder_failed(&p, schedule) || !accept(&p, ",")) break;
    }
    if (!p.failed && accept(&p, "result=")) {
        int64_t offset = 0, length = 0;
        if (parse_integer(&p, &offset, "the result offset") && expect(&p, ",") &&
            parse_integer(&p, &length, "the result length")) {
            if (offset < 0 || length < 0 || offset > count - length)
                parse_fail(&p, "a result region inside the receive buffer");
            schedule->result_offset = offset;
            schedule->result_length = length;
        }
    }
    while (!p.failed) {
        while (*p.cursor == '\n' || *p.cursor == '\r' || *p.cursor == ' ') {
            if (*p.cursor == '\n') p.line++;
            p.cursor++;
        }
        if (*p.cursor == '\0') break;
        int64_t index, peer, tag;
        sched_region source, target;
        int32_t dependency_count = 0;
        if (!parse_integer(&p, &index, "an op index")) break;
        if (index != schedule->op_count) {
            parse_fail(&p, "ops numbered 0, 1, 2, ... in order");
            break;
        }
        int kind = accept(&p, "SEND")     ? SCHED_SEND
                   : accept(&p, "RECV")   ? SCHED_RECV
                   : accept(&p, "REDUCE") ? SCHED_REDUCE
                   : accept(&p, "COPY")   ? SCHED_COPY
                                          : -1;
        if (kind < 0) {
            parse_fail(&p, "SEND, RECV, REDUCE or COPY");
            break;
        }
        if (kind == SCHED_SEND || kind == SCHED_RECV) {
            if (!expect(&p, kind == SCHED_SEND ? "to=" : "from=") ||
                !parse_integer(&p, &peer, "a peer rank") || !expect(&p, "tag=") ||
                !parse_integer(&p, &tag, "a tag") || !parse_region(&p, &source))
                break;
            int paced = kind == SCHED_SEND && accept(&p, "paced");
            if (!parse_dependencies(&p, dependencies, &dependency_count)) break;
            if (peer < 0 || peer > INT32_MAX || tag < 0 || tag > INT32_MAX) {
                parse_fail(&p, "peer and tag within 0 .. 2^31-1");
                break;
            }
            if (kind == SCHED_SEND) {
                int32_t sent = sched_send(schedule, (int32_t)peer, (int32_t)tag, source,
                                          dependencies, dependency_count);
                if (paced) sched_pace(schedule, sent);
            }
            else
                sched_recv(schedule, (int32_t)peer, (int32_t)tag, source, dependencies,
                           dependency_count);
        } else {
            int order = SCHED_SOURCE_LEFT;
            if (!parse_region(&p, &source) || !expect(&p, "->") || !parse_region(&p, &target))
                break;
            if (kind == SCHED_REDUCE && accept(&p, "order=")) {
                if (accept(&p, "target-left")) order = SCHED_TARGET_LEFT;
                else if (!expect(&p, "source-left")) break;
            }
            if (!parse_dependencies(&p, dependencies, &dependency_count)) break;
            if (kind == SCHED_REDUCE)
                sched_reduce(schedule, source, target, order, dependencies, dependency_count);
            else
                sched_copy(schedule, source, target, dependencies, dependency_count);
        }
        builder_failed(&p, schedule);
        skip_blanks(&p);
        if (!p.failed && *p.cursor != '\n' && *p.cursor != '\0' && *p.cursor != '\r')
            parse_fail(&p, "the end of the line");
    }
    free(dependencies);
    if (p.failed) {
        int status = schedule->status != PAPCOLL_OK ? schedule->status : PAPCOLL_ERR_ARGUMENT;
        papcoll_schedule_free(schedule);
        return status;
    }
    *out = schedule;
    return PAPCOLL_OK;
}
