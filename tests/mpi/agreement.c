/* agreement.c - the opt-in agreement check (PAPCOLL_CHECK=1 or config.check_agreement):
 * ranks that make different calls all get an error naming what differs, never a hang; a
 * rank that refuses a call keeps its own error and the others learn which rank refused;
 * the communicator works afterwards. Needs P >= 2 (with one rank nothing can disagree). */
#define _POSIX_C_SOURCE 200112L /* setenv */
#include <stdlib.h>

#include "expect.h"

static int size;

/* Sets the parameter `info` describes in `parameters` to a value that is not its default,
 * by its kind alone, so every row of the parameter table is tested without naming one. The
 * tree (a star of P hosts) and the rank list (reversed) live in the caller's arrays. */
static void set_not_default(papcoll_parameters *parameters, const papcoll_parameter_info *info,
                            int32_t *ranks_reversed, papcoll_sim_topology *star) {
    char *field = (char *)parameters + info->offset;
    switch (info->kind) {
    case PAPCOLL_PARAMETER_WHOLE_NUMBER:
        if (info->width == 8) *(int64_t *)field = 1;
        else *(int32_t *)field = 1;
        break;
    case PAPCOLL_PARAMETER_TEXT: {
        static char schedule[32]; /* recursive_multiplying's one-step schedule fits any P */
        snprintf(schedule, sizeof schedule, "a%d", size);
        *(const char **)field = schedule;
        break;
    }
    case PAPCOLL_PARAMETER_ALGORITHM: *(const char **)field = "ring"; break;
    case PAPCOLL_PARAMETER_RANK_LIST:
        *(const int32_t **)field = ranks_reversed;
        *(int32_t *)((char *)parameters + info->count_offset) = size;
        break;
    case PAPCOLL_PARAMETER_TREE: *(const papcoll_sim_topology **)field = star; break;
    default: break;
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    enum { COUNT = 1001 };
    static int input[COUNT], output[COUNT];
    for (int i = 0; i < COUNT; i++) input[i] = i + rank;

    papcoll_config config;
    papcoll_config_init(&config);
    config.algorithm = "ring";
    config.check_agreement = 1;
    papcoll_comm *pc;
    expect("create with the check on", papcoll_comm_create(MPI_COMM_WORLD, &config, &pc),
           MPI_SUCCESS, "success");

    int code = papcoll_allreduce(pc, input, output, COUNT, MPI_INT, MPI_SUM);
    int expected_last = size * (COUNT - 1) + size * (size - 1) / 2;
    expect("agreeing ranks run the call",
           code == MPI_SUCCESS && output[COUNT - 1] == expected_last ? MPI_SUCCESS : code,
           MPI_SUCCESS, "success");

    char text[120];
    snprintf(text, sizeof text, "disagree on the count: rank 0 has 1000, rank 1 has 1001");
    expect("count 1000 against 1001",
           papcoll_allreduce(pc, input, output, rank == 0 ? 1000 : 1001, MPI_INT, MPI_SUM),
           MPI_ERR_ARG, text);

    papcoll_set_algorithm(pc, rank == 0 ? "ring" : "rabenseifner");
    expect("ring against rabenseifner",
           papcoll_allreduce(pc, input, output, COUNT, MPI_INT, MPI_SUM), MPI_ERR_ARG,
           "disagree on the algorithm: rank 1's differs from rank 0's");
    papcoll_set_algorithm(pc, "ring");

    expect("MPI_INT against MPI_FLOAT",
           papcoll_allreduce(pc, input, output, COUNT, rank == 0 ? MPI_INT : MPI_FLOAT,
                             MPI_SUM),
           MPI_ERR_ARG, "disagree on the datatype");
    expect("MPI_SUM against MPI_MAX",
           papcoll_allreduce(pc, input, output, COUNT, MPI_INT, rank == 0 ? MPI_SUM : MPI_MAX),
           MPI_ERR_ARG, "disagree on the op");

    if (size == 4) {
        papcoll_set_algorithm(pc, "recursive_multiplying");
        papcoll_set_schedule(pc, rank == 0 ? "a2,a2" : "a4");
        expect("schedule a2,a2 against a4",
               papcoll_allreduce(pc, input, output, COUNT, MPI_INT, MPI_SUM), MPI_ERR_ARG,
               "disagree on the algorithm's parameters");
        papcoll_set_schedule(pc, NULL);
        papcoll_set_algorithm(pc, "ring");
    }

    /* every parameter of the table, set on rank 0 only: the digest covers each row */
    enum { MOST_RANKS = 64 };
    int32_t reversed[MOST_RANKS], parent[MOST_RANKS + 1], rank_vertex[MOST_RANKS];
    double latency[MOST_RANKS + 1], seconds_per_byte[MOST_RANKS + 1];
    for (int v = 0; v <= MOST_RANKS; v++) {
        parent[v] = v == 0 ? -1 : 0;
        latency[v] = 1e-6;
        seconds_per_byte[v] = 1e-9;
    }
    for (int r = 0; r < size && r < MOST_RANKS; r++) {
        reversed[r] = size - 1 - r;
        rank_vertex[r] = r + 1;
    }
    papcoll_sim_topology star = {.vertex_count = size + 1, .parent = parent,
                                 .link_latency = latency, .link_seconds_per_byte = seconds_per_byte,
                                 .rank_vertex = rank_vertex, .rank_count = size,
                                 .local_latency = 1e-7, .local_seconds_per_byte = 1e-10};
    papcoll_parameter_info info;
    for (int32_t index = 0; size <= MOST_RANKS && papcoll_parameter_get(index, &info) == 0;
         index++) {
        papcoll_comm *differing;
        papcoll_config_init(&config);
        config.algorithm = "ring";
        config.check_agreement = 1;
        if (rank == 0) set_not_default(&config.parameters, &info, reversed, &star);
        char what[80];
        snprintf(what, sizeof what, "parameter %s set on rank 0 only", info.name);
        expect(what, papcoll_comm_create(MPI_COMM_WORLD, &config, &differing), MPI_SUCCESS,
               "success");
        expect(what, papcoll_allreduce(differing, input, output, COUNT, MPI_INT, MPI_SUM),
               MPI_ERR_ARG, "disagree on the algorithm's parameters");
        papcoll_comm_free(&differing);
    }

    /* rank 1 refuses (a NULL receive buffer): it keeps its own error, the others name it */
    code = papcoll_allreduce(pc, input, rank == 1 ? NULL : output, COUNT, MPI_INT, MPI_SUM);
    if (rank == 1)
        expect("the refusing rank keeps its error", code, MPI_ERR_BUFFER, "recvbuf is NULL");
    else
        expect("the others learn who refused", code, MPI_ERR_ARG, "rank 1 refused this call");

    code = papcoll_allreduce(pc, input, output, COUNT, MPI_INT, MPI_SUM);
    expect("a good call after the mismatches",
           code == MPI_SUCCESS && output[COUNT - 1] == expected_last ? MPI_SUCCESS : code,
           MPI_SUCCESS, "success");
    expect("free", papcoll_comm_free(&pc), MPI_SUCCESS, "success");

    /* PAPCOLL_CHECK=1 on one rank only turns the check on for every rank */
    if (rank == 0) setenv("PAPCOLL_CHECK", "1", 1);
    papcoll_config_init(&config);
    config.algorithm = "ring";
    papcoll_comm_create(MPI_COMM_WORLD, &config, &pc);
    expect("PAPCOLL_CHECK=1 (rank 0 only): count mismatch",
           papcoll_allreduce(pc, input, output, rank == 0 ? 1000 : 1001, MPI_INT, MPI_SUM),
           MPI_ERR_ARG, "disagree on the count");
    papcoll_comm_free(&pc);

    /* config fields that must agree (src/mpi/config_agreement.c), differing on the last
     * rank: refused at create on every rank, naming the field (each once hung or summed
     * wrong); and a config the last rank itself refuses */
    const char *fields[] = {"max_message_elements", "arrival_source", "grouping", "progress",
                            "refused", "refused parameters"};
    for (int k = 0; k < 6; k++) {
        papcoll_config_init(&config);
        if (rank == size - 1) {
            if (k == 0) config.max_message_elements = 1000;
            if (k == 1) config.arrival_source = PAPCOLL_ARRIVALS_HISTORY;
            if (k == 2) config.grouping = PAPCOLL_GROUPS_COLOR;
            if (k == 3) config.progress = PAPCOLL_PROGRESS_THREAD;
            if (k == 4) config.max_message_elements = -1;
            if (k == 5) config.parameters.schedule = "not a schedule";
        }
        char what[96], message[96];
        snprintf(what, sizeof what, "config.%s differs (last rank)", fields[k]);
        if (k >= 4)
            snprintf(message, sizeof message, "%s", rank != size - 1 ? "another rank refused"
                     : k == 4 ? "max_message_elements must not be negative" : "schedule");
        else
            snprintf(message, sizeof message, "disagree on config.%s", fields[k]);
        code = papcoll_comm_create(MPI_COMM_WORLD, &config, &pc);
        expect(what, code, MPI_ERR_ARG, message);
        papcoll_comm_free(&pc);
    }
    papcoll_config_init(&config);

    /* a malformed PAPCOLL_CHECK on the last rank: refused at create on every rank (it once
     * turned the check on: anything but "0" did, "off" too) */
    if (rank == size - 1) setenv("PAPCOLL_CHECK", "maybe", 1);
    code = papcoll_comm_create(MPI_COMM_WORLD, &config, &pc);
    expect("PAPCOLL_CHECK=maybe (last rank only)", code, MPI_ERR_ARG,
           rank == size - 1 ? "PAPCOLL_CHECK='maybe' is not 1/0" : "another rank refused");
    papcoll_comm_free(&pc);
    unsetenv("PAPCOLL_CHECK");

    int failed_anywhere;
    MPI_Allreduce(&failures, &failed_anywhere, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("%d passed, %d failed\n", checks - failures, failures);
    MPI_Finalize();
    return failed_anywhere ? 1 : 0;
}
