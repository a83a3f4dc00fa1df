/* reproducible.h - reproducible mode (docs/reproducible.md): the result is the
 * canonical order's value, the rank-order left fold ((x0 op x1) op x2) ... op x(P-1), bit
 * for bit, whatever the algorithm, the arrivals or auto's choice, on a given communicator
 * size. Set by papcoll_config.reproducible or PAPCOLL_REPRODUCIBLE=1. */
#ifndef PAPCOLL_MPI_REPRODUCIBLE_H
#define PAPCOLL_MPI_REPRODUCIBLE_H

#include "internal.h"

/* At papcoll_comm_create, on this rank alone: the config's setting, or
 * PAPCOLL_REPRODUCIBLE's (1/0, true/false, yes/no, on/off) where set, into *mine; a value
 * that is none of those is refused. The ranks then compare it with the config's fields
 * (config_agreement.h): refused on every rank where they disagree. */
int reproducible_requested(const papcoll_config *config, int *mine);

/* papcoll_order_matters (papcoll.h): not for integer types with sum, product, min and
 * max, nor for the bitwise and logical ops, nor MINLOC/MAXLOC on integer pairs, which are
 * exact (those pay nothing); yes for floating-point types (min, max, MINLOC and MAXLOC too:
 * min(-0.0, +0.0) is either zero, by operand order) and for user-defined ops. */

/* Where the mode is on and the order matters: refuses a set algorithm that does not keep
 * the canonical order (MPI_ERR_ARG, naming those that do), and makes auto's choice
 * (*chosen, never native: MPI_Allreduce promises no order): the least predicted e-bar among
 * the algorithms that keep the order, on the monitor's model (a size rule before it has
 * one; reproducible.c). Elsewhere *chosen is left as it is. */
int reproducible_algorithm(papcoll_comm *pc, int64_t count, int64_t extent,
                           MPI_Datatype datatype, MPI_Op op, const algorithm_entry **chosen);

#endif /* PAPCOLL_MPI_REPRODUCIBLE_H */
