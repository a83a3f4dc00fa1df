#define _POSIX_C_SOURCE 200809L /* setenv */
/* tag_counter.c - the non-blocking and persistent all-reduce's tags from a counter
 * (src/mpi/tag_counter.c, docs/nonblocking.md "Tags"):
 *   - 16 posts outstanding at once on one communicator, completed in reverse order on even
 *     ranks and in a shuffled order on odd ones, every result equal to MPI_Allreduce's on
 *     the same input; none waited for another's tags, and on rank 0 all 16 held their
 *     tags at once (rank 0 posts them all before rank 1 posts any: a post never waits);
 *   - 3000 persistent requests alive at once on one communicator, all started and
 *     completed in reverse order, each result equal to MPI_Allreduce's: with a duplicated
 *     communicator per request MPICH runs out of context ids near 2048; and none of them
 *     duplicated a communicator (this program's MPI_Comm_dup, below, counts the library's).
 * Run it with PAPCOLL_TAG_LIMIT=32767 (the least MPI_TAG_UB MPI allows) too, where the
 * counter has 32768 tags and persistent requests need their own communicators again (a request's range
 * holds any schedule auto may run, up to 32769 tags; the test then makes 500, each with its
 * duplicate), and where the counter comes round:
 *   - 16400 posts outstanding at once, 2 tags each (ring): the last 16 get the ranges of
 *     the first 16, which rank 0 still holds (rank 1 has posted nothing yet), so exactly
 *     16 wait on rank 0; every result equals MPI_Allreduce's. */
#include <stdlib.h>

#include "common/progress_setting.h"
#include "expect.h"

static int ranks;

/* Communicators the library duplicated: this definition comes before the MPI's, as a
 * profiling layer's does (MPI-4.1 15.2). */
static int duplicates;
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm) {
    duplicates++;
    return PMPI_Comm_dup(comm, newcomm);
}

static int wait_for(MPI_Request *request) {
    if (papcoll_mpi_advances_requests()) return MPI_Wait(request, MPI_STATUS_IGNORE);
    return papcoll_wait(request, MPI_STATUS_IGNORE);
}

/* rank- and operation-dependent values, so that a swapped result shows */
static void fill(long *buffer, int count, int operation) {
    for (int i = 0; i < count; i++) buffer[i] = (long)(rank + 1) * (i + 1) + 1000L * operation;
}

/* MPI_Allreduce of the same input, compared element by element. */
static int differs_from_mpi(const long *result, const long *input, int count) {
    long *expected = malloc((size_t)count * sizeof *expected);
    MPI_Allreduce(input, expected, count, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    int wrong = 0;
    for (int i = 0; i < count; i++) wrong += result[i] != expected[i];
    free(expected);
    return wrong;
}

static void sixteen_outstanding(papcoll_comm *pc) {
    enum { OPERATIONS = 16, COUNT = 4099 };
    long *input[OPERATIONS], *output[OPERATIONS];
    MPI_Request requests[OPERATIONS];
    int posted = MPI_SUCCESS, token = 1;
    if (rank == 1) MPI_Recv(&token, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int k = 0; k < OPERATIONS; k++) {
        input[k] = malloc(COUNT * sizeof(long));
        output[k] = malloc(COUNT * sizeof(long));
        fill(input[k], COUNT, k);
        int code = papcoll_iallreduce(pc, input[k], output[k], COUNT, MPI_LONG, MPI_SUM,
                                      &requests[k]);
        if (code != MPI_SUCCESS) posted = code;
    }
    expect("post 16 at once", posted, MPI_SUCCESS, "success");
    int holding = 0;
    int64_t waited = -1;
    papcoll_tag_holders(pc, &holding, &waited);
    /* rank 0's peers have posted nothing yet: none of its operations can have finished */
    if (rank == 0 && ranks > 1)
        expect("all 16 hold their tags at once (rank 0, before rank 1 posts)",
               holding == OPERATIONS ? MPI_SUCCESS : MPI_ERR_OTHER, MPI_SUCCESS, "success");
    if (rank == 0 && ranks > 1) MPI_Send(&token, 1, MPI_INT, 1, 9, MPI_COMM_WORLD);
    int order[OPERATIONS];
    for (int j = 0; j < OPERATIONS; j++) order[j] = OPERATIONS - 1 - j;
    if (rank % 2 == 1) { /* a shuffle, the same seed on every odd rank */
        srand(12345);
        for (int j = OPERATIONS - 1; j > 0; j--) {
            int other = rand() % (j + 1), kept = order[j];
            order[j] = order[other];
            order[other] = kept;
        }
    }
    int code = MPI_SUCCESS;
    for (int j = 0; j < OPERATIONS; j++) {
        int failed = wait_for(&requests[order[j]]);
        if (failed != MPI_SUCCESS) code = failed;
    }
    expect("16 completed in reverse (even ranks) or shuffled (odd ranks) order", code,
           MPI_SUCCESS, "success");
    int wrong = 0;
    for (int k = 0; k < OPERATIONS; k++) {
        wrong += differs_from_mpi(output[k], input[k], COUNT);
        free(input[k]);
        free(output[k]);
    }
    expect("16 results equal MPI_Allreduce's", wrong == 0 ? MPI_SUCCESS : MPI_ERR_OTHER,
           MPI_SUCCESS, "success");
    papcoll_tag_holders(pc, &holding, &waited);
    expect("no post waited for another's tags", waited == 0 ? MPI_SUCCESS : MPI_ERR_OTHER,
           MPI_SUCCESS, "success");
}

static void counter_comes_round(papcoll_comm *pc) {
    enum { OPERATIONS = 16384 + 16, COUNT = 3 };
    long *input = malloc(OPERATIONS * COUNT * sizeof *input);
    long *output = malloc(OPERATIONS * COUNT * sizeof *output);
    MPI_Request *requests = malloc(OPERATIONS * sizeof *requests);
    int64_t waited_before = 0, waited = 0;
    papcoll_tag_holders(pc, NULL, &waited_before);
    int code = MPI_SUCCESS, token = 1;
    if (rank == 1) MPI_Recv(&token, 1, MPI_INT, 0, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int k = 0; k < OPERATIONS && code == MPI_SUCCESS; k++) {
        fill(input + (size_t)k * COUNT, COUNT, k);
        code = papcoll_iallreduce(pc, input + (size_t)k * COUNT, output + (size_t)k * COUNT,
                                  COUNT, MPI_LONG, MPI_SUM, &requests[k]);
    }
    expect("16400 posts outstanding at once", code, MPI_SUCCESS, "success");
    papcoll_tag_holders(pc, NULL, &waited);
    if (rank == 0 && ranks > 1)
        expect("the last 16 wait for the first 16's tags (rank 0, before rank 1 posts)",
               waited - waited_before == 16 ? MPI_SUCCESS : MPI_ERR_OTHER, MPI_SUCCESS,
               "success");
    if (rank == 0 && ranks > 1) MPI_Send(&token, 1, MPI_INT, 1, 10, MPI_COMM_WORLD);
    for (int k = OPERATIONS - 1; k >= 0 && code == MPI_SUCCESS; k--)
        code = wait_for(&requests[k]);
    expect("completed in reverse order", code, MPI_SUCCESS, "success");
    int wrong = code == MPI_SUCCESS ? differs_from_mpi(output, input, OPERATIONS * COUNT) : 1;
    expect("their results equal MPI_Allreduce's", wrong == 0 ? MPI_SUCCESS : MPI_ERR_OTHER,
           MPI_SUCCESS, "success");
    free(input);
    free(output);
    free(requests);
}

static void many_persistent(papcoll_comm *pc, int requests) {
    enum { COUNT = 3 };
    papcoll_persistent **persistent = calloc((size_t)requests, sizeof *persistent);
    long *input = malloc((size_t)requests * COUNT * sizeof *input);
    long *output = malloc((size_t)requests * COUNT * sizeof *output);
    MPI_Request *started = malloc((size_t)requests * sizeof *started);
    int code = MPI_SUCCESS, made = 0, duplicates_before = duplicates;
    for (; made < requests && code == MPI_SUCCESS; made++) {
        fill(input + made * COUNT, COUNT, made);
        code = papcoll_allreduce_init(pc, input + made * COUNT, output + made * COUNT, COUNT,
                                      MPI_LONG, MPI_SUM, &persistent[made]);
    }
    if (code != MPI_SUCCESS) made--;
    char what[96];
    snprintf(what, sizeof what, "%d persistent requests alive on one communicator", requests);
    expect(what, code, MPI_SUCCESS, "success");
    const char *limit = getenv("PAPCOLL_TAG_LIMIT");
    int expected = limit != NULL && limit[0] != '\0' ? made : 0;
    expect("communicators duplicated for them: none (one each under the tag limit)",
           duplicates - duplicates_before == expected ? MPI_SUCCESS : MPI_ERR_OTHER,
           MPI_SUCCESS, "success");
    for (int k = 0; k < made && code == MPI_SUCCESS; k++)
        code = papcoll_start(persistent[k], &started[k]);
    for (int k = made - 1; k >= 0 && code == MPI_SUCCESS; k--) code = wait_for(&started[k]);
    expect("each started, completed in reverse order", code, MPI_SUCCESS, "success");
    int wrong = 0;
    if (code == MPI_SUCCESS)
        wrong = differs_from_mpi(output, input, made * COUNT);
    expect("their results equal MPI_Allreduce's", wrong == 0 ? MPI_SUCCESS : MPI_ERR_OTHER,
           MPI_SUCCESS, "success");
    for (int k = 0; k < made; k++) papcoll_persistent_free(&persistent[k]);
    free(persistent);
    free(input);
    free(output);
    free(started);
}

int main(int argc, char **argv) {
    start_mpi_for_progress_setting(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    papcoll_config config;
    papcoll_config_init(&config);
    config.algorithm = "ring"; /* papcoll's own schedule, which needs tags (auto may not) */
    papcoll_comm *pc = NULL;
    expect("create", papcoll_comm_create(MPI_COMM_WORLD, &config, &pc), MPI_SUCCESS,
           "success");
    const char *limit = getenv("PAPCOLL_TAG_LIMIT");
    int limited = limit != NULL && limit[0] != '\0';
    sixteen_outstanding(pc);
    if (limited) counter_comes_round(pc);
    many_persistent(pc, limited ? 500 : 3000);
    expect("free the communicator", papcoll_comm_free(&pc), MPI_SUCCESS, "success");
    int sums[2], mine[2] = {checks - failures, failures};
    MPI_Reduce(mine, sums, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("%d passed, %d failed\n", sums[0], sums[1]);
    MPI_Finalize();
    return failures > 0;
}
