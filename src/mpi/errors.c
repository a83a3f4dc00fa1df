/* errors.c - the message of the last error, per thread, for papcoll_error_string: every unit
 * of the MPI side records its errors here, so none reaches into another to report one. */
#include "errors.h"

#include <stdarg.h>

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
