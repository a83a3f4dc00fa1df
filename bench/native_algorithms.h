/* native_algorithms.h - runs the MPI library's own all-reduce algorithms one by one, so the
 * benchmark can put papcoll side by side with each of them ("native:ring", ...).
 *
 * MPICH reads MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM on every call, so the benchmark writes it
 * through MPI_T just before each timed call and interleaves algorithms iteration by
 * iteration. Open MPI's tuned component copies coll_tuned_allreduce_algorithm into a
 * communicator when the communicator is created, so each native algorithm gets its own
 * duplicate communicator made right after the write (needs coll_tuned_use_dynamic_rules=1
 * from the environment, which `papcoll bench` sets); that too interleaves.
 */
#ifndef PAPCOLL_BENCH_NATIVE_ALGORITHMS_H
#define PAPCOLL_BENCH_NATIVE_ALGORITHMS_H

#include <mpi.h>
#include <stddef.h>

typedef struct native_algorithm {
    MPI_Comm comm;          /* run MPI_Allreduce on this communicator */
    int forced_value;       /* MPICH: the cvar value to write before each call; -1: none */
} native_algorithm;

/* Sets up `name`: "" for the library's default choice, else one of the library's algorithm
 * names. Collective over comm. Returns 0 and writes a message naming the problem (and the
 * names the library knows) when the library cannot be told to use it. */
int native_algorithm_open(const char *name, MPI_Comm comm, native_algorithm *out,
                          char *message, size_t message_size);

/* Around each MPI_Allreduce of this algorithm: select before, restore the default after. */
void native_algorithm_select(const native_algorithm *algorithm);
void native_algorithm_restore(const native_algorithm *algorithm);

void native_algorithm_close(native_algorithm *algorithm);

/* The names "native:NAME" takes in this library, comma separated, into known: what
 * native_algorithm_open would accept. Works before MPI_Init (MPI_T and the library version
 * do), so `papcoll bench` checks its --algorithms before it starts a job. Returns 0 where
 * the library has no control variable that chooses its algorithm, or does not show it
 * before MPI_Init (known is then empty). */
int native_algorithm_names(char *known, size_t known_size);
/* Closes what native_algorithm_names opened (MPI_T), where it is the program's last call. */
void native_algorithm_names_done(void);

/* "MPICH 5.0.2", "Open MPI v5.0.8", ...: the first line of MPI_Get_library_version. */
void native_library_name(char *name, size_t size);

#endif
