/* event_queue.c - the simulator's event queue (event_queue.h): a heap of distinct times, a
 * FIFO of events in chunks at each, and a hash from time to instant. */
#include "event_queue.h"

#include <stdlib.h>
#include <string.h>

#include "../growth.h"
#include "mix.h"

void event_queue_init(event_queue *q) {
    memset(q, 0, sizeof *q);
    q->chunk_free = q->instant_free = q->last_instant = -1;
}

void event_queue_release(event_queue *q) {
    free(q->chunks);
    free(q->instants);
    free(q->heap);
    free(q->slots);
}

int64_t event_queue_memory(const event_queue *q) {
    return (int64_t)q->chunk_capacity * (int64_t)sizeof(event_chunk) +
           (int64_t)q->instant_capacity * (int64_t)sizeof(instant) +
           (int64_t)q->heap_capacity * (int64_t)sizeof(heap_entry) +
           ((int64_t)q->slot_mask + 1) * (int64_t)sizeof(int32_t);
}

static int32_t slot_of(const event_queue *q, double time) {
    uint64_t bits;
    memcpy(&bits, &time, sizeof bits);
    return (int32_t)(mix64(bits) & (uint64_t)q->slot_mask);
}

/* Makes room for `live` instants, keeping the hash at most half full; rebuilt from the heap,
 * which lists every instant. */
static int make_room(event_queue *q, int32_t live) {
    if (q->slots && 2 * (int64_t)live <= (int64_t)q->slot_mask + 1) return 1;
    int64_t size = q->slots ? 2 * ((int64_t)q->slot_mask + 1) : 1024;
    while (size < 2 * (int64_t)live) size *= 2;
    if (size > INT32_MAX) return 0;
    int32_t *slots = malloc((size_t)size * sizeof *slots);
    if (slots == NULL) return 0;
    free(q->slots);
    q->slots = slots;
    q->slot_mask = (int32_t)(size - 1);
    for (int64_t i = 0; i < size; i++) slots[i] = -1;
    for (int32_t h = 0; h < q->heap_size; h++) {
        int32_t id = q->heap[h].instant, slot = slot_of(q, q->heap[h].time);
        q->instants[id].chain = slots[slot];
        slots[slot] = id;
    }
    return 1;
}

static void heap_up(event_queue *q, int32_t i, heap_entry entry) {
    while (i > 0 && entry.time < q->heap[(i - 1) / 2].time) {
        q->heap[i] = q->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    q->heap[i] = entry;
}

static void heap_pop(event_queue *q) {
    heap_entry last = q->heap[--q->heap_size];
    int32_t i = 0;
    for (;;) {
        int32_t child = 2 * i + 1;
        if (child >= q->heap_size) break;
        if (child + 1 < q->heap_size && q->heap[child + 1].time < q->heap[child].time) child++;
        if (!(q->heap[child].time < last.time)) break;
        q->heap[i] = q->heap[child];
        i = child;
    }
    if (q->heap_size > 0) q->heap[i] = last;
}

/* The instant at `time`, made if there is none. -1: out of memory. */
static int32_t instant_at(event_queue *q, double time) {
    time += 0.0; /* -0.0 and 0.0 are one instant (the hash sees bit patterns) */
    if (q->last_instant >= 0 && q->instants[q->last_instant].time == time)
        return q->last_instant;
    if (q->slots) {
        for (int32_t id = q->slots[slot_of(q, time)]; id >= 0; id = q->instants[id].chain)
            if (q->instants[id].time == time) return q->last_instant = id;
    }
    int32_t id = q->instant_free;
    if (id >= 0) {
        q->instant_free = q->instants[id].chain;
    } else {
        if (q->instant_used == INT32_MAX ||
            grow_array((void **)&q->instants, &q->instant_capacity,
                       (size_t)q->instant_used + 1, sizeof(instant)) != 0)
            return -1;
        id = q->instant_used++;
    }
    if (grow_array((void **)&q->heap, &q->heap_capacity, (size_t)q->heap_size + 1,
                   sizeof(heap_entry)) != 0 ||
        !make_room(q, q->heap_size + 1))
        return -1;
    q->instants[id] = (instant){time, -1, -1, -1, 0, 0};
    heap_up(q, q->heap_size++, (heap_entry){time, id});
    int32_t slot = slot_of(q, time);
    q->instants[id].chain = q->slots[slot];
    q->slots[slot] = id;
    return q->last_instant = id;
}

int event_queue_push(event_queue *q, double time, uint32_t op, int32_t kind) {
    int32_t id = instant_at(q, time);
    if (id < 0) return 0;
    if (q->instants[id].last < 0 || q->instants[id].tail == EVENTS_PER_CHUNK) {
        int32_t c = q->chunk_free;
        if (c >= 0) {
            q->chunk_free = q->chunks[c].next;
        } else {
            if (q->chunk_used == INT32_MAX ||
                grow_array((void **)&q->chunks, &q->chunk_capacity, (size_t)q->chunk_used + 1,
                           sizeof(event_chunk)) != 0)
                return 0;
            c = q->chunk_used++;
        }
        q->chunks[c].next = -1;
        instant *at = &q->instants[id];
        if (at->last >= 0) q->chunks[at->last].next = c;
        else at->first = c, at->head = 0;
        at->last = c;
        at->tail = 0;
    }
    instant *at = &q->instants[id];
    q->chunks[at->last].op[at->tail] = op;
    q->chunks[at->last].kind[at->tail] = (uint8_t)kind;
    at->tail++;
    return 1;
}

int event_queue_pop(event_queue *q, double *time, event *out) {
    if (q->heap_size == 0) return 0;
    int32_t id = q->heap[0].instant;
    instant *at = &q->instants[id];
    int32_t c = at->first;
    *time = at->time;
    *out = (event){q->chunks[c].op[at->head], q->chunks[c].kind[at->head]};
    at->head++;
    int last_chunk = c == at->last;
    if (at->head < (last_chunk ? at->tail : EVENTS_PER_CHUNK)) return 1;
    at->first = q->chunks[c].next; /* this chunk is used up */
    at->head = 0;
    q->chunks[c].next = q->chunk_free;
    q->chunk_free = c;
    if (!last_chunk) return 1;
    /* the instant is over: out of the heap and the hash */
    heap_pop(q);
    int32_t *link = &q->slots[slot_of(q, at->time)];
    while (*link != id) link = &q->instants[*link].chain;
    *link = at->chain;
    at->chain = q->instant_free;
    q->instant_free = id;
    if (q->last_instant == id) q->last_instant = -1;
    return 1;
}

int event_queue_peek(const event_queue *q, uint32_t *ahead, int wanted) {
    if (q->heap_size == 0) return 0;
    const instant *at = &q->instants[q->heap[0].instant];
    int found = 0, i = at->head;
    for (int32_t c = at->first; c >= 0 && found < wanted; c = q->chunks[c].next, i = 0)
        for (int limit = c == at->last ? at->tail : EVENTS_PER_CHUNK; i < limit && found < wanted;
             i++)
            ahead[found++] = q->chunks[c].op[i];
    return found;
}
