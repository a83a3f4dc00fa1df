/* progress_setting.h - MPI started as papcoll's progress setting needs it, for the programs
 * that run non-blocking calls (bench/overlap.c, tests/mpi/differential.c and
 * nonblocking.c): PAPCOLL_PROGRESS=thread starts papcoll's progress thread, which calls MPI
 * beside the program, so MPI_THREAD_MULTIPLE is asked for; otherwise plain MPI_Init. */
#ifndef PAPCOLL_BENCH_PROGRESS_SETTING_H
#define PAPCOLL_BENCH_PROGRESS_SETTING_H

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

static inline void start_mpi_for_progress_setting(int *argc, char ***argv) {
    const char *progress = getenv("PAPCOLL_PROGRESS");
    int provided;
    if (progress != NULL && strcmp(progress, "thread") == 0)
        MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(argc, argv);
}

#endif /* PAPCOLL_BENCH_PROGRESS_SETTING_H */
