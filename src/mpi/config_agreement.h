/* config_agreement.h - the papcoll_config fields every rank must share, checked at
 * papcoll_comm_create (config_agreement.c). */
#ifndef PAPCOLL_MPI_CONFIG_AGREEMENT_H
#define PAPCOLL_MPI_CONFIG_AGREEMENT_H

#include <mpi.h>

#include "papcoll.h"

/* A setting read from the environment that is not a config field but must agree too
 * (PAPCOLL_TAG_LIMIT: posts take their tags below it). */
typedef struct agreed_setting {
    const char *name;
    int64_t value;
} agreed_setting;

/* Collective over comm: MPI_SUCCESS where every rank's config (as it takes effect) agrees on
 * every field that must, and on the `setting_count` settings; otherwise an error on every
 * rank. refused: this rank's own checks refused its config (it then keeps its own message;
 * the others say another rank refused). */
int config_agreement_check(MPI_Comm comm, const papcoll_config *config,
                           const agreed_setting *settings, int setting_count, int refused);

#endif /* PAPCOLL_MPI_CONFIG_AGREEMENT_H */
