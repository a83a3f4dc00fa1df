/* matching.c - where a message meets its receive (engine.h): the channels, numbered while
 * the schedules are converted, and per channel a FIFO of posted receives and one of
 * unexpected sends, so that a match is O(1) and happens in MPI's order. The sides of a
 * message live in one pool with a free list, reused as messages complete, so the engine's
 * memory follows the messages in flight, not all messages. Apart from the run loop
 * (simulate.c), which only asks for the oldest partner. */
#include <stdlib.h>
#include <string.h>

#include "../growth.h"
#include "engine.h"
#include "mix.h"

/* The channel of messages from `source` to `destination` with `tag`, numbered on first
 * sight; -1 when out of memory or out of channel numbers. */
int32_t sim_channel_of(simulation *s, int32_t source, int32_t destination, int32_t tag) {
    if (2 * ((int64_t)s->channel_count + 1) > s->channel_slot_count) {
        /* keep the table at most half full, so that probes stay short */
        int64_t slot_count = s->channel_slot_count ? 2 * s->channel_slot_count : 1024;
        if (s->channel_count == INT32_MAX || (uint64_t)slot_count > SIZE_MAX / sizeof(int32_t))
            return -1;
        int32_t *slots = malloc((size_t)slot_count * sizeof *slots);
        if (slots == NULL) return -1;
        memset(slots, 0xff, (size_t)slot_count * sizeof *slots); /* all -1 */
        for (int32_t c = 0; c < s->channel_count; c++) {
            const channel *known = &s->channels[c];
            uint64_t slot = mix64(((uint64_t)(uint32_t)known->source << 32 |
                                   (uint32_t)known->destination) ^ (uint64_t)known->tag << 17);
            while (slots[slot & (uint64_t)(slot_count - 1)] >= 0) slot++;
            slots[slot & (uint64_t)(slot_count - 1)] = c;
        }
        free(s->channel_slots);
        s->channel_slots = slots;
        s->channel_slot_count = slot_count;
    }
    const uint64_t mask = (uint64_t)(s->channel_slot_count - 1);
    uint64_t slot = mix64(((uint64_t)(uint32_t)source << 32 | (uint32_t)destination) ^
                          (uint64_t)tag << 17);
    for (;; slot++) {
        int32_t c = s->channel_slots[slot & mask];
        if (c < 0) break;
        const channel *known = &s->channels[c];
        if (known->source == source && known->destination == destination && known->tag == tag)
            return c;
    }
    if (grow_array((void **)&s->channels, &s->channel_capacity, (size_t)s->channel_count + 1,
                   sizeof(channel)) != 0)
        return -1;
    s->channels[s->channel_count] = (channel){source, destination, tag, {-1, -1}, {-1, -1}};
    s->channel_slots[slot & mask] = s->channel_count;
    return s->channel_count++;
}

int32_t sim_side_take(simulation *s) {
    if (s->side_free >= 0) {
        int32_t index = s->side_free;
        s->side_free = s->sides[index].next;
        return index;
    }
    if (s->side_used == INT32_MAX ||
        grow_array((void **)&s->sides, &s->side_capacity, (size_t)s->side_used + 1,
                   sizeof(message_side)) != 0)
        return -1;
    return s->side_used++;
}

void sim_side_append(simulation *s, side_list *list, int32_t index) {
    s->sides[index].next = -1;
    if (list->tail >= 0) s->sides[list->tail].next = index;
    else list->head = index;
    list->tail = index;
}

/* Removes and returns the oldest side of a channel's list, or -1: every side in it has the
 * channel's source and tag, so the head is the one MPI would match. */
int32_t sim_side_take_oldest(simulation *s, side_list *list) {
    int32_t oldest = list->head;
    if (oldest < 0) return -1;
    list->head = s->sides[oldest].next;
    if (list->tail == oldest) list->tail = -1;
    return oldest;
}

void sim_side_free(simulation *s, int32_t index) {
    s->sides[index].next = s->side_free;
    s->side_free = index;
}
