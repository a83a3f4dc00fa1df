/* nonblocking.c - papcoll_iallreduce: MPI_Iallreduce's semantics over a
 * papcoll schedule that the progress engine (progress.c) advances.
 *
 * A post never waits for a message: a rank may legally post, then block in a send that
 * another rank only receives before it posts (MPI-4.1 6.12 orders collectives, not
 * collectives against point-to-point). So nothing here is collective: no agreement check
 * (check_agreement applies to blocking and persistent calls), and auto decides locally
 * from what every rank already knows alike: the arrival pattern the monitor learnt in the
 * blocking calls before (monitor_learnt_arrivals), or none.
 *
 * Operations outstanding together share the communicator's non-blocking duplicate; each
 * takes the tags its schedule needs (its highest tag + 1) from the communicator's counter
 * at its post (tag_counter.c), in post order, which is the same on every rank, so messages
 * of two operations never match each other and no operation waits for another's tags
 * (except where the counter came round onto a range still in flight: tag_counter.c).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "auto_call.h"
#include "call_arguments.h"
#include "call_plan.h"
#include "operation.h"

int operation_choose(papcoll_comm *pc, const algorithm_entry *algorithm, plan_cache *plans,
                     const auto_call *call, auto_choice *choice, monitor_call_tag *tag,
                     executor_plan **plan) {
    *plan = NULL;
    if (tag != NULL) *tag = MONITOR_NO_TAG;
    if (call->count == 0) return MPI_SUCCESS; /* nothing runs */
    int choosing = algorithm == NULL;
    if (choosing) { /* auto: native runs as MPI_Iallreduce (auto_call.h) */
        int code = auto_decide(pc, call, choice, tag);
        if (code != MPI_SUCCESS || (algorithm = choice->algorithm) == NULL) return code;
    }
    int code = call_plan_for_call(pc, plans, algorithm, call->count, call->extent,
                                  call->commutative, call->arrivals, call->tau, plan);
    /* a rule's algorithm that refuses this call: the error names the rule (rules.h) */
    return choosing ? rules_explain_refusal(&choice->report, code) : code;
}

int operation_start(papcoll_operation *op, MPI_Comm comm, const void *sendbuf, void *recvbuf,
                    MPI_Count count, MPI_Datatype datatype, MPI_Op mpi_op) {
    papcoll_comm *pc = op->pc;
    op->native = MPI_REQUEST_NULL;
    op->error = MPI_SUCCESS;
    __atomic_store_n(&op->running, 1, __ATOMIC_RELEASE);
    op->error_text[0] = '\0';
    if (op->plan == NULL) {    /* native, or count 0: nothing of papcoll to run */
        memset(&op->run, 0, sizeof op->run); /* a persistent op's last run says nothing now */
        if (count == 0) return progress_begin(op);
#if MPI_VERSION < 4
        if (count > INT_MAX)
            return record_error(MPI_ERR_COUNT, "papcoll_iallreduce: auto chose native, and "
                                "this MPI's MPI_Iallreduce takes at most INT_MAX elements "
                                "(count %lld; MPI 4 has MPI_Iallreduce_c)", (long long)count);
#endif
        int code;
        if (op->native_persistent != MPI_REQUEST_NULL) {
            code = MPI_Start(&op->native_persistent);
            op->native = op->native_persistent; /* MPI_Test leaves it, inactive, when done */
#if MPI_VERSION >= 4
        } else if (count > INT_MAX) { /* beyond an int: MPI 4's large-count twin */
            code = MPI_Iallreduce_c(sendbuf, recvbuf, count, datatype, mpi_op, comm,
                                    &op->native);
#endif
        } else {
            code = MPI_Iallreduce(sendbuf, recvbuf, (int)count, datatype, mpi_op, comm,
                                  &op->native);
        }
        if (code != MPI_SUCCESS)
            return record_error(code, "papcoll_iallreduce: MPI_Iallreduce (auto chose "
                                      "native) failed");
        return progress_begin(op);
    }
    const void *source = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    int code = executor_begin(&op->run, op->plan, &op->workspace, comm,
                              pc->config.max_message_elements, op->tag_first, source, recvbuf,
                              datatype, mpi_op);
    if (code != MPI_SUCCESS) return code;
    return progress_begin(op);
}

int papcoll_iallreduce_c(papcoll_comm *pc, const void *sendbuf, void *recvbuf,
                         MPI_Count count, MPI_Datatype datatype, MPI_Op mpi_op,
                         MPI_Request *request) {
    return papcoll_iallreduce_notifying(pc, sendbuf, recvbuf, count, datatype, mpi_op,
                                        request, NULL, NULL);
}

int papcoll_iallreduce_notifying(papcoll_comm *pc, const void *sendbuf, void *recvbuf,
                                 MPI_Count count, MPI_Datatype datatype, MPI_Op mpi_op,
                                 MPI_Request *request,
                                 void (*finished)(void *argument, int error,
                                                  const char *message),
                                 void *argument) {
    if (request == NULL)
        return record_error(MPI_ERR_REQUEST, "papcoll_iallreduce: request is NULL");
    *request = MPI_REQUEST_NULL;
    if (pc == NULL) return record_error(MPI_ERR_ARG, "papcoll_iallreduce: pc is NULL");
    if (__atomic_load_n(&pc->nonblocking_spoiled, __ATOMIC_ACQUIRE))
        return record_error(MPI_ERR_OTHER, "papcoll_iallreduce: an earlier non-blocking call "
                            "on this communicator failed with messages in flight; free it "
                            "and create another");
    call_shape shape;
    int code = call_arguments_check(pc, sendbuf, recvbuf, count, datatype, mpi_op, &shape);
    if (code != MPI_SUCCESS) return code;
    papcoll_operation *op = calloc(1, sizeof *op);
    double *learnt = malloc((size_t)pc->size * sizeof *learnt);
    if (op == NULL || learnt == NULL) {
        free(op);
        free(learnt);
        return record_error(MPI_ERR_NO_MEM, "papcoll_iallreduce: out of memory");
    }
    op->pc = pc;
    op->request = MPI_REQUEST_NULL;
    auto_call call = {.kind = AUTO_CALL_POSTED, .count = count, .extent = shape.extent,
                      .commutative = shape.commutative, .datatype = datatype, .op = mpi_op};
    op->native_persistent = MPI_REQUEST_NULL;
    if ((shape.algorithm == NULL || shape.algorithm->info.needs_arrivals) &&
        monitor_learnt_arrivals(pc, learnt)) {
        call.arrivals = learnt;
        call.tau = monitor_tau(pc, (double)((count + pc->size - 1) / pc->size) *
                                       (double)shape.extent);
    }
    code = operation_choose(pc, shape.algorithm, &pc->nonblocking_plans, &call,
                            &pc->last_choice, NULL, &op->plan);
    free(learnt);
    if (code != MPI_SUCCESS) {
        free(op);
        return code;
    }
    op->plan_owned = op->plan != NULL && op->plan->uncached;
    if (op->plan != NULL && !op->plan_owned) __atomic_add_fetch(&op->plan->users, 1, __ATOMIC_ACQ_REL);
    __atomic_add_fetch(&pc->nonblocking_outstanding, 1, __ATOMIC_ACQ_REL);
    op->tag_count = op->plan != NULL ? op->plan->tag_count : 0;
    op->tag_first = tag_counter_take(&pc->tags, op->tag_count, &op->place);
    op->finished = finished;
    op->finished_argument = argument;
    code = operation_start(op, pc->nonblocking_comm, sendbuf, recvbuf, count, datatype, mpi_op);
    if (code != MPI_SUCCESS) {
        if (op->request != MPI_REQUEST_NULL) { /* started: MPI frees it at completion */
            *request = op->request;
            return MPI_SUCCESS;
        }
        op->finished = NULL; /* refused at the post, which returns the error: no notice */
        progress_finish_unstarted(op);
        operation_released(op);
        return code;
    }
    *request = op->request;
    return MPI_SUCCESS;
}

int papcoll_iallreduce(papcoll_comm *pc, const void *sendbuf, void *recvbuf, int count,
                       MPI_Datatype datatype, MPI_Op op, MPI_Request *request) {
    return papcoll_iallreduce_c(pc, sendbuf, recvbuf, (MPI_Count)count, datatype, op,
                                request);
}
