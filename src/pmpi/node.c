/* node.c - the node a rank runs on, for the report: how many ranks share it and how many
 * cores they may use. A node with more ranks than cores runs native MPI_Allreduce at the
 * MPI's tuning's mercy (MPICH's default took 650 ms a 512 KiB call there, docs/pmpi.md).
 *
 * The cores are those the ranks may run on, not the machine's: a container or a batch job's
 * cpuset gives fewer than sysconf counts, and a launcher that binds each rank to a core gives
 * each rank one. So every rank of the node contributes its affinity mask and the node counts
 * the union: unbound ranks in a 2-core cpuset count 2, four ranks bound to a core each
 * count 4. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <mpi.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "intercept.h"

void pmpi_node_describe(int *ranks_on_node, int *cores) {
    *ranks_on_node = 1;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    *cores = online > 0 ? (int)online : 0;
    MPI_Comm node;
    if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) !=
        MPI_SUCCESS)
        return;
    PMPI_Comm_size(node, ranks_on_node);
    /* every rank takes part whatever its own call answers (a rank that skipped the
     * collective would hang the others); a mask it cannot read adds nothing */
    cpu_set_t mine, all;
    CPU_ZERO(&mine);
    if (sched_getaffinity(0, sizeof mine, &mine) != 0) CPU_ZERO(&mine);
    if (PMPI_Allreduce(&mine, &all, (int)sizeof mine, MPI_BYTE, MPI_BOR, node) ==
            MPI_SUCCESS &&
        CPU_COUNT(&all) > 0)
        *cores = CPU_COUNT(&all);
    PMPI_Comm_free(&node);
}
