/* native_names.h - the MPI library's own all-reduce algorithms, by name, through MPI_T.
 *
 * MPICH and Open MPI let a program pick their all-reduce algorithm through a control
 * variable (MPICH: MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM, read on every call; Open MPI:
 * coll_tuned_allreduce_algorithm, copied into a communicator when it is made). The values
 * are the library's, so they are looked up by name at run time, never hard-coded: a
 * library that renumbers its algorithms still works. Pure MPI; shared by the library
 * (native_variants.c: auto's choice among them) and papcoll-bench ("native:NAME"). */
#ifndef PAPCOLL_MPI_NATIVE_NAMES_H
#define PAPCOLL_MPI_NATIVE_NAMES_H

#include <mpi.h>
#include <stddef.h>

#define NATIVE_MPICH_VARIABLE "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM"
#define NATIVE_OPEN_MPI_VARIABLE "coll_tuned_allreduce_algorithm"

/* The value of algorithm `name` of control variable `index` into *value; 0 when the
 * variable has no such value. known (known_size bytes) gets the names it has, comma
 * separated, for an error message. MPI_T must be initialised. Values come from the MPI_T
 * enumeration where the library publishes one (Open MPI), else from the description, which
 * MPICH writes as one "name - text" line per value, in value order. */
int native_algorithm_value(int index, const char *name, int *value, char *known,
                           size_t known_size);

#endif /* PAPCOLL_MPI_NATIVE_NAMES_H */
