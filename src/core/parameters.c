/* parameters.c - see parameters.h. One block holds everything the parameters point to, so a
 * copy is one allocation and one free. */
#include "parameters.h"

#include <stdlib.h>
#include <string.h>

/* Bytes to lay out, each piece aligned for doubles. */
static size_t aligned(size_t bytes) { return (bytes + 7) & ~(size_t)7; }

static size_t text_bytes(const char *text) { return text ? aligned(strlen(text) + 1) : 0; }

/* Copies `bytes` from source to *cursor (NULL source: nothing) and moves the cursor on. */
static const void *place(char **cursor, const void *source, size_t bytes) {
    if (source == NULL) return NULL;
    void *copy = memcpy(*cursor, source, bytes);
    *cursor += aligned(bytes);
    return copy;
}

int owned_parameters_set(owned_parameters *owned, const papcoll_parameters *source,
                         int32_t ranks) {
    const papcoll_sim_topology *tree = source->tree;
    size_t order_bytes = source->rank_order ? (size_t)source->rank_order_count * sizeof(int32_t)
                                            : 0;
    size_t vertices = tree ? (size_t)tree->vertex_count : 0;
    size_t tree_ranks = tree ? (size_t)ranks : 0;
    size_t total = aligned(order_bytes) + text_bytes(source->schedule) +
                   text_bytes(source->inner_algorithm) + text_bytes(source->outer_algorithm) +
                   aligned(vertices * sizeof(int32_t)) + 2 * aligned(vertices * sizeof(double)) +
                   aligned(tree_ranks * sizeof(int32_t));
    char *storage = malloc(total ? total : 1);
    if (storage == NULL) return PAPCOLL_ERR_NO_MEMORY;
    char *cursor = storage;
    owned_parameters copy;
    memset(&copy, 0, sizeof copy);
    copy.storage = storage;
    copy.parameters = *source;
    copy.parameters.rank_order = place(&cursor, source->rank_order, order_bytes);
    const char **texts[3] = {&copy.parameters.schedule, &copy.parameters.inner_algorithm,
                             &copy.parameters.outer_algorithm};
    for (int k = 0; k < 3; k++)
        if (*texts[k]) *texts[k] = place(&cursor, *texts[k], strlen(*texts[k]) + 1);
    if (tree != NULL) {
        copy.tree = *tree;
        copy.tree.parent = place(&cursor, tree->parent, vertices * sizeof(int32_t));
        copy.tree.link_latency = place(&cursor, tree->link_latency, vertices * sizeof(double));
        copy.tree.link_seconds_per_byte =
            place(&cursor, tree->link_seconds_per_byte, vertices * sizeof(double));
        copy.tree.rank_vertex = place(&cursor, tree->rank_vertex, tree_ranks * sizeof(int32_t));
    }
    owned_parameters_release(owned);
    *owned = copy;
    /* the tree lives in the struct itself, which the caller's copy moved */
    if (tree != NULL) owned->parameters.tree = &owned->tree;
    return PAPCOLL_OK;
}

void owned_parameters_release(owned_parameters *owned) {
    free(owned->storage);
    memset(owned, 0, sizeof *owned);
}
