/* errors.c - bad input gets an MPI error class and a message naming the problem, on every
 * rank, and never a crash or a hang; the communicator still works afterwards. */
#include "expect.h"

static void noncommutative(void *in, void *inout, int *length, MPI_Datatype *datatype) {
    (void)datatype;
    for (int i = 0; i < *length; i++) ((int *)inout)[i] = ((int *)in)[i] - ((int *)inout)[i];
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    papcoll_comm *pc;
    int input[4] = {1, 2, 3, 4}, output[4];

    papcoll_config config;
    papcoll_config_init(&config);
    config.algorithm = "warp_speed";
    expect("create with an unknown algorithm", papcoll_comm_create(MPI_COMM_WORLD, &config, &pc),
           MPI_ERR_ARG, "unknown algorithm 'warp_speed'");
    papcoll_config_init(&config);
    config.arrival_source = (papcoll_arrival_source)7;
    expect("create with an unknown arrival source",
           papcoll_comm_create(MPI_COMM_WORLD, &config, &pc), MPI_ERR_ARG,
           "arrival_source 7 is neither");
    papcoll_config_init(&config);
    config.grouping = PAPCOLL_GROUPS_COLOR;
    config.group_color = -1;
    expect("create with a negative group color",
           papcoll_comm_create(MPI_COMM_WORLD, &config, &pc), MPI_ERR_ARG,
           "colors must be >= 0");
    papcoll_config_init(&config);
    config.parameters.outer_algorithm = "teleport";
    expect("create with an unknown outer algorithm",
           papcoll_comm_create(MPI_COMM_WORLD, &config, &pc), MPI_ERR_ARG,
           "unknown outer algorithm 'teleport'");
    papcoll_config_init(&config);
    config.parameters.schedule = "a2,x";
    expect("create with a bad recursive multiplying schedule",
           papcoll_comm_create(MPI_COMM_WORLD, &config, &pc), MPI_ERR_ARG, "schedule 'a2,x'");
    papcoll_config_init(&config);
    config.algorithm = "hr1";
    config.parameters.outer_algorithm = "prr";
    expect("create hr1 with a PAP-aware outer algorithm",
           papcoll_comm_create(MPI_COMM_WORLD, &config, &pc), MPI_ERR_ARG,
           "cannot be the outer algorithm of a hierarchy");
    papcoll_config_init(&config);
    config.parameters.inner_algorithm = "rs_halving";
    expect("create with a reduce-scatter inside a hierarchy",
           papcoll_comm_create(MPI_COMM_WORLD, &config, &pc), MPI_ERR_ARG,
           "cannot be the inner algorithm of a hierarchy");
    papcoll_config_init(&config);
    config.algorithm = "rs_halving";
    papcoll_comm *scatter = NULL;
    if (papcoll_comm_create(MPI_COMM_WORLD, &config, &scatter) == MPI_SUCCESS) {
        expect("a reduce-scatter is refused as an all-reduce",
               papcoll_allreduce(scatter, input, output, 4, MPI_INT, MPI_SUM), MPI_ERR_ARG,
               "is a reduce-scatter");
        papcoll_comm_free(&scatter);
    }
    expect("create on MPI_COMM_NULL", papcoll_comm_create(MPI_COMM_NULL, NULL, &pc), MPI_ERR_COMM,
           "MPI_COMM_NULL");
    expect("create with defaults", papcoll_comm_create(MPI_COMM_WORLD, NULL, &pc), MPI_SUCCESS,
           "success");

    expect("NULL recvbuf with count > 0", papcoll_allreduce(pc, input, NULL, 4, MPI_INT, MPI_SUM),
           MPI_ERR_BUFFER, "recvbuf is NULL");
    expect("NULL sendbuf with count > 0", papcoll_allreduce(pc, NULL, output, 4, MPI_INT, MPI_SUM),
           MPI_ERR_BUFFER, "sendbuf is NULL");
    expect("NULL buffers with count 0", papcoll_allreduce(pc, NULL, NULL, 0, MPI_INT, MPI_SUM),
           MPI_SUCCESS, "success");
    expect("negative count", papcoll_allreduce(pc, input, output, -3, MPI_INT, MPI_SUM),
           MPI_ERR_COUNT, "count -3 is negative");
    expect("MPI_DATATYPE_NULL",
           papcoll_allreduce(pc, input, output, 4, MPI_DATATYPE_NULL, MPI_SUM), MPI_ERR_TYPE,
           "MPI_DATATYPE_NULL");
    expect("MPI_OP_NULL", papcoll_allreduce(pc, input, output, 4, MPI_INT, MPI_OP_NULL),
           MPI_ERR_OP, "MPI_OP_NULL");
    expect("MPI_REPLACE", papcoll_allreduce(pc, input, output, 4, MPI_INT, MPI_REPLACE),
           MPI_ERR_OP, "one-sided accumulates only");
    expect("MPI_NO_OP", papcoll_allreduce(pc, input, output, 4, MPI_INT, MPI_NO_OP),
           MPI_ERR_OP, "one-sided accumulates only");
    expect("sendbuf == recvbuf without MPI_IN_PLACE",
           papcoll_allreduce(pc, output, output, 4, MPI_INT, MPI_SUM), MPI_ERR_BUFFER,
           "MPI_IN_PLACE");
    expect("MPI_IN_PLACE as the receive buffer (issue 17: was SIGSEGV)",
           papcoll_allreduce(pc, input, MPI_IN_PLACE, 4, MPI_INT, MPI_SUM), MPI_ERR_BUFFER,
           "recvbuf must be a buffer");
    int wide[8] = {0};
    expect("partly overlapping buffers (issue 17: was success)",
           papcoll_allreduce(pc, wide, wide + 2, 4, MPI_INT, MPI_SUM), MPI_ERR_BUFFER,
           "overlap");
    expect("adjacent buffers are fine",
           papcoll_allreduce(pc, wide, wide + 4, 4, MPI_INT, MPI_SUM), MPI_SUCCESS, "success");
    expect("set an unknown algorithm", papcoll_set_algorithm(pc, "bogus"), MPI_ERR_ARG,
           "unknown algorithm 'bogus'");
    expect("set a NULL algorithm", papcoll_set_algorithm(pc, NULL), MPI_ERR_ARG,
           "unknown algorithm");

    /* An op MPI does not define on the datatype: every rank must get the error, not only
     * the ranks that reduce (a binomial tree's leaves would wait forever for the root). */
    const char *trees[] = {"binomial", "linear", "ring"};
    double doubles[4] = {1, 2, 3, 4}, double_output[4];
    for (int k = 0; k < 3; k++) {
        papcoll_set_algorithm(pc, trees[k]);
        expect("MPI_BAND on MPI_DOUBLE",
               papcoll_allreduce(pc, doubles, double_output, 4, MPI_DOUBLE, MPI_BAND),
               MPI_ERR_OP, "MPI_BAND is not defined on datatype MPI_DOUBLE");
        expect("MPI_SUM on MPI_C_BOOL",
               papcoll_allreduce(pc, input, output, 1, MPI_C_BOOL, MPI_SUM), MPI_ERR_OP,
               "MPI_SUM is not defined on datatype MPI_C_BOOL");
    }

    MPI_Op op;
    MPI_Op_create(noncommutative, 0, &op);
    papcoll_set_algorithm(pc, "ring");
    expect("ring with a non-commutative op", papcoll_allreduce(pc, input, output, 4, MPI_INT, op),
           MPI_ERR_OP, "needs a commutative op");
    papcoll_set_algorithm(pc, "auto");
    const char *chosen = "";
    papcoll_resolve_algorithm(pc, 1 << 22, MPI_INT, op, &chosen);
    expect("auto avoids ring for a non-commutative op",
           strcmp(chosen, "ring") == 0 ? MPI_ERR_OP : MPI_SUCCESS, MPI_SUCCESS, "success");
    expect("auto with a non-commutative op", papcoll_allreduce(pc, input, output, 4, MPI_INT, op),
           MPI_SUCCESS, "success");
    MPI_Op_free(&op);

    /* still usable after all that */
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    papcoll_set_algorithm(pc, "ring");
    int code = papcoll_allreduce(pc, input, output, 4, MPI_INT, MPI_SUM);
    expect("a good call after the bad ones",
           code == MPI_SUCCESS && output[3] == 4 * size ? MPI_SUCCESS : MPI_ERR_INTERN,
           MPI_SUCCESS, "success");
    expect("free", papcoll_comm_free(&pc), MPI_SUCCESS, "success");
    expect("free sets the handle to NULL", pc == NULL ? MPI_SUCCESS : MPI_ERR_ARG, MPI_SUCCESS,
           "success");
    expect("free of NULL is harmless", papcoll_comm_free(&pc), MPI_SUCCESS, "success");

    int failed_anywhere;
    MPI_Allreduce(&failures, &failed_anywhere, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("%d passed, %d failed\n", checks - failures, failures);
    MPI_Finalize();
    return failed_anywhere ? 1 : 0;
}
