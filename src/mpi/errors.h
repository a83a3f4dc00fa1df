/* errors.h - how the MPI side of papcoll reports errors: an MPI error class returned, with
 * a message kept per thread for papcoll_error_string (errors.c). */
#ifndef PAPCOLL_MPI_ERRORS_H
#define PAPCOLL_MPI_ERRORS_H

#include <mpi.h>

/* Records the message of an error for papcoll_error_string; returns code. */
int record_error(int code, const char *format, ...) __attribute__((format(printf, 2, 3)));

/* The same for an error that says the ranks' calls differ (count or datatype), found on this
 * rank only, so that ranks of comm wait for it inside the operation: where
 * papcoll_set_mismatch_ends_job(1) was called, prints the message and ends the job
 * (MPI_Abort on comm); otherwise records it like record_error and returns code. */
int record_mismatch(MPI_Comm comm, int code, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

#endif /* PAPCOLL_MPI_ERRORS_H */
