/* element_types.c - the table of element_types.h. */
#include "element_types.h"

#include <string.h>

/* A function, not a static table: MPI's handles need not be compile-time constants (in
 * Open MPI they are addresses of library objects). MPI_CHAR is left out: MPI defines no
 * reduction on it (it is text); MPI_BYTE and MPI_C_BOOL are not numbers. */
/* Copies up to `capacity` entries into types (NULL: none); returns how many there are. */
static int table(element_type *types, int capacity) {
    const element_type all[] = {
        {"int8", MPI_INT8_T, KIND_SIGNED},
        {"int16", MPI_INT16_T, KIND_SIGNED},
        {"int32", MPI_INT32_T, KIND_SIGNED},
        {"int64", MPI_INT64_T, KIND_SIGNED},
        {"uint8", MPI_UINT8_T, KIND_UNSIGNED},
        {"uint16", MPI_UINT16_T, KIND_UNSIGNED},
        {"uint32", MPI_UINT32_T, KIND_UNSIGNED},
        {"uint64", MPI_UINT64_T, KIND_UNSIGNED},
        {"signed_char", MPI_SIGNED_CHAR, KIND_SIGNED},
        {"short", MPI_SHORT, KIND_SIGNED},
        {"int", MPI_INT, KIND_SIGNED},
        {"long", MPI_LONG, KIND_SIGNED},
        {"long_long", MPI_LONG_LONG, KIND_SIGNED},
        {"unsigned_char", MPI_UNSIGNED_CHAR, KIND_UNSIGNED},
        {"unsigned_short", MPI_UNSIGNED_SHORT, KIND_UNSIGNED},
        {"unsigned", MPI_UNSIGNED, KIND_UNSIGNED},
        {"unsigned_long", MPI_UNSIGNED_LONG, KIND_UNSIGNED},
        {"unsigned_long_long", MPI_UNSIGNED_LONG_LONG, KIND_UNSIGNED},
        {"float", MPI_FLOAT, KIND_REAL},
        {"double", MPI_DOUBLE, KIND_REAL},
        {"long_double", MPI_LONG_DOUBLE, KIND_REAL},
        {"c_float_complex", MPI_C_FLOAT_COMPLEX, KIND_COMPLEX},
        {"c_double_complex", MPI_C_DOUBLE_COMPLEX, KIND_COMPLEX},
    };
    for (int i = 0; types && i < (int)(sizeof all / sizeof all[0]) && i < capacity; i++)
        types[i] = all[i];
    return (int)(sizeof all / sizeof all[0]);
}

#define MOST_TYPES 64

int element_type_count(void) { return table(NULL, 0); }

int element_type_at(int index, element_type *found) {
    element_type types[MOST_TYPES];
    int count = table(types, MOST_TYPES);
    if (index < 0 || index >= count || index >= MOST_TYPES ||
        types[index].datatype == MPI_DATATYPE_NULL)
        return 0;
    *found = types[index];
    return 1;
}

int find_element_type(const char *name, element_type *found) {
    element_type types[MOST_TYPES];
    int count = table(types, MOST_TYPES);
    for (int i = 0; i < count && i < MOST_TYPES; i++)
        if (strcmp(name, types[i].name) == 0) return element_type_at(i, found);
    return 0;
}
