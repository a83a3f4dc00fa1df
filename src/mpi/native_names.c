/* native_names.c - see native_names.h. */
#define _POSIX_C_SOURCE 200809L /* strtok_r: MPI_T may be read from two threads */
#include "native_names.h"

#include <stdio.h>
#include <string.h>

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
        int items, name_length;
        char enumeration_name[256];
        name_length = sizeof enumeration_name;
        MPI_T_enum_get_info(enumeration, &items, enumeration_name, &name_length);
        for (int i = 0; i < items; i++) {
            char item[256];
            int item_length = sizeof item, item_value;
            MPI_T_enum_get_item(enumeration, i, &item_value, item, &item_length);
            list_append(known, known_size, &used, item);
            if (strcmp(item, name) == 0) {
                *value = item_value;
                found = 1;
            }
        }
        return found;
    }
    /* MPICH: "Variable to select ...\nauto - ...\nnb   - ...\n": value i is line i + 1 */
    int line_index = -1;
    char *saved = NULL;
    for (char *line = strtok_r(description, "\n", &saved); line != NULL;
         line = strtok_r(NULL, "\n", &saved)) {
        if (line_index++ < 0) continue; /* the title line */
        char word[128];
        if (sscanf(line, "%127s", word) != 1 || strstr(line, " - ") == NULL) continue;
        list_append(known, known_size, &used, word);
        if (strcmp(word, name) == 0) {
            *value = line_index - 1;
            found = 1;
        }
    }
    return found;
}
