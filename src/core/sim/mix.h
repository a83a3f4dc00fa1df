/* mix.h - a 64-bit mixing function (the finalizer of MurmurHash3 / SplitMix64): every bit
 * of the input changes about half the output bits. The simulator uses it twice, to hash
 * event times (event_queue.c) and to draw its noise from a counter (simulate.c), so both
 * are reproducible from their inputs alone. */
#ifndef PAPCOLL_SIM_MIX_H
#define PAPCOLL_SIM_MIX_H

#include <stdint.h>

static inline uint64_t mix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

#endif /* PAPCOLL_SIM_MIX_H */
