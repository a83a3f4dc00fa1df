/* usage.c - the usage errors of usage.h. */
#include "usage.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static const char *program_name = "papcoll", *usage_text = "";

void usage_init(const char *program, const char *usage) {
    program_name = program;
    usage_text = usage;
}

void usage_error(const char *format, const char *value) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        if (format) {
            fprintf(stderr, "%s: ", program_name);
            fprintf(stderr, format, value);
            fprintf(stderr, "\n");
        }
        fputs(usage_text, format ? stderr : stdout);
    }
    MPI_Finalize();
    exit(format ? 2 : 0);
}
