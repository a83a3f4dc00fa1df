/* verify_values.c - the verifier's symbolic data (verifier.h): a value is the set of ranks
 * whose contributions an element holds (a bitset), plus whether they were combined in rank
 * order, and whether as the rank-order left fold ((x0 op x1) op x2) ... (reproducible mode);
 * a buffer is a map from element intervals to values, so the cost grows with the
 * number of distinct intervals, not with count.
 *
 * The fold is judged on grouping and operand order: a REDUCE extends the fold so far only
 * with the next rank's contribution on its right. IEEE-754 addition and multiplication
 * are commutative bit for bit, but min and max are not where -0.0 and +0.0 tie (MPICH's
 * MPI_MIN keeps the operand MPI_Reduce_local calls `in`), nor are user-defined ops. */
#include <inttypes.h>
#include <stdio.h>
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
            resize_array((void **)&v->ordered, capacity, sizeof *v->ordered) != 0 ||
            resize_array((void **)&v->fold_end, capacity, sizeof *v->fold_end) != 0 ||
            resize_array((void **)&v->left_operand, capacity, sizeof *v->left_operand) != 0 ||
            resize_array((void **)&v->right_operand, capacity, sizeof *v->right_operand) != 0) {
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
    v->fold_end[value] = -1;
    v->left_operand[value] = v->right_operand[value] = UNDEFINED_VALUE;
    return value;
}

int32_t first_missing_contribution(const verifier *v, int32_t value) {
    /* a word at a time: asking rank by rank made checking P results cost P^2 */
    const uint64_t *bits = v->bits + (size_t)value * v->words;
    for (int32_t w = 0; w < v->words; w++) {
        int32_t ranks_here = v->ranks - 64 * w < 64 ? v->ranks - 64 * w : 64;
        uint64_t all = ranks_here == 64 ? ~0ull : (1ull << ranks_here) - 1;
        uint64_t missing = ~bits[w] & all;
        if (missing) return 64 * w + __builtin_ctzll(missing);
    }
    return -1;
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
    v->left_operand[value] = left;
    v->right_operand[value] = right;
    /* contributions are values 1..P (verify.c: run) */
    int right_leaf = right >= 1 && right <= v->ranks;
    if (v->fold_end[left] >= 0 && right_leaf && right - 1 == v->fold_end[left] + 1)
        v->fold_end[value] = right - 1;
    return value;
}

/* "x3", "fold(x0..x2)", or the set of ranks it combines otherwise. */
static void describe_value(const verifier *v, int32_t value, char *text, size_t size) {
    if (value >= 1 && value <= v->ranks) {
        snprintf(text, size, "x%d", value - 1);
        return;
    }
    if (v->fold_end[value] >= 0) {
        snprintf(text, size, "fold(x0..x%d)", v->fold_end[value]);
        return;
    }
    size_t used = (size_t)snprintf(text, size, "a combination of x{");
    for (int32_t r = 0, first = 1; r < v->ranks && used < size; r++)
        if (v->bits[(size_t)value * v->words + r / 64] >> (r % 64) & 1) {
            used += (size_t)snprintf(text + used, size - used, first ? "%d" : ",%d", r);
            first = 0;
        }
    if (used < size) snprintf(text + used, size - used, "}");
}

void describe_canonical_break(const verifier *v, int32_t value, char *text, size_t size) {
    text[0] = '\0';
    if (v->fold_end[value] == v->ranks - 1) return;
    /* Down to the first combination whose operands are each a fold or a contribution: that
     * REDUCE is the one that broke the order (its own operands were still right). */
    for (;;) {
        int32_t left = v->left_operand[value], right = v->right_operand[value];
        if (left == UNDEFINED_VALUE) break; /* a contribution alone: not combined at all */
        int left_fine = v->fold_end[left] >= 0 || left <= v->ranks;
        int right_fine = v->fold_end[right] >= 0 || right <= v->ranks;
        if (left_fine && right_fine) break;
        value = left_fine ? right : left;
    }
    int32_t left = v->left_operand[value], right = v->right_operand[value];
    if (left == UNDEFINED_VALUE) {
        char alone[64];
        describe_value(v, value, alone, sizeof alone);
        snprintf(text, size, "it is %s, never combined in rank order", alone);
        return;
    }
    char left_text[96], right_text[96];
    describe_value(v, left, left_text, sizeof left_text);
    describe_value(v, right, right_text, sizeof right_text);
    snprintf(text, size, "a REDUCE combined %s with %s, which is not the next step of the "
             "rank-order fold ((x0 op x1) op x2) ...", left_text, right_text);
}

/* ---- interval maps (blocks of sorted segments, verifier.h) ------------------------------- */

interval_map *map_of(verifier *v, int32_t rank, int32_t buffer) {
    if (v->in_place && buffer == SCHED_SEND_BUFFER) buffer = SCHED_RECV_BUFFER;
    return &v->maps[(size_t)rank * BUFFERS_PER_RANK + buffer];
}

/* A block resized to hold `capacity` segments (a new one if block is NULL), or NULL when
 * out of memory (reported; block is then unchanged). */
static segment_block *block_resize(verifier *v, segment_block *block, int32_t capacity) {
    segment_block *resized = realloc(block, sizeof *block + (size_t)capacity * sizeof(segment));
    if (resized == NULL) {
        v->out_of_memory = 1;
        fail_at(v, -1, -1, "out of memory");
        return NULL;
    }
    if (block == NULL) resized->count = 0;
    resized->capacity = capacity;
    return resized;
}

/* The room a block holding `count` segments is given: some to spare, so that the next
 * writes nearby fit without a resize, up to the block limit. */
static int32_t block_room(int64_t count) {
    int64_t room = count < 4 ? 8 : 2 * count;
    return (int32_t)(room < MAP_BLOCK_SEGMENTS ? room : MAP_BLOCK_SEGMENTS);
}

int map_push(verifier *v, interval_map *map, int64_t start, int64_t end, int32_t value) {
    if (start >= end) return 1;
    segment_block *last = map->block_count > 0 ? map->blocks[map->block_count - 1] : NULL;
    if (last != NULL) {
        segment *tail = &last->items[last->count - 1];
        if (tail->value == value && tail->end == start) {
            tail->end = end;
            return 1;
        }
    }
    if (last == NULL || last->count == MAP_BLOCK_SEGMENTS) {
        if (verifier_grow(v, &map->blocks, &map->block_capacity, map->block_count + 1,
                          sizeof *map->blocks) != 0 ||
            (last = block_resize(v, NULL, block_room(1))) == NULL)
            return 0;
        map->blocks[map->block_count++] = last;
    } else if (last->count == last->capacity) {
        if ((last = block_resize(v, last, block_room(last->count))) == NULL) return 0;
        map->blocks[map->block_count - 1] = last;
    }
    last->items[last->count++] = (segment){start, end, value};
    return 1;
}

void map_release(interval_map *map) {
    for (int32_t b = 0; b < map->block_count; b++) free(map->blocks[b]);
    free(map->blocks);
    memset(map, 0, sizeof *map);
}

/* Where a segment sits: blocks[block]->items[slot]. */
typedef struct map_position {
    int32_t block, slot;
} map_position;

/* The first segment ending after `element` (block_count when there is none): two binary
 * searches, over the blocks' last segments and then inside one block. */
static map_position map_find(const interval_map *map, int64_t element) {
    int32_t low = 0, high = map->block_count;
    while (low < high) {
        int32_t middle = low + (high - low) / 2;
        const segment_block *block = map->blocks[middle];
        if (block->items[block->count - 1].end <= element) low = middle + 1;
        else high = middle;
    }
    if (low == map->block_count) return (map_position){low, 0};
    const segment_block *block = map->blocks[low];
    int32_t first = 0, last = block->count;
    while (first < last) {
        int32_t middle = first + (last - first) / 2;
        if (block->items[middle].end <= element) first = middle + 1;
        else last = middle;
    }
    return (map_position){low, first};
}

static const segment *segment_at(const interval_map *map, map_position at) {
    return &map->blocks[at.block]->items[at.slot];
}

int map_read(verifier *v, const interval_map *map, int64_t start, int64_t end,
             piece_list *out) {
    out->count = 0;
    for (map_position at = map_find(map, start); at.block < map->block_count;) {
        const segment *item = segment_at(map, at);
        if (item->start >= end) break;
        int64_t from = item->start > start ? item->start : start;
        int64_t to = item->end < end ? item->end : end;
        if (verifier_grow(v, &out->items, &out->capacity, out->count + 1, sizeof *out->items) != 0)
            return 0;
        out->items[out->count++] = (piece){to - from, item->value};
        if (++at.slot == map->blocks[at.block]->count) at.block++, at.slot = 0;
    }
    return 1;
}

/* Replaces the segments from `from` to `to` (both included) with items[0 .. count). Inside
 * one block when they fit; otherwise the blocks concerned are cut anew, half full. */
static int map_splice(verifier *v, interval_map *map, map_position from, map_position to,
                      const segment *items, int64_t count) {
    segment_block *head = map->blocks[from.block];
    const segment_block *tail = map->blocks[to.block];
    int64_t kept_before = from.slot, kept_after = tail->count - to.slot - 1;
    int64_t total = kept_before + count + kept_after;
    if (from.block == to.block && total <= MAP_BLOCK_SEGMENTS) {
        if (total > head->capacity) {
            if ((head = block_resize(v, head, block_room(total))) == NULL) return 0;
            map->blocks[from.block] = head;
        }
        memmove(head->items + from.slot + count, head->items + to.slot + 1,
                (size_t)kept_after * sizeof(segment));
        memcpy(head->items + from.slot, items, (size_t)count * sizeof(segment));
        head->count = (int32_t)total;
        return 1;
    }
    const int64_t half = MAP_BLOCK_SEGMENTS / 2;
    int64_t fresh_count = (total + half - 1) / half, old_count = to.block - from.block + 1;
    segment_block **fresh = calloc((size_t)fresh_count, sizeof *fresh);
    int ok = fresh != NULL;
    for (int64_t b = 0; b < fresh_count && ok; b++) {
        /* block b gets the segments [total b / n, total (b + 1) / n) of the new run */
        int64_t begin = total * b / fresh_count, end = total * (b + 1) / fresh_count;
        ok = (fresh[b] = block_resize(v, NULL, block_room(end - begin))) != NULL;
        for (int64_t k = begin; k < end && ok; k++)
            fresh[b]->items[k - begin] = k < kept_before           ? head->items[k]
                                         : k < kept_before + count ? items[k - kept_before]
                                                                   : tail->items[to.slot + 1 +
                                                                                 (k - kept_before -
                                                                                  count)];
        if (ok) fresh[b]->count = (int32_t)(end - begin);
    }
    if (ok)
        ok = verifier_grow(v, &map->blocks, &map->block_capacity,
                           map->block_count - old_count + fresh_count, sizeof *map->blocks) == 0;
    else if (fresh == NULL) {
        v->out_of_memory = 1;
        fail_at(v, -1, -1, "out of memory");
    }
    if (!ok) {
        for (int64_t b = 0; fresh != NULL && b < fresh_count; b++) free(fresh[b]);
        free(fresh);
        return 0;
    }
    for (int32_t b = from.block; b <= to.block; b++) free(map->blocks[b]);
    memmove(map->blocks + from.block + fresh_count, map->blocks + to.block + 1,
            (size_t)(map->block_count - to.block - 1) * sizeof *map->blocks);
    memcpy(map->blocks + from.block, fresh, (size_t)fresh_count * sizeof *fresh);
    map->block_count = (int32_t)(map->block_count - old_count + fresh_count);
    free(fresh);
    return 1;
}

/* Appends [start, end) -> value to v->spliced, merging with its last segment as map_push
 * does (the room was made by the caller). */
static void splice_push(verifier *v, int64_t *count, int64_t start, int64_t end, int32_t value) {
    if (start >= end) return;
    segment *last = *count > 0 ? &v->spliced[*count - 1] : NULL;
    if (last != NULL && last->value == value && last->end == start) last->end = end;
    else v->spliced[(*count)++] = (segment){start, end, value};
}

int map_write(verifier *v, interval_map *map, int64_t start, const piece *pieces,
              int64_t piece_count) {
    int64_t end = start;
    for (int64_t i = 0; i < piece_count; i++) end += pieces[i].length;
    if (end == start) return 1;
    if (verifier_grow(v, &v->spliced, &v->spliced_capacity, piece_count + 4,
                      sizeof *v->spliced) != 0)
        return 0;
    /* The map covers its whole buffer and the region lies inside (check_bounds), so both
     * ends fall on segments. The neighbours outside the region are replaced too, so that a
     * piece with a neighbour's value merges with it: the map stays what rebuilding it
     * segment by segment with map_push would give, and map_read the same pieces. */
    map_position from = map_find(map, start), to = map_find(map, end - 1);
    const segment first = *segment_at(map, from), last = *segment_at(map, to);
    int64_t count = 0;
    /* from and to step to the neighbours, where there are some (else they stay put, and the
     * tests below see a segment that is not outside the region) */
    if (from.slot > 0) from.slot--;
    else if (from.block > 0) from.block--, from.slot = map->blocks[from.block]->count - 1;
    const segment *before = segment_at(map, from);
    if (before->end <= first.start)
        splice_push(v, &count, before->start, before->end, before->value);
    splice_push(v, &count, first.start, start, first.value);
    int64_t at = start;
    for (int64_t p = 0; p < piece_count; p++) {
        splice_push(v, &count, at, at + pieces[p].length, pieces[p].value);
        at += pieces[p].length;
    }
    splice_push(v, &count, end, last.end, last.value);
    if (to.slot + 1 < map->blocks[to.block]->count) to.slot++;
    else if (to.block + 1 < map->block_count) to.block++, to.slot = 0;
    const segment *after = segment_at(map, to);
    if (after->start >= last.end) splice_push(v, &count, after->start, after->end, after->value);
    return map_splice(v, map, from, to, v->spliced, count);
}
