/* environment_table.c - every environment variable of the C libraries that has a grammar,
 * declared once, as tuning_table.c declares the tuning constants: name, kind, range or
 * words, and what a refusal says. papcoll_setting_parse is the one parser of their values,
 * so no two settings differ in what they take (a value with spaces around it was once taken
 * by strtol for PAPCOLL_TAG_LIMIT and refused for PAPCOLL_REPRODUCIBLE): papcoll_comm_create,
 * the progress thread and the drop-in's MPI_Init (which checks every row, src/pmpi/
 * settings.c) all call it, and `papcoll settings` reads the rows (tests/python/
 * test_settings_listing.py holds python/papcoll/settings.py to them). Adding a setting: a
 * row here, its reader calling the parser, its row in python/papcoll/settings.py. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_ISSET */
#include <ctype.h>
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "message.h"
#include "papcoll_core.h"
#include "tau_model.h"

/* A row's own check of a value its kind accepted (a core the process may run on, a
 * grammar), or NULL. */
typedef int (*setting_check)(const char *name, const char *text, int64_t value, char *error,
                             size_t error_size);

typedef struct setting_row {
    papcoll_setting_info info;
    setting_check check;
} setting_row;

/* The progress thread pins itself with pthread_setaffinity_np, which fails for a core
 * outside the process's affinity mask (beyond the machine's cores, or another rank's under
 * mpiexec's binding), and the thread then ran unpinned without a word. */
static int check_core(const char *name, const char *text, int64_t value, char *error,
                      size_t error_size) {
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0 || CPU_ISSET((int)value, &allowed))
        return PAPCOLL_OK;
    char cores[160] = "";
    size_t used = 0;
    for (int core = 0; core < CPU_SETSIZE && used + 12 < sizeof cores; core++) {
        if (!CPU_ISSET(core, &allowed) || (core > 0 && CPU_ISSET(core - 1, &allowed))) continue;
        int last = core;
        while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &allowed)) last++;
        int wrote = last > core ? snprintf(cores + used, sizeof cores - used, "%s%d-%d",
                                           used ? "," : "", core, last)
                                : snprintf(cores + used, sizeof cores - used, "%s%d",
                                           used ? "," : "", core);
        if (wrote > 0) used += (size_t)wrote;
    }
    return message_write(error, error_size, PAPCOLL_ERR_ARGUMENT,
                         "%s='%.32s' is not a core this process may run on (its cores: %s), "
                         "so the progress thread could not be pinned there", name, text, cores);
}

static int check_tuning(const char *name, const char *text, int64_t value, char *error,
                        size_t error_size) {
    (void)value;
    papcoll_tuning tuning;
    papcoll_tuning_defaults(&tuning);
    char why[240];
    if (papcoll_tuning_parse(text, &tuning, why, sizeof why) == PAPCOLL_OK) return PAPCOLL_OK;
    return message_write(error, error_size, PAPCOLL_ERR_ARGUMENT, "%s='%.80s': %s", name, text,
                         why);
}

static int check_tau_model(const char *name, const char *text, int64_t value, char *error,
                           size_t error_size) {
    (void)value;
    double model[TAU_MODEL_SIZE];
    char why[200];
    if (papcoll_tau_model_parse(text, model, why, sizeof why) == PAPCOLL_OK) return PAPCOLL_OK;
    return message_write(error, error_size, PAPCOLL_ERR_ARGUMENT, "%s='%.200s': %s", name, text,
                         why);
}

#define SWITCH .kind = PAPCOLL_SETTING_SWITCH
#define WHOLE .kind = PAPCOLL_SETTING_WHOLE_NUMBER
#define TEXT .kind = PAPCOLL_SETTING_TEXT

static const setting_row rows[] = {
    {{.name = "PAPCOLL_CHECK", SWITCH}, NULL},
    {{.name = "PAPCOLL_REPRODUCIBLE", SWITCH}, NULL},
    {{.name = "PAPCOLL_PROGRESS", .kind = PAPCOLL_SETTING_CHOICE, .choices = "calls,thread"},
     NULL},
    /* glibc's CPU_SETSIZE (1024) bounds what a cpu_set_t holds */
    {{.name = "PAPCOLL_PROGRESS_CPU", WHOLE, .minimum = 0, .maximum = CPU_SETSIZE - 1,
      .noun = "a core number"},
     check_core},
    {{.name = "PAPCOLL_TAG_LIMIT", WHOLE, .minimum = 32767, .maximum = INT32_MAX,
      .noun = "a whole number", .note = "32767: the least MPI_TAG_UB MPI allows"},
     NULL},
    {{.name = "PAPCOLL_MIN_BYTES", .kind = PAPCOLL_SETTING_BYTE_COUNT, .minimum = 0,
      .maximum = INT64_MAX},
     NULL},
    {{.name = "PAPCOLL_TUNING", TEXT}, check_tuning},
    {{.name = "PAPCOLL_TAU_MODEL", TEXT}, check_tau_model},
};

enum { ROW_COUNT = sizeof rows / sizeof rows[0] };

int32_t papcoll_setting_count(void) { return ROW_COUNT; }

int papcoll_setting_get(int32_t index, papcoll_setting_info *info) {
    if (index < 0 || index >= ROW_COUNT || info == NULL) return PAPCOLL_ERR_ARGUMENT;
    *info = rows[index].info;
    if (info->noun == NULL) info->noun = "";
    if (info->note == NULL) info->note = "";
    if (info->choices == NULL) info->choices = "";
    return PAPCOLL_OK;
}

/* Digits alone into *value, below `limit`: 1, or 0 (not digits, or too large). */
static int read_digits(const char *text, const char **end, int64_t *value) {
    if (!isdigit((unsigned char)text[0])) return 0;
    errno = 0;
    char *stop = NULL;
    long long parsed = strtoll(text, &stop, 10);
    if (errno == ERANGE) return 0;
    *end = stop;
    *value = parsed;
    return 1;
}

static int parse_switch(const papcoll_setting_info *row, const char *text, int64_t *value,
                        char *error, size_t error_size) {
    static const char *const on[] = {"1", "true", "yes", "on"};
    static const char *const off[] = {"0", "false", "no", "off"};
    for (size_t i = 0; i < sizeof on / sizeof on[0]; i++) {
        if (strcasecmp(text, on[i]) == 0) return *value = 1, PAPCOLL_OK;
        if (strcasecmp(text, off[i]) == 0) return *value = 0, PAPCOLL_OK;
    }
    return message_write(error, error_size, PAPCOLL_ERR_ARGUMENT,
                         "%s='%.32s' is not 1/0, true/false, yes/no or on/off", row->name, text);
}

static int parse_whole_number(const papcoll_setting_info *row, const char *text,
                              int64_t *value, char *error, size_t error_size) {
    const char *end = text;
    if (read_digits(text, &end, value) && *end == '\0' && *value >= row->minimum &&
        *value <= row->maximum)
        return PAPCOLL_OK;
    const char *note = row->note != NULL ? row->note : "";
    return message_write(error, error_size, PAPCOLL_ERR_ARGUMENT,
                         "%s='%.32s' is not %s from %lld to %lld%s%s%s", row->name, text,
                         row->noun, (long long)row->minimum, (long long)row->maximum,
                         note[0] ? " (" : "", note, note[0] ? ")" : "");
}

static int parse_choice(const papcoll_setting_info *row, const char *text, int64_t *value,
                        char *error, size_t error_size) {
    size_t length = strlen(text);
    int64_t index = 0;
    for (const char *word = row->choices; *word != '\0'; index++) {
        size_t word_length = strcspn(word, ",");
        if (word_length == length && strncmp(word, text, length) == 0)
            return *value = index, PAPCOLL_OK;
        word += word_length + (word[word_length] == ',');
    }
    /* two words: "neither 'a' nor 'b'"; more: "not one of 'a', 'b', 'c'" */
    char words[160] = "";
    size_t used = 0;
    int64_t position = 0;
    for (const char *word = row->choices; *word != '\0' && used < sizeof words; position++) {
        int word_length = (int)strcspn(word, ",");
        const char *joint = position == 0 ? "" : index == 2 ? " nor " : ", ";
        int wrote = snprintf(words + used, sizeof words - used, "%s'%.*s'", joint, word_length,
                             word);
        if (wrote > 0) used += (size_t)wrote;
        word += word_length + (word[word_length] == ',');
    }
    return message_write(error, error_size, PAPCOLL_ERR_ARGUMENT, "%s='%.32s' is %s%s",
                         row->name, text, index == 2 ? "neither " : "not one of ", words);
}

/* The forms papcoll's command line takes for sizes (cli/options.py: parse_count). */
static int parse_byte_count(const papcoll_setting_info *row, const char *text, int64_t *value,
                            char *error, size_t error_size) {
    const char *end = text;
    int64_t unit = 1;
    int read = read_digits(text, &end, value);
    if (read) {
        switch (*end) {
        case 'K': case 'k': unit = 1LL << 10; end++; break;
        case 'M': case 'm': unit = 1LL << 20; end++; break;
        case 'G': case 'g': unit = 1LL << 30; end++; break;
        default: break;
        }
        if (unit > 1 && (*end == 'i' || *end == 'I') && (end[1] == 'B' || end[1] == 'b'))
            end += 2;
        else if (*end == 'B' || *end == 'b')
            end++;
    }
    if (read && *end == '\0' && *value <= row->maximum / unit && *value * unit >= row->minimum) {
        *value *= unit;
        return PAPCOLL_OK;
    }
    return message_write(error, error_size, PAPCOLL_ERR_ARGUMENT,
                         "%s='%.32s' is not a byte count; use a number >= 0, optionally with "
                         "K, M or G (e.g. 65536, 64K, 64KB or 64KiB)", row->name, text);
}

int papcoll_setting_parse(const char *name, const char *text, int64_t *value, char *error,
                          size_t error_size) {
    int64_t ignored = 0;
    if (value == NULL) value = &ignored;
    *value = 0;
    const setting_row *row = NULL;
    for (int i = 0; i < ROW_COUNT && name != NULL; i++)
        if (strcmp(rows[i].info.name, name) == 0) row = &rows[i];
    if (row == NULL)
        return message_write(error, error_size, PAPCOLL_ERR_ARGUMENT,
                             "%.60s='%.32s': papcoll declares no such setting (`papcoll "
                             "settings` lists them)", name != NULL ? name : "(NULL)",
                             text != NULL ? text : "");
    if (text == NULL || text[0] == '\0')
        return message_write(error, error_size, PAPCOLL_ERR_ARGUMENT,
                             "%s: no value to parse (empty means unset)", row->info.name);
    int status = PAPCOLL_OK;
    switch (row->info.kind) {
    case PAPCOLL_SETTING_SWITCH:
        status = parse_switch(&row->info, text, value, error, error_size);
        break;
    case PAPCOLL_SETTING_WHOLE_NUMBER:
        status = parse_whole_number(&row->info, text, value, error, error_size);
        break;
    case PAPCOLL_SETTING_CHOICE:
        status = parse_choice(&row->info, text, value, error, error_size);
        break;
    case PAPCOLL_SETTING_BYTE_COUNT:
        status = parse_byte_count(&row->info, text, value, error, error_size);
        break;
    default:
        break;
    }
    if (status == PAPCOLL_OK && row->check != NULL)
        status = row->check(row->info.name, text, *value, error, error_size);
    return status;
}
