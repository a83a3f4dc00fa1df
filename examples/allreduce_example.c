/* allreduce_example.c - papcoll from C: sum a vector over all ranks, check it against
 * MPI_Allreduce, then try a few algorithms by name.
 *
 *   mpicc allreduce_example.c $(pkg-config --cflags --libs papcoll) -o allreduce_example
 *   mpiexec -n 4 ./allreduce_example
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <papcoll.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    papcoll_config config;
    papcoll_config_init(&config); /* algorithm "auto" */
    papcoll_comm *pc;
    int code = papcoll_comm_create(MPI_COMM_WORLD, &config, &pc);
    if (code != MPI_SUCCESS) {
        fprintf(stderr, "papcoll_comm_create: %s\n", papcoll_error_string(code));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    enum { count = 1000 };
    static long values[count], papcoll_sum[count], mpi_sum[count];
    for (int i = 0; i < count; i++) values[i] = (long)rank * count + i;
    MPI_Allreduce(values, mpi_sum, count, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);

    const char *algorithms[] = {"auto", "ring", "rabenseifner", "recursive_doubling"};
    int failures = 0;
    for (size_t a = 0; a < sizeof algorithms / sizeof algorithms[0]; a++) {
        papcoll_set_algorithm(pc, algorithms[a]);
        code = papcoll_allreduce(pc, values, papcoll_sum, count, MPI_LONG, MPI_SUM);
        const char *ran = "?";
        papcoll_resolve_algorithm(pc, count, MPI_LONG, MPI_SUM, &ran);
        int same = code == MPI_SUCCESS && memcmp(papcoll_sum, mpi_sum, sizeof mpi_sum) == 0;
        failures += !same;
        if (rank == 0)
            printf("%-20s ran %-20s %s\n", algorithms[a], ran,
                   same ? "matches MPI_Allreduce" : papcoll_error_string(code));
    }

    /* Limitations are errors, not surprises: an unknown name is refused with a message. */
    code = papcoll_set_algorithm(pc, "no_such_algorithm");
    if (rank == 0) printf("set_algorithm(\"no_such_algorithm\"): %s\n", papcoll_error_string(code));

    papcoll_comm_free(&pc);
    MPI_Finalize();
    return failures ? 1 : 0;
}
