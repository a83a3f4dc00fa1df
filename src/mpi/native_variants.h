/* native_variants.h - the MPI library's own all-reduce algorithms as choices of `auto`.
 *
 * Where auto runs native it used to run MPI_Allreduce as the library chose, and the
 * library's default is not its fastest algorithm everywhere: MPICH 5.0.2 at 1 KiB, P = 4 on
 * shared memory took 54.5 us by default and 31.3 us with its own recursive doubling
 * (docs/benchmarks.md). No choice between MPI_Allreduce and papcoll's schedules can reach
 * that, so auto may also run the library's named algorithms, which MPICH lets a program
 * pick before each call through MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM (MPI_T). Which one is
 * fastest for a shape is measured, not modelled (native_feedback.c).
 *
 * The candidates: PAPCOLL_NATIVE_VARIANTS, a comma-separated list of the library's names
 * ("recursive_doubling,reduce_scatter_allgather,ring" where unset; "none": the default
 * only). They are used only where they can be:
 *   - MPICH, which reads the variable on every call. Open MPI copies its choice into a
 *     communicator when the communicator is made (and only with dynamic rules on), so
 *     there auto keeps the library's default; naming variants there is an error.
 *   - The variable at "auto": a user who forced an algorithm keeps it; naming variants
 *     then is an error too.
 *   - MPI below MPI_THREAD_MULTIPLE. The variable is the whole process's: papcoll sets it
 *     just before its own MPI_Allreduce and puts it back right after, which no other
 *     call can see where only one thread calls MPI at a time. Under MPI_THREAD_MULTIPLE
 *     another thread's all-reduce in between could run one algorithm on some ranks and
 *     another on the rest (a hang), so there auto keeps the default, and naming variants
 *     is an error.
 *   - The AUTOMATIC arrival source, the one that measures calls; more than one rank (a
 *     list named at one rank is checked as at any size, and then the default runs).
 * Every rank must name the same list (checked at papcoll_comm_create: a rank that ran
 * another algorithm would wait for messages that never come). Each call reads the variable
 * before setting it: where the program forced an algorithm since, it runs that one. */
#ifndef PAPCOLL_MPI_NATIVE_VARIANTS_H
#define PAPCOLL_MPI_NATIVE_VARIANTS_H

#include <mpi.h>
#include <stdint.h>

#include "mpi_features.h"

enum { NATIVE_VARIANTS_MOST = 6, NATIVE_NAME_MOST = 40 };

typedef struct native_variants {
    int count;                    /* 1 + the named algorithms; 1: the default only */
    char names[NATIVE_VARIANTS_MOST][48]; /* "native", then "native:NAME" */
    int values[NATIVE_VARIANTS_MOST];     /* the variable's values; [0]: the default's */
#if PAPCOLL_HAVE_MPI_T
    MPI_T_cvar_handle handle;
#endif
    int mpi_t_open;               /* MPI_T_init_thread succeeded: finalize at close */
} native_variants;

#define NATIVE_VARIANTS_DEFAULT "recursive_doubling,reduce_scatter_allgather,ring"

/* Reads PAPCOLL_NATIVE_VARIANTS and the MPI library's algorithms, on this rank alone:
 * ranks, the communicator's size; measured: the arrival source measures calls (AUTOMATIC),
 * without which nothing chooses among them. digest: this rank's choices, for the ranks to
 * compare (papcoll_comm_create, in the config's reduction); named: the list was named.
 * MPI_SUCCESS, or an error recorded with a message naming the problem (an unknown name
 * lists the library's). Closed with native_variants_close, whatever it returned. */
int native_variants_choose(native_variants *variants, int ranks, int measured,
                           int64_t *digest, int *named);
/* After the comparison: same, every rank's digest is this one's; any_named, some rank
 * named a list. Every rank must end with the same list: where they differ and a rank named
 * one, an error (a rank that ran another algorithm would wait for messages that never
 * come). */
int native_variants_settle(native_variants *variants, int same, int any_named);
void native_variants_close(native_variants *variants);

/* MPI_Allreduce with variant (0: the library's default choice), the variable restored
 * after. */
int native_variants_allreduce(const native_variants *variants, int variant,
                              const void *sendbuf, void *recvbuf, int count,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);

#endif /* PAPCOLL_MPI_NATIVE_VARIANTS_H */
