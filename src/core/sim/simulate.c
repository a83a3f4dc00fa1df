/* simulate.c - the discrete-event simulator (papcoll_core.h, papcoll_simulate): the very
 * schedules the MPI executor runs, for all P ranks at once, timed by a LogGP-family model
 * on a crossbar (seed 004 S6; LogGOPSim's engine is the model: one event queue plus the
 * next-free time of every resource).
 *
 * Resources per rank: the CPU (copies, reductions, per-message overhead o), the NIC's send
 * side and its receive side. An op becomes ready when the ops it waits for are done (or at
 * the rank's arrival for the first ones); events are taken in time order (ties in the
 * order they were made, so runs are deterministic):
 *   COPY / REDUCE  on the CPU: start = max(ready, CPU free), length x elem x cost per byte.
 *   SEND           o on the CPU, then the message leaves the NIC at max(then, NIC free),
 *                  takes bytes x G there (the NIC is then busy at least g), and arrives L
 *                  later; the receiving NIC also spends bytes x G on it, one message at a
 *                  time. Eager (bytes <= eager limit): leaves at once; the SEND completes
 *                  when its bytes are out. Rendezvous: leaves only once the RECV is posted;
 *                  the SEND completes when it has arrived.
 *   RECV           posted when ready; completes at max(arrival, posted), plus o on the CPU.
 * Messages match per (source, destination, tag) in order, as in MPI. Empty messages cost
 * nothing (both sides skip them, as the executor does).
 *
 * Hockney on a crossbar gives the textbook closed forms exactly; tests/c/test_simulator.c
 * checks ring, recursive doubling and Rabenseifner against them.
 *
 * Not yet here (issue 5 goes on): topologies with shared links, noise, timelines, GOAL
 * export. Choices: the receive-side NIC serialises messages FIFO in the order they are
 * matched; the CPU is booked in event order, so an op that became ready earlier is never
 * overtaken by a later one.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../schedule.h"

typedef struct event {
    double time;
    int64_t sequence; /* tie-break: the order events were made */
    int32_t rank;
    int32_t op;
    int32_t kind;     /* enum event_kind */
} event;

enum event_kind {
    EVENT_READY = 0,    /* the op's dependencies are done: start it */
    EVENT_COMPLETE = 1, /* the op is done */
    EVENT_ARRIVED = 2,  /* a RECV's message is in: charge the CPU overhead o, then complete */
};

typedef struct event_queue {
    event *heap;
    int64_t size, capacity, made;
} event_queue;

static int earlier(const event *a, const event *b) {
    return a->time < b->time || (a->time == b->time && a->sequence < b->sequence);
}

static int queue_push(event_queue *q, double time, int32_t rank, int32_t op, int32_t kind) {
    if (q->size == q->capacity) {
        int64_t capacity = q->capacity ? 2 * q->capacity : 1024;
        event *larger = realloc(q->heap, (size_t)capacity * sizeof *larger);
        if (larger == NULL) return 0;
        q->heap = larger;
        q->capacity = capacity;
    }
    event e = {time, q->made++, rank, op, kind};
    int64_t i = q->size++;
    while (i > 0 && earlier(&e, &q->heap[(i - 1) / 2])) {
        q->heap[i] = q->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    q->heap[i] = e;
    return 1;
}

static event queue_pop(event_queue *q) {
    event top = q->heap[0], last = q->heap[--q->size];
    int64_t i = 0;
    for (;;) {
        int64_t child = 2 * i + 1;
        if (child >= q->size) break;
        if (child + 1 < q->size && earlier(&q->heap[child + 1], &q->heap[child])) child++;
        if (!earlier(&q->heap[child], &last)) break;
        q->heap[i] = q->heap[child];
        i = child;
    }
    if (q->size > 0) q->heap[i] = last;
    return top;
}

/* A message side waiting for its partner on one (source, destination, tag) channel. */
typedef struct waiting {
    double time;    /* SEND: when it arrives (eager) or is offered (rendezvous); RECV: posted */
    int32_t rank, op;
    int32_t next;   /* next in the channel's FIFO, -1 at the end */
    int32_t eager;
} waiting;

typedef struct channel {
    int64_t key;    /* -1: empty slot */
    int32_t sends_head, sends_tail, receives_head, receives_tail;
} channel;

typedef struct simulation {
    const papcoll_sim_model *model;
    int32_t ranks;
    int32_t elem_size;
    papcoll_schedule **schedules;
    int32_t **pending, **dependent_first, **dependents;
    double *cpu_free, *send_nic_free, *receive_nic_free, *finish;
    event_queue queue;
    channel *channels;
    int64_t channel_capacity, channel_count;
    waiting *pool;
    int32_t pool_size, pool_capacity, pool_free;
    int64_t remaining;
    char *error;
    size_t error_size;
} simulation;

static int fail(simulation *s, int code, const char *format, ...) {
    if (s->error && s->error_size) {
        va_list arguments;
        va_start(arguments, format);
        vsnprintf(s->error, s->error_size, format, arguments);
        va_end(arguments);
    }
    return code;
}

static uint64_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

/* The channel of (source, destination, tag), made on first use. NULL: out of memory. */
static channel *channel_of(simulation *s, int32_t source, int32_t destination, int32_t tag) {
    if (2 * (s->channel_count + 1) > s->channel_capacity) {
        int64_t capacity = s->channel_capacity ? 2 * s->channel_capacity : 4096;
        channel *table = malloc((size_t)capacity * sizeof *table);
        if (table == NULL) return NULL;
        for (int64_t i = 0; i < capacity; i++) table[i].key = -1;
        for (int64_t i = 0; i < s->channel_capacity; i++) {
            if (s->channels[i].key < 0) continue;
            int64_t slot = (int64_t)(mix((uint64_t)s->channels[i].key) & (uint64_t)(capacity - 1));
            while (table[slot].key >= 0) slot = (slot + 1) & (capacity - 1);
            table[slot] = s->channels[i];
        }
        free(s->channels);
        s->channels = table;
        s->channel_capacity = capacity;
    }
    int64_t key = ((int64_t)source << 36) | ((int64_t)destination << 15) | tag;
    int64_t slot = (int64_t)(mix((uint64_t)key) & (uint64_t)(s->channel_capacity - 1));
    while (s->channels[slot].key >= 0 && s->channels[slot].key != key)
        slot = (slot + 1) & (s->channel_capacity - 1);
    channel *c = &s->channels[slot];
    if (c->key < 0) {
        c->key = key;
        c->sends_head = c->sends_tail = c->receives_head = c->receives_tail = -1;
        s->channel_count++;
    }
    return c;
}

static int32_t pool_take(simulation *s) {
    if (s->pool_free >= 0) {
        int32_t index = s->pool_free;
        s->pool_free = s->pool[index].next;
        return index;
    }
    if (s->pool_size == s->pool_capacity) {
        int32_t capacity = s->pool_capacity ? 2 * s->pool_capacity : 1024;
        waiting *larger = realloc(s->pool, (size_t)capacity * sizeof *larger);
        if (larger == NULL) return -1;
        s->pool = larger;
        s->pool_capacity = capacity;
    }
    return s->pool_size++;
}

static void enqueue(simulation *s, int32_t *head, int32_t *tail, int32_t index) {
    s->pool[index].next = -1;
    if (*tail >= 0) s->pool[*tail].next = index;
    else *head = index;
    *tail = index;
}

static int32_t dequeue(simulation *s, int32_t *head, int32_t *tail) {
    int32_t index = *head;
    *head = s->pool[index].next;
    if (*head < 0) *tail = -1;
    return index;
}

static double max2(double a, double b) { return a > b ? a : b; }

/* The message leaves `source` no earlier than `ready`; returns when it has arrived. */
static double transfer(simulation *s, int32_t source, int32_t destination, double ready,
                       double bytes, double *out_of_sender) {
    const papcoll_sim_model *m = s->model;
    double leaves = max2(ready, s->send_nic_free[source]);
    double wire = bytes * m->seconds_per_byte;
    *out_of_sender = leaves + wire;
    s->send_nic_free[source] = max2(leaves + wire, leaves + m->gap);
    double arrives = max2(leaves + wire + m->latency, s->receive_nic_free[destination] + wire);
    s->receive_nic_free[destination] = arrives;
    return arrives;
}

static int64_t message_bytes(const simulation *s, const sched_op *op) {
    return op->length * (int64_t)s->elem_size;
}

static int is_eager(const simulation *s, int64_t bytes) {
    return s->model->eager_limit_bytes < 0 || bytes <= s->model->eager_limit_bytes;
}

/* A RECV whose message arrives at `arrival`, posted at `posted`: it completes then, after
 * the CPU overhead o, which is booked when that time comes (booking the CPU now, for a
 * time in the future, would hold back work that is ready before). */
static int complete_receive(simulation *s, int32_t rank, int32_t op, double arrival,
                            double posted) {
    return queue_push(&s->queue, max2(arrival, posted), rank, op,
                      s->model->overhead > 0 ? EVENT_ARRIVED : EVENT_COMPLETE);
}

/* Pairs the heads of a channel's sends and receives while both exist. */
static int match(simulation *s, channel *c, int32_t source, int32_t destination) {
    while (c->sends_head >= 0 && c->receives_head >= 0) {
        waiting send = s->pool[dequeue(s, &c->sends_head, &c->sends_tail)];
        waiting receive = s->pool[dequeue(s, &c->receives_head, &c->receives_tail)];
        if (send.eager) {
            if (!complete_receive(s, receive.rank, receive.op, send.time, receive.time))
                return 0;
        } else {
            double out_of_sender;
            const sched_op *op = &s->schedules[source]->ops[send.op];
            double arrives = transfer(s, source, destination, max2(send.time, receive.time),
                                      (double)message_bytes(s, op), &out_of_sender);
            if (!queue_push(&s->queue, arrives, send.rank, send.op, EVENT_COMPLETE) ||
                !complete_receive(s, receive.rank, receive.op, arrives, receive.time))
                return 0;
        }
    }
    return 1;
}

static int start(simulation *s, int32_t rank, int32_t index, double ready) {
    const papcoll_sim_model *m = s->model;
    const sched_op *op = &s->schedules[rank]->ops[index];
    double bytes = (double)op->length * s->elem_size;
    if (op->kind == SCHED_COPY || op->kind == SCHED_REDUCE) {
        double cost = op->kind == SCHED_COPY ? m->copy_seconds_per_byte : m->reduce_seconds_per_byte;
        /* a copy onto itself (MPI_IN_PLACE) moves nothing */
        if (op->kind == SCHED_COPY && op->buffer == op->target_buffer &&
            op->offset == op->u.target_offset)
            cost = 0;
        double begins = max2(ready, s->cpu_free[rank]);
        s->cpu_free[rank] = begins + bytes * cost;
        return queue_push(&s->queue, s->cpu_free[rank], rank, index, EVENT_COMPLETE);
    }
    if (op->length == 0) return queue_push(&s->queue, ready, rank, index, EVENT_COMPLETE);
    int32_t peer = op->u.message.peer;
    if (op->kind == SCHED_SEND) {
        double offered = max2(ready, s->cpu_free[rank]) + m->overhead;
        if (m->overhead > 0) s->cpu_free[rank] = offered;
        channel *c = channel_of(s, rank, peer, op->u.message.tag);
        int32_t entry = pool_take(s);
        if (c == NULL || entry < 0) return 0;
        int eager = is_eager(s, message_bytes(s, op));
        double time = offered;
        if (eager) {
            double out_of_sender;
            time = transfer(s, rank, peer, offered, bytes, &out_of_sender);
            if (!queue_push(&s->queue, out_of_sender, rank, index, EVENT_COMPLETE)) return 0;
        }
        s->pool[entry] = (waiting){time, rank, index, -1, eager};
        enqueue(s, &c->sends_head, &c->sends_tail, entry);
        return match(s, c, rank, peer);
    }
    channel *c = channel_of(s, peer, rank, op->u.message.tag);
    int32_t entry = pool_take(s);
    if (c == NULL || entry < 0) return 0;
    s->pool[entry] = (waiting){ready, rank, index, -1, 0};
    enqueue(s, &c->receives_head, &c->receives_tail, entry);
    return match(s, c, peer, rank);
}

static void release(simulation *s) {
    for (int32_t r = 0; r < s->ranks; r++) {
        if (s->schedules) papcoll_schedule_free(s->schedules[r]);
        if (s->pending) free(s->pending[r]);
        if (s->dependent_first) free(s->dependent_first[r]);
        if (s->dependents) free(s->dependents[r]);
    }
    free(s->schedules);
    free(s->pending);
    free(s->dependent_first);
    free(s->dependents);
    free(s->cpu_free);
    free(s->send_nic_free);
    free(s->receive_nic_free);
    free(s->finish);
    free(s->queue.heap);
    free(s->channels);
    free(s->pool);
}

static int check_model(const papcoll_sim_model *m, char *error, size_t error_size) {
    const double values[] = {m->latency, m->overhead, m->gap, m->seconds_per_byte,
                             m->reduce_seconds_per_byte, m->copy_seconds_per_byte};
    const char *names[] = {"latency", "overhead", "gap", "seconds_per_byte",
                           "reduce_seconds_per_byte", "copy_seconds_per_byte"};
    for (int i = 0; i < 6; i++)
        if (!(values[i] >= 0) || !isfinite(values[i])) {
            if (error && error_size)
                snprintf(error, error_size, "model parameter %s must be a finite number >= 0",
                         names[i]);
            return 0;
        }
    return 1;
}

int papcoll_simulate(const char *algorithm, int32_t ranks, int64_t count, int32_t elem_size,
                     const papcoll_context *context, const papcoll_sim_model *model,
                     const double *arrivals, double *finish, papcoll_sim_result *result,
                     char *error, size_t error_size) {
    if (error && error_size) error[0] = '\0';
    if (model == NULL || result == NULL) {
        if (error && error_size) snprintf(error, error_size, "model and result are required");
        return PAPCOLL_ERR_ARGUMENT;
    }
    if (!check_model(model, error, error_size)) return PAPCOLL_ERR_ARGUMENT;
    if (ranks < 1) {
        if (error && error_size) snprintf(error, error_size, "the number of ranks must be >= 1");
        return PAPCOLL_ERR_ARGUMENT;
    }
    for (int32_t r = 0; arrivals && r < ranks; r++)
        if (!isfinite(arrivals[r])) {
            if (error && error_size)
                snprintf(error, error_size, "the arrival time of rank %d is not finite", r);
            return PAPCOLL_ERR_ARGUMENT;
        }
    simulation s;
    memset(&s, 0, sizeof s);
    s.model = model;
    s.ranks = ranks;
    s.elem_size = elem_size;
    s.pool_free = -1;
    s.error = error;
    s.error_size = error_size;
    size_t n = (size_t)ranks;
    s.schedules = calloc(n, sizeof *s.schedules);
    s.pending = calloc(n, sizeof *s.pending);
    s.dependent_first = calloc(n, sizeof *s.dependent_first);
    s.dependents = calloc(n, sizeof *s.dependents);
    s.cpu_free = calloc(n, sizeof(double));
    s.send_nic_free = calloc(n, sizeof(double));
    s.receive_nic_free = calloc(n, sizeof(double));
    s.finish = calloc(n, sizeof(double));
    int status = PAPCOLL_OK;
    if (!s.schedules || !s.pending || !s.dependent_first || !s.dependents || !s.cpu_free ||
        !s.send_nic_free || !s.receive_nic_free || !s.finish) {
        release(&s);
        return fail(&s, PAPCOLL_ERR_NO_MEMORY, "out of memory for %d ranks", ranks);
    }
    for (int32_t r = 0; r < ranks && status == PAPCOLL_OK; r++) {
        status = papcoll_schedule_build(algorithm, ranks, r, count, elem_size, context,
                                        &s.schedules[r], error, error_size);
        if (status != PAPCOLL_OK) break;
        const papcoll_schedule *schedule = s.schedules[r];
        size_t ops = (size_t)schedule->op_count;
        s.pending[r] = malloc((ops + 1) * sizeof(int32_t));
        s.dependent_first[r] = malloc((ops + 2) * sizeof(int32_t));
        s.dependents[r] = malloc(((size_t)schedule->dependency_count + 1) * sizeof(int32_t));
        if (!s.pending[r] || !s.dependent_first[r] || !s.dependents[r] ||
            !sched_dependents(schedule, s.pending[r], s.dependent_first[r], s.dependents[r])) {
            status = fail(&s, PAPCOLL_ERR_NO_MEMORY, "out of memory for the schedules");
            break;
        }
        s.remaining += schedule->op_count;
        double arrival = arrivals ? arrivals[r] : 0;
        s.cpu_free[r] = s.send_nic_free[r] = s.receive_nic_free[r] = arrival;
        s.finish[r] = arrival;
        for (int32_t i = 0; i < schedule->op_count; i++)
            if (s.pending[r][i] == 0 && !queue_push(&s.queue, arrival, r, i, EVENT_READY))
                status = fail(&s, PAPCOLL_ERR_NO_MEMORY, "out of memory for events");
    }
    result->operations = s.remaining;
    int64_t events = 0;
    while (status == PAPCOLL_OK && s.queue.size > 0) {
        event e = queue_pop(&s.queue);
        events++;
        if (e.kind == EVENT_READY) {
            if (!start(&s, e.rank, e.op, e.time))
                status = fail(&s, PAPCOLL_ERR_NO_MEMORY, "out of memory simulating");
            continue;
        }
        if (e.kind == EVENT_ARRIVED) {
            double done = max2(e.time, s.cpu_free[e.rank]) + model->overhead;
            s.cpu_free[e.rank] = done;
            if (!queue_push(&s.queue, done, e.rank, e.op, EVENT_COMPLETE))
                status = fail(&s, PAPCOLL_ERR_NO_MEMORY, "out of memory for events");
            continue;
        }
        s.remaining--;
        if (e.time > s.finish[e.rank]) s.finish[e.rank] = e.time;
        for (int32_t d = s.dependent_first[e.rank][e.op]; d < s.dependent_first[e.rank][e.op + 1];
             d++) {
            int32_t dependent = s.dependents[e.rank][d];
            /* ready now, at the current time: start it at once instead of queueing a READY
             * event for this very instant (halves the events; same times) */
            if (--s.pending[e.rank][dependent] == 0 && !start(&s, e.rank, dependent, e.time))
                status = fail(&s, PAPCOLL_ERR_NO_MEMORY, "out of memory simulating");
        }
    }
    if (status == PAPCOLL_OK && s.remaining > 0)
        status = fail(&s, PAPCOLL_ERR_ARGUMENT,
                      "deadlock: %lld operations never ran (a message waits for a partner "
                      "that never comes)",
                      (long long)s.remaining);
    if (status == PAPCOLL_OK) {
        double first = INFINITY, last = -INFINITY, sum = 0, longest = 0;
        for (int32_t r = 0; r < ranks; r++) {
            double arrival = arrivals ? arrivals[r] : 0;
            double elapsed = s.finish[r] - arrival;
            sum += elapsed;
            longest = max2(longest, elapsed);
            first = arrival < first ? arrival : first;
            last = max2(last, s.finish[r]);
            if (finish) finish[r] = s.finish[r];
        }
        result->average_elapsed = sum / ranks;
        result->max_elapsed = longest;
        result->makespan = last - first;
        result->events = events;
    }
    release(&s);
    return status;
}
