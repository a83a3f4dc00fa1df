/* native_algorithms.c - see native_algorithms.h. The algorithm names are the library's own
 * (MPICH: recursive_doubling, reduce_scatter_allgather, ring, recexch, tree, ...; Open MPI:
 * basic_linear, nonoverlapping, recursive_doubling, ring, segmented_ring, rabenseifner,
 * allgather_reduce). Their numeric values come from the library at run time
 * (src/mpi/native_names.c, shared with the library's auto), and a name it does not know is
 * an error that lists the names it does. */
#include "native_algorithms.h"

#include "native_names.h"

#include <stdio.h>
#include <string.h>

#define OPEN_MPI_DYNAMIC_RULES "coll_tuned_use_dynamic_rules"

static MPI_T_cvar_handle mpich_handle = MPI_T_CVAR_HANDLE_NULL;
static int mpich_default_value;
static int mpi_t_ready;

void native_library_name(char *name, size_t size) {
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int length;
    MPI_Get_library_version(version, &length);
    size_t end = strcspn(version, ",\n"), written = 0;
    /* MPICH writes "MPICH Version:\t5.0.2": make runs of blanks one space */
    for (size_t i = 0; i < end && written + 1 < size; i++) {
        int blank = version[i] == ' ' || version[i] == '\t';
        if (blank && (written == 0 || name[written - 1] == ' ')) continue;
        name[written++] = blank ? ' ' : version[i];
    }
    name[written] = '\0';
}

static int is_open_mpi(void) {
    char name[256];
    native_library_name(name, sizeof name);
    return strstr(name, "Open MPI") != NULL;
}

static int fail(char *message, size_t size, const char *format, const char *a, const char *b) {
    snprintf(message, size, format, a, b);
    return 0;
}

int native_algorithm_names(char *known, size_t known_size) {
    known[0] = '\0';
    if (!mpi_t_ready) {
        int provided;
        if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return 0;
        mpi_t_ready = 1;
    }
    int index, value;
    const char *variable = is_open_mpi() ? NATIVE_OPEN_MPI_VARIABLE : NATIVE_MPICH_VARIABLE;
    if (MPI_T_cvar_get_index(variable, &index) != MPI_SUCCESS) return 0;
    /* no algorithm is named "": the lookup fails and lists every name it has */
    native_algorithm_value(index, "", &value, known, known_size);
    return known[0] != '\0';
}

void native_algorithm_names_done(void) {
    if (mpi_t_ready) MPI_T_finalize();
    mpi_t_ready = 0;
}

int native_algorithm_open(const char *name, MPI_Comm comm, native_algorithm *out,
                          char *message, size_t message_size) {
    out->comm = MPI_COMM_NULL;
    out->forced_value = -1;
    if (name[0] == '\0') return MPI_Comm_dup(comm, &out->comm) == MPI_SUCCESS;
    if (!mpi_t_ready) {
        int provided;
        if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS)
            return fail(message, message_size, "native:%s: MPI_T is not available%s", name, "");
        mpi_t_ready = 1;
    }
    int open_mpi = is_open_mpi();
    const char *variable = open_mpi ? NATIVE_OPEN_MPI_VARIABLE : NATIVE_MPICH_VARIABLE;
    int index;
    if (MPI_T_cvar_get_index(variable, &index) != MPI_SUCCESS)
        return fail(message, message_size,
                    "native:%s: this MPI has no control variable %s, so its algorithms cannot "
                    "be chosen one by one", name, variable);
    int value = -1;
    char known[2048];
    if (!native_algorithm_value(index, name, &value, known, sizeof known)) {
        snprintf(message, message_size, "native:%s: unknown to this MPI; it knows: %s", name,
                 known);
        return 0;
    }
    MPI_T_cvar_handle handle;
    int elements;
    if (MPI_T_cvar_handle_alloc(index, NULL, &handle, &elements) != MPI_SUCCESS)
        return fail(message, message_size, "native:%s: cannot open %s", name, variable);
    if (!open_mpi) {
        if (mpich_handle == MPI_T_CVAR_HANDLE_NULL) {
            mpich_handle = handle;
            MPI_T_cvar_read(handle, &mpich_default_value);
        } else {
            MPI_T_cvar_handle_free(&handle);
        }
        out->forced_value = value;
        return MPI_Comm_dup(comm, &out->comm) == MPI_SUCCESS;
    }
    /* Open MPI: the forced algorithm only counts with dynamic rules, read at start-up. */
    int rules_index, rules = 0;
    if (MPI_T_cvar_get_index(OPEN_MPI_DYNAMIC_RULES, &rules_index) == MPI_SUCCESS) {
        MPI_T_cvar_handle rules_handle;
        MPI_T_cvar_handle_alloc(rules_index, NULL, &rules_handle, &elements);
        MPI_T_cvar_read(rules_handle, &rules);
        MPI_T_cvar_handle_free(&rules_handle);
    }
    if (!rules) {
        MPI_T_cvar_handle_free(&handle);
        return fail(message, message_size,
                    "native:%s: Open MPI needs OMPI_MCA_coll_tuned_use_dynamic_rules=1 in the "
                    "environment to force an algorithm%s", name, "");
    }
    int previous;
    MPI_T_cvar_read(handle, &previous);
    int ok = MPI_T_cvar_write(handle, &value) == MPI_SUCCESS &&
             MPI_Comm_dup(comm, &out->comm) == MPI_SUCCESS;
    MPI_T_cvar_write(handle, &previous);
    MPI_T_cvar_handle_free(&handle);
    if (!ok)
        return fail(message, message_size, "native:%s: Open MPI refused to set %s", name,
                    variable);
    return 1;
}

void native_algorithm_select(const native_algorithm *algorithm) {
    if (algorithm->forced_value >= 0) MPI_T_cvar_write(mpich_handle, (void *)&algorithm->forced_value);
}

void native_algorithm_restore(const native_algorithm *algorithm) {
    if (algorithm->forced_value >= 0) MPI_T_cvar_write(mpich_handle, &mpich_default_value);
}

void native_algorithm_close(native_algorithm *algorithm) {
    if (algorithm->comm != MPI_COMM_NULL) MPI_Comm_free(&algorithm->comm);
}
