/* tau_model.h - the model behind tau, the time to move and reduce one segment (seed 000
 * S4): three numbers and the one formula every use of tau goes through, and the parser of
 * PAPCOLL_TAU_MODEL's text, which `papcoll calibrate` prints. Pure (no MPI, no printing),
 * so it lives in the core and is unit-tested there (tests/c/test_tau_model.c); the arrival
 * monitor (src/mpi/tau.c) measures or reads the numbers and shares them between ranks. */
#ifndef PAPCOLL_TAU_MODEL_H
#define PAPCOLL_TAU_MODEL_H

#include <stddef.h>

#include "hidden.h"

/* The three numbers, in this order in every array (and in the broadcast that shares them). */
enum {
    TAU_MODEL_LATENCY,                 /* seconds: one small message one way */
    TAU_MODEL_SECONDS_PER_BYTE,        /* the transfer's cost per byte */
    TAU_MODEL_REDUCE_SECONDS_PER_BYTE, /* the reduction's cost per byte */
    TAU_MODEL_SIZE
};

/* Parses "name=value,name=value,name=value" (each of the three names exactly once, each
 * value a finite number >= 0) into model[]. Returns 1, or 0 with the reason in why[]
 * (model[] then partly written). */
int tau_model_parse(const char *text, double model[TAU_MODEL_SIZE], char *why,
                    size_t why_size);

/* tau = latency + segment_bytes x (seconds_per_byte + reduce_seconds_per_byte), kept > 0
 * (a model of zeros still orders segments). */
double tau_model_tau(const double model[TAU_MODEL_SIZE], double segment_bytes);

#endif /* PAPCOLL_TAU_MODEL_H */
