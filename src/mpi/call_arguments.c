/* call_arguments.c - the checks every all-reduce call makes of its arguments before any
 * message (call_arguments.h), shared by the blocking call (communicator.c) and the
 * non-blocking and persistent ones (nonblocking.c, persistent.c). */
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "agreement.h"
#include "call_arguments.h"
#include "operations.h"
#include "reproducible.h"

int call_arguments_is_auto(const papcoll_comm *pc) { return strcmp(pc->algorithm, "auto") == 0; }

int call_arguments_unknown_algorithm(const char *name) {
    return record_error(MPI_ERR_ARG,
                        "papcoll: unknown algorithm '%.64s' (use \"auto\" or a name from "
                        "`papcoll algorithms`)",
                        name ? name : "(null)");
}

/* The datatype must be one MPI_Reduce_local can take and memcpy can move: predefined, or
 * derived but contiguous without holes or offsets. Gives its extent. */
int call_arguments_datatype(MPI_Datatype datatype, int64_t *extent) {
    if (datatype == MPI_DATATYPE_NULL)
        return record_error(MPI_ERR_TYPE, "papcoll_allreduce: datatype is MPI_DATATYPE_NULL");
    MPI_Aint lower_bound, type_extent, true_lower_bound, true_extent;
    int size;
    if (MPI_Type_get_extent(datatype, &lower_bound, &type_extent) != MPI_SUCCESS ||
        MPI_Type_get_true_extent(datatype, &true_lower_bound, &true_extent) != MPI_SUCCESS ||
        MPI_Type_size(datatype, &size) != MPI_SUCCESS)
        return record_error(MPI_ERR_TYPE, "papcoll_allreduce: invalid datatype");
    int integers, addresses, datatypes, combiner;
    MPI_Type_get_envelope(datatype, &integers, &addresses, &datatypes, &combiner);
    if (combiner != MPI_COMBINER_NAMED &&
        (lower_bound != 0 || true_lower_bound != 0 || size != type_extent))
        return record_error(MPI_ERR_TYPE,
                            "papcoll_allreduce: derived datatypes must be contiguous without "
                            "holes (size %d, extent %ld, lower bound %ld)",
                            size, (long)type_extent, (long)lower_bound);
    if (type_extent <= 0)
        return record_error(MPI_ERR_TYPE, "papcoll_allreduce: datatype has no extent");
    *extent = (int64_t)type_extent;
    return MPI_SUCCESS;
}

int call_arguments_op(MPI_Op op, int *commutative) {
    if (op == MPI_OP_NULL)
        return record_error(MPI_ERR_OP, "papcoll_allreduce: op is MPI_OP_NULL");
    if (op == MPI_REPLACE || op == MPI_NO_OP)
        return record_error(MPI_ERR_OP, "papcoll_allreduce: MPI_REPLACE and MPI_NO_OP are "
                                        "for one-sided accumulates only, not reductions");
    if (MPI_Op_commutative(op, commutative) != MPI_SUCCESS)
        return record_error(MPI_ERR_OP, "papcoll_allreduce: invalid op");
    return MPI_SUCCESS;
}

/* MPI defines each predefined op on some datatypes only (MPI_BAND on integers, MPI_SUM not
 * on MPI_C_BOOL, ...). A wrong pair fails in MPI_Reduce_local, which only some ranks call
 * in most schedules (a binomial tree's leaves never reduce): those would wait forever for
 * a rank that gave up. So every rank tries the pair on one zeroed element before the
 * schedule runs, and all return the same error (the handler that MPI_Reduce_local
 * raises it on, which may be fatal, is set to return for the try).
 * User-defined ops are the user's function and are not tried (the element is garbage to
 * them). The last pair found good is remembered, so a loop of calls pays once. */
int call_arguments_pair(papcoll_comm *pc, MPI_Datatype datatype, MPI_Op op, int64_t extent) {
    if (datatype == pc->checked_datatype && op == pc->checked_op) return MPI_SUCCESS;
    int op_index = predefined_op_index(op);
    if (op_index >= 0) {
        char stack[2][64];
        char *in = stack[0], *inout = stack[1];
        if (extent > (int64_t)sizeof stack[0]) {
            in = calloc(2, (size_t)extent);
            if (in == NULL)
                return record_error(MPI_ERR_NO_MEM, "papcoll_allreduce: out of memory");
            inout = in + extent;
        } else {
            memset(stack, 0, sizeof stack);
        }
        /* Which communicator's handler MPI_Reduce_local raises its error on differs: MPICH
         * returns, Open MPI 5 raises it on MPI_COMM_WORLD. Both are set to return for the
         * try and restored after. */
        MPI_Comm raisers[2] = {MPI_COMM_SELF, MPI_COMM_WORLD};
        MPI_Errhandler previous[2];
        for (int k = 0; k < 2; k++) {
            MPI_Comm_get_errhandler(raisers[k], &previous[k]);
            MPI_Comm_set_errhandler(raisers[k], MPI_ERRORS_RETURN);
        }
        int code = MPI_Reduce_local(in, inout, 1, datatype, op);
        for (int k = 0; k < 2; k++) {
            /* SMPI gives none where none was set: the default, fatal, is put back */
            MPI_Comm_set_errhandler(raisers[k], previous[k] == MPI_ERRHANDLER_NULL
                                                    ? MPI_ERRORS_ARE_FATAL : previous[k]);
            if (previous[k] != MPI_ERRHANDLER_NULL) MPI_Errhandler_free(&previous[k]);
        }
        if (in != stack[0]) free(in);
        if (code != MPI_SUCCESS) {
            char name[MPI_MAX_OBJECT_NAME] = "";
            int length = 0;
            MPI_Type_get_name(datatype, name, &length);
            return record_error(MPI_ERR_OP, "papcoll_allreduce: %s is not defined on "
                                "datatype %s (MPI defines each predefined op on some "
                                "datatypes only: MPI_BAND on integers, MPI_SUM not on "
                                "MPI_C_BOOL, ...)", predefined_op_name(op_index),
                                length > 0 ? name : "(unnamed)");
        }
    }
    /* A derived datatype's handle may come back for another type once it is freed. */
    int integers, addresses, datatypes, combiner;
    MPI_Type_get_envelope(datatype, &integers, &addresses, &datatypes, &combiner);
    if (combiner == MPI_COMBINER_NAMED) {
        pc->checked_datatype = datatype;
        pc->checked_op = op;
    }
    return MPI_SUCCESS;
}

/* Whether [a, a + bytes) and [b, b + bytes) share a byte. Compared as integers: pointers into
 * different objects may not be compared with < in C. */
static int overlap(const void *a, const void *b, int64_t bytes) {
    uintptr_t first = (uintptr_t)a, second = (uintptr_t)b;
    uintptr_t distance = first > second ? first - second : second - first;
    return distance < (uintptr_t)bytes;
}

/* This rank's own checks of a call; on success *shape says what they found. */
int call_arguments_check(papcoll_comm *pc, const void *sendbuf, const void *recvbuf,
                         MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                         call_shape *shape) {
    int code;
    if (count < 0)
        return record_error(MPI_ERR_COUNT, "papcoll_allreduce: count %lld is negative",
                            (long long)count);
    if ((code = call_arguments_datatype(datatype, &shape->extent)) != MPI_SUCCESS) return code;
    if ((code = call_arguments_op(op, &shape->commutative)) != MPI_SUCCESS) return code;
    if ((code = call_arguments_pair(pc, datatype, op, shape->extent)) != MPI_SUCCESS) return code;
    if (count > 0 && (recvbuf == NULL || sendbuf == NULL))
        return record_error(MPI_ERR_BUFFER,
                            "papcoll_allreduce: %s is NULL with count %lld > 0",
                            recvbuf == NULL ? "recvbuf" : "sendbuf", (long long)count);
    if (recvbuf == MPI_IN_PLACE)
        return record_error(MPI_ERR_BUFFER, "papcoll_allreduce: MPI_IN_PLACE goes in sendbuf; "
                                            "recvbuf must be a buffer");
    if (sendbuf == recvbuf && count > 0)
        return record_error(MPI_ERR_BUFFER, "papcoll_allreduce: sendbuf and recvbuf are the "
                                            "same buffer; pass MPI_IN_PLACE as sendbuf");
    /* a count whose bytes no address space holds (INT64_MAX) is the count's fault: checked
     * before the overlap test, whose byte count would overflow into nonsense */
    if (count > 0 && shape->extent > 0 && count > (MPI_Count)(PTRDIFF_MAX / shape->extent))
        return record_error(MPI_ERR_COUNT, "papcoll_allreduce: count %lld of %lld-byte "
                            "elements is more bytes than an address space holds",
                            (long long)count, (long long)shape->extent);
    if (sendbuf != MPI_IN_PLACE && count > 0 && overlap(sendbuf, recvbuf, count * shape->extent))
        return record_error(MPI_ERR_BUFFER, "papcoll_allreduce: sendbuf and recvbuf overlap "
                            "(MPI forbids it; for one buffer pass MPI_IN_PLACE as sendbuf)");
    shape->algorithm = NULL; /* auto: chosen per call, once the predicted arrivals are known */
    if (call_arguments_is_auto(pc)) { /* ...except in reproducible mode (reproducible.c) */
        code = reproducible_algorithm(pc, (int64_t)count, shape->extent, datatype, op, &shape->algorithm);
        if (code == MPI_SUCCESS && shape->algorithm != NULL) { /* what papcoll_last_choice tells */
            memset(&pc->last_choice, 0, sizeof pc->last_choice);
            pc->last_choice.algorithm = shape->algorithm;
            snprintf(pc->last_choice.report.algorithm, sizeof pc->last_choice.report.algorithm,
                     "%s", shape->algorithm->info.name);
            snprintf(pc->last_choice.report.model_algorithm,
                     sizeof pc->last_choice.report.model_algorithm, "%s", shape->algorithm->info.name);
            pc->last_choice.report.decided_by = -1;
        }
        return code;
    }
    const char *name = pc->algorithm;
    const algorithm_entry *algorithm = registry_find(name);
    if (algorithm == NULL) return call_arguments_unknown_algorithm(name);
    if (algorithm->info.reduce_scatter)
        return record_error(MPI_ERR_ARG, "papcoll_allreduce: '%s' is a reduce-scatter, not an "
                            "all-reduce (it runs in `papcoll verify` and `papcoll sim`)", name);
    if (!shape->commutative && algorithm->info.commutative_only)
        return record_error(MPI_ERR_OP,
                            "papcoll_allreduce: algorithm '%s' reorders operands, so it needs a "
                            "commutative op; this op is not (use recursive_doubling, "
                            "rabenseifner, binomial, linear_tree, linear or auto)",
                            name);
    shape->algorithm = algorithm;
    return reproducible_algorithm(pc, (int64_t)count, shape->extent, datatype, op, &shape->algorithm);
}


int call_arguments_check_agreed(papcoll_comm *pc, const void *sendbuf, const void *recvbuf,
                                MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                                const char *caller, call_shape *shape) {
    int code = call_arguments_check(pc, sendbuf, recvbuf, count, datatype, op, shape);
    if (pc->config.check_agreement) {
        /* Even a rank that refused the call takes part: the others then fail, not hang. */
        call_digest digest;
        call_digest_describe(&digest, code != MPI_SUCCESS, (int64_t)count, datatype, op,
                             pc->algorithm, &pc->parameters.parameters);
        int agreed = agreement_check(pc->comm, &digest, caller);
        if (code == MPI_SUCCESS) code = agreed;
    }
    return code;
}
