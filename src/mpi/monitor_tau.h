/* monitor_tau.h - tau's calibration at the monitor's first call: the model's three numbers
 * from PAPCOLL_TAU_MODEL or measured, the same on every rank, and the warm-up of every link
 * (monitor_tau.c says how and why). The model and its formula are pure and live in the
 * core (src/core/tau_model.h). */
#ifndef PAPCOLL_MPI_MONITOR_TAU_H
#define PAPCOLL_MPI_MONITOR_TAU_H

#include "internal.h"

/* Collective: fills pc->monitor.model and sets calibrated. Returns MPI_SUCCESS or an error
 * class (MPI_ERR_ARG on every rank where some rank's PAPCOLL_TAU_MODEL is malformed). */
int monitor_calibrate(papcoll_comm *pc);

#endif /* PAPCOLL_MPI_MONITOR_TAU_H */
