/* papcoll.h - the public C API of papcoll: all-reduce for MPI programs whose processes do
 * not arrive at the collective together. This is the only header a user includes.
 *
 *   papcoll_comm *pc;
 *   papcoll_comm_create(MPI_COMM_WORLD, NULL, &pc);          // NULL config: defaults
 *   papcoll_allreduce(pc, send, recv, n, MPI_FLOAT, MPI_SUM); // MPI_Allreduce semantics
 *   papcoll_comm_free(&pc);
 *
 * Every function returns MPI_SUCCESS or an MPI error class (MPI_ERR_COUNT, MPI_ERR_TYPE,
 * MPI_ERR_OP, MPI_ERR_ARG, ...); papcoll_error_string(code) then says what was wrong.
 */
#ifndef PAPCOLL_H
#define PAPCOLL_H

#include <mpi.h>
#include <stdint.h>

#include "papcoll_core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct papcoll_comm papcoll_comm;

/* Options of a papcoll communicator. Start from papcoll_config_init() (or pass NULL). */
typedef struct papcoll_config {
    const char *algorithm;         /* a name from `papcoll algorithms`, or "auto" (default) */
    int64_t segment_elements;      /* segmented_ring: elements per segment; 0 = default */
    int32_t segment_count;         /* linear_tree: number of segments; 0 = P */
    /* Messages longer than this many elements are sent as several MPI messages, so counts
     * beyond INT_MAX work with MPI's int-count calls; 0 = 2^30. Tests lower it to exercise
     * the split on small buffers. */
    int64_t max_message_elements;
} papcoll_config;

void papcoll_config_init(papcoll_config *config);

/* Creates a papcoll communicator over a private duplicate of comm (collective over comm). */
int papcoll_comm_create(MPI_Comm comm, const papcoll_config *config, papcoll_comm **out);
/* Frees it and sets *pc to NULL (collective, as it frees the duplicate communicator). */
int papcoll_comm_free(papcoll_comm **pc);

/* Chooses the algorithm of later calls: a registered name or "auto". Must be the same on
 * every rank. Unknown names return MPI_ERR_ARG. */
int papcoll_set_algorithm(papcoll_comm *pc, const char *name);
/* The algorithm set ("auto" or a name). */
const char *papcoll_get_algorithm(const papcoll_comm *pc);
/* The algorithm a call with these arguments would run (resolves "auto"). */
int papcoll_resolve_algorithm(papcoll_comm *pc, int64_t count, MPI_Datatype datatype, MPI_Op op,
                              const char **name);

/* MPI_Allreduce semantics: MPI_IN_PLACE as sendbuf, every predefined datatype and op,
 * user-defined ops (non-commutative ones need an order-keeping algorithm), count 0, count
 * below the number of ranks. Every rank gets a bitwise identical result. */
int papcoll_allreduce(papcoll_comm *pc, const void *sendbuf, void *recvbuf, int count,
                      MPI_Datatype datatype, MPI_Op op);
/* The same with a 64-bit count (counts beyond 2^31). */
int papcoll_allreduce_c(papcoll_comm *pc, const void *sendbuf, void *recvbuf, MPI_Count count,
                        MPI_Datatype datatype, MPI_Op op);

/* What the last error with this code (in this thread) was about, or a generic description
 * of the MPI error class. Never NULL. */
const char *papcoll_error_string(int code);

#ifdef __cplusplus
}
#endif

#endif /* PAPCOLL_H */
