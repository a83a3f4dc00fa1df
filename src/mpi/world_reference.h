/* world_reference.h - what a process learns once, on MPI_COMM_WORLD, and every later
 * communicator of the same world reuses instead of measuring again: its clock's offset to
 * world rank 0's clock and its node (the lowest world rank that shares its memory).
 *
 * Why: a papcoll communicator needs both (the monitor's clock, the hierarchical algorithms'
 * groups), and measuring them is per peer: 8 ping-pongs from rank 0 to each rank, a
 * shared-memory split and an all-reduce. The drop-in makes a papcoll communicator inside
 * each MPI_Comm_dup / MPI_Comm_split of the program, where that cost was 13 x the bare
 * constructor at P = 2 and 22 x at P = 16 (docs/benchmarks.md). Times put on world rank 0's
 * clock are as comparable as times put on a communicator's own rank 0's: only their
 * differences are used.
 *
 * Whether every rank of a communicator shares the reference is decided from a token that
 * world rank 0 drew when the reference was made: processes of different worlds (merged
 * after MPI_Comm_spawn or MPI_Comm_connect) hold different tokens, or none, and then the
 * communicator measures its own, as before. */
#ifndef PAPCOLL_MPI_WORLD_REFERENCE_H
#define PAPCOLL_MPI_WORLD_REFERENCE_H

#include <mpi.h>
#include <stdint.h>

/* Whether comm has MPI_COMM_WORLD's processes in its order (papcoll's duplicate of world
 * is), so that what is measured on it is the world's reference. Local. */
int world_reference_is_world(MPI_Comm comm);

/* This process's token (0: no reference yet) and, where it has one, its node and clock
 * offset (MPI_Wtime() + offset is the time on world rank 0's clock). */
int64_t world_reference_token(void);
int32_t world_reference_node(void);
double world_reference_clock_offset(void);
int world_reference_has_clock_offset(void);

/* A token for the world, drawn at its rank 0 (distinct between worlds: the clock and the
 * process id; never 0); world_reference_adopt_token keeps it where no token is held yet
 * (every rank of the world adopts rank 0's, shared in rank_groups.c's all-gather). Then
 * world_reference_set_node / _set_clock_offset record the rest as they are measured. */
int64_t world_reference_draw(void);
void world_reference_adopt_token(int64_t drawn);
void world_reference_set_node(int32_t node);
void world_reference_set_clock_offset(double offset);

#endif /* PAPCOLL_MPI_WORLD_REFERENCE_H */
