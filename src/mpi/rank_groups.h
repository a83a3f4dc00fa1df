/* rank_groups.h - every rank's group (the hierarchical algorithms' sites), found at
 * papcoll_comm_create: by shared memory (a node) or by the colors the ranks give. */
#ifndef PAPCOLL_MPI_RANK_GROUPS_H
#define PAPCOLL_MPI_RANK_GROUPS_H

#include "internal.h"

/* Collective over pc->comm. Fills pc->groups (P entries, each the group's color: with
 * shared memory, the lowest rank of the node) and pc->shares_world_reference (1 where every
 * rank holds its world's clock offset and node, world_reference.h, so neither is measured
 * again). The same code on every rank, or an error on every rank. */
int rank_groups_compute(papcoll_comm *pc, const papcoll_config *config);

#endif /* PAPCOLL_MPI_RANK_GROUPS_H */
