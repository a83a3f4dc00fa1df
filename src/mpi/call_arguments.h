/* call_arguments.h - what an all-reduce call's arguments must be (call_arguments.c): MPI_
 * Allreduce's rules (count, datatype, op, the pair, buffers) and the algorithm set on the
 * communicator. Every check is local; each failure is recorded for papcoll_error_string. */
#ifndef PAPCOLL_MPI_CALL_ARGUMENTS_H
#define PAPCOLL_MPI_CALL_ARGUMENTS_H

#include "internal.h"

/* Whether pc's algorithm is "auto". */
int call_arguments_is_auto(const papcoll_comm *pc);
/* Records the error of an unknown algorithm name; returns MPI_ERR_ARG. */
int call_arguments_unknown_algorithm(const char *name);
/* A datatype MPI_Reduce_local can take and memcpy can move; gives its extent. */
int call_arguments_datatype(MPI_Datatype datatype, int64_t *extent);
/* An op that reduces (not MPI_REPLACE or MPI_NO_OP); says whether it commutes. */
int call_arguments_op(MPI_Op op, int *commutative);
/* That MPI_Reduce_local takes op on datatype (a predefined op on a datatype it is not
 * defined for, MPI_SUM on MPI_C_BOOL say, is refused); the last pair found good is kept. */
int call_arguments_pair(papcoll_comm *pc, MPI_Datatype datatype, MPI_Op op, int64_t extent);
/* What a call's checks found: the algorithm to run (NULL: auto, chosen per call), the
 * datatype's extent and whether the op commutes. */
typedef struct call_shape {
    const algorithm_entry *algorithm;
    int64_t extent;
    int commutative;
} call_shape;

/* This rank's checks of a call; on success *shape says what they found. */
int call_arguments_check(papcoll_comm *pc, const void *sendbuf, const void *recvbuf,
                         MPI_Count count, MPI_Datatype datatype, MPI_Op op, call_shape *shape);

/* The same, then, where the communicator checks agreement (PAPCOLL_CHECK), that every rank
 * makes the same call (agreement.h: collective, a small MPI_Allreduce): for the blocking
 * call and persistent init, never for a non-blocking post, which must not wait. */
int call_arguments_check_agreed(papcoll_comm *pc, const void *sendbuf, const void *recvbuf,
                                MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                                const char *caller, call_shape *shape);

#endif /* PAPCOLL_MPI_CALL_ARGUMENTS_H */
