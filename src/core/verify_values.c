/* verify_values.c - the verifier's symbolic data (verifier.h): a value is the set of ranks
 * whose contributions an element holds (a bitset), plus whether they were combined in rank
 * order; a buffer is a map from element intervals to values, so the cost grows with the
 * number of distinct intervals, not with count. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "growth.h"
#include "verifier.h"

/* ---- values ---------------------------------------------------------------------------- */

int32_t new_value(verifier *v) {
    if ((size_t)v->value_count == v->value_capacity) {
        /* four arrays indexed by value: each keeps its old block on failure, so all can
         * still be freed, and the capacity only grows once all four have */
        size_t capacity = v->value_capacity ? 2 * v->value_capacity : 1024;
        if (resize_array((void **)&v->bits, capacity * (size_t)v->words, sizeof *v->bits) != 0 ||
            resize_array((void **)&v->low, capacity, sizeof *v->low) != 0 ||
            resize_array((void **)&v->high, capacity, sizeof *v->high) != 0 ||
            resize_array((void **)&v->ordered, capacity, sizeof *v->ordered) != 0) {
            v->out_of_memory = 1;
            fail_at(v, -1, -1, "out of memory");
            return UNDEFINED_VALUE;
        }
        v->value_capacity = capacity;
    }
    int32_t value = v->value_count++;
    memset(v->bits + (size_t)value * v->words, 0, (size_t)v->words * sizeof *v->bits);
    v->low[value] = v->high[value] = -1;
    v->ordered[value] = 0;
    return value;
}

int has_contribution(const verifier *v, int32_t value, int32_t rank) {
    return (v->bits[(size_t)value * v->words + rank / 64] >> (rank % 64)) & 1;
}

/* left (op) right; reports and returns UNDEFINED_VALUE on a double count. */
int32_t combine(verifier *v, int32_t left, int32_t right, int32_t rank, int32_t op,
                       int64_t element) {
    for (int32_t w = 0; w < v->words; w++) {
        uint64_t shared = v->bits[(size_t)left * v->words + w] & v->bits[(size_t)right * v->words + w];
        if (shared) {
            int32_t twice = w * 64 + __builtin_ctzll(shared);
            fail_at(v, rank, op,
                    "REDUCE counts the contribution of rank %d twice (element %" PRId64 ")",
                    twice, element);
            return UNDEFINED_VALUE;
        }
    }
    int32_t value = new_value(v);
    if (value == UNDEFINED_VALUE) return value;
    for (int32_t w = 0; w < v->words; w++)
        v->bits[(size_t)value * v->words + w] =
            v->bits[(size_t)left * v->words + w] | v->bits[(size_t)right * v->words + w];
    v->ordered[value] = v->ordered[left] && v->ordered[right] && v->high[left] + 1 == v->low[right];
    v->low[value] = v->low[left];
    v->high[value] = v->high[right];
    return value;
}

/* ---- interval maps --------------------------------------------------------------------- */

interval_map *map_of(verifier *v, int32_t rank, int32_t buffer) {
    if (v->in_place && buffer == SCHED_SEND_BUFFER) buffer = SCHED_RECV_BUFFER;
    return &v->maps[(size_t)rank * BUFFERS_PER_RANK + buffer];
}

int map_push(verifier *v, interval_map *map, int64_t start, int64_t end, int32_t value) {
    if (start >= end) return 1;
    if (map->count > 0) {
        segment *last = &map->items[map->count - 1];
        if (last->value == value && last->end == start) {
            last->end = end;
            return 1;
        }
    }
    if (verifier_grow(v, &map->items, &map->capacity, map->count + 1, sizeof *map->items) != 0)
        return 0;
    map->items[map->count++] = (segment){start, end, value};
    return 1;
}

/* Appends the pieces of map over [start, end) to out. */
int map_read(verifier *v, const interval_map *map, int64_t start, int64_t end,
                    piece_list *out) {
    out->count = 0;
    /* binary search for the first segment ending after start */
    int32_t low = 0, high = map->count;
    while (low < high) {
        int32_t middle = (low + high) / 2;
        if (map->items[middle].end <= start) low = middle + 1;
        else high = middle;
    }
    for (int32_t i = low; i < map->count && map->items[i].start < end; i++) {
        int64_t from = map->items[i].start > start ? map->items[i].start : start;
        int64_t to = map->items[i].end < end ? map->items[i].end : end;
        if (verifier_grow(v, &out->items, &out->capacity, out->count + 1, sizeof *out->items) != 0)
            return 0;
        out->items[out->count++] = (piece){to - from, map->items[i].value};
    }
    return 1;
}

/* Replaces map over [start, start + total length of pieces) with pieces. */
int map_write(verifier *v, interval_map *map, int64_t start, const piece *pieces,
                     int64_t piece_count) {
    int64_t end = start;
    for (int64_t i = 0; i < piece_count; i++) end += pieces[i].length;
    if (end == start) return 1;
    interval_map fresh = {0};
    int ok = 1;
    int32_t i = 0;
    for (; i < map->count && map->items[i].start < start; i++) {
        int64_t to = map->items[i].end < start ? map->items[i].end : start;
        ok &= map_push(v, &fresh, map->items[i].start, to, map->items[i].value);
    }
    int64_t at = start;
    for (int64_t p = 0; p < piece_count; p++) {
        ok &= map_push(v, &fresh, at, at + pieces[p].length, pieces[p].value);
        at += pieces[p].length;
    }
    for (i = 0; i < map->count; i++) {
        if (map->items[i].end <= end) continue;
        int64_t from = map->items[i].start > end ? map->items[i].start : end;
        ok &= map_push(v, &fresh, from, map->items[i].end, map->items[i].value);
    }
    free(map->items);
    *map = fresh;
    return ok;
}
