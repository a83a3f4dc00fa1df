/* tau_model.c - the parser and the formula of tau_model.h. The parser says exactly what is
 * wrong with a malformed text, because a wrong PAPCOLL_TAU_MODEL stops every rank's call
 * (src/mpi/monitor_tau.c) and the message is all the user sees. */
#include "tau_model.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* PAPCOLL_TAU_MODEL's name of each number, in the order of tau_model.h. */
static const char *const tau_model_names[TAU_MODEL_SIZE] = {"latency", "seconds_per_byte",
                                                     "reduce_seconds_per_byte"};

/* Which of the names item[0 .. length) is, or -1. */
static int name_index(const char *item, size_t length) {
    for (int i = 0; i < TAU_MODEL_SIZE; i++)
        if (length == strlen(tau_model_names[i]) &&
            strncmp(item, tau_model_names[i], length) == 0)
            return i;
    return -1;
}

/* Reads the value of `name` from value[0 .. length) into *out; 0 and a reason if it is not a
 * finite number >= 0. */
static int parse_value(const char *name, const char *value, size_t length, double *out,
                       char *why, size_t why_size) {
    if (length == 0) {
        snprintf(why, why_size, "%s has no value (write %s=SECONDS)", name, name);
        return 0;
    }
    /* strtod needs a terminated string: copy the value (a number is short) */
    char number[64];
    size_t copied = length < sizeof number ? length : sizeof number - 1; /* longer: not all read */
    memcpy(number, value, copied);
    number[copied] = '\0';
    char *stop = NULL;
    double parsed = strtod(number, &stop);
    /* strtod skips leading spaces: refused, as every setting's parser refuses them */
    if (isspace((unsigned char)number[0]) || stop == number || *stop != '\0' ||
        copied != length) {
        snprintf(why, why_size, "%s=%.40s is not a number", name, number);
        return 0;
    }
    if (!isfinite(parsed)) {
        snprintf(why, why_size, "%s=%.40s is not a finite number", name, number);
        return 0;
    }
    if (parsed < 0) {
        snprintf(why, why_size, "%s=%.40s is negative", name, number);
        return 0;
    }
    *out = parsed;
    return 1;
}

int papcoll_tau_model_parse(const char *text, double model[TAU_MODEL_SIZE], char *why,
                            size_t why_size) {
    if (text == NULL || model == NULL) {
        snprintf(why, why_size, "no text or no model to parse into (NULL)");
        return PAPCOLL_ERR_ARGUMENT;
    }
    int seen[TAU_MODEL_SIZE] = {0};
    double parsed[TAU_MODEL_SIZE] = {0}; /* model[] is written only on success */
    const char *item = text;
    for (;;) {
        const char *end = strchr(item, ',');
        if (end == NULL) end = item + strlen(item);
        const char *equals = memchr(item, '=', (size_t)(end - item));
        int name_length = (int)((equals ? equals : end) - item);
        int which = name_index(item, (size_t)name_length);
        if (which < 0) {
            if (name_length == 0)
                snprintf(why, why_size, "an item has no name (items are name=value, "
                                        "separated by commas)");
            else
                snprintf(why, why_size, "unknown name '%.*s' (the names are latency, "
                         "seconds_per_byte, reduce_seconds_per_byte)",
                         name_length > 40 ? 40 : name_length, item);
            return PAPCOLL_ERR_ARGUMENT;
        }
        if (seen[which]) {
            snprintf(why, why_size, "%s is given twice", tau_model_names[which]);
            return PAPCOLL_ERR_ARGUMENT;
        }
        const char *value = equals ? equals + 1 : end;
        if (!parse_value(tau_model_names[which], value, (size_t)(end - value), &parsed[which],
                         why, why_size))
            return PAPCOLL_ERR_ARGUMENT;
        seen[which] = 1;
        if (*end == '\0') break;
        item = end + 1;
    }
    for (int i = 0; i < TAU_MODEL_SIZE; i++)
        if (!seen[i]) {
            snprintf(why, why_size, "%s is missing (give latency, seconds_per_byte and "
                     "reduce_seconds_per_byte)", tau_model_names[i]);
            return PAPCOLL_ERR_ARGUMENT;
        }
    memcpy(model, parsed, sizeof parsed);
    return PAPCOLL_OK;
}

double papcoll_tau_model_tau(const double model[TAU_MODEL_SIZE], double segment_bytes) {
    double tau = model[TAU_MODEL_LATENCY] +
                 segment_bytes * (model[TAU_MODEL_SECONDS_PER_BYTE] +
                                  model[TAU_MODEL_REDUCE_SECONDS_PER_BYTE]);
    return tau > 0 ? tau : 1e-9;
}
