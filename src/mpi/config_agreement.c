/* config_agreement.c - which papcoll_config fields must be the same on every rank, said once
 * (the table below), and the check at papcoll_comm_create that they are, together with the
 * settings read from the environment that the ranks settle in the same reduction
 * (agreed_setting: the tag limit, PAPCOLL_CHECK, reproducible mode, the native variants).
 *
 * Why at create and always (not only with PAPCOLL_CHECK): a field that differs makes ranks
 * build different schedules or wait in different places - max_message_elements splits a
 * message into a different number of MPI messages (a wrong sum, then a hang), arrival_source
 * runs a different monitor (a hang in papcoll_comm_free), grouping a different group
 * exchange (garbage groups, then a hang) - and one small MPI_Allreduce at create costs
 * nothing beside the communicator duplicates made there. A rank that refused its own config
 * takes part too, so the others fail with it rather than wait for it.
 *
 * tests/python/test_hardening_mpi.py checks that the table names every field of
 * papcoll_config (cffi sees the struct), so a field added later must be classified here. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "config_agreement.h"
#include "errors.h"

typedef enum field_rule {
    FIELD_AGREED_HERE,      /* compared at create, below */
    FIELD_AGREED_ELSEWHERE, /* compared where it is used (the rule says where) */
    FIELD_PER_RANK          /* may differ: each rank's own */
} field_rule;

typedef struct config_field {
    const char *name;
    field_rule rule;
    size_t offset, size; /* FIELD_AGREED_HERE: the field's bytes, a whole number */
    const char *where;   /* the others: where it is agreed, or why it may differ */
} config_field;

#define HERE(field) \
    {#field, FIELD_AGREED_HERE, offsetof(papcoll_config, field), \
     sizeof(((papcoll_config *)0)->field), ""}

static const config_field config_fields[] = {
    {"algorithm", FIELD_AGREED_ELSEWHERE, 0, 0,
     "per call, by the agreement check (papcoll_set_algorithm may change it)"},
    {"parameters", FIELD_AGREED_ELSEWHERE, 0, 0,
     "per call, by the agreement check (a digest of the algorithm's parameters)"},
    HERE(max_message_elements),
    HERE(arrival_source),
    HERE(grouping),
    {"group_color", FIELD_PER_RANK, 0, 0, "each rank's own group"},
    {"check_agreement", FIELD_AGREED_ELSEWHERE, 0, 0,
     "at create: one rank asking turns it on for all (communicator.c)"},
    HERE(progress),
    {"reproducible", FIELD_AGREED_ELSEWHERE, 0, 0,
     "at create, with PAPCOLL_REPRODUCIBLE, in this reduction (communicator.c)"},
    {"rules_file", FIELD_AGREED_ELSEWHERE, 0, 0,
     "at create: a digest of the file's contents, not its path (communicator.c)"},
    {"tuning", FIELD_AGREED_ELSEWHERE, 0, 0,
     "at create: a digest of every constant, after PAPCOLL_TUNING (communicator.c)"},
};
enum { FIELD_COUNT = sizeof config_fields / sizeof config_fields[0] };

int papcoll_config_field(int32_t index, const char **name, int32_t *must_agree) {
    if (index < 0 || index >= FIELD_COUNT || name == NULL || must_agree == NULL)
        return MPI_ERR_ARG;
    *name = config_fields[index].name;
    *must_agree = config_fields[index].rule != FIELD_PER_RANK;
    return MPI_SUCCESS;
}

/* field_value reads a field of 8 bytes as int64_t, any other as int32_t */
_Static_assert(sizeof(papcoll_arrival_source) == 4 && sizeof(papcoll_grouping) == 4 &&
                   sizeof(papcoll_progress) == 4 &&
                   sizeof(((papcoll_config *)0)->max_message_elements) == 8,
               "config_agreement.c reads the agreed fields as 4 or 8 bytes");

static int64_t field_value(const papcoll_config *config, const config_field *field) {
    const char *bytes = (const char *)config + field->offset;
    if (field->size == sizeof(int64_t)) {
        int64_t value;
        memcpy(&value, bytes, sizeof value);
        return value;
    }
    int32_t value; /* enums and ints */
    memcpy(&value, bytes, sizeof value);
    return value;
}

int config_agreement_check(MPI_Comm comm, const papcoll_config *config,
                           agreed_setting *settings, int setting_count, int refused) {
    /* [refused, v_1 .. v_n, -v_1 .. -v_n] under MPI_MAX: the values agree where max(v) and
     * -max(-v) = min(v) are equal; the config's fields first, then the settings */
    enum { MOST_SETTINGS = 8 };
    if (setting_count < 0 || setting_count > MOST_SETTINGS)
        return record_error(MPI_ERR_INTERN, "papcoll_comm_create: %d settings to agree on",
                            setting_count);
    int64_t values[1 + 2 * (FIELD_COUNT + MOST_SETTINGS)];
    int used = 0;
    values[used++] = refused != 0;
    for (int k = 0; k < FIELD_COUNT; k++)
        if (config_fields[k].rule == FIELD_AGREED_HERE)
            values[used++] = refused ? 0 : field_value(config, &config_fields[k]);
    for (int k = 0; k < setting_count; k++) values[used++] = refused ? 0 : settings[k].value;
    int compared = used - 1;
    for (int k = 0; k < compared; k++) values[used++] = -values[1 + k];
    int code = MPI_Allreduce(MPI_IN_PLACE, values, used, MPI_INT64_T, MPI_MAX, comm);
    if (code != MPI_SUCCESS)
        return record_error(code, "papcoll_comm_create: MPI_Allreduce of the config failed");
    if (refused) return MPI_ERR_ARG; /* this rank's own message stands */
    if (values[0])
        return record_error(MPI_ERR_ARG, "papcoll_comm_create: another rank refused its "
                                         "config (its error says why); every rank fails");
    int slot = 0;
    for (int k = 0; k < FIELD_COUNT; k++) {
        if (config_fields[k].rule != FIELD_AGREED_HERE) continue;
        int64_t highest = values[1 + slot], lowest = -values[1 + compared + slot];
        slot++;
        if (highest != lowest)
            return record_error(MPI_ERR_ARG, "papcoll_comm_create: the ranks disagree on "
                                "config.%s (from %lld to %lld); it must be the same on every "
                                "rank", config_fields[k].name, (long long)lowest,
                                (long long)highest);
    }
    for (int k = 0; k < setting_count; k++, slot++) {
        int64_t highest = values[1 + slot], lowest = -values[1 + compared + slot];
        settings[k].highest = highest;
        settings[k].lowest = lowest;
        if (settings[k].combination == SETTING_ANY_RANK) settings[k].value = highest;
        if (settings[k].combination == SETTING_SAME && highest != lowest)
            return record_error(MPI_ERR_ARG, "papcoll_comm_create: %s differs between ranks "
                                "(from %lld to %lld); it must be the same on every rank", settings[k].name, (long long)lowest,
                                (long long)highest);
    }
    return MPI_SUCCESS;
}
