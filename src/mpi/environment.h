/* environment.h - the C library's environment variables, read through the one parser of
 * src/core/environment_table.c (papcoll_setting_parse), with the refusal recorded as the
 * MPI side records every error (errors.h). */
#ifndef PAPCOLL_MPI_ENVIRONMENT_H
#define PAPCOLL_MPI_ENVIRONMENT_H

#include <stdint.h>

#include "internal.h"

/* The value of `variable` (a row of the table): MPI_SUCCESS and *set 0 where it is unset
 * or empty, else *set 1 and *value (papcoll_setting_parse's); MPI_ERR_ARG, recorded with
 * the parser's line (after "caller: " where caller is not NULL), where the value is not one
 * the setting takes. */
int environment_read(const char *variable, const char *caller, int64_t *value, int *set);

#endif /* PAPCOLL_MPI_ENVIRONMENT_H */
