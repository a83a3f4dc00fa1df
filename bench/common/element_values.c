/* element_values.c - the element values of element_values.h. */
#include "element_values.h"

#include <float.h>
#include <string.h>

uint64_t next_random(uint64_t *state) {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return *state * 2685821657736338717ULL;
}

double uniform(uint64_t *state) { return (double)(next_random(state) >> 11) / 9007199254740992.0; }

void store_integer(void *at, size_t size, uint64_t bits) {
    uint8_t b8 = (uint8_t)bits;
    uint16_t b16 = (uint16_t)bits;
    uint32_t b32 = (uint32_t)bits;
    const void *from = size == 1 ? (const void *)&b8 : size == 2 ? (const void *)&b16
                       : size == 4 ? (const void *)&b32 : (const void *)&bits;
    memcpy(at, from, size);
}

void store_real(void *at, size_t size, long double value) {
    if (size == sizeof(float)) {
        float x = (float)value;
        memcpy(at, &x, sizeof x);
    } else if (size == sizeof(double)) {
        double x = (double)value;
        memcpy(at, &x, sizeof x);
    } else {
        memcpy(at, &value, sizeof value);
    }
}

long double load_real(const void *at, size_t size) {
    if (size == sizeof(float)) {
        float x;
        memcpy(&x, at, sizeof x);
        return x;
    }
    if (size == sizeof(double)) {
        double x;
        memcpy(&x, at, sizeof x);
        return x;
    }
    long double x;
    memcpy(&x, at, sizeof x);
    return x;
}

long double epsilon_of(size_t size) {
    return size == sizeof(float) ? FLT_EPSILON : size == sizeof(double) ? DBL_EPSILON : LDBL_EPSILON;
}

long double sum_tolerance(int ranks, long double epsilon) {
    return 4.0L * ranks * ranks * epsilon;
}
