/* arrival_class.c - see arrival_class.h. */
#include "arrival_class.h"

#include <math.h>

enum { MOST_CLASS = 60 };

double arrival_unit(double tau) { return tau; }

double arrival_on_time(double unit, double jitter) { return unit > jitter ? unit : jitter; }

int arrival_class_level(double lateness, double on_time) {
    if (!(lateness >= on_time)) return 0;
    int level = 1 + (int)floor(log2(lateness / on_time));
    return level > MOST_CLASS ? MOST_CLASS : level;
}

void arrival_class_of(const double *arrivals, int32_t ranks, double unit, double jitter,
                      uint8_t *classes, double *representative) {
    double on_time = arrival_on_time(unit, jitter);
    for (int32_t r = 0; r < ranks; r++) {
        int level = arrival_class_level(arrivals[r], on_time);
        classes[r] = (uint8_t)level;
        /* class k covers [on_time 2^(k-1), on_time 2^k): its geometric middle */
        representative[r] = level == 0 ? 0 : on_time * ldexp(1.4142135623730951, level - 1);
    }
}
