/* native_algorithms.c - see native_algorithms.h. The algorithm names are the library's own
 * (MPICH: recursive_doubling, reduce_scatter_allgather, ring, recexch, tree, ...; Open MPI:
 * basic_linear, nonoverlapping, recursive_doubling, ring, segmented_ring, rabenseifner,
 * allgather_reduce). Their numeric values come from the library at run time: from the MPI_T
 * enumeration when the library publishes one (Open MPI), otherwise from the control
 * variable's description, which MPICH writes as one "name - text" line per value, in value
 * order. Nothing is hard-coded, so a library that renumbers its algorithms still works, and
 * a name it does not know is an error that lists the names it does. */
#include "native_algorithms.h"

#include <stdio.h>
#include <string.h>

#define MPICH_VARIABLE "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM"
#define OPEN_MPI_VARIABLE "coll_tuned_allreduce_algorithm"
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

/* Finds the value of `name` among the control variable's values; lists them in `known`. */
static int value_of(int index, const char *name, int *value, char *known, size_t known_size) {
    char variable[256], description[8192];
    int variable_length = sizeof variable, description_length = sizeof description;
    int verbosity, binding, scope;
    MPI_Datatype datatype;
    MPI_T_enum enumeration;
    known[0] = '\0';
    if (MPI_T_cvar_get_info(index, variable, &variable_length, &verbosity, &datatype,
                            &enumeration, description, &description_length, &binding,
                            &scope) != MPI_SUCCESS)
        return 0;
    size_t used = 0;
    if (enumeration != MPI_T_ENUM_NULL) {
        int items, name_length = 0;
        char enumeration_name[256];
        name_length = sizeof enumeration_name;
        MPI_T_enum_get_info(enumeration, &items, enumeration_name, &name_length);
        for (int i = 0; i < items; i++) {
            char item[256];
            int item_length = sizeof item, item_value;
            MPI_T_enum_get_item(enumeration, i, &item_value, item, &item_length);
            used += (size_t)snprintf(known + used, used < known_size ? known_size - used : 0,
                                     "%s%s", i ? ", " : "", item);
            if (strcmp(item, name) == 0) *value = item_value;
        }
        return *value >= 0;
    }
    /* MPICH: "Variable to select ...\nauto - ...\nnb   - ...\n": value i is line i + 1. */
    int found = 0, line_index = -1;
    for (char *line = strtok(description, "\n"); line; line = strtok(NULL, "\n")) {
        if (line_index++ < 0) continue; /* the title line */
        char word[128];
        if (sscanf(line, "%127s", word) != 1 || strstr(line, " - ") == NULL) continue;
        used += (size_t)snprintf(known + used, used < known_size ? known_size - used : 0,
                                 "%s%s", line_index > 1 ? ", " : "", word);
        if (strcmp(word, name) == 0) {
            *value = line_index - 1;
            found = 1;
        }
    }
    return found;
}

static int fail(char *message, size_t size, const char *format, const char *a, const char *b) {
    snprintf(message, size, format, a, b);
    return 0;
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
    const char *variable = open_mpi ? OPEN_MPI_VARIABLE : MPICH_VARIABLE;
    int index;
    if (MPI_T_cvar_get_index(variable, &index) != MPI_SUCCESS)
        return fail(message, message_size,
                    "native:%s: this MPI has no control variable %s, so its algorithms cannot "
                    "be chosen one by one", name, variable);
    int value = -1;
    char known[2048];
    if (!value_of(index, name, &value, known, sizeof known)) {
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
