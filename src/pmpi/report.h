/* report.h - the JSON report the PMPI library writes at MPI_Finalize when PAPCOLL_REPORT
 * names a file (report.c); `papcoll report FILE` prints it as a table. docs/pmpi.md
 * describes every field. */
#ifndef PAPCOLL_PMPI_REPORT_H
#define PAPCOLL_PMPI_REPORT_H

#include "settings.h"

/* complete = 1: collective over MPI_COMM_WORLD (called from MPI_Finalize): every rank's
 * records go to world rank 0, which merges them per (communicator, call site, call kind)
 * and writes the file. complete = 0: no MPI call (at exit, without MPI_Finalize): rank 0 writes its own
 * records alone, marked "complete": false. The file appears whole or not at all (written
 * beside it, then renamed). Returns 0, or -1 when rank 0 could not write it (the reason on
 * stderr: a report is the one thing this library prints). */
int report_write(const pmpi_settings *settings, int complete, int world_rank, int world_size);

#endif /* PAPCOLL_PMPI_REPORT_H */
