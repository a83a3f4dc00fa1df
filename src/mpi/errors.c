/* errors.c - the message of the last error, per thread, for papcoll_error_string: every unit
 * of the MPI side records its errors here, so none reaches into another to report one. */
#include "errors.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

#include "message.h" /* src/core: the one formatting of error messages */

/* The message of the last error, per thread, with the code it was returned with. */
static _Thread_local char last_message[320];
static _Thread_local int last_code = MPI_SUCCESS;

int record_error(int code, const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    message_vwrite(last_message, sizeof last_message, format, arguments);
    va_end(arguments);
    last_code = code;
    return code;
}

/* Why end the job rather than return, where papcoll_set_mismatch_ends_job asks for it: the
 * ranks that did not see the difference are inside the operation already, waiting for this
 * rank, and nothing this rank could cheaply do completes their wait.
 *   - Make their receives fail: they may be inside the MPI's own all-reduce (auto's native
 *     choice, or a rank below PAPCOLL_MIN_BYTES), whose messages use the MPI's internal
 *     tags; in a papcoll schedule, which of their receives are posted depends on the
 *     schedule of their count, not this rank's.
 *   - Let the rank that decided auto's call find it itself: the decision goes one way
 *     (decider -> others, choice_sharing.c) so that the late rank pays one receive; an
 *     answer would put a round trip on every first call of a shape, and every forced
 *     algorithm's call would need one too.
 * MPI calls the program erroneous, and MPICH itself aborts on a truncated message. Aborting
 * from the rank that knows why puts papcoll's message, not a silent hang, before the user. */
static atomic_int mismatch_ends_job;

void papcoll_set_mismatch_ends_job(int ends_job) {
    atomic_store(&mismatch_ends_job, ends_job != 0);
}

int record_mismatch(MPI_Comm comm, int code, const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    message_vwrite(last_message, sizeof last_message, format, arguments);
    va_end(arguments);
    last_code = code;
    if (atomic_load(&mismatch_ends_job)) {
        fprintf(stderr, "%s\npapcoll: the other ranks wait inside this all-reduce for a rank "
                "whose call differs, which cannot complete: ending the job (MPI_Abort)\n",
                last_message);
        fflush(stderr);
        MPI_Abort(comm, code);
    }
    return code;
}

const char *papcoll_error_string(int code) {
    if (code == last_code && code != MPI_SUCCESS) return last_message;
    switch (code) {
    case MPI_SUCCESS: return "success";
    case MPI_ERR_BUFFER: return "invalid buffer";
    case MPI_ERR_COUNT: return "invalid count";
    case MPI_ERR_TYPE: return "invalid or unsupported datatype";
    case MPI_ERR_OP: return "invalid op, or an op the algorithm cannot take";
    case MPI_ERR_ARG: return "invalid argument";
    case MPI_ERR_COMM: return "invalid communicator";
    case MPI_ERR_NO_MEM: return "out of memory";
    case MPI_ERR_INTERN: return "internal error";
    default: return "MPI error (see MPI_Error_string)";
    }
}
