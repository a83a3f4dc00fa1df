/* choice_sharing.h - auto's decision off the late rank's path: where no rank has
 * decided a call's shape and arrival profile before, one rank decides and tells the others
 * (choice_sharing.c says which and why). */
#ifndef PAPCOLL_MPI_CHOICE_SHARING_H
#define PAPCOLL_MPI_CHOICE_SHARING_H

#include "choose.h"
#include "internal.h"

/* The model's decision for a call: from cache (the communicator's, decision_site.h), or
 * made by the rank predicted to arrive first and received from it, then kept there. Every
 * rank of pc must call it, with the same input, in the same call. MPI_SUCCESS or an MPI error (recorded), MPI_ERR_ARG where the decision
 * received was made for another count or element size than this rank's. */
int choice_share(papcoll_comm *pc, choice_cache *cache, const choice_input *input,
                 auto_choice *out);

#endif /* PAPCOLL_MPI_CHOICE_SHARING_H */
