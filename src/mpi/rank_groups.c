/* rank_groups.c - see rank_groups.h.
 *
 * One all-gather of two numbers a rank, {token, node or color}, serves both the groups and
 * the question whether the ranks share a world reference (world_reference.h): where every
 * rank gives the same token, its node (the lowest world rank on its memory) was found when
 * the world's papcoll communicator was made, and the lowest rank of this communicator on
 * each node follows locally. Otherwise (the world's own first communicator, merged worlds)
 * the node is found by MPI_Comm_split_type and an all-reduce, as the world's was. */
#include "rank_groups.h"

#include <stdlib.h>

#include "errors.h"
#include "world_reference.h"

/* per rank: the token it gives, its node or color, and (rank 0 of the world's own
 * communicator, before the world has a token) a token drawn for the world */
enum { TOKEN, VALUE, DRAWN, EXCHANGED };

/* The token a rank gives: its world's, once that world's node and clock are both known. */
static int64_t token_to_give(void) {
    return world_reference_node() >= 0 && world_reference_has_clock_offset()
               ? world_reference_token()
               : 0;
}

/* The lowest rank of comm on each rank's node, from MPI: collective. */
static int nodes_from_mpi(papcoll_comm *pc) {
    MPI_Comm node;
    int code = MPI_Comm_split_type(pc->comm, MPI_COMM_TYPE_SHARED, pc->rank, MPI_INFO_NULL,
                                   &node);
    if (code != MPI_SUCCESS)
        return record_error(code, "papcoll_comm_create: MPI_Comm_split_type failed");
    int rank = pc->rank, lowest = 0;
    code = MPI_Allreduce(&rank, &lowest, 1, MPI_INT, MPI_MIN, node);
    MPI_Comm_free(&node);
    if (code != MPI_SUCCESS)
        return record_error(code, "papcoll_comm_create: MPI_Allreduce failed");
    int32_t mine = lowest;
    code = MPI_Allgather(&mine, 1, MPI_INT32_T, pc->groups, 1, MPI_INT32_T, pc->comm);
    if (code != MPI_SUCCESS)
        return record_error(code, "papcoll_comm_create: MPI_Allgather failed");
    /* the world's own: its ranks are world ranks, so this is the node every later
     * communicator of the world looks up */
    if (world_reference_is_world(pc->comm)) world_reference_set_node(mine);
    return MPI_SUCCESS;
}

int rank_groups_compute(papcoll_comm *pc, const papcoll_config *config) {
    int ranks = pc->size;
    pc->groups = malloc((size_t)ranks * sizeof *pc->groups);
    int64_t *all = malloc((size_t)ranks * EXCHANGED * sizeof *all);
    if (pc->groups == NULL || all == NULL) {
        free(all);
        return record_error(MPI_ERR_NO_MEM, "papcoll_comm_create: out of memory");
    }
    int world = world_reference_is_world(pc->comm); /* alike on every rank of comm */
    int shared_memory = config->grouping == PAPCOLL_GROUPS_SHARED_MEMORY;
    int64_t mine[EXCHANGED] = {token_to_give(),
                               shared_memory ? world_reference_node() : config->group_color,
                               world && pc->rank == 0 && world_reference_token() == 0
                                   ? world_reference_draw()
                                   : 0};
    /* one collective whatever each rank's own state: threads of a rank that make
     * communicators at once may see the token set or not, and a collective that only some
     * ranks enter would hang */
    int code = MPI_Allgather(mine, EXCHANGED, MPI_INT64_T, all, EXCHANGED, MPI_INT64_T,
                             pc->comm);
    if (code != MPI_SUCCESS) {
        free(all);
        return record_error(code, "papcoll_comm_create: MPI_Allgather failed");
    }
    /* the world's token is rank 0's draw, taken where none is held yet; two drawn at once
     * may leave ranks with different tokens, and then later communicators measure */
    if (world && all[DRAWN] != 0) world_reference_adopt_token(all[DRAWN]);
    pc->shares_world_reference = all[TOKEN] != 0;
    for (int r = 1; r < ranks; r++)
        if (all[r * EXCHANGED + TOKEN] != all[TOKEN]) pc->shares_world_reference = 0;
    if (!shared_memory) {
        for (int r = 0; r < ranks; r++) pc->groups[r] = (int32_t)all[r * EXCHANGED + VALUE];
    } else if (pc->shares_world_reference) {
        /* each rank's color: the lowest rank of this communicator on its node */
        for (int r = 0; r < ranks; r++) {
            int lowest = 0; /* stops at r at the latest */
            while (all[lowest * EXCHANGED + VALUE] != all[r * EXCHANGED + VALUE]) lowest++;
            pc->groups[r] = lowest;
        }
    } else {
        code = nodes_from_mpi(pc);
    }
    free(all);
    if (code != MPI_SUCCESS) return code;
    for (int r = 0; r < ranks; r++) /* every rank sees every color: all fail alike */
        if (pc->groups[r] < 0)
            return record_error(MPI_ERR_ARG, "papcoll_comm_create: rank %d gave group_color %d; "
                                "colors must be >= 0", r, (int)pc->groups[r]);
    return MPI_SUCCESS;
}
