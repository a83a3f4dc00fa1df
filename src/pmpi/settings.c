/* settings.c - the PMPI library's environment variables (settings.h), checked at MPI_Init so
 * a typo is a message at start-up rather than a surprise later. */
#define _POSIX_C_SOURCE 200809L /* lstat */
#include "settings.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "papcoll.h"
#include "papcoll_core.h"

/* "auto", "native" or a registered algorithm that is an all-reduce. */
static int read_algorithm(pmpi_settings *settings, char *error, size_t error_size) {
    const char *text = getenv("PAPCOLL_ALGORITHM");
    if (text == NULL || text[0] == '\0') text = "auto";
    papcoll_algorithm_info info;
    int known = strcmp(text, "auto") == 0 || strcmp(text, "native") == 0 ||
                (papcoll_algorithm_find(text, &info) == PAPCOLL_OK && !info.reduce_scatter);
    if (!known || strlen(text) >= sizeof settings->algorithm) {
        size_t used = (size_t)snprintf(error, error_size,
                                       "PAPCOLL_ALGORITHM='%s' is not an all-reduce papcoll "
                                       "knows; use auto, native or one of:", text);
        for (int32_t k = 0; k < papcoll_algorithm_count() && used < error_size; k++)
            if (papcoll_algorithm_get(k, &info) == PAPCOLL_OK && !info.reduce_scatter)
                used += (size_t)snprintf(error + used, error_size - used, " %s", info.name);
        return -1;
    }
    snprintf(settings->algorithm, sizeof settings->algorithm, "%s", text);
    settings->intercept = strcmp(text, "native") != 0;
    return 0;
}

/* PAPCOLL_RULES: a path, for auto only (the rules are auto's). Its contents are read and
 * checked where the communicator is made (src/mpi/communicator.c). */
static int read_rules(pmpi_settings *settings, char *error, size_t error_size) {
    const char *text = getenv("PAPCOLL_RULES");
    settings->rules_path[0] = '\0';
    if (text == NULL || text[0] == '\0') return 0;
    if (strlen(text) >= sizeof settings->rules_path) {
        snprintf(error, error_size, "PAPCOLL_RULES is a path of %zu characters; at most %zu "
                 "are accepted", strlen(text), sizeof settings->rules_path - 1);
        return -1;
    }
    if (strcmp(settings->algorithm, "auto") != 0) {
        snprintf(error, error_size, "PAPCOLL_RULES='%.200s' holds auto's rules, and "
                 "PAPCOLL_ALGORITHM is '%s'; set PAPCOLL_ALGORITHM=auto (or unset it), or "
                 "leave PAPCOLL_RULES out", text, settings->algorithm);
        return -1;
    }
    snprintf(settings->rules_path, sizeof settings->rules_path, "%s", text);
    return 0;
}

static int read_min_bytes(pmpi_settings *settings, char *error, size_t error_size) {
    const char *text = getenv("PAPCOLL_MIN_BYTES");
    /* a rules file decides every call, the small ones too, unless the user says otherwise */
    settings->min_bytes = settings->rules_path[0] != '\0' ? 0 : PMPI_DEFAULT_MIN_BYTES;
    if (text == NULL || text[0] == '\0') return 0;
    int64_t value = 0;
    if (papcoll_setting_parse("PAPCOLL_MIN_BYTES", text, &value, error, error_size) !=
        PAPCOLL_OK)
        return -1;
    settings->min_bytes = value;
    return 0;
}

/* PAPCOLL_REPRODUCIBLE, as papcoll_comm_create reads it (papcoll.h); with it, a forced
 * PAPCOLL_ALGORITHM must keep the canonical order (every floating-point call would fail). */
static int read_reproducible(pmpi_settings *settings, char *error, size_t error_size) {
    if (papcoll_reproducible_requested(&settings->reproducible) != MPI_SUCCESS) {
        snprintf(error, error_size, "%s", papcoll_error_string(MPI_ERR_ARG));
        return -1;
    }
    papcoll_algorithm_info info;
    if (settings->reproducible && papcoll_algorithm_find(settings->algorithm, &info) ==
                                      PAPCOLL_OK && !info.canonical_order) {
        size_t used = (size_t)snprintf(error, error_size,
                                       "PAPCOLL_ALGORITHM='%s' does not keep the canonical "
                                       "order PAPCOLL_REPRODUCIBLE=1 asks for; use auto or "
                                       "one of:", settings->algorithm);
        for (int32_t k = 0; k < papcoll_algorithm_count() && used < error_size; k++)
            if (papcoll_algorithm_get(k, &info) == PAPCOLL_OK && info.canonical_order)
                used += (size_t)snprintf(error + used, error_size - used, " %s", info.name);
        return -1;
    }
    return 0;
}

/* writes_report: whether this is world rank 0, the one rank that writes the report (the
 * others only send their counts), and so the one whose path is checked: on a cluster
 * the folder may exist on rank 0's node alone. */
static int read_report(pmpi_settings *settings, int writes_report, char *error,
                       size_t error_size) {
    const char *text = getenv("PAPCOLL_REPORT");
    settings->report_path[0] = '\0';
    if (text == NULL || text[0] == '\0') return 0; /* empty: unset, as for every variable */
    if (strlen(text) >= sizeof settings->report_path) {
        snprintf(error, error_size, "PAPCOLL_REPORT is a path of %zu characters; at most "
                 "%zu are accepted", strlen(text), sizeof settings->report_path - 1);
        return -1;
    }
    snprintf(settings->report_path, sizeof settings->report_path, "%s", text);
    char why[256];
    if (writes_report &&
        pmpi_report_path_usable(settings->report_path, why, sizeof why) != 0) {
        snprintf(error, error_size, "PAPCOLL_REPORT='%.200s' %s", text, why);
        return -1;
    }
    return 0;
}

int pmpi_report_path_usable(const char *path, char *why, size_t why_size) {
    struct stat status;
    if (path[0] == '\0') return snprintf(why, why_size, "is empty; name a file"), -1;
    size_t length = strlen(path);
    if (path[length - 1] == '/')
        return snprintf(why, why_size, "ends in '/'; name a file, not a directory"), -1;
    if (lstat(path, &status) != 0) {
        if (errno != ENOENT) {
            snprintf(why, why_size, "cannot be examined: %s", strerror(errno));
            return -1;
        }
        /* a new file: its folder must be there now, or the report written at the end of
         * the run would be lost with one line on stderr */
        char folder[PATH_MAX];
        const char *slash = strrchr(path, '/');
        if (slash == NULL) snprintf(folder, sizeof folder, ".");
        else if (slash == path) snprintf(folder, sizeof folder, "/");
        else snprintf(folder, sizeof folder, "%.*s", (int)(slash - path), path);
        /* (a folder that is a file never gets here: lstat of the path says ENOTDIR) */
        if (stat(folder, &status) != 0)
            return snprintf(why, why_size, "is in folder '%.200s', which cannot be used: %s",
                            folder, strerror(errno)), -1;
        return 0;
    }
    /* the report replaces the file it names (a rename): a link, a FIFO or a device would be
     * replaced by a plain file, not written through, which is not what its name promised */
    if (S_ISLNK(status.st_mode))
        return snprintf(why, why_size, "is a symbolic link; name the file itself"), -1;
    if (!S_ISREG(status.st_mode))
        return snprintf(why, why_size, "is not a regular file (a directory, FIFO, socket or "
                        "device); name a new file or an existing regular one"), -1;
    return 0;
}

/* Every setting of the table (src/core/environment_table.c), through its one parser: the
 * drop-in's own and those papcoll_comm_create, the monitor and the progress thread read
 * later (PAPCOLL_TAG_LIMIT, PAPCOLL_TUNING, PAPCOLL_TAU_MODEL, ...). MPI_Init made MPI_COMM_
 * WORLD's papcoll communicator, which reads most of them, only at P > 1 and with
 * interception on, so a typo elsewhere went by; here it stops the program at MPI_Init. */
static int read_table(char *error, size_t error_size) {
    papcoll_setting_info info;
    for (int32_t k = 0; papcoll_setting_get(k, &info) == PAPCOLL_OK; k++) {
        const char *text = getenv(info.name);
        if (text != NULL && text[0] != '\0' &&
            papcoll_setting_parse(info.name, text, NULL, error, error_size) != PAPCOLL_OK)
            return -1;
    }
    return 0;
}

/* The progress thread's settings, which an unmodified program cannot meet by changing its
 * MPI_Init: PAPCOLL_PROGRESS=thread calls MPI beside the program, so it needs
 * MPI_THREAD_MULTIPLE (refused, not fallen back from: a silent `calls` would not be what
 * the user measured), and PAPCOLL_PROGRESS_CPU pins that thread, so it needs the thread. */
static int read_progress(const pmpi_settings *settings, int thread_multiple, char *error,
                         size_t error_size) {
    const char *progress = getenv("PAPCOLL_PROGRESS");
    const char *cpu = getenv("PAPCOLL_PROGRESS_CPU");
    int thread = progress != NULL && strcmp(progress, "thread") == 0;
    if (cpu != NULL && cpu[0] != '\0' && !thread) {
        snprintf(error, error_size, "PAPCOLL_PROGRESS_CPU='%.32s' pins the progress thread, "
                 "and PAPCOLL_PROGRESS is not 'thread'; set PAPCOLL_PROGRESS=thread, or leave "
                 "PAPCOLL_PROGRESS_CPU unset", cpu);
        return -1;
    }
    if (thread && settings->intercept && !thread_multiple) {
        snprintf(error, error_size, "the progress thread (PAPCOLL_PROGRESS=thread) calls MPI "
                 "beside the program, which needs MPI_THREAD_MULTIPLE, and the program "
                 "initialised MPI without it; unset PAPCOLL_PROGRESS (or set it to calls)");
        return -1;
    }
    return 0;
}

/* A 62-bit FNV-1a of the text: equal texts give equal numbers on every rank. */
static int64_t text_digest(const char *text) {
    uint64_t hash = 1469598103934665603ULL;
    for (; *text; text++) hash = (hash ^ (unsigned char)*text) * 1099511628211ULL;
    return (int64_t)(hash >> 2);
}

const char *const pmpi_agreed_names[PMPI_AGREED_SETTINGS] = {
    "PAPCOLL_ALGORITHM", "PAPCOLL_MIN_BYTES", "PAPCOLL_REPRODUCIBLE",
    "PAPCOLL_REPORT (set or not)", "PAPCOLL_RULES (set or not)"};
const char *const pmpi_agreed_reasons[PMPI_AGREED_SETTINGS] = {
    "it decides which calls papcoll takes", "it decides which calls papcoll takes",
    "it decides which calls papcoll takes",
    "every rank sends its counts to world rank 0, which writes the report (only whether "
    "it is set must agree; the path of world rank 0 is used)",
    "it decides which calls papcoll takes (it lowers PAPCOLL_MIN_BYTES's default to 0), and "
    "the rules decide their algorithms"};

void pmpi_settings_agreed(const pmpi_settings *settings, int64_t values[PMPI_AGREED_SETTINGS]) {
    values[0] = text_digest(settings->algorithm);
    values[1] = settings->min_bytes;
    values[2] = settings->reproducible;
    values[3] = settings->report_path[0] != '\0';
    values[4] = settings->rules_path[0] != '\0';
}

extern char **environ;

void pmpi_settings_native_tuning(pmpi_settings *settings) {
    size_t used = 0;
    settings->native_settings[0] = '\0';
    for (char **entry = environ; entry != NULL && *entry != NULL; entry++) {
        const char *text = *entry;
        int tuning = (strncmp(text, "MPIR_CVAR_", 10) == 0 && strstr(text, "ALLREDUCE") != NULL &&
                      strchr(text, '=') > strstr(text, "ALLREDUCE")) ||
                     strncmp(text, "OMPI_MCA_coll", 13) == 0;
        if (!tuning) continue;
        int wrote = snprintf(settings->native_settings + used,
                             sizeof settings->native_settings - used, "%s%s",
                             used > 0 ? ";" : "", text);
        if (wrote < 0 || (size_t)wrote >= sizeof settings->native_settings - used) break;
        used += (size_t)wrote;
    }
}

int pmpi_settings_read(pmpi_settings *settings, int writes_report, int thread_multiple,
                       char *error, size_t error_size) {
    memset(settings, 0, sizeof *settings);
    if (read_algorithm(settings, error, error_size) != 0 ||
        read_rules(settings, error, error_size) != 0 ||
        read_min_bytes(settings, error, error_size) != 0 ||
        read_reproducible(settings, error, error_size) != 0 ||
        read_report(settings, writes_report, error, error_size) != 0 ||
        read_table(error, error_size) != 0 ||
        read_progress(settings, thread_multiple, error, error_size) != 0)
        return -1;
    return 0;
}
