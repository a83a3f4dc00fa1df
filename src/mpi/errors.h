/* errors.h - how the MPI side of papcoll reports errors: an MPI error class returned, with
 * a message kept per thread for papcoll_error_string (errors.c). */
#ifndef PAPCOLL_MPI_ERRORS_H
#define PAPCOLL_MPI_ERRORS_H

#include <mpi.h>

/* Records the message of an error for papcoll_error_string; returns code. */
int record_error(int code, const char *format, ...) __attribute__((format(printf, 2, 3)));

#endif /* PAPCOLL_MPI_ERRORS_H */
