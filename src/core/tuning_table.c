/* tuning_table.c - every field of papcoll_tuning declared once, as parameter_table.c declares
 * the algorithms' parameters (and MPICH its control variables in cvars.txt): name, kind,
 * default, range, the file that reads it and one help line. From these rows come the
 * defaults (papcoll_tuning_defaults), the checks, PAPCOLL_TUNING's parser, the digest the
 * ranks compare at papcoll_comm_create (src/mpi/communicator.c) and the listing of
 * `papcoll settings` (python/papcoll/settings.py through papcoll_tuning_get). Adding a
 * constant: a field in papcoll_tuning, a row here, its use reading the struct.
 * The defaults are the values measured in the files that read them (their comments say why). */
#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "message.h"
#include "papcoll_core.h"

#define FIELD(field) .name = #field, .offset = offsetof(papcoll_tuning, field)
#define REAL .kind = PAPCOLL_TUNING_REAL
#define WHOLE .kind = PAPCOLL_TUNING_WHOLE_NUMBER

static const papcoll_tuning_info rows[] = {
    {FIELD(margin), REAL, .default_value = 0.05, .minimum = 0, .maximum = 0.99,
     .read_in = "src/core/select.c",
     .help = "share of what follows the last arrival a PAP-aware or hierarchical algorithm "
             "must beat native by to be chosen"},
    {FIELD(alternative_share), REAL, .default_value = 0.25, .minimum = 0, .maximum = 100,
     .read_in = "src/core/select.c",
     .help = "a candidate that lost to native by at most this share is still measured by "
             "the closed loop, and a rival faster by more takes over at its first weighing "
             "(src/mpi/native_feedback.c)"},
    {FIELD(decision_share), REAL, .default_value = 0.01, .minimum = 0, .maximum = 1,
     .read_in = "src/core/select.c",
     .help = "the decision's budget: this share of the time of the calls it serves"},
    {FIELD(calls_per_decision), REAL, .default_value = 100, .minimum = 1, .maximum = 1e9,
     .read_in = "src/core/select.c", .help = "calls one cached decision is taken to serve"},
    {FIELD(operations_per_second), REAL, .default_value = 1e6, .minimum = 1, .maximum = 1e12,
     .read_in = "src/core/select.c",
     .help = "schedule operations built and simulated a second, for the decision's budget"},
    {FIELD(budget_floor), WHOLE, .default_value = 262144, .minimum = 0, .maximum = 1e12,
     .read_in = "src/core/select.c",
     .help = "the least budget of a decision, in operations built and simulated"},
    {FIELD(most_simulated_operations), WHOLE, .default_value = 4000000, .minimum = 1,
     .maximum = 1e12, .read_in = "src/core/select.c",
     .help = "a candidate whose schedules hold more operations in all is not simulated"},
    {FIELD(switch_share), REAL, .default_value = 0.05, .minimum = 0, .maximum = 0.99,
     .read_in = "src/mpi/native_feedback.c",
     .help = "the closed loop overrules the side it runs where the other's median is faster "
             "by this share (and by switch_seconds)"},
    {FIELD(switch_seconds), REAL, .default_value = 1e-6, .minimum = 0, .maximum = 1,
     .read_in = "src/mpi/native_feedback.c",
     .help = "the closed loop's absolute margin, in seconds, beside switch_share"},
    /* at least 1 / C(10, 5), the least p of 5 times against 5 (papcoll_tuning_check: of
     * samples_to_compare against as many): below, nothing could switch */
    {FIELD(switch_significance), REAL, .default_value = 0.05, .minimum = 0.004, .maximum = 1,
     .read_in = "src/mpi/native_feedback.c",
     .help = "and the other side's times must be below the side's by a one-sided "
             "Mann-Whitney U test at this p (1: the margin alone)"},
    {FIELD(samples_to_compare), WHOLE, .default_value = 3, .minimum = 1,
     .maximum = PAPCOLL_TUNING_MOST_SAMPLES, .read_in = "src/mpi/auto_feedback.c",
     .help = "measurements each side of the closed loop needs before the two are compared"},
    {FIELD(probe_every), WHOLE, .default_value = 16, .minimum = 1, .maximum = 1 << 20,
     .read_in = "src/mpi/auto_feedback.c",
     .help = "once both sides are measured, the closed loop runs the other side every this "
             "many calls"},
    {FIELD(probe_phase), WHOLE, .default_value = 8, .minimum = 0, .maximum = (1 << 20) - 1,
     .read_in = "src/mpi/auto_feedback.c",
     .help = "the call, counted from 0 and below probe_every, at which those probes fall"},
    {FIELD(neighbour_levels), WHOLE, .default_value = 2, .minimum = 0, .maximum = 64,
     .read_in = "src/mpi/auto_feedback.c",
     .help = "a new lateness level starts from the measurements of a level at most this "
             "many levels away"},
    {FIELD(arrival_jitter_seconds), REAL, .default_value = 100e-6, .minimum = 1e-9,
     .maximum = 1, .read_in = "src/mpi/arrival_class.c",
     .help = "the least lateness (seconds) taken for a pattern: ranks released together "
             "arrive this far apart from scheduling alone where they share cores"},
    {FIELD(history_starts), WHOLE, .default_value = 3, .minimum = 1,
     .maximum = PAPCOLL_TUNING_MOST_HISTORY_STARTS, .read_in = "src/mpi/arrival_history.c",
     .help = "a persistent request predicts each rank's lateness as its median over this "
             "many last starts"},
    {FIELD(flat_alternative_most_bytes), WHOLE, .default_value = 16777216, .minimum = 0,
     .maximum = 1e15, .read_in = "src/mpi/choose.c",
     .help = "the largest vector (bytes) for which the closed loop measures papcoll's "
             "flat algorithm (select_flat_alternative) against native where the model "
             "named nothing"},
    {FIELD(synchronous_send_bytes), WHOLE, .default_value = 16384, .minimum = 0,
     .maximum = 1e15, .read_in = "src/mpi/executor.c",
     .help = "a send (bytes) that the next send to the same peer waits for goes as "
             "MPI_Issend from this size on (a paced one at any size), so that it "
             "completes when delivered and the next one does not share the link with it"},
};

enum { ROW_COUNT = sizeof rows / sizeof rows[0] };

int32_t papcoll_tuning_count(void) { return ROW_COUNT; }

int papcoll_tuning_get(int32_t index, papcoll_tuning_info *info) {
    if (index < 0 || index >= ROW_COUNT || info == NULL) return PAPCOLL_ERR_ARGUMENT;
    *info = rows[index];
    return PAPCOLL_OK;
}

static double value_of(const papcoll_tuning *tuning, const papcoll_tuning_info *row) {
    const char *field = (const char *)tuning + row->offset;
    if (row->kind == PAPCOLL_TUNING_REAL) return *(const double *)(const void *)field;
    return (double)*(const int64_t *)(const void *)field;
}

static void set_value(papcoll_tuning *tuning, const papcoll_tuning_info *row, double value) {
    char *field = (char *)tuning + row->offset;
    if (row->kind == PAPCOLL_TUNING_REAL) *(double *)(void *)field = value;
    else *(int64_t *)(void *)field = (int64_t)value;
}

void papcoll_tuning_defaults(papcoll_tuning *tuning) {
    if (tuning == NULL) return;
    memset(tuning, 0, sizeof *tuning);
    for (int i = 0; i < ROW_COUNT; i++) set_value(tuning, &rows[i], rows[i].default_value);
}

/* PAPCOLL_OK where value suits the row (in range; whole where it must be), else the reason. */
static int check_value(const papcoll_tuning_info *row, double value, char *error,
                       size_t error_size) {
    if (!(value >= row->minimum && value <= row->maximum))
        return message_write(error, error_size, PAPCOLL_ERR_ARGUMENT,
                             "tuning constant %s = %g is out of its range %g .. %g", row->name,
                             value, row->minimum, row->maximum);
    if (row->kind == PAPCOLL_TUNING_WHOLE_NUMBER && value != floor(value))
        return message_write(error, error_size, PAPCOLL_ERR_ARGUMENT,
                             "tuning constant %s = %g is not a whole number", row->name, value);
    return PAPCOLL_OK;
}

int papcoll_tuning_check(const papcoll_tuning *tuning, char *error, size_t error_size) {
    if (tuning == NULL)
        return message_write(error, error_size, PAPCOLL_ERR_ARGUMENT, "tuning is NULL");
    for (int i = 0; i < ROW_COUNT; i++) {
        int status = check_value(&rows[i], value_of(tuning, &rows[i]), error, error_size);
        if (status != PAPCOLL_OK) return status;
    }
    if (tuning->probe_phase >= tuning->probe_every)
        return message_write(error, error_size, PAPCOLL_ERR_ARGUMENT,
                             "tuning constant probe_phase = %lld must be below probe_every = "
                             "%lld", (long long)tuning->probe_phase,
                             (long long)tuning->probe_every);
    /* the rank test compares samples_to_compare times a side: its least p is 1 / C(2s, s) */
    double least_p = 1;
    for (int64_t k = 1; k <= tuning->samples_to_compare; k++)
        least_p *= (double)k / (double)(tuning->samples_to_compare + k);
    if (tuning->switch_significance < least_p)
        return message_write(error, error_size, PAPCOLL_ERR_ARGUMENT,
                             "tuning constant switch_significance = %g is below %.4g, the "
                             "least p of samples_to_compare = %lld times against as many: the "
                             "closed loop could never switch", tuning->switch_significance,
                             least_p, (long long)tuning->samples_to_compare);
    return PAPCOLL_OK;
}

/* The row named item[0 .. length), or NULL. */
static const papcoll_tuning_info *row_named(const char *item, size_t length) {
    for (int i = 0; i < ROW_COUNT; i++)
        if (strlen(rows[i].name) == length && strncmp(rows[i].name, item, length) == 0)
            return &rows[i];
    return NULL;
}

int papcoll_tuning_parse(const char *text, papcoll_tuning *tuning, char *error,
                         size_t error_size) {
    if (text == NULL || tuning == NULL)
        return message_write(error, error_size, PAPCOLL_ERR_ARGUMENT,
                             "no text or no tuning to parse into (NULL)");
    papcoll_tuning parsed = *tuning; /* tuning is written only on success */
    for (const char *item = text; *item != '\0';) {
        const char *end = strchr(item, ',');
        if (end == NULL) end = item + strlen(item);
        const char *equals = memchr(item, '=', (size_t)(end - item));
        int name_length = (int)((equals ? equals : end) - item);
        const papcoll_tuning_info *row = row_named(item, (size_t)name_length);
        if (row == NULL)
            return message_write(error, error_size, PAPCOLL_ERR_ARGUMENT,
                                 "unknown tuning constant '%.*s' (items are name=value, "
                                 "separated by commas; `papcoll settings` lists the names)",
                                 name_length > 60 ? 60 : name_length, item);
        char number[64];
        size_t length = equals ? (size_t)(end - equals - 1) : 0;
        size_t copied = length < sizeof number ? length : sizeof number - 1;
        if (equals != NULL) memcpy(number, equals + 1, copied);
        number[copied] = '\0';
        char *stop = NULL;
        double value = strtod(number, &stop);
        /* strtod skips leading spaces: refused, as every setting's parser refuses them */
        if (copied == 0 || isspace((unsigned char)number[0]) || stop == number ||
            *stop != '\0' || copied != length || !isfinite(value))
            return message_write(error, error_size, PAPCOLL_ERR_ARGUMENT,
                                 "tuning constant %s: '%s' is not a number", row->name, number);
        int status = check_value(row, value, error, error_size);
        if (status != PAPCOLL_OK) return status;
        set_value(&parsed, row, value);
        item = *end == ',' ? end + 1 : end;
    }
    int status = papcoll_tuning_check(&parsed, error, error_size); /* the rules across rows */
    if (status == PAPCOLL_OK) *tuning = parsed;
    return status;
}

uint64_t papcoll_tuning_digest(const papcoll_tuning *tuning) {
    uint64_t digest = 1469598103934665603ULL; /* FNV-1a's offset basis */
    for (int i = 0; i < ROW_COUNT; i++) {
        double value = value_of(tuning, &rows[i]) + 0.0; /* -0 and 0 alike */
        unsigned char bytes[sizeof value];
        memcpy(bytes, &value, sizeof value);
        for (size_t b = 0; b < sizeof bytes; b++) digest = (digest ^ bytes[b]) * 1099511628211ULL;
    }
    return digest;
}
