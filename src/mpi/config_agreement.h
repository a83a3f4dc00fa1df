/* config_agreement.h - the papcoll_config fields every rank must share, checked at
 * papcoll_comm_create (config_agreement.c). */
#ifndef PAPCOLL_MPI_CONFIG_AGREEMENT_H
#define PAPCOLL_MPI_CONFIG_AGREEMENT_H

#include <mpi.h>

#include "papcoll.h"

/* Collective over comm: MPI_SUCCESS where every rank's config (as it takes effect) agrees on
 * every field that must; otherwise an error on every rank. refused: this rank's own checks
 * refused its config (it then keeps its own message; the others say another rank refused). */
int config_agreement_check(MPI_Comm comm, const papcoll_config *config, int refused);

#endif /* PAPCOLL_MPI_CONFIG_AGREEMENT_H */
