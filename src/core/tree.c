/* tree.c - checking trees of switches and hosts, and the contention-free logical ring of
 * Patarasuk & Yuan 2009, Sect. 4 on them (papcoll_tree_ring_order).
 *
 * Why a depth-first order is contention-free (Patarasuk & Yuan 2009, Lemma 5's argument): the
 * ring visits the hosts in the order of a depth-first walk, so the walk from one ring neighbour
 * to the next, concatenated over the whole ring, is one closed tour of the tree that goes down
 * and up each link exactly once. Every ring message follows its piece of that tour, so each link
 * carries at most one message in each direction. Ranks on the same vertex sit next to each other
 * in the ring and talk without crossing any link (Patarasuk & Yuan 2009, Lemma 6).
 *
 * Example: root with switches L and R; hosts a0, a1 under L and b0, b1 under R, one rank
 * each (ranks 0..3 on a0, b0, a1, b1): the order is 0 2 1 3 (a0 a1 b0 b1). Ring messages
 * a1 -> b0 and b1 -> a0 cross the root once each way; a0 -> a1, b0 -> b1 stay below L, R.
 */
#include "tree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "message.h"

/* A topology the tree rules reject: the message, and PAPCOLL_ERR_ARGUMENT. */
#define refuse(error, size, ...) message_write((error), (size), PAPCOLL_ERR_ARGUMENT, __VA_ARGS__)

int tree_check(const papcoll_sim_topology *t, int32_t ranks, int32_t *depth, char *error,
               size_t error_size) {
    if (t == NULL || t->vertex_count < 1 || t->parent == NULL || t->rank_vertex == NULL)
        return refuse(error, error_size, "topology: needs at least one vertex, the parent of "
                      "every vertex and the vertex of every rank");
    if (t->rank_count != ranks)
        return refuse(error, error_size, "topology: places %d ranks, but there are %d",
                      t->rank_count, ranks);
    int32_t n = t->vertex_count, roots = 0;
    for (int32_t v = 0; v < n; v++) {
        if (t->parent[v] < -1 || t->parent[v] >= n || t->parent[v] == v)
            return refuse(error, error_size, "topology: vertex %d has parent %d, not a vertex "
                          "of 0..%d other than itself (-1 for the root)", v, t->parent[v],
                          n - 1);
        roots += t->parent[v] < 0;
    }
    if (roots != 1)
        return refuse(error, error_size, "topology: a tree has one root (a vertex with parent "
                      "-1); this one has %d", roots);
    for (int32_t v = 0; v < n; v++) {
        int32_t steps = 0;
        for (int32_t u = v; t->parent[u] >= 0; u = t->parent[u])
            if (++steps > TREE_MAX_DEPTH)
                return refuse(error, error_size, "topology: vertex %d is more than %d links "
                              "below the root, or its parents form a cycle", v,
                              TREE_MAX_DEPTH);
        if (depth) depth[v] = steps;
    }
    for (int32_t r = 0; r < ranks; r++)
        if (t->rank_vertex[r] < 0 || t->rank_vertex[r] >= n)
            return refuse(error, error_size, "topology: rank %d runs on vertex %d, not a "
                          "vertex of 0..%d", r, t->rank_vertex[r], n - 1);
    return PAPCOLL_OK;
}

int papcoll_tree_ring_order(const papcoll_sim_topology *tree, int32_t *order, char *error,
                            size_t error_size) {
    if (error && error_size) error[0] = '\0';
    if (tree == NULL || order == NULL)
        return refuse(error, error_size, "a tree and room for the order are required");
    int status = tree_check(tree, tree->rank_count, NULL, error, error_size);
    if (status != PAPCOLL_OK) return status;
    int32_t n = tree->vertex_count, ranks = tree->rank_count, root = 0;
    /* children and ranks of each vertex as linked lists, built backwards so they come out in
     * index order; then an explicit-stack depth-first walk */
    int32_t *first_child = malloc((size_t)n * sizeof(int32_t));
    int32_t *next_sibling = malloc((size_t)n * sizeof(int32_t));
    int32_t *first_rank = malloc((size_t)n * sizeof(int32_t));
    int32_t *next_rank = malloc((size_t)(ranks > 0 ? ranks : 1) * sizeof(int32_t));
    int32_t *stack = malloc((size_t)n * sizeof(int32_t));
    if (!first_child || !next_sibling || !first_rank || !next_rank || !stack) {
        status = PAPCOLL_ERR_NO_MEMORY;
        refuse(error, error_size, "out of memory");
    } else {
        for (int32_t v = 0; v < n; v++) first_child[v] = first_rank[v] = -1;
        for (int32_t v = n - 1; v >= 0; v--) {
            if (tree->parent[v] < 0) {
                root = v;
                continue;
            }
            next_sibling[v] = first_child[tree->parent[v]];
            first_child[tree->parent[v]] = v;
        }
        for (int32_t r = ranks - 1; r >= 0; r--) {
            next_rank[r] = first_rank[tree->rank_vertex[r]];
            first_rank[tree->rank_vertex[r]] = r;
        }
        int32_t top = 0, placed = 0;
        stack[top++] = root;
        while (top > 0) {
            int32_t v = stack[--top];
            for (int32_t r = first_rank[v]; r >= 0; r = next_rank[r]) order[placed++] = r;
            /* push children last-first so the first child is visited first */
            int32_t count = 0;
            for (int32_t c = first_child[v]; c >= 0; c = next_sibling[c]) count++;
            int32_t at = top + count;
            for (int32_t c = first_child[v]; c >= 0; c = next_sibling[c]) stack[--at] = c;
            top += count;
        }
    }
    free(first_child);
    free(next_sibling);
    free(first_rank);
    free(next_rank);
    free(stack);
    return status;
}
