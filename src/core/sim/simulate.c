/* simulate.c - the discrete-event simulator (papcoll_core.h, papcoll_simulate): the very
 * schedules the MPI executor runs, for all P ranks at once, timed by a LogGP-family model
 * on a crossbar or a tree of switches (Ruefenacht et al. 2017, Sect. 6; LogGOPSim's engine is the
 * model: one event queue plus the next-free time of every resource).
 *
 * Resources: per rank the CPU (copies, reductions, per-message overheads), the NIC's send
 * side and its receive side; with a topology, also both directions of every link. An op
 * becomes ready when the ops it waits for are done (or at the rank's arrival for the first
 * ones); events are taken in time order, ties in the order they were made, so runs are
 * deterministic:
 *   COPY / REDUCE  on the CPU: start = max(ready, CPU free), length x elem x cost per byte.
 *   SEND           o (overhead) on the CPU, then the message leaves at max(then, NIC free), takes
 *                  bytes x G on the wire (the NIC is then busy at least g) and arrives L
 *                  later; messages waiting for the NIC leave in the order offered, and
 *                  book their receiver only when they leave (below: "the sender's NIC").
 *                  Eager (bytes <= eager limit): offered at once; the SEND completes
 *                  when its bytes are out. Rendezvous (larger, or synchronous as the MPI
 *                  executor sends it: MPI_Issend, sched_send_is_synchronous): offered only
 *                  once the RECV is posted; the SEND completes when it has arrived.
 *   RECV           posted when ready; completes at max(arrival, posted), plus o_r
 *                  (receive_overhead) on the CPU.
 * options->own_work: a rank's schedule starts that long after its arrival, its CPU busy:
 * the MPI library's own work before the algorithm (its monitor receives the others'
 * predictions or a period's messages, 63 o_r at P = 64: 0.3 ms on ethernet-1g).
 * Messages match per (source, destination, tag) in order, as in MPI: each such channel
 * keeps a FIFO of posted receives and one of unexpected sends, so a match is O(1)
 * (matching.c). Empty messages cost nothing (both sides skip them, as the executor does).
 *
 * Where the bytes go (crossbar, or a tree of switches, first come first served on the whole
 * path): transfer.c.
 *
 * Noise (options->noise_mean): every op starts late by an exponential draw of that mean
 * from a generator seeded by noise_seed, drawn in event order, so a seed replays exactly.
 *
 * Engine layout, for speed at P = 2^20: all ranks' ops live in one array of 32-byte records
 * holding what the engine needs (bytes, peer, tag, pending count, where the dependents
 * start), so one event touches one or two cache lines. The schedules are converted rank by
 * rank and freed at once (convert.c). The model and topology are checked before (checks.c);
 * this file is the run loop: one event queue plus the next-free time of every resource.
 * The event queue (event_queue.h) keeps thousands of events at one instant for the price
 * of one heap entry.
 *
 * Hockney on a crossbar gives the textbook closed forms exactly; tests/python/test_sim.py
 * checks ring, recursive doubling and Rabenseifner against them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../message.h"
#include "../schedule.h"
#include "engine.h"
#include "event_queue.h"
#include "mix.h"

/* ---- what the events mean (the queue, event_queue.c, only orders them) ------------------ */

enum event_kind {
    EVENT_READY = 0,    /* the op's dependencies are done: start it */
    EVENT_COMPLETE = 1, /* the op is done */
    EVENT_ARRIVED = 2,  /* a RECV's message is in: charge the CPU overhead o, then complete */
    EVENT_NIC_FREE = 3, /* the NIC of the SEND's rank is free: its oldest waiting one leaves */
};

/* ---- the simulation ---------------------------------------------------------------------- */

/* Wall-clock seconds (C11), for result->build_seconds and run_seconds. */
static double wall_seconds(void) {
    struct timespec now;
    if (timespec_get(&now, TIME_UTC) != TIME_UTC) return 0;
    return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

static double noise(simulation *s) {
    if (s->noise_mean <= 0) return 0;
    s->noise_state += 0x9e3779b97f4a7c15ULL;
    double uniform = (double)(mix64(s->noise_state) >> 11) * 0x1.0p-53;
    return -s->noise_mean * log1p(-uniform);
}

static int is_eager(const simulation *s, double bytes) {
    return s->model->eager_limit_bytes < 0 || bytes <= (double)s->model->eager_limit_bytes;
}

/* A RECV whose message arrives at `arrival`, posted at `posted`: it completes then, after
 * the receive overhead o_r, which is booked when that time comes (booking the CPU now, for a
 * time in the future, would hold back work that is ready before). */
static int complete_receive(simulation *s, const message_side *receive, double arrival) {
    return event_queue_push(&s->queue, max2(arrival, receive->time), receive->op,
                      s->model->receive_overhead > 0 ? EVENT_ARRIVED : EVENT_COMPLETE);
}

/* ---- the sender's NIC: messages leave one after another, in the order offered, and book
 * their receiver when they leave ----------------------------------------------------------
 *
 * Why a queue. transfer() books the receiver's NIC (on a crossbar) until the message has
 * arrived there. Booked when offered, a message that leaves its sender's NIC third, behind
 * two others, held its receiver ahead of another sender's first message, which then
 * waited behind it while the receiver idled: leaders that each post their partial to every
 * other site at once took 5 messages' time where 3 do (pap_hierarchical, P = 16, 4 sites,
 * 4 MiB; SimGrid's SMPI, which shares the links among all of them, needs the 3:
 * docs/smpi.md). So a message offered while its sender's NIC is busy, or behind others,
 * waits in its sender's queue and takes the receiver's NIC only when it leaves. */

static int pair(simulation *s, int32_t send_index, int32_t receive_index);

/* A SEND's message is offered to MPI: an eager one meets its RECV once it has arrived, a
 * rendezvous one at once (its bytes move when both are there: pair). */
static int match_send(simulation *s, int32_t entry) {
    const sim_op *op = &s->ops[s->sides[entry].op];
    int32_t receive = sim_side_take_oldest(s, &s->channels[op->channel].posted);
    if (receive < 0) {
        s->sides[entry].sequence = s->unexpected_sends++;
        sim_side_append(s, &s->channels[op->channel].unexpected, entry);
        return 1;
    }
    return pair(s, entry, receive);
}

/* The message of SEND side `entry` leaves its sender's NIC (no earlier than its time). */
static int leave(simulation *s, int32_t entry) {
    message_side send = s->sides[entry];
    const sim_op *op = &s->ops[send.op];
    double out_of_sender;
    double arrives = transfer(s, send.source, op->peer, send.time, op->bytes, &out_of_sender);
    if (send.eager) { /* complete once out; arrives, and meets its RECV, later */
        if (!event_queue_push(&s->queue, out_of_sender, send.op, EVENT_COMPLETE)) return 0;
        s->sides[entry].time = arrives;
        return match_send(s, entry);
    }
    message_side receive = s->sides[send.partner];
    sim_side_free(s, entry);
    sim_side_free(s, send.partner);
    return event_queue_push(&s->queue, arrives, send.op, EVENT_COMPLETE) &&
           complete_receive(s, &receive, arrives);
}

/* The message of SEND side `entry` may leave from its time on: at once where the sender's
 * NIC is free and nothing waits before it, else behind the others. */
static int offer_to_nic(simulation *s, int32_t entry) {
    int32_t rank = s->sides[entry].source;
    side_list *queue = &s->nic_queue[rank];
    double free_at = s->rank[rank].send_nic_free;
    if (queue->head < 0 && free_at <= s->sides[entry].time) return leave(s, entry);
    int idle = queue->head < 0;
    sim_side_append(s, queue, entry);
    return !idle || event_queue_push(&s->queue, max2(free_at, s->sides[entry].time),
                                     s->sides[entry].op, EVENT_NIC_FREE);
}

/* EVENT_NIC_FREE at `time` for the rank of SEND `op`: its oldest waiting message leaves,
 * and the next one, if any, is called for when the NIC is free again. */
static int nic_free(simulation *s, uint32_t op, double time) {
    int32_t rank = s->ops[op].rank;
    side_list *queue = &s->nic_queue[rank];
    int32_t entry = sim_side_take_oldest(s, queue);
    s->sides[entry].time = max2(s->sides[entry].time, time);
    if (!leave(s, entry)) return 0;
    int32_t next = queue->head;
    return next < 0 ||
           event_queue_push(&s->queue, max2(s->rank[rank].send_nic_free, s->sides[next].time),
                            s->sides[next].op, EVENT_NIC_FREE);
}

/* A SEND and its RECV have met: an eager message has arrived, so the RECV completes; a
 * rendezvous one goes to its sender's NIC, no earlier than both were posted. */
static int pair(simulation *s, int32_t send_index, int32_t receive_index) {
    message_side *send = &s->sides[send_index];
    if (!send->eager) {
        send->time = max2(send->time, s->sides[receive_index].time);
        send->partner = receive_index;
        return offer_to_nic(s, send_index);
    }
    message_side receive = s->sides[receive_index];
    double arrived = send->time;
    sim_side_free(s, send_index);
    sim_side_free(s, receive_index);
    return complete_receive(s, &receive, arrived);
}

static int start(simulation *s, uint32_t index, double ready) {
    const papcoll_sim_model *m = s->model;
    const sim_op *op = &s->ops[index];
    int32_t rank = op->rank;
    ready += noise(s);
    if (s->op_start) s->op_start[index] = ready;
    if (op->kind == SCHED_COPY || op->kind == SCHED_REDUCE) {
        double cost = op->kind == SCHED_COPY ? m->copy_seconds_per_byte : m->reduce_seconds_per_byte;
        double begins = max2(ready, s->rank[rank].cpu_free);
        if (s->op_start) s->op_start[index] = begins;
        s->rank[rank].cpu_free = begins + op->bytes * cost;
        return event_queue_push(&s->queue, s->rank[rank].cpu_free, index, EVENT_COMPLETE);
    }
    if (op->bytes == 0) return event_queue_push(&s->queue, ready, index, EVENT_COMPLETE);
    int32_t peer = op->peer, entry = sim_side_take(s);
    if (entry < 0) return 0;
    if (op->kind == SCHED_SEND) {
        double offered = max2(ready, s->rank[rank].cpu_free) + m->overhead;
        if (m->overhead > 0) s->rank[rank].cpu_free = offered;
        int eager = is_eager(s, op->bytes) && !op->synchronous;
        s->sides[entry] = (message_side){offered, rank, 0, index, -1, eager, -1};
        return eager ? offer_to_nic(s, entry) : match_send(s, entry);
    }
    s->sides[entry] = (message_side){ready, peer, 0, index, -1, 0, -1};
    int32_t send = sim_side_take_oldest(s, &s->channels[op->channel].unexpected);
    if (send < 0) {
        sim_side_append(s, &s->channels[op->channel].posted, entry);
        return 1;
    }
    return pair(s, send, entry);
}

/* Op `index` is done at `time`: start the ops that waited only for it. */
static int complete(simulation *s, uint32_t index, double time) {
    int32_t rank = s->ops[index].rank;
    s->remaining--;
    if (time > s->rank[rank].finish) s->rank[rank].finish = time;
    if (s->op_end) s->op_end[index] = time;
    for (uint32_t d = s->ops[index].dependents; d < s->ops[index + 1].dependents; d++) {
        uint32_t dependent = s->dependents[d];
        /* ready now, at the current time: start it at once instead of queueing a READY
         * event for this very instant (halves the events; same times) */
        if (--s->ops[dependent].pending == 0 && !start(s, dependent, time)) return 0;
    }
    return 1;
}

static void release(simulation *s) {
    free(s->ops);
    free(s->first_op);
    free(s->dependents);
    free(s->rank);
    free(s->channels);
    free(s->channel_slots);
    free(s->sides);
    free(s->nic_queue);
    event_queue_release(&s->queue);
    free(s->depth);
    free(s->link_free);
    free(s->send_bucket_full);
    free(s->receive_bucket_full);
    free(s->op_start);
    free(s->op_end);
}

static int64_t engine_memory(const simulation *s) {
    int64_t per_rank = (int64_t)s->ranks *
                       (int64_t)(sizeof(int64_t) + sizeof(rank_state) + sizeof(side_list));
    return (int64_t)s->op_capacity * (int64_t)sizeof(sim_op) +
           (int64_t)s->dependent_capacity * (int64_t)sizeof(uint32_t) + per_rank +
           (int64_t)s->side_capacity * (int64_t)sizeof(message_side) +
           (int64_t)s->channel_capacity * (int64_t)sizeof(channel) +
           event_queue_memory(&s->queue);
}

static int fill_timeline(simulation *s, papcoll_sim_result *result) {
    result->timeline = malloc((size_t)(s->op_count ? s->op_count : 1) * sizeof(papcoll_sim_span));
    if (result->timeline == NULL)
        return sim_fail(s, PAPCOLL_ERR_NO_MEMORY, "out of memory for the timeline");
    for (int32_t r = 0; r < s->ranks; r++)
        for (int64_t g = s->first_op[r]; g < s->first_op[r + 1]; g++) {
            const sim_op *op = &s->ops[g];
            int message = op->kind == SCHED_SEND || op->kind == SCHED_RECV;
            result->timeline[g] = (papcoll_sim_span){r, (int32_t)(g - s->first_op[r]), op->kind,
                                                     message ? op->peer : -1, (int64_t)op->bytes,
                                                     s->op_start[g], s->op_end[g]};
        }
    result->timeline_count = s->op_count;
    return PAPCOLL_OK;
}

void papcoll_sim_result_release(papcoll_sim_result *result) {
    if (result == NULL) return;
    free(result->timeline);
    free(result->link_bytes);
    result->timeline = NULL;
    result->link_bytes = NULL;
    result->timeline_count = 0;
    result->link_count = 0;
}

int papcoll_simulate(const char *algorithm, int32_t ranks, int64_t count, int32_t elem_size,
                     const papcoll_context *context, const papcoll_sim_model *model,
                     const papcoll_sim_options *options, const double *arrivals,
                     double *finish, papcoll_sim_result *result, char *error,
                     size_t error_size) {
    if (error && error_size) error[0] = '\0';
    simulation s;
    memset(&s, 0, sizeof s);
    s.error = error;
    s.error_size = error_size;
    if (model == NULL || result == NULL)
        return sim_fail(&s, PAPCOLL_ERR_ARGUMENT, "model and result are required");
    memset(result, 0, sizeof *result);
    papcoll_sim_options none;
    memset(&none, 0, sizeof none);
    if (options == NULL) options = &none;
    if (!sim_check_model(model, error, error_size) ||
        !sim_check_number("noise_mean", options->noise_mean, error, error_size))
        return PAPCOLL_ERR_ARGUMENT;
    if (ranks < 1) return sim_fail(&s, PAPCOLL_ERR_ARGUMENT, "the number of ranks must be >= 1");
    for (int32_t r = 0; arrivals && r < ranks; r++)
        if (!isfinite(arrivals[r]))
            return sim_fail(&s, PAPCOLL_ERR_ARGUMENT, "the arrival time of rank %d is not finite",
                            r);
    for (int32_t r = 0; options->own_work && r < ranks; r++)
        if (!isfinite(options->own_work[r]) || options->own_work[r] < 0)
            return sim_fail(&s, PAPCOLL_ERR_ARGUMENT, "the own work of rank %d must be a finite "
                            "number of seconds >= 0, not %g", r, options->own_work[r]);
    s.model = model;
    s.topology = options->topology;
    s.ranks = ranks;
    s.side_free = -1;
    s.noise_mean = options->noise_mean;
    s.noise_state = options->noise_seed;
    event_queue_init(&s.queue);
    size_t n = (size_t)ranks;
    s.first_op = calloc(n + 1, sizeof(int64_t));
    s.rank = calloc(n, sizeof(rank_state));
    s.nic_queue = malloc(n * sizeof(side_list));
    for (size_t r = 0; s.nic_queue != NULL && r < n; r++) s.nic_queue[r] = (side_list){-1, -1};
    int status = PAPCOLL_OK;
    if (!s.first_op || !s.rank || !s.nic_queue) {
        release(&s);
        return sim_fail(&s, PAPCOLL_ERR_NO_MEMORY, "out of memory for %d ranks", ranks);
    }
    if (model->burst_bytes > 0) {
        if (s.topology) {
            release(&s);
            return sim_fail(&s, PAPCOLL_ERR_ARGUMENT, "model parameter burst_bytes (token "
                            "buckets) is simulated on a crossbar only, not on a topology");
        }
        s.send_bucket_full = calloc(n, sizeof(double));
        s.receive_bucket_full = calloc(n, sizeof(double));
        if (!s.send_bucket_full || !s.receive_bucket_full) {
            release(&s);
            return sim_fail(&s, PAPCOLL_ERR_NO_MEMORY, "out of memory for %d ranks", ranks);
        }
    }
    if (s.topology) {
        int32_t vertices = s.topology->vertex_count > 0 ? s.topology->vertex_count : 1;
        s.depth = calloc((size_t)vertices, sizeof(int32_t));
        s.link_free = calloc(2 * (size_t)vertices, sizeof(double));
        result->link_bytes = calloc(2 * (size_t)vertices, sizeof(int64_t));
        s.link_bytes = result->link_bytes;
        if (!s.depth || !s.link_free || !s.link_bytes)
            status = sim_fail(&s, PAPCOLL_ERR_NO_MEMORY, "out of memory for the topology");
        else if ((status = sim_check_topology(&s, ranks)) == PAPCOLL_OK)
            result->link_count = 2 * s.topology->vertex_count;
    }
    double began = wall_seconds();
    if (status == PAPCOLL_OK)
        status = sim_convert_schedules(&s, algorithm, count, elem_size, context,
                                       options->max_operations);
    if (status == PAPCOLL_OK && options->record_timeline) {
        s.op_start = calloc((size_t)s.op_count + 1, sizeof(double));
        s.op_end = calloc((size_t)s.op_count + 1, sizeof(double));
        if (!s.op_start || !s.op_end)
            status = sim_fail(&s, PAPCOLL_ERR_NO_MEMORY, "out of memory for the timeline");
    }
    s.remaining = s.op_count;
    result->operations = s.op_count;
    for (int32_t r = 0; r < ranks && status == PAPCOLL_OK; r++) {
        double arrival = arrivals ? arrivals[r] : 0;
        double schedule_start = arrival + (options->own_work ? options->own_work[r] : 0);
        rank_state *state = &s.rank[r];
        state->send_nic_free = state->receive_nic_free = arrival;
        state->cpu_free = state->finish = schedule_start;
        for (int64_t g = s.first_op[r]; g < s.first_op[r + 1]; g++)
            if (s.ops[g].pending == 0 &&
                !event_queue_push(&s.queue, schedule_start, (uint32_t)g, EVENT_READY))
                status = sim_fail(&s, PAPCOLL_ERR_NO_MEMORY, "out of memory for events");
    }
    double built = wall_seconds();
    int64_t events = 0;
    double time;
    event e;
    while (status == PAPCOLL_OK && event_queue_pop(&s.queue, &time, &e)) {
        events++;
        /* In lockstep thousands of events share an instant, each on another rank, and a
         * cache miss per record read is most of the engine's time at large P. So fetch
         * ahead in three steps: the op record of the event three ahead, the dependents
         * list of the one two ahead (its record came one round ago), the dependents'
         * records of the next one (its list came one round ago). */
        uint32_t ahead[3];
        int found = event_queue_peek(&s.queue, ahead, 3);
        if (found >= 3) __builtin_prefetch(&s.ops[ahead[2]]);
        if (found >= 2) {
            const sim_op *soon = &s.ops[ahead[1]];
            __builtin_prefetch(&s.dependents[soon->dependents]);
            __builtin_prefetch(&s.rank[soon->rank]);
            if (soon->kind <= SCHED_RECV) __builtin_prefetch(&s.rank[soon->peer]);
        }
        if (found >= 1) {
            const sim_op *next = &s.ops[ahead[0]];
            for (uint32_t d = next->dependents; d < next[1].dependents && d < next->dependents + 4;
                 d++)
                __builtin_prefetch(&s.ops[s.dependents[d]]);
        }
        int ok;
        if (e.kind == EVENT_READY) {
            ok = start(&s, e.op, time);
        } else if (e.kind == EVENT_NIC_FREE) {
            ok = nic_free(&s, e.op, time);
        } else if (e.kind == EVENT_ARRIVED) {
            int32_t rank = s.ops[e.op].rank;
            double done = max2(time, s.rank[rank].cpu_free) + model->receive_overhead;
            s.rank[rank].cpu_free = done;
            ok = event_queue_push(&s.queue, done, e.op, EVENT_COMPLETE);
        } else {
            ok = complete(&s, e.op, time);
        }
        if (!ok) status = sim_fail(&s, PAPCOLL_ERR_NO_MEMORY, "out of memory simulating");
    }
    if (status == PAPCOLL_OK) {
        /* Report what a per-destination list would have held first: the send that waited
         * earliest among those to the lowest rank. */
        const channel *leftover = NULL;
        uint32_t earliest = 0;
        for (int32_t c = 0; c < s.channel_count; c++) {
            const channel *candidate = &s.channels[c];
            if (candidate->unexpected.head < 0) continue;
            uint32_t sequence = s.sides[candidate->unexpected.head].sequence;
            if (leftover == NULL || candidate->destination < leftover->destination ||
                (candidate->destination == leftover->destination && sequence < earliest)) {
                leftover = candidate;
                earliest = sequence;
            }
        }
        if (leftover != NULL)
            status = sim_fail(&s, PAPCOLL_ERR_ARGUMENT,
                              "a message from rank %d to rank %d (tag %d) was sent but never "
                              "received", leftover->source, leftover->destination, leftover->tag);
    }
    if (status == PAPCOLL_OK && s.remaining > 0)
        status = sim_fail(&s, PAPCOLL_ERR_ARGUMENT,
                              "deadlock: %lld operations never ran (a message waits for a "
                              "partner that never comes)",
                              (long long)s.remaining);
    if (status == PAPCOLL_OK && options->record_timeline) status = fill_timeline(&s, result);
    if (status == PAPCOLL_OK) {
        double first = INFINITY, last = -INFINITY, sum = 0, longest = 0;
        for (int32_t r = 0; r < ranks; r++) {
            double arrival = arrivals ? arrivals[r] : 0;
            double elapsed = s.rank[r].finish - arrival;
            sum += elapsed;
            longest = max2(longest, elapsed);
            first = arrival < first ? arrival : first;
            last = max2(last, s.rank[r].finish);
            if (finish) finish[r] = s.rank[r].finish;
        }
        result->average_elapsed = sum / ranks;
        result->max_elapsed = longest;
        result->makespan = last - first;
        result->events = events;
        result->memory_bytes = engine_memory(&s);
        result->build_seconds = built - began;
        result->run_seconds = wall_seconds() - built;
    } else {
        papcoll_sim_result_release(result);
    }
    release(&s);
    return status;
}
