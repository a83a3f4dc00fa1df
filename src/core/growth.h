/* growth.h - growing a heap array: the one realloc pattern of the core, the simulator, the
 * verifier and the MPI executor. Header-only (static inline) so that the MPI side and the
 * test programs can use it while the shared libraries export nothing but papcoll_* names. */
#ifndef PAPCOLL_GROWTH_H
#define PAPCOLL_GROWTH_H

#include <stdint.h>
#include <stdlib.h>

/* The first capacity of an empty array: small, since doubling makes the start cheap. */
#define GROWTH_FIRST_CAPACITY 16

/* Makes *items exactly `count` items of `item_size` bytes (at least one item, so that an
 * empty array still has a block to pass around). On failure *items keeps its old block, so
 * the caller can still free it. Returns 0, or -1 when out of memory or the size overflows. */
static inline int resize_array(void **items, size_t count, size_t item_size) {
    if (count == 0) count = 1;
    if (item_size != 0 && count > SIZE_MAX / item_size) return -1;
    void *larger = realloc(*items, count * item_size);
    if (larger == NULL) return -1;
    *items = larger;
    return 0;
}

/* Makes room for `needed` items: doubles *capacity (from GROWTH_FIRST_CAPACITY) until it
 * holds them, so appending n items one by one costs O(n) copying. Returns 0, or -1 (then
 * *items and *capacity are unchanged). */
static inline int grow_array(void **items, size_t *capacity, size_t needed, size_t item_size) {
    if (*items != NULL && needed <= *capacity) return 0;
    size_t next = *capacity ? *capacity : GROWTH_FIRST_CAPACITY;
    while (next < needed) {
        if (next > SIZE_MAX / 2) return -1;
        next *= 2;
    }
    if (resize_array(items, next, item_size) != 0) return -1;
    *capacity = next;
    return 0;
}

#endif /* PAPCOLL_GROWTH_H */
