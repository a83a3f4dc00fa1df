/* operations.h - MPI's predefined reduction ops by index: a name for messages, and a number
 * that means the same op on every rank (handles need not: Open MPI's are addresses). */
#ifndef PAPCOLL_MPI_OPERATIONS_H
#define PAPCOLL_MPI_OPERATIONS_H

#include <mpi.h>

/* The op's index among the predefined reduction ops, or -1 for a user-defined one. */
int predefined_op_index(MPI_Op op);
/* "MPI_SUM", ... for an index from predefined_op_index. */
const char *predefined_op_name(int index);

#endif /* PAPCOLL_MPI_OPERATIONS_H */
