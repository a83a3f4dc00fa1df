/* sleep.c - the sleep of sleep.h: nanosleep resumed after a signal with the time left. */
#define _POSIX_C_SOURCE 200809L
#include "sleep.h"

#include <errno.h>
#include <math.h>
#include <time.h>

void sleep_ms(double milliseconds) {
    if (milliseconds <= 0) return;
    struct timespec duration = {(time_t)(milliseconds / 1000),
                                (long)(fmod(milliseconds, 1000.0) * 1e6)};
    while (nanosleep(&duration, &duration) != 0 && errno == EINTR) {
    }
}
