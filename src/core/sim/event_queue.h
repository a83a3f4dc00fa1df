/* event_queue.h - the simulator's event queue (sim/simulate.c): events are taken in time
 * order, and events at one time in the order they were pushed, so runs are deterministic.
 *
 * Layout, for speed at P = 2^20: a binary heap of *distinct times* ("instants"), each with
 * a FIFO of its events. Simulations in lockstep (balanced arrivals) put thousands of events
 * at one instant, and they cost one heap entry; the FIFO keeps the creation order. A hash
 * from time to instant finds the instant of a new event without searching the heap.
 * The queue only orders events: what an event's kind means is the simulator's business.
 */
#ifndef PAPCOLL_SIM_EVENT_QUEUE_H
#define PAPCOLL_SIM_EVENT_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "../hidden.h"

typedef struct event {
    uint32_t op;        /* index in the array of all ops */
    int32_t kind;
} event;

/* The events of an instant sit in chunks of one cache line, so that walking thousands of
 * them (and prefetching ahead) reads memory in order instead of chasing a pointer per
 * event. */
#define EVENTS_PER_CHUNK 12
typedef struct event_chunk {
    uint32_t op[EVENTS_PER_CHUNK];
    uint8_t kind[EVENTS_PER_CHUNK];
    int32_t next;       /* the instant's next chunk, -1 at the end */
} event_chunk;
_Static_assert(sizeof(event_chunk) == 64, "a chunk of events should fill one cache line");

typedef struct instant {
    double time;
    int32_t first, last; /* its chunks, in order */
    int32_t chain;       /* next instant in the same hash slot, -1 at the end */
    uint8_t head;        /* the next event to pop, in chunk `first` */
    uint8_t tail;        /* events written in chunk `last` */
} instant;

typedef struct heap_entry {
    double time;
    int32_t instant;
} heap_entry;

typedef struct event_queue {
    event_chunk *chunks;
    size_t chunk_capacity;
    int32_t chunk_used, chunk_free;
    instant *instants;
    size_t instant_capacity;
    int32_t instant_used, instant_free;
    heap_entry *heap;
    size_t heap_capacity;
    int32_t heap_size;
    int32_t *slots;      /* hash of time -> first instant, -1: none */
    int32_t slot_mask;
    int32_t last_instant; /* the instant pushed to last, checked before the hash */
} event_queue;

/* An empty queue (its arrays come with the first push). */
PAPCOLL_HIDDEN void event_queue_init(event_queue *q);
PAPCOLL_HIDDEN void event_queue_release(event_queue *q);

/* Adds event (op, kind) at `time`. Returns 1, or 0 when out of memory. */
PAPCOLL_HIDDEN int event_queue_push(event_queue *q, double time, uint32_t op, int32_t kind);

/* Takes the earliest event (the first pushed among the earliest). 0: the queue is empty. */
PAPCOLL_HIDDEN int event_queue_pop(event_queue *q, double *time, event *out);

/* The ops of up to `wanted` events that will be popped next, at the current earliest
 * instant, in order; returns how many there are (the simulator prefetches their data). */
PAPCOLL_HIDDEN int event_queue_peek(const event_queue *q, uint32_t *ahead, int wanted);

/* Bytes held by the queue's arrays, for the simulator's memory report. */
PAPCOLL_HIDDEN int64_t event_queue_memory(const event_queue *q);

#endif /* PAPCOLL_SIM_EVENT_QUEUE_H */
