/* tree.h - trees of switches and hosts (papcoll_sim_topology), shared by the simulator and
 * ring_topology: the checks every user of a tree needs. */
#ifndef PAPCOLL_TREE_H
#define PAPCOLL_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "hidden.h"
#include "papcoll_core.h"

#define TREE_MAX_DEPTH 64

/* Checks that t is a tree (one root, parents in range, no cycle, at most TREE_MAX_DEPTH
 * links deep) placing `ranks` ranks on its vertices. Fills depth[v] (vertex_count entries)
 * when depth is not NULL. Returns PAPCOLL_OK or PAPCOLL_ERR_ARGUMENT with a message. */
PAPCOLL_HIDDEN
int tree_check(const papcoll_sim_topology *t, int32_t ranks, int32_t *depth, char *error,
               size_t error_size);

#endif /* PAPCOLL_TREE_H */
