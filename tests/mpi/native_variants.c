/* native_variants.c (test) - auto running the MPI library's own algorithms
 * (src/mpi/native_variants.c) under mpiexec.
 *
 * MPICH: with PAPCOLL_NATIVE_VARIANTS unset, auto's balanced calls of 1 KiB try each of the
 * default list (recursive_doubling, reduce_scatter_allgather, ring) 3 times or more,
 * reported as "native:NAME"; every rank runs the same algorithm in every call; results
 * equal MPI_Allreduce's (integers: exact whatever the order); MPICH's control variable is
 * back at its value after every call; a non-commutative op runs the default only. Then the
 * errors: a name MPICH does not have (named in the message, with the names it has), ranks
 * that name different lists, a list given where the user forced an algorithm through the
 * variable (and no variants, without error, where the list is not given), and "none".
 * Open MPI (its choice is made when a communicator is made): auto runs the default only,
 * and a list given is an error naming why. With --multiple (MPI_THREAD_MULTIPLE, where
 * another thread's all-reduce could see the variable papcoll set): the default only, and a
 * list given is an error. With --forced NAME (run with MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=NAME
 * in the environment): the value MPICH took from the environment is the one the library's
 * name lookup (src/mpi/native_names.c) finds for NAME, so a name never runs another
 * algorithm; auto keeps the forced one, and a list is an error. Prints "N passed, M
 * failed". */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/checks.h"
#include "native_names.h"
#include "papcoll.h"

enum { COUNT = 256, CALLS = 48 };
#define VARIABLE "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM"

static int rank, ranks;
static MPI_T_cvar_handle handle = MPI_T_CVAR_HANDLE_NULL; /* MPICH only */

static int read_variable(void) {
    int value = -1;
    if (handle != MPI_T_CVAR_HANDLE_NULL) MPI_T_cvar_read(handle, &value);
    return value;
}

/* a sum that says it is not commutative: MPI must keep the rank order, and so auto must not
 * run MPICH's named algorithms, which do not */
static void ordered_sum(void *in, void *inout, int *length, MPI_Datatype *type) {
    (void)type;
    for (int i = 0; i < *length; i++) ((int *)inout)[i] += ((int *)in)[i];
}

/* CALLS balanced calls; counts how many ran each named variant; checks results, the
 * variable, and that every rank ran the same. */
static void run_calls(papcoll_comm *pc, MPI_Op op, int *named_runs, int *other_native,
                      const char *what) {
    static int input[COUNT], result[COUNT], reference[COUNT];
    const char *named[3] = {"native:recursive_doubling", "native:reduce_scatter_allgather",
                            "native:ring"};
    int before = read_variable(), wrong_results = 0, moved_variable = 0, differed = 0;
    for (int i = 0; i < COUNT; i++) input[i] = (i * 7 + rank * 13) % 61 - 30;
    MPI_Allreduce(input, reference, COUNT, MPI_INT, op, MPI_COMM_WORLD);
    for (int call = 0; call < CALLS; call++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (papcoll_allreduce(pc, input, result, COUNT, MPI_INT, op) != MPI_SUCCESS)
            MPI_Abort(MPI_COMM_WORLD, 4);
        wrong_results += memcmp(result, reference, sizeof result) != 0;
        moved_variable += read_variable() != before;
        papcoll_choice choice;
        papcoll_last_choice(pc, &choice);
        differed += !same_everywhere(name_hash(choice.algorithm));
        for (int k = 0; k < 3; k++) named_runs[k] += strcmp(choice.algorithm, named[k]) == 0;
        *other_native += strncmp(choice.algorithm, "native:", 7) == 0 &&
                         strcmp(choice.algorithm, named[0]) != 0 &&
                         strcmp(choice.algorithm, named[1]) != 0 &&
                         strcmp(choice.algorithm, named[2]) != 0;
    }
    char detail[200];
    snprintf(detail, sizeof detail, "%s: %d results differ from MPI_Allreduce, the variable "
             "moved after %d calls, %d calls ran different algorithms on different ranks",
             what, wrong_results, moved_variable, differed);
    check_everywhere(wrong_results == 0 && moved_variable == 0 && differed == 0,
                     "results, the variable restored, the same algorithm everywhere", detail);
}

/* papcoll_comm_create with PAPCOLL_NATIVE_VARIANTS = list (NULL: unset) must fail on every
 * rank, with a message holding `expected` (and `also`, where not NULL). */
static void refused(const char *list, const char *expected, const char *also, const char *what) {
    if (list) setenv("PAPCOLL_NATIVE_VARIANTS", list, 1);
    else unsetenv("PAPCOLL_NATIVE_VARIANTS");
    papcoll_comm *pc = NULL;
    int code = papcoll_comm_create(MPI_COMM_WORLD, NULL, &pc);
    const char *message = code == MPI_SUCCESS ? "(created)" : papcoll_error_string(code);
    char detail[1800];
    snprintf(detail, sizeof detail, "%s: %.1700s", what, message);
    check_everywhere(code != MPI_SUCCESS && pc == NULL && strstr(message, expected) != NULL &&
                         (also == NULL || strstr(message, also) != NULL),
                     "a clear error on every rank", detail);
    if (pc != NULL) papcoll_comm_free(&pc);
    unsetenv("PAPCOLL_NATIVE_VARIANTS");
}

/* Created with list (NULL: unset), CALLS calls: no named variant may run. */
static void default_only(const char *list, MPI_Op op, const char *what) {
    if (list) setenv("PAPCOLL_NATIVE_VARIANTS", list, 1);
    else unsetenv("PAPCOLL_NATIVE_VARIANTS");
    papcoll_comm *pc;
    if (papcoll_comm_create(MPI_COMM_WORLD, NULL, &pc) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 2);
    int named[3] = {0, 0, 0}, other = 0;
    run_calls(pc, op, named, &other, what);
    char detail[160];
    snprintf(detail, sizeof detail, "%s: %d, %d, %d calls ran named variants, %d others", what,
             named[0], named[1], named[2], other);
    check_everywhere(named[0] + named[1] + named[2] + other == 0, "the default only", detail);
    papcoll_comm_free(&pc);
    unsetenv("PAPCOLL_NATIVE_VARIANTS");
}

int main(int argc, char **argv) {
    int multiple = argc > 1 && strcmp(argv[1], "--multiple") == 0, level;
    const char *forced_name = argc > 2 && strcmp(argv[1], "--forced") == 0 ? argv[2] : NULL;
    MPI_Init_thread(&argc, &argv, multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &level);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    int provided, index, elements;
    /* at the level MPI gave: Open MPI 5's MPI_T_init_thread at a lower one lowered what
     * MPI_Query_thread says after it (seen here: MULTIPLE read back as SINGLE) */
    MPI_T_init_thread(level, &provided);
    int mpich = MPI_T_cvar_get_index(VARIABLE, &index) == MPI_SUCCESS &&
                MPI_T_cvar_handle_alloc(index, NULL, &handle, &elements) == MPI_SUCCESS;
    MPI_Op ordered;
    MPI_Op_create(ordered_sum, 0, &ordered);
    unsetenv("PAPCOLL_NATIVE_VARIANTS");
    if (forced_name != NULL) {
        int looked_up = -1;
        char known[2048], detail[2200];
        int found = mpich && native_algorithm_value(index, forced_name, &looked_up, known,
                                                    sizeof known);
        snprintf(detail, sizeof detail, "MPICH holds %d, the lookup of '%s' gives %d (names: "
                 "%.2000s)", read_variable(), forced_name, looked_up, known);
        check_everywhere(found && looked_up == read_variable(),
                         "a name is looked up as the value MPICH gives it", detail);
        default_only(NULL, MPI_SUM, "forced from the environment");
        refused("recursive_doubling", "forces one algorithm", NULL,
                "a list where the environment forced one");
    } else if (multiple) {
        check_everywhere(level == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE provided", "");
        default_only(NULL, MPI_SUM, "MPI_THREAD_MULTIPLE");
        refused("ring", "MPI_THREAD_MULTIPLE", NULL, "a list under MPI_THREAD_MULTIPLE");
    } else if (mpich && ranks > 1) {
        papcoll_comm *pc;
        if (papcoll_comm_create(MPI_COMM_WORLD, NULL, &pc) != MPI_SUCCESS)
            MPI_Abort(MPI_COMM_WORLD, 2);
        int named[3] = {0, 0, 0}, other = 0;
        run_calls(pc, MPI_SUM, named, &other, "MPI_SUM");
        char detail[200];
        snprintf(detail, sizeof detail, "recursive_doubling %d, reduce_scatter_allgather %d, "
                 "ring %d calls of %d; %d ran another", named[0], named[1], named[2], CALLS,
                 other);
        check_everywhere(named[0] >= 3 && named[1] >= 3 && named[2] >= 3 && other == 0,
                         "each named variant is tried", detail);
        papcoll_comm_free(&pc);
        default_only(NULL, ordered, "a non-commutative op");
        default_only("none", MPI_SUM, "PAPCOLL_NATIVE_VARIANTS=none");
        refused("recursive_doubling,bogus", "'bogus'", "reduce_scatter_allgather",
                "a name MPICH does not have");
        refused(rank == 0 ? "ring" : "recursive_doubling", "differ", NULL,
                "ranks naming different lists");
        /* one rank refuses, the others would not: all must fail, or the others would hold
         * a communicator the refusing rank never joins */
        refused(rank == 0 ? "bogus" : "none", rank == 0 ? "'bogus'" : "another rank refused",
                NULL, "one rank's list refused, the others' not");
        /* the user forces an algorithm through the variable: it stays */
        int automatic = read_variable(), forced = automatic + 1;
        MPI_T_cvar_write(handle, &forced);
        refused("ring", "forces one algorithm", NULL, "a list where the user forced one");
        default_only(NULL, MPI_SUM, "the user forced an algorithm");
        MPI_T_cvar_write(handle, &automatic);
    } else if (!mpich) {
        default_only(NULL, MPI_SUM, "not MPICH");
        refused("ring", "has no " VARIABLE, NULL, "a list on an MPI without the variable");
    } else { /* one rank: auto's balanced calls have nothing to weigh but the variants */
        default_only("none", MPI_SUM, "one rank, none");
        default_only("ring", MPI_SUM, "one rank, a list");
        refused("bogus", "'bogus'", NULL, "one rank, a name MPICH does not have");
    }
    MPI_Op_free(&ordered);
    if (handle != MPI_T_CVAR_HANDLE_NULL) MPI_T_cvar_handle_free(&handle);
    MPI_T_finalize();
    int status = checks_report();
    MPI_Finalize();
    return status;
}
