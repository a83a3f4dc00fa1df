/* many_communicators.c - an MPI program that makes communicators and never frees them,
 * an all-reduce of 128 KiB on each (papcoll takes it, so the drop-in makes its own
 * communicator for each): prints "many_communicators: N (where)" on rank 0, N the
 * communicators made before the MPI ran out of context ids (at most argv[1], default 3000).
 * Natively MPICH
 * makes 2046; the drop-in once made three communicators of its own for each and ran out
 * after 511; test_hardening_mpi.py holds it to one. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int count = 16384;
    double *input = calloc((size_t)count, sizeof *input);
    double *output = calloc((size_t)count, sizeof *output);
    int made = 0, most = argc > 1 ? atoi(argv[1]) : 3000;
    const char *where = "none failed";
    for (; made < most; made++) {
        MPI_Comm comm;
        if (MPI_Comm_dup(MPI_COMM_WORLD, &comm) != MPI_SUCCESS) {
            where = "MPI_Comm_dup";
            break;
        }
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
        if (MPI_Allreduce(input, output, count, MPI_DOUBLE, MPI_SUM, comm) != MPI_SUCCESS) {
            where = "MPI_Allreduce";
            break;
        }
    }
    if (rank == 0) printf("many_communicators: %d (%s)\n", made, where);
    free(input);
    free(output);
    MPI_Finalize();
    return 0;
}
