/* transfer.c - where the bytes of a message go, and when it arrives (engine.h):
 *
 *   crossbar (no topology), or two ranks on one vertex (with local_latency / _seconds_per_
 *   byte): the sender's NIC is busy bytes x G, the receiver's NIC takes the message after
 *   its previous one (bytes x G), one message at a time, FIFO.
 *   tree topology, ranks on different vertices: the message crosses the links of the tree
 *   path. Choice (documented in docs/simulator.md): *first come, first served, whole path*.
 *   A message waits until every link of its path is free, then streams through all of them
 *   at once (cut-through): it arrives after bytes x (the slowest link's time per byte) plus
 *   the sum of the links' latencies, and holds each link for bytes x that link's own time
 *   per byte (a faster link is free again sooner). Messages that share a link therefore go
 *   one after the other, in the order they were offered; no fair sharing (SimGrid's flow
 *   model would let them share the bandwidth; for equal-size messages both end at the time
 *   the later one ends here, so the makespan is the same, only the first one is earlier).
 *   token buckets (model->burst_bytes B > 0, crossbar only): each NIC side has a bucket of
 *   B bytes filling at the link's rate (1 / G bytes per second), as tc's tbf shapes the
 *   testbed's links (docs/testbed.md). Bytes covered by tokens go at the unshaped path's
 *   speed (burst_seconds_per_byte G_b; the bucket refills meanwhile, so k tokens carry
 *   k G / (G - G_b) bytes), the rest G each, and a bucket in debt delays the
 *   message until it is out of debt. The state is one number per bucket, the time it is
 *   full again (GCRA's theoretical arrival time): a message of n bytes leaving at t finds
 *   k = B - max(0, full - t) / G tokens and leaves the bucket full at max(full, t) + n G.
 *   So a short message on an idle link costs n G_b, a long one G per byte beyond what the
 *   bucket carried, and back-to-back messages pay the full rate.
 */
#include "../tree.h"

#include "engine.h"

/* Wire seconds of `bytes` leaving at `leaves` through the bucket that is full at *full. */
static double shaped_wire(const simulation *s, double *full, double leaves, double bytes,
                          double seconds_per_byte) {
    double backlog = *full > leaves ? *full - leaves : 0;
    double tokens = s->model->burst_bytes - backlog / seconds_per_byte; /* < 0: in debt */
    /* The bucket refills while the burst goes out, so k tokens carry k G / (G - G_b)
     * bytes at the burst's speed G_b before it is empty (all of them if G_b >= G). */
    double fast = s->model->burst_seconds_per_byte, carried = bytes;
    if (fast < seconds_per_byte) carried = tokens * seconds_per_byte / (seconds_per_byte - fast);
    double covered = tokens <= 0 ? 0 : carried < bytes ? carried : bytes;
    *full = max2(*full, leaves) + bytes * seconds_per_byte;
    return covered * s->model->burst_seconds_per_byte +
           (bytes - covered + (tokens < 0 ? -tokens : 0)) * seconds_per_byte;
}

/* A message of `bytes` between ranks on one vertex, or anywhere on a crossbar. */
static double transfer_direct(simulation *s, int32_t source, int32_t destination, double ready,
                              double bytes, double latency, double seconds_per_byte,
                              double *out_of_sender) {
    double leaves = max2(ready, s->rank[source].send_nic_free);
    double wire = bytes * seconds_per_byte;
    /* the receiving side takes the message once it is free and the message has left */
    double taken = s->rank[destination].receive_nic_free, receive_wire = wire;
    if (s->send_bucket_full) {
        taken = max2(leaves, taken);
        wire = shaped_wire(s, &s->send_bucket_full[source], leaves, bytes, seconds_per_byte);
        receive_wire = shaped_wire(s, &s->receive_bucket_full[destination], taken, bytes,
                                   seconds_per_byte);
    }
    *out_of_sender = leaves + wire;
    s->rank[source].send_nic_free = max2(leaves + wire, leaves + s->model->gap);
    double arrives = max2(leaves + wire + latency, taken + receive_wire);
    s->rank[destination].receive_nic_free = arrives;
    return arrives;
}

/* A message across the tree: first come, first served on the whole path (see the header). */
static double transfer_tree(simulation *s, int32_t source, int32_t destination, double ready,
                            double bytes, double *out_of_sender) {
    const papcoll_sim_topology *t = s->topology;
    int32_t path[2 * TREE_MAX_DEPTH], length = 0;
    int32_t up = t->rank_vertex[source], down = t->rank_vertex[destination];
    while (up != down) {  /* depths are capped at TREE_MAX_DEPTH by tree_check */
        if (s->depth[up] >= s->depth[down]) {
            path[length++] = 2 * up;
            up = t->parent[up];
        } else {
            path[length++] = 2 * down + 1;
            down = t->parent[down];
        }
    }
    double leaves = max2(ready, s->rank[source].send_nic_free), latency = 0, seconds_per_byte = 0;
    for (int32_t i = 0; i < length; i++) {
        int32_t vertex = path[i] / 2;
        leaves = max2(leaves, s->link_free[path[i]]);
        latency += t->link_latency[vertex];
        seconds_per_byte = max2(seconds_per_byte, t->link_seconds_per_byte[vertex]);
    }
    double wire = bytes * seconds_per_byte;
    for (int32_t i = 0; i < length; i++) {
        s->link_free[path[i]] = leaves + bytes * t->link_seconds_per_byte[path[i] / 2];
        s->link_bytes[path[i]] += (int64_t)bytes;
    }
    s->rank[source].send_nic_free = max2(s->rank[source].send_nic_free, leaves + s->model->gap);
    *out_of_sender = leaves + wire;
    return leaves + wire + latency;
}

double transfer(simulation *s, int32_t source, int32_t destination, double ready,
                       double bytes, double *out_of_sender) {
    const papcoll_sim_topology *t = s->topology;
    if (t == NULL)
        return transfer_direct(s, source, destination, ready, bytes, s->model->latency,
                               s->model->seconds_per_byte, out_of_sender);
    if (t->rank_vertex[source] == t->rank_vertex[destination])
        return transfer_direct(s, source, destination, ready, bytes, t->local_latency,
                               t->local_seconds_per_byte, out_of_sender);
    return transfer_tree(s, source, destination, ready, bytes, out_of_sender);
}
