/* environment.c - see environment.h. */
#include "environment.h"

#include <stdlib.h>

#include "errors.h"

int environment_read(const char *variable, const char *caller, int64_t *value, int *set) {
    const char *text = getenv(variable);
    *value = 0;
    *set = text != NULL && text[0] != '\0';
    if (!*set) return MPI_SUCCESS;
    char why[400];
    if (papcoll_setting_parse(variable, text, value, why, sizeof why) == PAPCOLL_OK)
        return MPI_SUCCESS;
    *set = 0;
    return caller != NULL ? record_error(MPI_ERR_ARG, "%s: %s", caller, why)
                          : record_error(MPI_ERR_ARG, "%s", why);
}

int papcoll_environment_switch(const char *variable, int *on) {
    int64_t value = 0;
    int set = 0;
    int code = environment_read(variable, NULL, &value, &set);
    *on = set && value != 0;
    return code;
}
