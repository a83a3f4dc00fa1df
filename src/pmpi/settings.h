/* settings.h - what the PMPI library (libpapcoll_pmpi.so) reads from the environment, once,
 * at MPI_Init (settings.c). docs/pmpi.md lists the variables for users. */
#ifndef PAPCOLL_PMPI_SETTINGS_H
#define PAPCOLL_PMPI_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

typedef struct pmpi_settings {
    /* PAPCOLL_ALGORITHM: "auto" (default), "native" (interception off: every call goes to
     * PMPI_Allreduce, still counted in the report), or a registered all-reduce. */
    char algorithm[64];
    int intercept;             /* 0 when algorithm is "native" */
    /* PAPCOLL_MIN_BYTES: calls moving fewer bytes (count x datatype size) go to native.
     * Plain bytes or with a K, M or G suffix (powers of 1024). */
    int64_t min_bytes;
    /* PAPCOLL_REPRODUCIBLE (docs/reproducible.md): papcoll_comm_create reads it for the
     * papcoll communicators; here it keeps order-sensitive calls below min_bytes from MPI,
     * which promises no order. */
    int reproducible;
    /* PAPCOLL_REPORT: the JSON report's path, written by world rank 0 at MPI_Finalize;
     * "" for none. */
    char report_path[4096];
    /* PAPCOLL_RULES: auto's rules file (docs/rules.md), "" for none. papcoll_comm_create
     * reads it; MPI_Init makes MPI_COMM_WORLD's papcoll communicator so that a bad file
     * stops the program there (intercept.c). */
    char rules_path[4096];
    /* Where the program ran (MPI_Init, world rank 0's node; the report says it, since a
     * native MPI_Allreduce on a node with more ranks than cores depends on the MPI's
     * tuning, docs/pmpi.md): ranks on the node, its cores, and the environment's
     * MPIR_CVAR_*ALLREDUCE* / OMPI_MCA_coll_* settings, "NAME=VALUE" separated by ";". */
    int ranks_on_node, cores;
    char native_settings[1024];
} pmpi_settings;

/* Calls below this many bytes go to native unless PAPCOLL_MIN_BYTES says otherwise: below
 * 64 KiB the measurements of docs/pmpi.md never saw auto beat MPI_Allreduce (docs/pmpi.md). */
enum { PMPI_DEFAULT_MIN_BYTES = 64 * 1024 };

/* Whether the report may be written at path: absent, or a regular file (not a link, FIFO,
 * device or directory); -1 with the reason (to follow the path's name) in why otherwise. */
int pmpi_report_path_usable(const char *path, char *why, size_t why_size);

/* The settings every rank must share: three decide each call's route (papcoll or the MPI)
 * and the algorithm, and whether PAPCOLL_RULES is set decides PAPCOLL_MIN_BYTES's default
 * (the file's contents are compared where the communicator is made); whether PAPCOLL_REPORT is set decides who takes part in writing the
 * report at MPI_Finalize (a gather to world rank 0). MPI_Init compares them across ranks
 * (intercept.c) and names the first that differs, with why it must not. */
enum { PMPI_AGREED_SETTINGS = 5 };
extern const char *const pmpi_agreed_names[PMPI_AGREED_SETTINGS];
extern const char *const pmpi_agreed_reasons[PMPI_AGREED_SETTINGS];
/* Their values, as numbers equal on every rank exactly when the settings are. */
void pmpi_settings_agreed(const pmpi_settings *settings, int64_t values[PMPI_AGREED_SETTINGS]);

/* The native tuning in the environment (MPIR_CVAR_*ALLREDUCE*, OMPI_MCA_coll_*) into
 * settings->native_settings. */
void pmpi_settings_native_tuning(pmpi_settings *settings);

/* Reads the environment into settings, and checks every setting of the table (src/core/
 * environment_table.c) and the progress thread's. Returns 0, or -1 with a message naming
 * the variable, its value and what it accepts in error. writes_report: this rank writes the
 * report (world rank 0), so PAPCOLL_REPORT's path is checked here and on no other rank.
 * thread_multiple: MPI was initialised with MPI_THREAD_MULTIPLE. */
int pmpi_settings_read(pmpi_settings *settings, int writes_report, int thread_multiple,
                       char *error, size_t error_size);

#endif /* PAPCOLL_PMPI_SETTINGS_H */
