/* count_mismatch.c - an erroneous MPI program for the drop-in: rank 0
 * passes MPI_Allreduce DELTA more elements than the others (argv: COUNT DELTA [HANDLER
 * [ODD_RANK [CALL]]]; ODD_RANK, default 0, names another rank to pass them instead; CALL
 * "nonblocking" makes the call MPI_Iallreduce and MPI_Wait instead). MPI forbids
 * it, and MPICH itself aborts ("Message truncated"); under libpapcoll_pmpi.so it must fail
 * no worse: a clear error and an end, never a segmentation fault (papcoll once cancelled
 * sends, which crashed MPICH's UCX layer) or a silent success with a wrong sum where a
 * message came short (papcoll checks what each receive got). Prints
 * "count_mismatch: rank R returned CODE TEXT" where a call returned (the default handler is
 * fatal; argv[3] "return" sets MPI_ERRORS_RETURN, and TEXT is the code's MPI_Error_string). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int base = argc > 1 ? atoi(argv[1]) : 1000, delta = argc > 2 ? atoi(argv[2]) : 7;
    /* "return": MPI_ERRORS_RETURN, and the error's MPI_Error_string printed ("fatal": the
     * default handler) */
    int returning = argc > 3 && argv[3][0] == 'r';
    if (returning) MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int odd_rank = argc > 4 ? atoi(argv[4]) : 0;
    int count = base + (rank == odd_rank ? delta : 0);
    double *input = calloc((size_t)count, sizeof *input);
    double *output = calloc((size_t)count, sizeof *output);
    int nonblocking = argc > 5 && argv[5][0] == 'n';
    int code = MPI_SUCCESS;
    if (nonblocking) {
        MPI_Request request = MPI_REQUEST_NULL;
        code = MPI_Iallreduce(input, output, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                              &request);
        if (code == MPI_SUCCESS) code = MPI_Wait(&request, MPI_STATUS_IGNORE);
    } else {
        code = MPI_Allreduce(input, output, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    char text[MPI_MAX_ERROR_STRING] = "";
    int length = 0;
    if (code != MPI_SUCCESS) MPI_Error_string(code, text, &length);
    printf("count_mismatch: rank %d returned %d %s\n", rank, code, text);
    free(input);
    free(output);
    MPI_Finalize();
    return 0;
}
