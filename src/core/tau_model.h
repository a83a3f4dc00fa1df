/* tau_model.h - the model behind tau, the time to move and reduce one segment (Proficz 2018,
 * Sect. 4): three numbers and the one formula every use of tau goes through, and the parser of
 * PAPCOLL_TAU_MODEL's text, which `papcoll calibrate` prints. Pure (no MPI, no printing),
 * so it lives in the core and is unit-tested there (tests/c/test_tau_model.c); the arrival
 * monitor (src/mpi/monitor_tau.c) measures or reads the numbers and shares them between ranks. */
#ifndef PAPCOLL_TAU_MODEL_H
#define PAPCOLL_TAU_MODEL_H

#include <stddef.h>

#include "papcoll_core.h"

/* The three numbers, in this order in every array (and in the broadcast that shares them). */
enum {
    TAU_MODEL_LATENCY,                 /* seconds: one small message one way */
    TAU_MODEL_SECONDS_PER_BYTE,        /* the transfer's cost per byte */
    TAU_MODEL_REDUCE_SECONDS_PER_BYTE, /* the reduction's cost per byte */
    TAU_MODEL_SIZE
};

/* The parser and the formula are public (papcoll_tau_model_parse, papcoll_tau_model_tau in
 * papcoll_core.h), so that Python's calibration reads the text with this parser, not a
 * second one. */

#endif /* PAPCOLL_TAU_MODEL_H */
