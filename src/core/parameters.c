/* parameters.c - see parameters.h. One block holds everything the parameters point to, so a
 * copy is one allocation and one free. What to copy is read from the parameter table: a
 * row's kind says what its pointer points to, so a new parameter is copied by declaring it. */
#include "parameters.h"

#include <stdlib.h>
#include <string.h>

#include "parameter_table.h"

/* Bytes to lay out, each piece aligned for doubles. */
static size_t aligned(size_t bytes) { return (bytes + 7) & ~(size_t)7; }

/* Copies `bytes` from source to *cursor (NULL source: nothing) and moves the cursor on. */
static void *place(char **cursor, const void *source, size_t bytes) {
    if (source == NULL) return NULL;
    void *copy = memcpy(*cursor, source, bytes);
    *cursor += aligned(bytes);
    return copy;
}

/* Copies a tree and its four arrays to *cursor and points *copy at it (with cursor NULL
 * only counts); returns the bytes. */
static size_t place_tree(char **cursor, const papcoll_sim_topology *tree, int32_t ranks,
                         const papcoll_sim_topology **copy) {
    size_t vertices = (size_t)tree->vertex_count, tree_ranks = (size_t)ranks;
    size_t bytes = aligned(sizeof *tree) + aligned(vertices * sizeof(int32_t)) +
                   2 * aligned(vertices * sizeof(double)) + aligned(tree_ranks * sizeof(int32_t));
    if (cursor == NULL) return bytes;
    papcoll_sim_topology *placed = place(cursor, tree, sizeof *tree);
    placed->parent = place(cursor, tree->parent, vertices * sizeof(int32_t));
    placed->link_latency = place(cursor, tree->link_latency, vertices * sizeof(double));
    placed->link_seconds_per_byte =
        place(cursor, tree->link_seconds_per_byte, vertices * sizeof(double));
    placed->rank_vertex = place(cursor, tree->rank_vertex, tree_ranks * sizeof(int32_t));
    *copy = placed;
    return bytes;
}

/* Copies what one row's field points to into *cursor and points the copy's field at it; with
 * cursor NULL only counts the bytes it would take. */
static size_t place_field(char **cursor, const papcoll_parameter_info *info,
                          const papcoll_parameters *source, papcoll_parameters *copy,
                          int32_t ranks) {
    const void *value = info->kind == PAPCOLL_PARAMETER_WHOLE_NUMBER
                            ? NULL : parameter_pointer(source, info);
    if (value == NULL) return 0;
    size_t bytes = 0;
    switch (info->kind) {
    case PAPCOLL_PARAMETER_TEXT:
    case PAPCOLL_PARAMETER_ALGORITHM: bytes = strlen(value) + 1; break;
    case PAPCOLL_PARAMETER_RANK_LIST:
        bytes = (size_t)parameter_list_count(source, info) * sizeof(int32_t);
        break;
    case PAPCOLL_PARAMETER_TREE: {
        const papcoll_sim_topology *tree = NULL;
        size_t tree_bytes = place_tree(cursor, value, ranks, &tree);
        if (cursor != NULL) parameter_set_pointer(copy, info, tree);
        return tree_bytes;
    }
    default: return 0;
    }
    if (cursor != NULL) parameter_set_pointer(copy, info, place(cursor, value, bytes));
    return aligned(bytes);
}

int owned_parameters_set(owned_parameters *owned, const papcoll_parameters *source,
                         int32_t ranks) {
    size_t total = 0;
    for (int32_t index = 0; index < parameter_row_count(); index++)
        total += place_field(NULL, &parameter_row_at(index)->info, source, NULL, ranks);
    char *storage = malloc(total ? total : 1);
    if (storage == NULL) return PAPCOLL_ERR_NO_MEMORY;
    owned_parameters copy = {.parameters = *source, .storage = storage};
    char *cursor = storage;
    for (int32_t index = 0; index < parameter_row_count(); index++)
        place_field(&cursor, &parameter_row_at(index)->info, source, &copy.parameters, ranks);
    owned_parameters_release(owned);
    *owned = copy;
    return PAPCOLL_OK;
}

void owned_parameters_release(owned_parameters *owned) {
    free(owned->storage);
    memset(owned, 0, sizeof *owned);
}
