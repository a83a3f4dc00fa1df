/* config_agreement.h - the papcoll_config fields every rank must share, checked at
 * papcoll_comm_create (config_agreement.c). */
#ifndef PAPCOLL_MPI_CONFIG_AGREEMENT_H
#define PAPCOLL_MPI_CONFIG_AGREEMENT_H

#include <mpi.h>

#include "papcoll.h"

/* How the ranks' values of a setting combine. */
typedef enum setting_combination {
    SETTING_SAME,     /* must be the same on every rank: where not, every rank fails, naming
                       * it (PAPCOLL_TAG_LIMIT: posts take their tags below it) */
    SETTING_ANY_RANK, /* one rank's nonzero value turns it on for all (PAPCOLL_CHECK) */
    SETTING_COMPARED  /* compared, never refused here: the caller decides from highest and
                       * lowest (the native variants, which fall back where they differ) */
} setting_combination;

/* A setting read from the environment (or found by this rank) that is not a config field
 * but that the ranks settle in the same reduction. value: this rank's, at least
 * INT64_MIN + 1 (the reduction negates it); highest and lowest: every rank's, filled in. */
typedef struct agreed_setting {
    const char *name;
    int64_t value;
    setting_combination combination;
    int64_t highest, lowest;
} agreed_setting;

/* Collective over comm, one small MPI_Allreduce: MPI_SUCCESS where every rank's config (as
 * it takes effect) agrees on every field that must, and on the `setting_count` settings of
 * SETTING_SAME; otherwise an error on every rank. refused: this rank's own checks refused its config (it then keeps its own message;
 * the others say another rank refused). */
int config_agreement_check(MPI_Comm comm, const papcoll_config *config,
                           agreed_setting *settings, int setting_count, int refused);

#endif /* PAPCOLL_MPI_CONFIG_AGREEMENT_H */
