/* settings.c - the PMPI library's environment variables (settings.h), checked at MPI_Init so
 * a typo is a message at start-up rather than a surprise later. */
#include "settings.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "papcoll.h"
#include "papcoll_core.h"

/* "auto", "native" or a registered algorithm that is an all-reduce. */
static int read_algorithm(pmpi_settings *settings, char *error, size_t error_size) {
    const char *text = getenv("PAPCOLL_ALGORITHM");
    if (text == NULL || text[0] == '\0') text = "auto";
    papcoll_algorithm_info info;
    int known = strcmp(text, "auto") == 0 || strcmp(text, "native") == 0 ||
                (papcoll_algorithm_find(text, &info) == PAPCOLL_OK && !info.reduce_scatter);
    if (!known || strlen(text) >= sizeof settings->algorithm) {
        size_t used = (size_t)snprintf(error, error_size,
                                       "PAPCOLL_ALGORITHM='%s' is not an all-reduce papcoll "
                                       "knows; use auto, native or one of:", text);
        for (int32_t k = 0; k < papcoll_algorithm_count() && used < error_size; k++)
            if (papcoll_algorithm_get(k, &info) == PAPCOLL_OK && !info.reduce_scatter)
                used += (size_t)snprintf(error + used, error_size - used, " %s", info.name);
        return -1;
    }
    snprintf(settings->algorithm, sizeof settings->algorithm, "%s", text);
    settings->intercept = strcmp(text, "native") != 0;
    return 0;
}

static int read_min_bytes(pmpi_settings *settings, char *error, size_t error_size) {
    const char *text = getenv("PAPCOLL_MIN_BYTES");
    settings->min_bytes = PMPI_DEFAULT_MIN_BYTES;
    if (text == NULL || text[0] == '\0') return 0;
    char *end = NULL;
    errno = 0;
    long long value = strtoll(text, &end, 10);
    long long unit = 1;
    if (end != text && *end != '\0' && end[1] == '\0') {
        switch (*end) {
        case 'K': case 'k': unit = 1LL << 10; end++; break;
        case 'M': case 'm': unit = 1LL << 20; end++; break;
        case 'G': case 'g': unit = 1LL << 30; end++; break;
        default: break;
        }
    }
    if (end == text || *end != '\0' || errno != 0 || value < 0 || value > INT64_MAX / unit) {
        snprintf(error, error_size, "PAPCOLL_MIN_BYTES='%s' is not a byte count; use a "
                 "number >= 0, optionally with K, M or G (e.g. 65536 or 64K)", text);
        return -1;
    }
    settings->min_bytes = (int64_t)(value * unit);
    return 0;
}

/* PAPCOLL_REPRODUCIBLE, as papcoll_comm_create reads it (papcoll.h); with it, a forced
 * PAPCOLL_ALGORITHM must keep the canonical order (every floating-point call would fail). */
static int read_reproducible(pmpi_settings *settings, char *error, size_t error_size) {
    if (papcoll_reproducible_requested(&settings->reproducible) != MPI_SUCCESS) {
        snprintf(error, error_size, "%s", papcoll_error_string(MPI_ERR_ARG));
        return -1;
    }
    papcoll_algorithm_info info;
    if (settings->reproducible && papcoll_algorithm_find(settings->algorithm, &info) ==
                                      PAPCOLL_OK && !info.canonical_order) {
        size_t used = (size_t)snprintf(error, error_size,
                                       "PAPCOLL_ALGORITHM='%s' does not keep the canonical "
                                       "order PAPCOLL_REPRODUCIBLE=1 asks for; use auto or "
                                       "one of:", settings->algorithm);
        for (int32_t k = 0; k < papcoll_algorithm_count() && used < error_size; k++)
            if (papcoll_algorithm_get(k, &info) == PAPCOLL_OK && info.canonical_order)
                used += (size_t)snprintf(error + used, error_size - used, " %s", info.name);
        return -1;
    }
    return 0;
}

static int read_report(pmpi_settings *settings, char *error, size_t error_size) {
    const char *text = getenv("PAPCOLL_REPORT");
    settings->report_path[0] = '\0';
    if (text == NULL) return 0;
    if (strlen(text) >= sizeof settings->report_path) {
        snprintf(error, error_size, "PAPCOLL_REPORT is a path of %zu characters; at most "
                 "%zu are accepted", strlen(text), sizeof settings->report_path - 1);
        return -1;
    }
    snprintf(settings->report_path, sizeof settings->report_path, "%s", text);
    return 0;
}

int pmpi_settings_read(pmpi_settings *settings, char *error, size_t error_size) {
    memset(settings, 0, sizeof *settings);
    if (read_algorithm(settings, error, error_size) != 0 ||
        read_min_bytes(settings, error, error_size) != 0 ||
        read_reproducible(settings, error, error_size) != 0 ||
        read_report(settings, error, error_size) != 0)
        return -1;
    return 0;
}
