/* test_tau_model.c - the parser of PAPCOLL_TAU_MODEL and tau's formula (src/core/
 * tau_model.c), without MPI: every well-formed text gives the three numbers whatever their
 * order, and every malformed one is refused with a reason that names what is wrong (the
 * reason is the whole message a user gets when every rank's call stops on it). */
#include <stdio.h>
#include <string.h>

#include "tau_model.h"

static int failures = 0, checks = 0;

static void expect(int condition, const char *text, const char *what) {
    checks++;
    if (condition) return;
    failures++;
    printf("FAIL '%s': %s\n", text, what);
}

/* A text that must parse to (latency, seconds per byte, reduce seconds per byte). */
static void accepts(const char *text, double latency, double per_byte, double reduce) {
    double model[TAU_MODEL_SIZE] = {-1, -1, -1};
    char why[200] = "";
    int ok = papcoll_tau_model_parse(text, model, why, sizeof why) == PAPCOLL_OK;
    expect(ok, text, why);
    expect(model[TAU_MODEL_LATENCY] == latency && model[TAU_MODEL_SECONDS_PER_BYTE] == per_byte &&
               model[TAU_MODEL_REDUCE_SECONDS_PER_BYTE] == reduce,
           text, "parsed to other numbers");
}

/* A text that must be refused with a reason containing `reason`. */
static void refuses(const char *text, const char *reason) {
    double model[TAU_MODEL_SIZE] = {-7, -7, -7}; /* a refusal must leave these */
    char why[200] = "";
    int ok = papcoll_tau_model_parse(text, model, why, sizeof why) == PAPCOLL_OK;
    expect(!ok, text, "accepted");
    char detail[300];
    snprintf(detail, sizeof detail, "reason '%s' does not say '%s'", why, reason);
    expect(strstr(why, reason) != NULL, text, detail);
    expect(model[0] == -7 && model[1] == -7 && model[2] == -7, text,
           "the model was written although the text was refused");
}

int main(void) {
    accepts("latency=8.4e-06,seconds_per_byte=8.37e-09,reduce_seconds_per_byte=6.4e-11",
            8.4e-06, 8.37e-09, 6.4e-11);
    accepts("reduce_seconds_per_byte=3,latency=1,seconds_per_byte=2", 1, 2, 3);
    accepts("latency=0,seconds_per_byte=0,reduce_seconds_per_byte=0", 0, 0, 0);

    refuses("", "an item has no name");
    refuses("latency=1,,seconds_per_byte=2,reduce_seconds_per_byte=3", "an item has no name");
    refuses("=1,seconds_per_byte=2,reduce_seconds_per_byte=3", "an item has no name");
    refuses("latency=1,seconds_per_byte=2", "reduce_seconds_per_byte is missing");
    refuses("latency=1,seconds_per_byte=2,reduce_seconds_per_byte=3,", "an item has no name");
    refuses("latency=1,latency=2,seconds_per_byte=2,reduce_seconds_per_byte=3",
            "latency is given twice");
    refuses("bandwidth=1,seconds_per_byte=2,reduce_seconds_per_byte=3",
            "unknown name 'bandwidth'");
    refuses("latency,seconds_per_byte=2,reduce_seconds_per_byte=3", "latency has no value");
    refuses("latency=,seconds_per_byte=2,reduce_seconds_per_byte=3", "latency has no value");
    refuses("latency=fast,seconds_per_byte=2,reduce_seconds_per_byte=3",
            "latency=fast is not a number");
    refuses("latency=1x,seconds_per_byte=2,reduce_seconds_per_byte=3",
            "latency=1x is not a number");
    refuses("latency=inf,seconds_per_byte=2,reduce_seconds_per_byte=3",
            "latency=inf is not a finite number");
    refuses("latency=nan,seconds_per_byte=2,reduce_seconds_per_byte=3",
            "is not a finite number");
    refuses("latency=-1e-6,seconds_per_byte=2,reduce_seconds_per_byte=3",
            "latency=-1e-6 is negative");
    /* a value longer than any number: refused, not cut short and read */
    refuses("latency=1.000000000000000000000000000000000000000000000000000000000000000000001,"
            "seconds_per_byte=2,reduce_seconds_per_byte=3", "is not a number");

    /* no text (a C caller's mistake): refused, not dereferenced */
    double untouched[TAU_MODEL_SIZE] = {0, 0, 0};
    char why[200] = "";
    expect(papcoll_tau_model_parse(NULL, untouched, why, sizeof why) == PAPCOLL_ERR_ARGUMENT &&
               strstr(why, "NULL") != NULL,
           "(NULL)", "a NULL text was not refused with a reason naming it");

    double model[TAU_MODEL_SIZE] = {1e-6, 1e-9, 1e-10};
    checks++;
    double tau = papcoll_tau_model_tau(model, 1000);
    if (!(tau > 2.0999e-6 && tau < 2.1001e-6)) {
        failures++;
        printf("FAIL tau of 1000 bytes is %g, not 2.1e-6\n", tau);
    }
    double zeros[TAU_MODEL_SIZE] = {0, 0, 0};
    checks++;
    if (!(papcoll_tau_model_tau(zeros, 1000) > 0)) {
        failures++;
        printf("FAIL tau of a model of zeros is not > 0\n");
    }
    printf("%d checks, %d failed\n", checks, failures);
    return failures ? 1 : 0;
}
