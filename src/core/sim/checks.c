/* checks.c - what the simulator refuses before it runs (papcoll_simulate): a model whose
 * costs are not finite numbers >= 0, a token bucket without a rate to shape, a topology
 * without finite link costs. Apart from the run loop (simulate.c) so that it reads as the
 * engine only; the tree's own shape is checked by tree.c. */
#include <math.h>

#include "../message.h"
#include "../tree.h"
#include "engine.h"

int sim_check_number(const char *what, double value, char *error, size_t error_size) {
    if (value >= 0 && isfinite(value)) return 1;
    message_write(error, error_size, 0, "%s must be a finite number >= 0", what);
    return 0;
}

int sim_check_model(const papcoll_sim_model *m, char *error, size_t error_size) {
    const double values[] = {m->latency, m->overhead, m->receive_overhead, m->gap,
                             m->seconds_per_byte, m->reduce_seconds_per_byte,
                             m->copy_seconds_per_byte};
    const char *names[] = {"model parameter latency", "model parameter overhead",
                           "model parameter receive_overhead", "model parameter gap",
                           "model parameter seconds_per_byte",
                           "model parameter reduce_seconds_per_byte",
                           "model parameter copy_seconds_per_byte"};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        if (!sim_check_number(names[i], values[i], error, error_size)) return 0;
    if (!sim_check_number("model parameter burst_bytes", m->burst_bytes, error, error_size) ||
        !sim_check_number("model parameter burst_seconds_per_byte", m->burst_seconds_per_byte,
                          error, error_size))
        return 0;
    /* A bucket shapes a link to its rate: there must be a rate, and a burst no slower. */
    if (m->burst_bytes > 0 && !(m->seconds_per_byte > 0)) {
        message_write(error, error_size, 0, "model parameter burst_bytes needs a link rate: "
                      "seconds_per_byte must be > 0");
        return 0;
    }
    if (m->burst_bytes > 0 && m->burst_seconds_per_byte > m->seconds_per_byte) {
        message_write(error, error_size, 0, "model parameter burst_seconds_per_byte (%g) "
                      "must not exceed seconds_per_byte (%g): a burst is not slower than "
                      "the shaped rate", m->burst_seconds_per_byte, m->seconds_per_byte);
        return 0;
    }
    return 1;
}

/* The tree (tree.c) plus what only the simulator needs: finite link and local costs. */
int sim_check_topology(simulation *s, int32_t ranks) {
    const papcoll_sim_topology *t = s->topology;
    int status = tree_check(t, ranks, s->depth, s->error, s->error_size);
    if (status != PAPCOLL_OK) return status;
    if (t->link_latency == NULL || t->link_seconds_per_byte == NULL)
        return sim_fail(s, PAPCOLL_ERR_ARGUMENT, "topology: needs the latency and time per byte "
                        "of every link");
    if (!sim_check_number("topology: local_latency", t->local_latency, s->error, s->error_size) ||
        !sim_check_number("topology: local_seconds_per_byte", t->local_seconds_per_byte, s->error,
                          s->error_size))
        return PAPCOLL_ERR_ARGUMENT;
    for (int32_t v = 0; v < t->vertex_count; v++)
        if (!(t->link_latency[v] >= 0 && isfinite(t->link_latency[v])) ||
            !(t->link_seconds_per_byte[v] >= 0 && isfinite(t->link_seconds_per_byte[v])))
            return sim_fail(s, PAPCOLL_ERR_ARGUMENT, "topology: the link of vertex %d needs a "
                            "finite latency and time per byte >= 0", v);
    return PAPCOLL_OK;
}
