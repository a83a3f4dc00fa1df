/* executor.c - runs a schedule (src/core/schedule.h) over MPI: SEND and RECV become
 * MPI_Isend / MPI_Irecv on the communicator's private duplicate, REDUCE becomes
 * MPI_Reduce_local with the user's op, COPY a memcpy. Local ops run as soon as they are
 * ready; messages in flight are progressed as described at wait_for_messages().
 *
 * Messages longer than config.max_message_elements go as several MPI messages with the same
 * tag; both sides split the same length the same way, and MPI keeps messages of one
 * (source, tag) in order, so they match piece by piece. This is how counts beyond INT_MAX
 * travel through MPI's int-count calls.
 *
 * One message at a time per link (sched_order_sends, src/core/schedule.h): each SEND waits
 * for the previous SEND to the same peer. An MPI_Isend of a small message completes as
 * soon as MPI has buffered it (eager; SMPI: below send-is-detached-thresh), so the next one
 * would travel beside it, sharing the link, which is what the chain is there to prevent;
 * MPI_Issend completes once the receiver has taken the message. So a SEND that the next
 * SEND to the same peer waits for goes as MPI_Issend where
 *   - it has papcoll_tuning's synchronous_send_bytes (16 KiB) or more, or
 *   - the schedule marks it PACED: a pipeline's chunk streamed to many peers at once,
 *     where one peer's round trip hides behind the traffic to the others (straggler's
 *     4 KiB chunks at P = 64 travelled side by side in SMPI: 29.2 ms, against 23.4 paced
 *     and 22.8 in papcoll's simulator).
 * Why not every chained send: a synchronous send costs a chain to one peer a round trip
 * per message. With every chained send synchronous slt's 1 KiB messages were 12 % slower
 * in SMPI (P = 16), and a 4 KiB floor made priority_rabenseifner 25 % slower at 64 KiB
 * (P = 16), while 16 KiB messages side by side made prr with a late rank 2.3 x slower at
 * P = 64 (77.0 against 33.3 ms) and 64 KiB ones 3.5 x at P = 16 (docs/smpi.md). The price
 * at 64 KiB: a balanced segmented ring, whose 64 KiB segments follow one another, 10 %
 * slower in SMPI at 4 MiB.
 */
#define _POSIX_C_SOURCE 200809L /* sched_yield */
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "executor.h"
#include "growth.h"
#include "mpi_features.h"

/* Byte buffers grow to exactly what a call needs, not by doubling: scratch can be as large
 * as the user's vector, and doubling could nearly double the memory held between calls. */
static int grow_bytes(void **buffer, size_t *capacity, size_t needed) {
    if (*buffer != NULL && needed <= *capacity) return 1;
    if (resize_array(buffer, needed, 1) != 0) return 0;
    *capacity = needed;
    return 1;
}

static int grow_ops(executor_workspace *w, size_t ops, size_t requests) {
    if (ops > w->op_capacity || w->pending == NULL) {
        if (resize_array((void **)&w->pending, ops, sizeof *w->pending) != 0 ||
            resize_array((void **)&w->ready, ops, sizeof *w->ready) != 0 ||
            resize_array((void **)&w->outstanding, ops, sizeof *w->outstanding) != 0)
            return 0;
        w->op_capacity = ops;
    }
    if (requests > w->request_capacity || w->requests == NULL) {
        if (resize_array((void **)&w->requests, requests, sizeof *w->requests) != 0 ||
            resize_array((void **)&w->request_op, requests, sizeof *w->request_op) != 0 ||
            resize_array((void **)&w->completed_indices, requests,
                         sizeof *w->completed_indices) != 0 ||
            resize_array((void **)&w->request_elements, requests,
                         sizeof *w->request_elements) != 0 ||
            resize_array((void **)&w->statuses, requests, sizeof *w->statuses) != 0)
            return 0;
        w->request_capacity = requests;
    }
    return 1;
}

void executor_plan_release(executor_plan *plan) {
    papcoll_schedule_free(plan->schedule);
    free(plan->dependent_first);
    free(plan->dependents);
    free(plan->initial_pending);
    free(plan->synchronous);
    free(plan->key.arrival_class);
    memset(plan, 0, sizeof *plan);
}

void executor_workspace_release(executor_workspace *w) {
    free(w->pending);
    free(w->ready);
    free(w->outstanding);
    free(w->request_op);
    free(w->completed_indices);
    free(w->request_elements);
    free(w->statuses);
    free(w->requests);
    free(w->scratch);
    free(w->reduce_temporary);
    memset(w, 0, sizeof *w);
}

int executor_plan_prepare(executor_plan *plan, int64_t synchronous_send_bytes) {
    const papcoll_schedule *s = plan->schedule;
    size_t n = (size_t)s->op_count;
    plan->dependent_first = calloc(n + 2, sizeof(int32_t));
    plan->dependents = calloc((size_t)s->dependency_count + 1, sizeof(int32_t));
    plan->initial_pending = calloc(n + 1, sizeof(int32_t));
    if (!plan->dependent_first || !plan->dependents || !plan->initial_pending) return 0;
    /* a non-blocking operation takes this many tags from its communicator's counter */
    plan->tag_count = 0;
    for (int32_t i = 0; i < s->op_count; i++)
        if ((s->ops[i].kind == SCHED_SEND || s->ops[i].kind == SCHED_RECV) &&
            s->ops[i].u.message.tag >= plan->tag_count)
            plan->tag_count = s->ops[i].u.message.tag + 1;
    plan->synchronous = calloc(n + 1, 1);
    if (!plan->synchronous ||
        !sched_dependents(s, plan->initial_pending, plan->dependent_first, plan->dependents))
        return 0;
    int64_t synchronous_elements =
        synchronous_send_bytes / (plan->key.extent > 0 ? plan->key.extent : 1);
    for (int32_t i = 0; i < s->op_count; i++)
        plan->synchronous[i] = (uint8_t)sched_send_is_synchronous(
            s, i, plan->dependent_first, plan->dependents, synchronous_elements);
    return 1;
}

static char *address(const executor_run *run, int buffer, int64_t offset) {
    return run->buffers[buffer] + offset * run->extent;
}

static void complete(executor_run *run, int32_t index) {
    executor_workspace *w = run->workspace;
    const executor_plan *plan = run->plan;
    run->remaining--;
    for (int32_t d = plan->dependent_first[index]; d < plan->dependent_first[index + 1]; d++) {
        int32_t dependent = plan->dependents[d];
        if (--w->pending[dependent] == 0) w->ready[run->ready_tail++] = dependent;
    }
}

/* MPI_Reduce_local over a long region, in pieces that fit its int count. */
static int reduce_local(executor_run *run, const char *in, char *inout, int64_t length) {
    for (int64_t done = 0; done < length; done += run->chunk) {
        int64_t piece = length - done < run->chunk ? length - done : run->chunk;
        int code = MPI_Reduce_local(in + done * run->extent, inout + done * run->extent,
                                    (int)piece, run->datatype, run->op);
        if (code != MPI_SUCCESS) return code;
    }
    return MPI_SUCCESS;
}

static int run_reduce(executor_run *run, const sched_op *op) {
    const char *source = address(run, op->buffer, op->offset);
    char *target = address(run, op->target_buffer, op->u.target_offset);
    if (op->flags == SCHED_SOURCE_LEFT) return reduce_local(run, source, target, op->length);
    /* target = target (op) source: MPI_Reduce_local computes inout = in (op) inout, so
     * reduce the target into a copy of the source and copy the result back. */
    executor_workspace *w = run->workspace;
    size_t bytes = (size_t)(op->length * run->extent);
    if (!grow_bytes(&w->reduce_temporary, &w->reduce_temporary_bytes, bytes))
        return record_error(MPI_ERR_NO_MEM, "papcoll: out of memory for a reduction buffer");
    memcpy(w->reduce_temporary, source, bytes);
    int code = reduce_local(run, target, w->reduce_temporary, op->length);
    if (code == MPI_SUCCESS) memcpy(target, w->reduce_temporary, bytes);
    return code;
}

static int post_message(executor_run *run, int32_t index, const sched_op *op) {
    executor_workspace *w = run->workspace;
    char *base = address(run, op->buffer, op->offset);
    w->outstanding[index] = 0;
    for (int64_t done = 0; done < op->length; done += run->chunk) {
        int64_t piece = op->length - done < run->chunk ? op->length - done : run->chunk;
        MPI_Request *request = &w->requests[run->active];
        int code = op->kind == SCHED_SEND && run->plan->synchronous[index]
                       ? MPI_Issend(base + done * run->extent, (int)piece, run->datatype,
                                    op->u.message.peer, op->u.message.tag + run->tag_offset,
                                    run->comm, request)
                   : op->kind == SCHED_SEND
                       ? MPI_Isend(base + done * run->extent, (int)piece, run->datatype,
                                   op->u.message.peer, op->u.message.tag + run->tag_offset, run->comm,
                                   request)
                       : MPI_Irecv(base + done * run->extent, (int)piece, run->datatype,
                                   op->u.message.peer, op->u.message.tag + run->tag_offset,
                                   run->comm, request);
        if (code != MPI_SUCCESS)
            return record_error(code, "papcoll: MPI_%s to/from rank %d failed",
                                op->kind == SCHED_SEND ? "Isend" : "Irecv", op->u.message.peer);
        w->request_elements[run->active] = op->kind == SCHED_RECV ? (int32_t)piece : -1;
        w->request_op[run->active++] = index;
        w->outstanding[index]++;
        run->posted_any = 1;
    }
    return MPI_SUCCESS;
}

static int start(executor_run *run, int32_t index) {
    const sched_op *op = &run->plan->schedule->ops[index];
    switch (op->kind) {
    case SCHED_SEND:
    case SCHED_RECV:
        if (op->length == 0) { /* both sides skip empty messages: nothing to match */
            complete(run, index);
            return MPI_SUCCESS;
        }
        return post_message(run, index, op);
    case SCHED_REDUCE: {
        int code = run_reduce(run, op);
        if (code != MPI_SUCCESS)
            return record_error(code, "papcoll: MPI_Reduce_local failed (op %d)", index);
        complete(run, index);
        return MPI_SUCCESS;
    }
    default: {
        const char *source = address(run, op->buffer, op->offset);
        char *target = address(run, op->target_buffer, op->u.target_offset);
        /* length 0: a buffer may be NULL (count 0), and memcpy must not see it */
        if (source != target && op->length > 0)
            memcpy(target, source, (size_t)(op->length * run->extent));
        complete(run, index);
        return MPI_SUCCESS;
    }
    }
}

/* A completed receive must hold what the schedule expects. MPI requires every rank to make
 * the same call, but a program whose ranks pass different counts or datatypes (erroneous)
 * would otherwise go on silently where a message came short, and then wait for messages
 * that never come; a message too long fails in MPI itself (MPI_ERR_TRUNCATE). Either is
 * said here, in the program's terms, and ends the job where the drop-in asks for it
 * (record_mismatch: the peers wait for this rank's messages of a call it has left). */
static int check_received(const executor_run *run, int32_t request, const MPI_Status *status,
                          int failed) {
    const executor_workspace *w = run->workspace;
    int32_t expected = w->request_elements[request];
    int rank = run->plan->schedule->rank;
    int class = MPI_SUCCESS;
    if (failed && status->MPI_ERROR != MPI_SUCCESS)
        MPI_Error_class(status->MPI_ERROR, &class); /* MPI_ERROR holds a code */
    if (failed && class != MPI_SUCCESS && class != MPI_ERR_PENDING) {
        if (class != MPI_ERR_TRUNCATE) {
            char text[MPI_MAX_ERROR_STRING] = "";
            int length = 0;
            MPI_Error_string(status->MPI_ERROR, text, &length);
            return record_error(status->MPI_ERROR, "papcoll: a message of rank %d failed: %s",
                                rank, text);
        }
        return record_mismatch(run->comm, MPI_ERR_TRUNCATE,
                            "papcoll: rank %d received a message longer "
                            "than the %d elements its schedule expects from rank %d: the "
                            "ranks' calls differ in count or datatype, which MPI forbids "
                            "(PAPCOLL_CHECK=1 compares every call and names the difference)",
                            rank, expected, status->MPI_SOURCE);
    }
    if (expected < 0) return MPI_SUCCESS;
    int received = 0;
    if (MPI_Get_count(status, run->datatype, &received) != MPI_SUCCESS ||
        received != expected)
        return record_mismatch(run->comm, MPI_ERR_TRUNCATE,
                            "papcoll: rank %d received %d elements from "
                            "rank %d where its schedule expects %d: the ranks' calls differ "
                            "in count or datatype, which MPI forbids (PAPCOLL_CHECK=1 "
                            "compares every call and names the difference)", rank,
                            received, status->MPI_SOURCE, expected);
    return MPI_SUCCESS;
}

/* The ops whose pieces are all done among the `completed` requests of completed_indices
 * complete, and the finished requests (now MPI_REQUEST_NULL) leave the array. */
static void retire(executor_run *run, int completed) {
    executor_workspace *w = run->workspace;
    for (int c = 0; c < completed; c++) {
        int32_t index = w->request_op[w->completed_indices[c]];
        if (--w->outstanding[index] == 0) complete(run, index);
    }
    int32_t kept = 0;
    for (int32_t r = 0; r < run->active; r++) {
        if (w->requests[r] == MPI_REQUEST_NULL) continue;
        w->requests[kept] = w->requests[r];
        w->request_elements[kept] = w->request_elements[r];
        w->request_op[kept++] = w->request_op[r];
    }
    run->active = kept;
}

/* The completions of a test or wait that returned code: the statuses checked (a failed one
 * names what failed), then retire(). */
static int take_completions(executor_run *run, int code, int completed) {
    executor_workspace *w = run->workspace;
    int failed = code != MPI_SUCCESS;
    if (completed == MPI_UNDEFINED) completed = 0;
    for (int c = 0; c < completed; c++) {
        int checked = check_received(run, w->completed_indices[c], &w->statuses[c], failed);
        if (checked != MPI_SUCCESS) return checked;
    }
    if (failed)
        return record_error(code, "papcoll: waiting for messages failed on rank %d",
                            run->plan->schedule->rank);
    retire(run, completed);
    return MPI_SUCCESS;
}

/* The requests of the run that completed: each one request_is_complete reports (NULL:
 * every one) is tested with MPI_Test. Where request_is_complete looks without MPI's progress
 * engine (inside MPICH's progress hook), MPI_Test on a complete request only frees it
 * (MPICH: MPIR_Test_state progresses only an incomplete one).
 *
 * Why one MPI_Test per request rather than MPI_Testsome: MPICH raises a failed request of its
 * multiple-completion calls (MPI_Testsome, MPI_Testany, MPI_Waitall) on the error handler
 * of MPI_COMM_SELF / MPI_COMM_WORLD, not on the request's communicator. Those are the
 * program's, fatal by default: a message of the wrong size (ranks whose counts differ) then
 * ended the job from inside papcoll with "Fatal error in internal_Testsome: See the
 * MPI_ERROR field in MPI_Status" and without papcoll's message, whatever handler the program
 * had set on its own communicator. MPI_Test raises on the request's communicator, papcoll's
 * private duplicate, which returns. The price: an incomplete request's MPI_Test polls MPI's
 * progress once, so a round polls once per request in flight (a schedule keeps a few). */
static int collect_completed(executor_run *run, int (*request_is_complete)(MPI_Request),
                             int *completed) {
    executor_workspace *w = run->workspace;
    *completed = 0;
    for (int32_t r = 0; r < run->active; r++) {
        if (request_is_complete != NULL && !request_is_complete(w->requests[r])) continue;
        int flag = 0;
        int code = MPI_Test(&w->requests[r], &flag, &w->statuses[*completed]);
        if (code != MPI_SUCCESS) {
            w->statuses[*completed].MPI_ERROR = code;
            w->completed_indices[(*completed)++] = r;
            return code;
        }
        if (flag) { /* a successful MPI_Test leaves MPI_ERROR as it was */
            w->statuses[*completed].MPI_ERROR = MPI_SUCCESS;
            w->completed_indices[(*completed)++] = r;
        }
    }
    return MPI_SUCCESS;
}

/* Waits until at least one request in flight completes, then completes the ops whose
 * pieces are all done and drops the finished requests from the array.
 *
 * Why not simply MPI_Waitsome: MPICH (5.0) spins in MPI_Waitsome and MPI_Waitany without
 * ever giving up the core, while its MPI_Wait and MPI_Waitall let other processes run. When
 * ranks outnumber cores (oversubscription: CI machines, laptops) a spinning rank burns its
 * whole time slice while the peer it waits for cannot run: an 8-byte all-reduce at P = 4
 * on 2 cores took 3 ms with Waitsome against 0.02 ms with Waitall (docs/benchmarks.md).
 * So: one request in flight -> MPI_Wait, which blocks the MPI way. Several -> MPI_Test on
 * each (collect_completed says why not MPI_Testsome),
 * and if nothing finished, sched_yield() before testing again; on an idle core the yield
 * returns at once, so this polls no more than MPI's own waits do. MPI_Wait on one chosen
 * request of several would be wrong: the op that unblocks the peer may hang on another.
 * Under SMPI (PAPCOLL_BLOCKING_WAITS, mpi_features.h) several -> MPI_Waitany: a simulator
 * has no core to give up, and each poll would cost a context switch and simulated time. */
static int wait_for_messages(executor_run *run) {
    executor_workspace *w = run->workspace;
    int completed = 0, code = MPI_SUCCESS;
    while (completed == 0 && code == MPI_SUCCESS) {
        if (run->active == 1) {
            code = MPI_Wait(&w->requests[0], &w->statuses[0]);
            if (code != MPI_SUCCESS) w->statuses[0].MPI_ERROR = code;
            w->completed_indices[0] = 0;
            completed = 1;
        } else if (PAPCOLL_BLOCKING_WAITS) { /* SMPI: mpi_features.h says why */
            int index = MPI_UNDEFINED;
            code = MPI_Waitany(run->active, w->requests, &index, &w->statuses[0]);
            if (code == MPI_SUCCESS && index == MPI_UNDEFINED) code = MPI_ERR_INTERN;
            if (index == MPI_UNDEFINED) break; /* none completed: the error says why */
            w->statuses[0].MPI_ERROR = code;
            w->completed_indices[0] = index;
            completed = 1;
        } else {
            code = collect_completed(run, NULL, &completed);
            if (code == MPI_SUCCESS && completed == 0) sched_yield();
        }
    }
    return take_completions(run, code, completed);
}

/* After a failed run its requests are settled (request_settling.c). Either way the
 * workspace is spoiled: the peers' messages of the failed call may still arrive on the
 * private communicator, where a later call's receives would match them and compute a wrong
 * result, so the communicator refuses every later call (communicator.c) and only
 * papcoll_comm_free remains. Scratch MPI may still write into is never freed. */
static void hand_over_scratch(executor_run *run) {
    executor_workspace *w = run->workspace;
    run->active = 0;
    if (w->abandoned_requests > 0) {
        w->scratch = NULL;
        w->scratch_bytes = 0;
    }
}

void executor_abandon(executor_run *run) {
    executor_workspace *w = run->workspace;
    w->spoiled = 1;
    request_settling_finish(w->requests, run->active, w->request_elements,
                            &w->abandoned_requests);
    hand_over_scratch(run);
}

int executor_settle_step(executor_run *run, request_settling *settling,
                         int (*request_is_complete)(MPI_Request)) {
    executor_workspace *w = run->workspace;
    w->spoiled = 1;
    if (!request_settling_step(settling, w->requests, run->active, w->request_elements,
                               request_is_complete, &w->abandoned_requests))
        return 0;
    hand_over_scratch(run);
    return 1;
}

/* Upper bound of the requests one run can have in flight: every message op's pieces. */
static size_t request_bound(const papcoll_schedule *s, int64_t chunk) {
    size_t total = 0;
    for (int32_t i = 0; i < s->op_count; i++)
        if (s->ops[i].kind == SCHED_SEND || s->ops[i].kind == SCHED_RECV)
            total += (size_t)((s->ops[i].length + chunk - 1) / chunk);
    return total;
}

int executor_begin(executor_run *run, const executor_plan *plan,
                   executor_workspace *workspace, MPI_Comm comm, int64_t max_message_elements,
                   int tag_offset, const void *sendbuf, void *recvbuf, MPI_Datatype datatype,
                   MPI_Op op) {
    const papcoll_schedule *s = plan->schedule;
    executor_workspace *w = workspace;
    memset(run, 0, sizeof *run);
    run->comm = comm;
    run->workspace = workspace;
    run->plan = plan;
    run->extent = plan->key.extent;
    run->datatype = datatype;
    run->op = op;
    run->chunk = max_message_elements;
    run->tag_offset = tag_offset;
    run->remaining = s->op_count;
    run->buffers[SCHED_SEND_BUFFER] = (char *)(uintptr_t)sendbuf;
    run->buffers[SCHED_RECV_BUFFER] = recvbuf;

    size_t scratch_bytes = 0;
    for (int32_t k = 0; k < s->scratch_count; k++)
        scratch_bytes += (size_t)(s->scratch_elements[k] * plan->key.extent);
    if (!grow_bytes(&w->scratch, &w->scratch_bytes, scratch_bytes) ||
        !grow_ops(w, (size_t)s->op_count, request_bound(s, run->chunk)))
        return record_error(MPI_ERR_NO_MEM, "papcoll: out of memory for %zu bytes of scratch",
                            scratch_bytes);
    char *scratch = w->scratch;
    for (int32_t k = 0; k < s->scratch_count; k++) {
        run->buffers[SCHED_FIRST_SCRATCH + k] = scratch;
        scratch += s->scratch_elements[k] * plan->key.extent;
    }
    memcpy(w->pending, plan->initial_pending, (size_t)s->op_count * sizeof *w->pending);
    for (int32_t i = 0; i < s->op_count; i++)
        if (w->pending[i] == 0) w->ready[run->ready_tail++] = i;
    return MPI_SUCCESS;
}

/* Starts every ready op (local ones complete at once and may make more ready). */
static int start_ready(executor_run *run) {
    executor_workspace *w = run->workspace;
    int code = MPI_SUCCESS;
    while (run->ready_head < run->ready_tail && code == MPI_SUCCESS)
        code = start(run, w->ready[run->ready_head++]);
    if (code == MPI_SUCCESS && run->remaining > 0 && run->active == 0)
        code = record_error(MPI_ERR_INTERN,
                            "papcoll: schedule of rank %d stalled with %d ops left "
                            "(a builder bug the verifier should have caught)",
                            run->plan->schedule->rank, run->remaining);
    return code;
}

/* Rounds of executor_advance (start what is ready, collect what finished) per call. Where
 * every message completes at once (one rank, shared memory) an unbounded loop ran a whole
 * multi-megabyte schedule inside one MPI_Test of the program's, from MPI's progress hook;
 * the engine comes back at the next poll anyway. */
enum { ADVANCE_ROUNDS = 8 };

int executor_advance(executor_run *run, int (*request_is_complete)(MPI_Request), int *done) {
    int code = MPI_SUCCESS;
    for (int round = 0; round < ADVANCE_ROUNDS; round++) {
        if ((code = start_ready(run)) != MPI_SUCCESS || run->remaining == 0) break;
        int completed = 0;
        code = collect_completed(run, request_is_complete, &completed);
        int tested = code;
        if ((code = take_completions(run, code, completed)) != MPI_SUCCESS) break;
        if (tested != MPI_SUCCESS || completed == 0 || completed == MPI_UNDEFINED) break;
    }
    *done = code == MPI_SUCCESS && run->remaining == 0;
    return code;
}

int executor_run_blocking(const executor_plan *plan, executor_workspace *workspace,
                          MPI_Comm comm, int64_t max_message_elements, const void *sendbuf,
                          void *recvbuf, MPI_Datatype datatype, MPI_Op op) {
    executor_run run;
    int code = executor_begin(&run, plan, workspace, comm, max_message_elements, 0, sendbuf,
                              recvbuf, datatype, op);
    while (code == MPI_SUCCESS && run.remaining > 0) {
        if ((code = start_ready(&run)) != MPI_SUCCESS || run.remaining == 0) break;
        code = wait_for_messages(&run);
    }
    if (code != MPI_SUCCESS && run.posted_any) executor_abandon(&run);
    return code;
}
