/* first_calls_unmodified.c - an MPI program that knows nothing of papcoll and whose first
 * collectives on each communicator are non-blocking and persistent all-reduces, as a new
 * user's might be (tests/python/test_pmpi.py runs it with and without libpapcoll_pmpi.so).
 * Nothing blocking comes first, so the drop-in must have made its own communicator
 * already: at MPI_Init for MPI_COMM_WORLD, in the constructor for the others.
 *
 * On MPI_COMM_WORLD, on a duplicate of it and on a split of it in reversed rank order:
 * MPI_Iallreduce then MPI_Allreduce_init (on the split the other way round), 128 KiB of
 * doubles a rank (above the drop-in's default PAPCOLL_MIN_BYTES, so papcoll takes them);
 * the persistent request started three times with new values at each start. Every result
 * is compared with the MPI's own answer (MPI_Reduce then MPI_Bcast, which the drop-in does
 * not touch) and with the closed form: rank r gives (r + 1)(i % 7 + 1)(round + 1) at
 * element i, integers, so every order of the sum gives the same doubles.
 * With "idup": then one MPI_Iallreduce on a communicator from MPI_Comm_idup, which the
 * drop-in cannot prepare (it goes to the MPI, said once, counted).
 * Prints "first_calls_unmodified: N checks passed" on rank 0 and exits 0, or names the
 * first failure. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { COUNT = 16384, ROUNDS = 3 };

static int checks;

static void fill(double *data, int rank, int round) {
    for (int i = 0; i < COUNT; i++) data[i] = (double)(rank + 1) * (i % 7 + 1) * (round + 1);
}

/* got against the MPI's own all-reduce of sent and against the closed form. */
static void check(const double *sent, const double *got, MPI_Comm comm, int round,
                  const char *what) {
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    double *expected = malloc(COUNT * sizeof *expected);
    MPI_Reduce(sent, expected, COUNT, MPI_DOUBLE, MPI_SUM, 0, comm);
    MPI_Bcast(expected, COUNT, MPI_DOUBLE, 0, comm);
    for (int i = 0; i < COUNT; i++) {
        double closed_form = (double)size * (size + 1) / 2 * (i % 7 + 1) * (round + 1);
        if (got[i] != expected[i] || got[i] != closed_form) {
            fprintf(stderr, "first_calls_unmodified (rank %d): %s: element %d is %.17g, the "
                    "MPI gave %.17g, the closed form %.17g\n", rank, what, i, got[i],
                    expected[i], closed_form);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    }
    free(expected);
    checks++;
}

static void post_and_wait(MPI_Comm comm, int rank) {
    double *in = malloc(COUNT * sizeof *in), *out = malloc(COUNT * sizeof *out);
    fill(in, rank, 0);
    MPI_Request request;
    MPI_Iallreduce(in, out, COUNT, MPI_DOUBLE, MPI_SUM, comm, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    check(in, out, comm, 0, "MPI_Iallreduce");
    free(in);
    free(out);
}

/* The persistent request made before anything else of this function: its first collective
 * when persistent_first. */
static void persistent(MPI_Comm comm, int rank, int persistent_first) {
    double *in = malloc(COUNT * sizeof *in), *out = malloc(COUNT * sizeof *out);
    MPI_Request request;
    MPI_Allreduce_init(in, out, COUNT, MPI_DOUBLE, MPI_SUM, comm, MPI_INFO_NULL, &request);
    if (persistent_first) post_and_wait(comm, rank);
    for (int round = 0; round < ROUNDS; round++) {
        fill(in, rank, round);
        memset(out, 0, COUNT * sizeof *out);
        MPI_Start(&request);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
        check(in, out, comm, round, "MPI_Allreduce_init, MPI_Start, MPI_Wait");
    }
    MPI_Request_free(&request);
    free(in);
    free(out);
}

static void first_calls(MPI_Comm comm, int persistent_first) {
    int rank;
    MPI_Comm_rank(comm, &rank);
    if (!persistent_first) post_and_wait(comm, rank);
    persistent(comm, rank, persistent_first);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    first_calls(MPI_COMM_WORLD, 0);
    MPI_Comm duplicate, reversed;
    MPI_Comm_dup(MPI_COMM_WORLD, &duplicate);
    first_calls(duplicate, 0);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &reversed);
    first_calls(reversed, 1);
    MPI_Comm_free(&duplicate);
    MPI_Comm_free(&reversed);
    if (argc > 1 && strcmp(argv[1], "idup") == 0) {
        MPI_Comm unprepared;
        MPI_Request request;
        MPI_Comm_idup(MPI_COMM_WORLD, &unprepared, &request);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
        post_and_wait(unprepared, rank);
        MPI_Comm_free(&unprepared);
    }
    if (rank == 0) printf("first_calls_unmodified: %d checks passed\n", checks);
    MPI_Finalize();
    return 0;
}
