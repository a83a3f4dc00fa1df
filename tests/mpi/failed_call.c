/* failed_call.c - a call that fails with messages in flight leaves none of its requests
 * outstanding, refuses every later call with a message saying why, and frees cleanly (under
 * AddressSanitizer: no use after free of the scratch). P = 2.
 *
 * How it fails: counts that differ (an erroneous program, which MPI need not catch) with
 * messages cut into pieces of 10 elements. Rank 0 calls with 100 elements, rank 1 with 95:
 * recursive_doubling swaps whole vectors, so rank 1's last 5-element receive meets a
 * 10-element piece (MPI_ERR_TRUNCATE) while its other pieces may still be in flight. Rank
 * 0 gets all it waits for (short pieces are legal) and returns. */
#include <stdlib.h>

#include "expect.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0) fprintf(stderr, "failed_call: run with 2 ranks\n");
        MPI_Finalize();
        return 2;
    }
    papcoll_config config;
    papcoll_config_init(&config);
    config.algorithm = "recursive_doubling";
    config.max_message_elements = 10;
    papcoll_comm *pc;
    expect("create", papcoll_comm_create(MPI_COMM_WORLD, &config, &pc), MPI_SUCCESS,
           "success");
    static float input[100], output[100];
    int code = papcoll_allreduce(pc, input, output, rank == 0 ? 100 : 95, MPI_FLOAT, MPI_SUM);
    if (rank == 1) {
        /* MPICH reports the truncation as MPI_ERR_TRUNCATE, Open MPI as MPI_ERR_IN_STATUS
         * or MPI_ERR_TRUNCATE depending on the wait that saw it: either is an error */
        expect("the mismatched call fails", code != MPI_SUCCESS ? MPI_ERR_TRUNCATE : code,
               MPI_ERR_TRUNCATE, "");
        expect("a later call is refused", papcoll_allreduce(pc, input, output, 95, MPI_FLOAT,
                                                            MPI_SUM),
               MPI_ERR_OTHER, "failed during an earlier call, with messages in flight");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    expect("free", papcoll_comm_free(&pc), MPI_SUCCESS, "success");

    int failed_anywhere;
    MPI_Allreduce(&failures, &failed_anywhere, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("%d passed, %d failed\n", checks - failures, failures);
    MPI_Finalize();
    return failed_anywhere ? 1 : 0;
}
