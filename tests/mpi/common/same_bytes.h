/* same_bytes.h (tests) - whether a result is bitwise the same on every rank, for the MPI
 * programs that know nothing of papcoll (tests/pmpi/), which abort where a result is wrong
 * rather than count checks. Header-only, as the other shared parts of the test programs. */
#ifndef PAPCOLL_TESTS_MPI_SAME_BYTES_H
#define PAPCOLL_TESTS_MPI_SAME_BYTES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

/* Gathers the `bytes` bytes at data to rank 0 of comm, which aborts (exit 3), naming
 * `program`, `what` and the first rank that differs, where any rank's differ from its own.
 * Collective over comm. */
static inline void require_same_bytes(const void *data, int bytes, MPI_Comm comm,
                                      const char *program, const char *what) {
    int comm_rank, comm_size;
    MPI_Comm_rank(comm, &comm_rank);
    MPI_Comm_size(comm, &comm_size);
    char *all = comm_rank == 0 ? malloc((size_t)bytes * comm_size + 1) : NULL;
    MPI_Gather(data, bytes, MPI_BYTE, all, bytes, MPI_BYTE, 0, comm);
    for (int r = 1; comm_rank == 0 && r < comm_size; r++)
        if (memcmp(all, all + (size_t)r * bytes, (size_t)bytes) != 0) {
            fprintf(stderr, "%s: %s: rank %d of the communicator holds other bytes than its "
                    "rank 0\n", program, what, r);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    free(all);
}

#endif /* PAPCOLL_TESTS_MPI_SAME_BYTES_H */
