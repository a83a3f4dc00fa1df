/* start_world.h - the opening of the drop-in's test programs that take a threading argument:
 * MPI_Init, or MPI_Init_thread(MPI_THREAD_MULTIPLE) where asked (PAPCOLL_PROGRESS=thread
 * needs it), this process's rank, the world's size, and MPI_COMM_WORLD returning errors.
 * MPI only: the programs know nothing of papcoll. */
#ifndef PAPCOLL_TESTS_PMPI_START_WORLD_H
#define PAPCOLL_TESTS_PMPI_START_WORLD_H

#include <mpi.h>
#include <string.h>

/* threading: "multiple" for MPI_THREAD_MULTIPLE, anything else (or NULL) for MPI_Init */
static inline void start_world(int *argc, char ***argv, const char *threading, int *rank,
                               int *size) {
    int provided = 0;
    if (threading != NULL && strcmp(threading, "multiple") == 0)
        MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

#endif /* PAPCOLL_TESTS_PMPI_START_WORLD_H */
