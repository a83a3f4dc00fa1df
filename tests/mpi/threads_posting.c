/* threads_posting.c - threads of one process that post papcoll_iallreduce at once, each on
 * a papcoll communicator of its own, under MPI_THREAD_MULTIPLE (argv: THREADS ROUNDS
 * [ALGORITHM [wait]]; "wait" completes with MPI_Wait, where MPI's progress hook advances
 * papcoll, instead of papcoll_wait). Every result is compared bit for bit with
 * MPI_Allreduce's on the thread's own communicator: the sums are of small integers in
 * doubles, exact in any order. Counts differ by thread and round, so that threads build and
 * cache plans, take tags and finish operations at the same time, while one thread's wait
 * advances the others' operations (progress.c: whoever holds the engine advances all). */
#include <pthread.h>
#include <stdlib.h>

#include "expect.h"

typedef struct worker {
    int index, rounds, use_mpi_wait;
    MPI_Comm comm;
    papcoll_comm *pc;
    int wrong, failed_calls, calls;
} worker;

static void *post_rounds(void *argument) {
    worker *w = argument;
    for (int round = 0; round < w->rounds; round++) {
        int count = 2000 + 97 * w->index + 31 * (round % 7);
        double *input = malloc((size_t)count * sizeof *input);
        double *output = malloc((size_t)count * sizeof *output);
        double *expected = malloc((size_t)count * sizeof *expected);
        for (int i = 0; i < count; i++) input[i] = (double)((rank + 1) * (i % 101 + w->index));
        MPI_Request request = MPI_REQUEST_NULL;
        int code = papcoll_iallreduce(w->pc, input, output, count, MPI_DOUBLE, MPI_SUM,
                                      &request);
        if (code == MPI_SUCCESS)
            code = w->use_mpi_wait ? MPI_Wait(&request, MPI_STATUS_IGNORE)
                                   : papcoll_wait(&request, MPI_STATUS_IGNORE);
        w->calls++;
        if (code != MPI_SUCCESS) {
            if (w->failed_calls++ == 0)
                printf("FAIL rank %d thread %d round %d: %s\n", rank, w->index, round,
                       papcoll_error_string(code));
        } else {
            MPI_Allreduce(input, expected, count, MPI_DOUBLE, MPI_SUM, w->comm);
            for (int i = 0; i < count; i++)
                if (output[i] != expected[i]) {
                    if (w->wrong++ == 0)
                        printf("FAIL rank %d thread %d round %d: element %d is %g, MPI "
                               "says %g\n", rank, w->index, round, i, output[i],
                               expected[i]);
                    break;
                }
        }
        free(input);
        free(output);
        free(expected);
    }
    return NULL;
}

int main(int argc, char **argv) {
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int threads = argc > 1 ? atoi(argv[1]) : 4, rounds = argc > 2 ? atoi(argv[2]) : 50;
    if (provided < MPI_THREAD_MULTIPLE || threads < 1 || threads > 64) {
        if (rank == 0) printf("threads_posting: needs MPI_THREAD_MULTIPLE and 1-64 threads\n");
        MPI_Finalize();
        return 2;
    }
    papcoll_config config;
    papcoll_config_init(&config);
    if (argc > 3) config.algorithm = argv[3];
    worker workers[64];
    for (int t = 0; t < threads; t++) {
        workers[t] = (worker){.index = t, .rounds = rounds,
                              .use_mpi_wait = argc > 4 && papcoll_mpi_advances_requests()};
        MPI_Comm_dup(MPI_COMM_WORLD, &workers[t].comm);
        expect("create a communicator per thread",
               papcoll_comm_create(workers[t].comm, &config, &workers[t].pc), MPI_SUCCESS,
               "success");
    }
    pthread_t running[64];
    for (int t = 0; t < threads; t++) pthread_create(&running[t], NULL, post_rounds, &workers[t]);
    int calls = 0, wrong = 0, failed_calls = 0;
    for (int t = 0; t < threads; t++) {
        pthread_join(running[t], NULL);
        calls += workers[t].calls;
        wrong += workers[t].wrong;
        failed_calls += workers[t].failed_calls;
    }
    checks += calls;
    failures += wrong + failed_calls;
    for (int t = 0; t < threads; t++) {
        expect("free", papcoll_comm_free(&workers[t].pc), MPI_SUCCESS, "success");
        MPI_Comm_free(&workers[t].comm);
    }
    int failed_anywhere = 0;
    MPI_Allreduce(&failures, &failed_anywhere, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("%d passed, %d failed\n", checks - failures, failures);
    MPI_Finalize();
    return failed_anywhere ? 1 : 0;
}
