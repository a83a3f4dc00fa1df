/* native_names.c - see native_names.h. */
#define _POSIX_C_SOURCE 200809L /* strtok_r: MPI_T may be read from two threads */
#include "native_names.h"

#include <stdio.h>
#include <string.h>

#include "mpi_features.h"

#if PAPCOLL_HAVE_MPI_T
/* Appends `item` to the list in known (", " between items), as far as it fits. */
static void list_append(char *known, size_t known_size, size_t *used, const char *item) {
    if (*used >= known_size) return;
    int written = snprintf(known + *used, known_size - *used, "%s%s", *used ? ", " : "", item);
    if (written > 0) *used += (size_t)written;
}

int native_algorithm_value(int index, const char *name, int *value, char *known,
                           size_t known_size) {
    char variable[256], description[8192];
    int variable_length = sizeof variable, description_length = sizeof description;
    int verbosity, binding, scope;
    MPI_Datatype datatype;
    MPI_T_enum enumeration;
    size_t used = 0;
    int found = 0;
    known[0] = '\0';
    if (MPI_T_cvar_get_info(index, variable, &variable_length, &verbosity, &datatype,
                            &enumeration, description, &description_length, &binding,
                            &scope) != MPI_SUCCESS)
        return 0;
    if (enumeration != MPI_T_ENUM_NULL) {
        int items = 0, name_length;
        char enumeration_name[256];
        name_length = sizeof enumeration_name;
        if (MPI_T_enum_get_info(enumeration, &items, enumeration_name, &name_length) !=
            MPI_SUCCESS)
            return 0;
        for (int i = 0; i < items; i++) {
            char item[256];
            int item_length = sizeof item, item_value;
            if (MPI_T_enum_get_item(enumeration, i, &item_value, item, &item_length) !=
                MPI_SUCCESS)
                continue;
            list_append(known, known_size, &used, item);
            if (strcmp(item, name) == 0) {
                *value = item_value;
                found = 1;
            }
        }
        return found;
    }
    /* MPICH: "Variable to select ...\nauto - ...\nnb   - ...\n": the i-th "name - text"
     * line after the title is value i. Only those lines count: a description line that
     * wrapped would otherwise shift every value after it, and run another algorithm. */
    int item_index = 0, title = 1;
    char *saved = NULL;
    for (char *line = strtok_r(description, "\n", &saved); line != NULL;
         line = strtok_r(NULL, "\n", &saved)) {
        char word[128];
        if (title) { /* the first line says what the variable is */
            title = 0;
            continue;
        }
        if (sscanf(line, "%127s", word) != 1 || strstr(line, " - ") == NULL) continue;
        list_append(known, known_size, &used, word);
        if (strcmp(word, name) == 0) {
            *value = item_index;
            found = 1;
        }
        item_index++;
    }
    return found;
}
#else /* no MPI_T: no algorithm can be named */
int native_algorithm_value(int index, const char *name, int *value, char *known,
                           size_t known_size) {
    (void)index;
    (void)name;
    (void)value;
    if (known_size > 0) known[0] = '\0';
    return 0;
}
#endif
