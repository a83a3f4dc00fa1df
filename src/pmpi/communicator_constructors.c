/* communicator_constructors.c - the communicators a program makes get their papcoll
 * communicator as they are made.
 *
 * Why: an MPI_Iallreduce on a communicator needs its papcoll communicator to exist
 * (nonblocking_calls.c), and making one is collective: inside a post it could deadlock
 * (two ranks may post on two communicators in either order, which MPI allows for
 * non-blocking collectives). A constructor is collective over the new communicator
 * already, every member is in it, so the papcoll communicator is made there; a program's
 * first MPI_Iallreduce on it is then papcoll's. MPI_COMM_WORLD's is made at MPI_Init
 * (intercept.c). The price: a few small collectives in each constructor and one MPI
 * communicator (context id) of papcoll's for each of the program's, measured in
 * docs/benchmarks.md.
 *
 * The blocking constructors of MPI 3.1 are covered, and MPI 4's MPI_Comm_create_from_group;
 * MPI_Comm_idup and MPI_Comm_idup_with_info cannot be (the new communicator exists only
 * once the request completes, and making ours then would block the completing call), nor
 * MPI_Intercomm_create_from_groups (an inter-communicator, which papcoll does not take). A
 * post on such a communicator before its first blocking MPI_Allreduce or MPI_Allreduce_init
 * goes to the MPI, counted no_papcoll_communicator, and the drop-in says so on stderr once
 * (nonblocking_calls.c). */
#include <mpi.h>

#include "intercept.h"

/* After the MPI made *made: papcoll's communicator for it. The constructor's own code
 * stands: where papcoll cannot make one, it says so and the program goes on. */
static int prepared(int code, MPI_Comm *made) {
    if (code == MPI_SUCCESS && made != NULL) intercept_prepare_for_posts(*made);
    return code;
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm) {
    return prepared(PMPI_Comm_dup(comm, newcomm), newcomm);
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm) {
    return prepared(PMPI_Comm_dup_with_info(comm, info, newcomm), newcomm);
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm) {
    return prepared(PMPI_Comm_split(comm, color, key, newcomm), newcomm);
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                        MPI_Comm *newcomm) {
    return prepared(PMPI_Comm_split_type(comm, split_type, key, info, newcomm), newcomm);
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm) {
    return prepared(PMPI_Comm_create(comm, group, newcomm), newcomm);
}

int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm) {
    return prepared(PMPI_Comm_create_group(comm, group, tag, newcomm), newcomm);
}

int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm) {
    return prepared(PMPI_Intercomm_merge(intercomm, high, newintracomm), newintracomm);
}

int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                    int reorder, MPI_Comm *comm_cart) {
    return prepared(PMPI_Cart_create(comm_old, ndims, dims, periods, reorder, comm_cart),
                    comm_cart);
}

int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm) {
    return prepared(PMPI_Cart_sub(comm, remain_dims, newcomm), newcomm);
}

int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int indx[], const int edges[],
                     int reorder, MPI_Comm *comm_graph) {
    return prepared(PMPI_Graph_create(comm_old, nnodes, indx, edges, reorder, comm_graph),
                    comm_graph);
}

int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                          const int destinations[], const int weights[], MPI_Info info,
                          int reorder, MPI_Comm *comm_dist_graph) {
    return prepared(PMPI_Dist_graph_create(comm_old, n, sources, degrees, destinations,
                                           weights, info, reorder, comm_dist_graph),
                    comm_dist_graph);
}

int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                   const int sourceweights[], int outdegree,
                                   const int destinations[], const int destweights[],
                                   MPI_Info info, int reorder, MPI_Comm *comm_dist_graph) {
    return prepared(PMPI_Dist_graph_create_adjacent(comm_old, indegree, sources, sourceweights,
                                                    outdegree, destinations, destweights,
                                                    info, reorder, comm_dist_graph),
                    comm_dist_graph);
}

#if MPI_VERSION >= 4
/* MPI 4: collective over the group's processes, every member of the new communicator. */
int MPI_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info,
                               MPI_Errhandler errhandler, MPI_Comm *newcomm) {
    return prepared(PMPI_Comm_create_from_group(group, stringtag, info, errhandler, newcomm),
                    newcomm);
}
#endif
