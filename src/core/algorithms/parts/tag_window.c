/* tag_window.c - the windowed-tag link of rings and chains (tag_window.h). */
#include "tag_window.h"

tag_window_link tag_window_open(int32_t peer, int32_t window) {
    tag_window_link link = {peer, window, 0, {SCHED_NONE, SCHED_NONE, SCHED_NONE, SCHED_NONE}};
    return link;
}

/* A SEND or a RECV is the same bookkeeping: the tag of message m, and m waits for m - W. */
static int32_t post(papcoll_schedule *out, tag_window_link *link, int kind, sched_region region,
                    int32_t after) {
    int32_t tag = (int32_t)(link->messages % link->window);
    int32_t op = kind == SCHED_SEND
                     ? sched_send(out, link->peer, tag, region, SCHED_AFTER(after, link->recent[tag]))
                     : sched_recv(out, link->peer, tag, region, SCHED_AFTER(after, link->recent[tag]));
    link->recent[tag] = op;
    link->messages++;
    return op;
}

int32_t tag_window_send(papcoll_schedule *out, tag_window_link *link, sched_region region,
                        int32_t ready) {
    return post(out, link, SCHED_SEND, region, ready);
}

int32_t tag_window_recv(papcoll_schedule *out, tag_window_link *link, sched_region region,
                        int32_t region_free) {
    return post(out, link, SCHED_RECV, region, region_free);
}
