/* element_types.h - the element types papcoll's MPI programs (papcoll-bench,
 * papcoll-calibrate) accept, by the names `--datatype` / `--datatypes` take: MPI's predefined
 * numeric types, named as MPI names them without "MPI_" (and "_T"), in lower case. One
 * table, so the programs (and python/papcoll/lab/bench.py's DATATYPES, which a test compares
 * with papcoll-bench) agree. */
#ifndef PAPCOLL_BENCH_ELEMENT_TYPES_H
#define PAPCOLL_BENCH_ELEMENT_TYPES_H

#include <mpi.h>

/* What filling and checking data need to know of an element type. */
typedef enum { KIND_SIGNED, KIND_UNSIGNED, KIND_REAL, KIND_COMPLEX } element_kind;

typedef struct element_type {
    const char *name;
    MPI_Datatype datatype;
    element_kind kind;
} element_type;

/* How many types the table names (some may be missing from a given MPI). */
int element_type_count(void);
/* Type number `index` of the table into *found; 0 if this MPI lacks it. */
int element_type_at(int index, element_type *found);
/* The type named `name` into *found; 0 if unknown or missing from this MPI. */
int find_element_type(const char *name, element_type *found);

#endif
