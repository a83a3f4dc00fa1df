/* checks.h (tests) - the bookkeeping the MPI test programs share. A check holds only where
 * it holds on every rank (one MPI_Allreduce each), so every rank counts alike and any rank
 * can print the program's last line, "N passed, M failed", which test_mpi.py reads; a
 * failing rank prints why. Header-only: each program is one file and links nothing of it. */
#ifndef PAPCOLL_TESTS_MPI_CHECKS_H
#define PAPCOLL_TESTS_MPI_CHECKS_H

#include <stdio.h>

#include <mpi.h>

static int checks_passed, checks_failed;

static inline void check_everywhere(int condition, const char *what, const char *detail) {
    int all = 0;
    MPI_Allreduce(&condition, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (all) {
        checks_passed++;
        return;
    }
    checks_failed++;
    if (!condition) {
        int rank = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        printf("FAIL rank %d %s: %s\n", rank, what, detail);
    }
}

/* Whether value is the same on every rank. */
static inline int same_everywhere(int value) {
    int least = 0, most = 0;
    MPI_Allreduce(&value, &least, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&value, &most, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return least == most;
}

/* A number that differs between algorithm names, to compare names across ranks. */
static inline int name_hash(const char *name) {
    unsigned hash = 5381;
    for (; *name; name++) hash = hash * 33 + (unsigned char)*name;
    return (int)(hash & 0x7fffffff);
}

/* The opening of every check program: MPI_Init, then this process's rank and the world's
 * size. */
static inline void checks_start(int *argc, char ***argv, int *rank, int *ranks) {
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, ranks);
}

/* Prints the last line on rank 0; the program's exit status. */
static inline int checks_report(void) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) printf("%d passed, %d failed\n", checks_passed, checks_failed);
    return checks_failed ? 1 : 0;
}

#endif /* PAPCOLL_TESTS_MPI_CHECKS_H */
