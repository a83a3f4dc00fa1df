/* threads_posting.c - an MPI_THREAD_MULTIPLE program for the drop-in: the main thread and
 * THREADS - 1 others post MPI_Iallreduce at once, each on a communicator of its own (made by
 * the main thread, so each has its papcoll communicator), ROUNDS times, and each result is
 * compared bit for bit with PMPI_Allreduce's, the MPI's own (argv: THREADS ROUNDS). The
 * main thread's posts run on papcoll while the others' go to the MPI (docs/pmpi.md,
 * other_thread): papcoll's engine, the drop-in's records and its counts are then used from
 * several threads at once. Sums of small integers in doubles: exact in any order. Prints
 * "threads_posting: CHECKS passed, WRONG failed". */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct worker {
    int index, rounds, rank, checks, wrong;
    MPI_Comm comm;
} worker;

static void *post_rounds(void *argument) {
    worker *w = argument;
    for (int round = 0; round < w->rounds; round++) {
        int count = 9000 + 97 * w->index + 31 * (round % 5);
        double *input = malloc((size_t)count * sizeof *input);
        double *output = malloc((size_t)count * sizeof *output);
        double *expected = malloc((size_t)count * sizeof *expected);
        for (int i = 0; i < count; i++)
            input[i] = (double)((w->rank + 1) * (i % 89 + w->index + round));
        MPI_Request request;
        int code = MPI_Iallreduce(input, output, count, MPI_DOUBLE, MPI_SUM, w->comm,
                                  &request);
        if (code == MPI_SUCCESS) code = MPI_Wait(&request, MPI_STATUS_IGNORE);
        PMPI_Allreduce(input, expected, count, MPI_DOUBLE, MPI_SUM, w->comm);
        w->checks++;
        int bad = code != MPI_SUCCESS;
        for (int i = 0; i < count && !bad; i++) bad = output[i] != expected[i];
        if (bad && w->wrong++ == 0)
            printf("threads_posting: FAIL rank %d thread %d round %d (code %d)\n", w->rank,
                   w->index, round, code);
        free(input);
        free(output);
        free(expected);
    }
    return NULL;
}

int main(int argc, char **argv) {
    int provided = MPI_THREAD_SINGLE, rank = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int threads = argc > 1 ? atoi(argv[1]) : 4, rounds = argc > 2 ? atoi(argv[2]) : 20;
    if (provided < MPI_THREAD_MULTIPLE || threads < 1 || threads > 32) {
        if (rank == 0) printf("threads_posting: needs MPI_THREAD_MULTIPLE and 1-32 threads\n");
        MPI_Finalize();
        return 2;
    }
    worker workers[32];
    pthread_t running[32];
    for (int t = 0; t < threads; t++) {
        workers[t] = (worker){.index = t, .rounds = rounds, .rank = rank};
        MPI_Comm_dup(MPI_COMM_WORLD, &workers[t].comm);
    }
    for (int t = 1; t < threads; t++) pthread_create(&running[t], NULL, post_rounds, &workers[t]);
    post_rounds(&workers[0]);
    int totals[2] = {workers[0].checks, workers[0].wrong};
    for (int t = 1; t < threads; t++) {
        pthread_join(running[t], NULL);
        totals[0] += workers[t].checks;
        totals[1] += workers[t].wrong;
    }
    for (int t = 0; t < threads; t++) MPI_Comm_free(&workers[t].comm);
    PMPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("threads_posting: %d passed, %d failed\n", totals[0] - totals[1], totals[1]);
    MPI_Finalize();
    return totals[1] != 0;
}
