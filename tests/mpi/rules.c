/* rules.c (test) - a rules file through the C API (docs/rules.md), under mpiexec.
 *
 *   mpi_rules FILE [FILE_OF_ODD_RANKS | --segment-count N]
 *
 * Creates a papcoll communicator with config.rules_file = FILE (odd ranks: the second file
 * where given, to try ranks that disagree; --segment-count sets the parameter, which a
 * segmented algorithm refuses for vectors of fewer elements). Where create fails, rank 0 prints
 * "create-error CODE MESSAGE" and the program exits 0 (the test reads the message). Else
 * it runs four shapes, each as a blocking call, a non-blocking post and two persistent
 * starts, and prints for each, on rank 0, one line:
 *   choice KIND SHAPE ALGORITHM RULE EQUAL
 * (RULE "-" where the model decided; EQUAL 1 where every rank's result equals
 * MPI_Allreduce's bit for bit), or, where the call was refused,
 *   call-error KIND SHAPE CODE MESSAGE
 * The Python test (tests/python/test_rules.py) holds the lines to the file's rules. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "papcoll.h"

enum { KINDS = 3, SHAPES = 4 };

typedef struct shape {
    const char *name;
    int count;
    MPI_Datatype datatype;
    MPI_Op op;
    int element_size;
} shape;

static void fill(void *buffer, const shape *s, int rank) {
    for (int i = 0; i < s->count; i++) {
        /* whole numbers: every order of summing them gives the same bits */
        double value = (double)((rank * 7 + i) % 13);
        if (s->datatype == MPI_INT) ((int *)buffer)[i] = (int)value;
        else if (s->datatype == MPI_FLOAT) ((float *)buffer)[i] = (float)value;
        else ((double *)buffer)[i] = value;
    }
}

/* One call of kind (0 blocking, 1 non-blocking, 2 persistent: two starts) into result. */
static int run_kind(papcoll_comm *pc, int kind, const void *send, void *result,
                    const shape *s, papcoll_choice *choice) {
    int code;
    if (kind == 0) {
        code = papcoll_allreduce(pc, send, result, s->count, s->datatype, s->op);
        if (code == MPI_SUCCESS) papcoll_last_choice(pc, choice);
        return code;
    }
    MPI_Request request = MPI_REQUEST_NULL;
    if (kind == 1) {
        code = papcoll_iallreduce(pc, send, result, s->count, s->datatype, s->op, &request);
        if (code == MPI_SUCCESS) code = papcoll_wait(&request, MPI_STATUS_IGNORE);
        if (code == MPI_SUCCESS) papcoll_last_choice(pc, choice);
        return code;
    }
    papcoll_persistent *persistent = NULL;
    code = papcoll_allreduce_init(pc, send, result, s->count, s->datatype, s->op, &persistent);
    for (int start = 0; start < 2 && code == MPI_SUCCESS; start++) {
        code = papcoll_start(persistent, &request);
        if (code == MPI_SUCCESS) code = papcoll_wait(&request, MPI_STATUS_IGNORE);
    }
    if (code == MPI_SUCCESS) papcoll_persistent_last_choice(persistent, choice, NULL);
    papcoll_persistent_free(&persistent);
    return code;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: mpi_rules FILE [FILE_OF_ODD_RANKS | --segment-count N]\n");
        MPI_Finalize();
        return 2;
    }
    papcoll_config config;
    papcoll_config_init(&config);
    int segments = argc > 3 && strcmp(argv[2], "--segment-count") == 0;
    if (segments) config.parameters.segment_count = atoi(argv[3]);
    config.rules_file = argc > 2 && !segments && rank % 2 == 1 ? argv[2] : argv[1];
    papcoll_comm *pc = NULL;
    int code = papcoll_comm_create(MPI_COMM_WORLD, &config, &pc);
    if (code != MPI_SUCCESS) {
        int class = 0;
        MPI_Error_class(code, &class);
        if (rank == 0) printf("create-error %d %s\n", class, papcoll_error_string(code));
        MPI_Finalize();
        return 0;
    }
    const shape shapes[SHAPES] = {
        {"int_sum_100", 100, MPI_INT, MPI_SUM, sizeof(int)},
        {"double_sum_1000", 1000, MPI_DOUBLE, MPI_SUM, sizeof(double)},
        {"double_sum_20000", 20000, MPI_DOUBLE, MPI_SUM, sizeof(double)},
        {"float_max_1000", 1000, MPI_FLOAT, MPI_MAX, sizeof(float)}};
    const char *kinds[KINDS] = {"blocking", "nonblocking", "persistent"};
    for (int s = 0; s < SHAPES; s++)
        for (int kind = 0; kind < KINDS; kind++) {
            size_t bytes = (size_t)shapes[s].count * (size_t)shapes[s].element_size;
            char *send = malloc(bytes), *result = calloc(1, bytes), *expected = calloc(1, bytes);
            fill(send, &shapes[s], rank);
            papcoll_choice choice;
            memset(&choice, 0, sizeof choice);
            code = run_kind(pc, kind, send, result, &shapes[s], &choice);
            MPI_Allreduce(send, expected, shapes[s].count, shapes[s].datatype, shapes[s].op,
                          MPI_COMM_WORLD);
            int equal = code == MPI_SUCCESS && memcmp(result, expected, bytes) == 0, all = 0;
            MPI_Allreduce(&equal, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
            if (rank == 0 && code == MPI_SUCCESS)
                printf("choice %s %s %s %s %d\n", kinds[kind], shapes[s].name,
                       choice.algorithm, choice.rule[0] ? choice.rule : "-", all);
            else if (rank == 0) {
                int class = 0;
                MPI_Error_class(code, &class);
                printf("call-error %s %s %d %s\n", kinds[kind], shapes[s].name, class,
                       papcoll_error_string(code));
            }
            free(send);
            free(result);
            free(expected);
        }
    papcoll_comm_free(&pc);
    MPI_Finalize();
    return 0;
}
