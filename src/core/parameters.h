/* parameters.h - an owned copy of papcoll_parameters: the strings, the rank order and the
 * tree it points to, copied into one block, so a communicator keeps its parameters after
 * the caller's memory is gone. The MPI layer (src/mpi/communicator.c) holds one. */
#ifndef PAPCOLL_PARAMETERS_H
#define PAPCOLL_PARAMETERS_H

#include "hidden.h"

#include "papcoll_core.h"

typedef struct owned_parameters {
    papcoll_parameters parameters; /* points into storage (or at nothing) */
    void *storage;
} owned_parameters;

/* Replaces *owned with a deep copy of source (source may point into *owned itself). Returns
 * PAPCOLL_OK, or PAPCOLL_ERR_NO_MEMORY with *owned unchanged. */
int owned_parameters_set(owned_parameters *owned, const papcoll_parameters *source,
                         int32_t ranks);
void owned_parameters_release(owned_parameters *owned);

#endif /* PAPCOLL_PARAMETERS_H */
