/* test_settings.c - the one parser of the C libraries' environment settings (src/core/
 * environment_table.c), without MPI: each kind takes exactly its forms, and refuses the
 * rest, spaces around a value included, with a line naming the variable and its value (the
 * whole message a user gets at MPI_Init). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "papcoll_core.h"

static int failures = 0, checks = 0;

static void expect(int condition, const char *name, const char *text, const char *what) {
    checks++;
    if (condition) return;
    failures++;
    printf("FAIL %s='%s': %s\n", name, text, what);
}

static void accepts(const char *name, const char *text, int64_t value) {
    int64_t parsed = -12345;
    char why[400] = "";
    int ok = papcoll_setting_parse(name, text, &parsed, why, sizeof why) == PAPCOLL_OK;
    expect(ok, name, text, why);
    expect(!ok || parsed == value, name, text, "parsed to another value");
}

static void refuses(const char *name, const char *text, const char *reason) {
    char why[400] = "";
    int ok = papcoll_setting_parse(name, text, NULL, why, sizeof why) == PAPCOLL_OK;
    expect(!ok, name, text, "accepted");
    char quoted[200];
    snprintf(quoted, sizeof quoted, "%s='%s'", name, text);
    char detail[700];
    snprintf(detail, sizeof detail, "reason '%s' does not say '%s' and '%s'", why, quoted,
             reason);
    expect(strstr(why, reason) != NULL && strstr(why, quoted) != NULL, name, text, detail);
}

int main(void) {
    /* every row has a name, a kind and what that kind needs; each is found by its name */
    papcoll_setting_info info;
    expect(papcoll_setting_count() >= 8, "table", "", "rows missing");
    for (int32_t k = 0; papcoll_setting_get(k, &info) == PAPCOLL_OK; k++) {
        expect(strncmp(info.name, "PAPCOLL_", 8) == 0, info.name, "", "not a PAPCOLL_ name");
        if (info.kind == PAPCOLL_SETTING_WHOLE_NUMBER)
            expect(info.noun[0] != '\0' && info.minimum <= info.maximum, info.name, "",
                   "a whole number without its noun or range");
        if (info.kind == PAPCOLL_SETTING_CHOICE)
            expect(strchr(info.choices, ',') != NULL, info.name, "", "fewer than two words");
    }
    expect(papcoll_setting_get(papcoll_setting_count(), &info) == PAPCOLL_ERR_ARGUMENT, "get",
           "", "a row past the end");
    refuses("PAPCOLL_BOGUS", "1", "papcoll declares no such setting");

    /* switches: the words, any case; nothing else, no spaces */
    accepts("PAPCOLL_CHECK", "1", 1);
    accepts("PAPCOLL_CHECK", "On", 1);
    accepts("PAPCOLL_REPRODUCIBLE", "FALSE", 0);
    accepts("PAPCOLL_REPRODUCIBLE", "no", 0);
    refuses("PAPCOLL_REPRODUCIBLE", " 1", "is not 1/0, true/false, yes/no or on/off");
    refuses("PAPCOLL_CHECK", "1 ", "is not 1/0");
    refuses("PAPCOLL_CHECK", "2", "is not 1/0");

    /* whole numbers: digits alone, in range; the note says why the range */
    accepts("PAPCOLL_TAG_LIMIT", "32767", 32767);
    accepts("PAPCOLL_TAG_LIMIT", "2147483647", 2147483647);
    refuses("PAPCOLL_TAG_LIMIT", "32766", "is not a whole number from 32767 to 2147483647 "
                                          "(32767: the least MPI_TAG_UB MPI allows)");
    refuses("PAPCOLL_TAG_LIMIT", "2147483648", "is not a whole number from 32767");
    refuses("PAPCOLL_TAG_LIMIT", " 40000", "is not a whole number");
    refuses("PAPCOLL_TAG_LIMIT", "40000 ", "is not a whole number");
    refuses("PAPCOLL_TAG_LIMIT", "+40000", "is not a whole number");
    refuses("PAPCOLL_TAG_LIMIT", "99999999999999999999999", "is not a whole number");
    accepts("PAPCOLL_PROGRESS_CPU", "0", 0); /* core 0 is in every affinity mask here */
    refuses("PAPCOLL_PROGRESS_CPU", "-1", "is not a core number from 0 to 1023");
    refuses("PAPCOLL_PROGRESS_CPU", "1024", "is not a core number from 0 to 1023");

    /* choices: a word exactly, its index */
    accepts("PAPCOLL_PROGRESS", "calls", 0);
    accepts("PAPCOLL_PROGRESS", "thread", 1);
    refuses("PAPCOLL_PROGRESS", "Thread", "is neither 'calls' nor 'thread'");
    refuses("PAPCOLL_PROGRESS", "threads", "is neither 'calls' nor 'thread'");
    refuses("PAPCOLL_PROGRESS", " calls", "is neither 'calls' nor 'thread'");

    /* byte counts: the command line's forms */
    accepts("PAPCOLL_MIN_BYTES", "0", 0);
    accepts("PAPCOLL_MIN_BYTES", "64K", 65536);
    accepts("PAPCOLL_MIN_BYTES", "64KiB", 65536);
    accepts("PAPCOLL_MIN_BYTES", "2mb", 2 << 20);
    accepts("PAPCOLL_MIN_BYTES", "100B", 100);
    refuses("PAPCOLL_MIN_BYTES", " 64K", "is not a byte count");
    refuses("PAPCOLL_MIN_BYTES", "64QB", "is not a byte count");
    refuses("PAPCOLL_MIN_BYTES", "-1", "is not a byte count");
    refuses("PAPCOLL_MIN_BYTES", "9000000000G", "is not a byte count");

    /* texts: their own grammars, spaces refused too */
    accepts("PAPCOLL_TUNING", "margin=0.1,budget_floor=65536", 0);
    refuses("PAPCOLL_TUNING", "margin= 0.1", "tuning constant margin: ' 0.1' is not a number");
    refuses("PAPCOLL_TUNING", "bogus=1", "unknown tuning constant 'bogus'");
    accepts("PAPCOLL_TAU_MODEL", "latency=1e-6,seconds_per_byte=1e-9,"
                                 "reduce_seconds_per_byte=1e-10", 0);
    refuses("PAPCOLL_TAU_MODEL", "latency= 1e-6", "latency= 1e-6 is not a number");

    printf("settings: %d checks, %d failed\n", checks, failures);
    return failures != 0;
}
