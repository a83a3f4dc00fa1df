/* errors.c - bad input gets an MPI error class and a message naming the problem, on every
 * rank, and never a crash or a hang; the communicator still works afterwards. */
#include "expect.h"

static void noncommutative(void *in, void *inout, int *length, MPI_Datatype *datatype) {
    (void)datatype;
    for (int i = 0; i < *length; i++) ((int *)inout)[i] = ((int *)in)[i] - ((int *)inout)[i];
}

/* A config that papcoll_comm_create must refuse with MPI_ERR_ARG: the defaults of
 * papcoll_config_init with the fields below set where they are not 0 / NULL. */
typedef struct refused_config {
    const char *what, *expected_text;
    const char *algorithm, *outer_algorithm, *inner_algorithm, *schedule;
    int arrival_source, group_color; /* group_color != 0: PAPCOLL_GROUPS_COLOR with it */
    int32_t segment_count;
} refused_config;

static const refused_config refused_configs[] = {
    {"create with an unknown algorithm", "unknown algorithm 'warp_speed'",
     .algorithm = "warp_speed"},
    {"create with an unknown arrival source", "arrival_source 7 is neither",
     .arrival_source = 7},
    {"create with a negative group color", "colors must be >= 0", .group_color = -1},
    {"create with an unknown outer algorithm", "unknown outer algorithm 'teleport'",
     .outer_algorithm = "teleport"},
    {"create with a bad recursive multiplying schedule", "schedule 'a2,x'",
     .schedule = "a2,x"},
    {"create hr1 with a PAP-aware outer algorithm",
     "cannot be the outer algorithm of a hierarchy", .algorithm = "hr1",
     .outer_algorithm = "prr"},
    {"create with a reduce-scatter inside a hierarchy",
     "cannot be the inner algorithm of a hierarchy", .inner_algorithm = "rs_halving"},
    {"create with segment_count INT32_MAX (was minutes of building)",
     "segment_count must be at most 1048576", .algorithm = "linear_tree",
     .segment_count = INT32_MAX},
};

static void expect_refused_config(const refused_config *c) {
    papcoll_config config;
    papcoll_config_init(&config);
    if (c->algorithm) config.algorithm = c->algorithm;
    if (c->outer_algorithm) config.parameters.outer_algorithm = c->outer_algorithm;
    if (c->inner_algorithm) config.parameters.inner_algorithm = c->inner_algorithm;
    if (c->schedule) config.parameters.schedule = c->schedule;
    if (c->segment_count) config.parameters.segment_count = c->segment_count;
    if (c->arrival_source) config.arrival_source = (papcoll_arrival_source)c->arrival_source;
    if (c->group_color) {
        config.grouping = PAPCOLL_GROUPS_COLOR;
        config.group_color = c->group_color;
    }
    papcoll_comm *pc = NULL;
    expect(c->what, papcoll_comm_create(MPI_COMM_WORLD, &config, &pc), MPI_ERR_ARG,
           c->expected_text);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    papcoll_comm *pc;
    int input[4] = {1, 2, 3, 4}, output[4];

    papcoll_config config;
    for (size_t c = 0; c < sizeof refused_configs / sizeof *refused_configs; c++)
        expect_refused_config(&refused_configs[c]);
    papcoll_config_init(&config);
    config.algorithm = "rs_halving";
    papcoll_comm *scatter = NULL;
    if (papcoll_comm_create(MPI_COMM_WORLD, &config, &scatter) == MPI_SUCCESS) {
        expect("a reduce-scatter is refused as an all-reduce",
               papcoll_allreduce(scatter, input, output, 4, MPI_INT, MPI_SUM), MPI_ERR_ARG,
               "is a reduce-scatter");
        papcoll_comm_free(&scatter);
    }
    /* A segment holds at least one element: 8 segments of a 4-element vector is refused on
     * every rank alike (the schedule is built from the same count everywhere), no hang. */
    papcoll_config_init(&config);
    config.algorithm = "linear_tree";
    config.parameters.segment_count = 8;
    papcoll_comm *segmented = NULL;
    if (papcoll_comm_create(MPI_COMM_WORLD, &config, &segmented) == MPI_SUCCESS) {
        expect("more segments than elements",
               papcoll_allreduce(segmented, input, output, 4, MPI_INT, MPI_SUM), MPI_ERR_ARG,
               "segment holds at least one element");
        papcoll_comm_free(&segmented);
    }
    expect("create on MPI_COMM_NULL", papcoll_comm_create(MPI_COMM_NULL, NULL, &pc), MPI_ERR_COMM,
           "MPI_COMM_NULL");
    expect("create with defaults", papcoll_comm_create(MPI_COMM_WORLD, NULL, &pc), MPI_SUCCESS,
           "success");

    int wide[8] = {0};
    /* Bad arguments, one call each (a local table: MPI handles need not be constants). */
    const struct {
        const char *what;
        const void *sendbuf;
        void *recvbuf;
        int count;
        MPI_Datatype datatype;
        MPI_Op op;
        int expected_code;
        const char *expected_text;
    } calls[] = {
        {"NULL recvbuf with count > 0", input, NULL, 4, MPI_INT, MPI_SUM, MPI_ERR_BUFFER,
         "recvbuf is NULL"},
        {"NULL sendbuf with count > 0", NULL, output, 4, MPI_INT, MPI_SUM, MPI_ERR_BUFFER,
         "sendbuf is NULL"},
        {"NULL buffers with count 0", NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_SUCCESS, "success"},
        {"negative count", input, output, -3, MPI_INT, MPI_SUM, MPI_ERR_COUNT,
         "count -3 is negative"},
        {"MPI_DATATYPE_NULL", input, output, 4, MPI_DATATYPE_NULL, MPI_SUM, MPI_ERR_TYPE,
         "MPI_DATATYPE_NULL"},
        {"MPI_OP_NULL", input, output, 4, MPI_INT, MPI_OP_NULL, MPI_ERR_OP, "MPI_OP_NULL"},
        {"MPI_REPLACE", input, output, 4, MPI_INT, MPI_REPLACE, MPI_ERR_OP,
         "one-sided accumulates only"},
        {"MPI_NO_OP", input, output, 4, MPI_INT, MPI_NO_OP, MPI_ERR_OP,
         "one-sided accumulates only"},
        {"sendbuf == recvbuf without MPI_IN_PLACE", output, output, 4, MPI_INT, MPI_SUM,
         MPI_ERR_BUFFER, "MPI_IN_PLACE"},
        /* these were once a SIGSEGV and a silent success */
        {"MPI_IN_PLACE as the receive buffer", input, MPI_IN_PLACE, 4, MPI_INT, MPI_SUM,
         MPI_ERR_BUFFER, "recvbuf must be a buffer"},
        {"partly overlapping buffers", wide, wide + 2, 4, MPI_INT, MPI_SUM, MPI_ERR_BUFFER,
         "overlap"},
        {"adjacent buffers are fine", wide, wide + 4, 4, MPI_INT, MPI_SUM, MPI_SUCCESS,
         "success"},
    };
    for (size_t c = 0; c < sizeof calls / sizeof *calls; c++)
        expect(calls[c].what,
               papcoll_allreduce(pc, calls[c].sendbuf, calls[c].recvbuf, calls[c].count,
                                 calls[c].datatype, calls[c].op),
               calls[c].expected_code, calls[c].expected_text);
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
        /* a resolution is refused where the call would be (it once named an algorithm) */
        const char *resolved = NULL;
        expect("resolve MPI_SUM on MPI_C_BOOL",
               papcoll_resolve_algorithm(pc, 1, MPI_C_BOOL, MPI_SUM, &resolved), MPI_ERR_OP,
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
