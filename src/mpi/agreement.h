/* agreement.h - the opt-in check that every rank makes the same call (PAPCOLL_CHECK=1 in
 * the environment, or papcoll_config.check_agreement): see agreement.c. */
#ifndef PAPCOLL_MPI_AGREEMENT_H
#define PAPCOLL_MPI_AGREEMENT_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "papcoll_core.h"

/* What the ranks must agree on, one number each: equal numbers on every rank, or the call is
 * erroneous (MPI) and would hang or fail on some ranks only. */
typedef enum agreement_field {
    AGREEMENT_LOCAL_ERROR,  /* 1 where the rank's own checks refused the call */
    AGREEMENT_COUNT,
    AGREEMENT_DATATYPE,     /* a digest of the type signature (see agreement.c) */
    AGREEMENT_OP,
    AGREEMENT_ALGORITHM,    /* the algorithm the call resolved to */
    AGREEMENT_PARAMETERS,   /* a digest of the algorithm's parameters */
    AGREEMENT_FIELD_COUNT
} agreement_field;

typedef struct call_digest {
    uint64_t value[AGREEMENT_FIELD_COUNT];
} call_digest;

/* The digest of one all-reduce call. local_error: the rank's own checks failed (then the
 * other fields may be left zero: only that field is compared). */
void call_digest_describe(call_digest *digest, int local_error, int64_t count,
                          MPI_Datatype datatype, MPI_Op op, const char *algorithm,
                          const papcoll_parameters *parameters);

/* Collective over comm: MPI_SUCCESS when every rank gave the same digest. Otherwise every
 * rank returns an error; a rank whose own checks failed keeps its own message, the others
 * record one naming the field and the ranks that differ. */
int agreement_check(MPI_Comm comm, const call_digest *mine, const char *caller);

/* A 62-bit digest (FNV-1a) of length bytes, never 0 (0 means "none" where a digest is
 * compared at papcoll_comm_create: the rules file's). */
int64_t agreement_bytes_digest(const void *bytes, size_t length);

#endif /* PAPCOLL_MPI_AGREEMENT_H */
