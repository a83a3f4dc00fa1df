/* test_select.c - auto's shortcuts (src/core/select.c, select_bounds.c) against the full
 * simulation they stand in for: on a grid of small calls, where simulating every candidate
 * is affordable, papcoll_choose with its shortcuts (the lower bound, the budget, the closed
 * forms) decides exactly as without them; the lower bound is below every algorithm's
 * simulated e-bar less the wait; and at P = 1024 a decision's work stays within its budget,
 * a share of the closed-form call (counted in operations, not wall-clock seconds, so the
 * test does not depend on the machine that runs it). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "select.h"

static int failures = 0, checks = 0;

static void expect(int condition, const char *what) {
    checks++;
    if (condition) return;
    failures++;
    printf("FAIL: %s\n", what);
}

/* ethernet-1g and infiniband-fdr, as papcoll.model.PRESETS has them */
static papcoll_sim_model network(int infiniband) {
    papcoll_sim_model model;
    memset(&model, 0, sizeof model);
    model.latency = infiniband ? 1e-6 : 50e-6;
    model.overhead = model.receive_overhead = infiniband ? 0.5e-6 : 5e-6;
    model.seconds_per_byte = infiniband ? 1.5e-10 : 8e-9;
    model.reduce_seconds_per_byte = infiniband ? 2.5e-10 : 5e-10;
    model.copy_seconds_per_byte = 1e-10;
    model.eager_limit_bytes = infiniband ? 12288 : 65536;
    return model;
}

/* balanced (0), one-late (1: rank 1 late by delay), rand-late (2: a fixed spread) */
static void arrivals_of(int pattern, int32_t ranks, double delay, double *arrivals) {
    uint64_t state = 12345;
    for (int32_t r = 0; r < ranks; r++) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        double uniform = (double)(state >> 11) * 0x1.0p-53;
        arrivals[r] = pattern == 0 ? 0 : pattern == 1 ? (r == 1 ? delay : 0) : uniform * delay;
    }
}

static papcoll_context context_of(const double *arrivals, int32_t ranks, double tau) {
    papcoll_context context;
    memset(&context, 0, sizeof context);
    context.arrivals = arrivals;
    context.arrival_count = ranks;
    context.tau = tau;
    return context;
}

/* with and without the shortcuts: the same algorithm, the same predictions */
static void same_decision(int32_t ranks, int64_t count, int32_t commutative, int pattern,
                          double delay, int infiniband, int *settled) {
    double arrivals[64];
    arrivals_of(pattern, ranks, delay, arrivals);
    papcoll_sim_model model = network(infiniband);
    papcoll_context context = context_of(arrivals, ranks, 1e-5);
    papcoll_choice fast, full;
    select_trace trace;
    expect(select_choose(ranks, count, 4, commutative, &context, &model, 1, &fast, &trace) ==
               PAPCOLL_OK, "the shortcut decision runs");
    expect(select_choose(ranks, count, 4, commutative, &context, &model, 0, &full, NULL) ==
               PAPCOLL_OK, "the full decision runs");
    *settled += trace.bound_settled;
    char what[400];
    snprintf(what, sizeof what, "P=%d count=%lld commutative=%d pattern=%d delay=%g %s: %s "
             "with shortcuts, %s without", ranks, (long long)count, commutative, pattern,
             delay, infiniband ? "infiniband" : "ethernet", fast.algorithm, full.algorithm);
    expect(strcmp(fast.algorithm, full.algorithm) == 0 &&
               fast.predicted_seconds == full.predicted_seconds &&
               fast.native_seconds == full.native_seconds,
           what);
    expect(trace.closed_form_stand_ins == 0 && trace.skipped_candidates == 0,
           "small calls stay under the budget's floor");
}

/* the bound is below what every algorithm is simulated to take after the last arrival */
static void bound_holds(const char *name, int32_t ranks, int64_t count, int pattern,
                        int infiniband) {
    double arrivals[64], wait = 0, last = 0;
    arrivals_of(pattern, ranks, 1e-3, arrivals);
    for (int32_t r = 0; r < ranks; r++) last = fmax(last, arrivals[r]);
    for (int32_t r = 0; r < ranks; r++) wait += (last - arrivals[r]) / ranks;
    papcoll_sim_model model = network(infiniband);
    papcoll_context context = context_of(arrivals, ranks, 1e-5);
    papcoll_sim_result result;
    memset(&result, 0, sizeof result);
    int status = papcoll_simulate(name, ranks, count, 4, &context, &model, NULL, arrivals,
                                  NULL, &result, NULL, 0);
    double bound = select_post_wait_lower_bound(ranks, count * 4, &model);
    char what[400];
    snprintf(what, sizeof what, "%s P=%d count=%lld pattern=%d: e-bar - wait %g < bound %g",
             name, ranks, (long long)count, pattern, result.average_elapsed - wait, bound);
    expect(status != PAPCOLL_OK || result.average_elapsed - wait >= bound * (1 - 1e-12),
           what);
    papcoll_sim_result_release(&result);
}

int main(void) {
    static const int32_t ranks[] = {2, 3, 4, 8, 13, 16};
    static const int64_t counts[] = {1, 256, 16384, 262144};
    static const double delays[] = {0, 1e-5, 1e-4, 1e-3, 1e-2};
    int settled = 0;
    for (size_t p = 0; p < sizeof ranks / sizeof *ranks; p++)
        for (size_t c = 0; c < sizeof counts / sizeof *counts; c++)
            for (int pattern = 0; pattern < 3; pattern++)
                for (size_t d = 0; d < sizeof delays / sizeof *delays; d++)
                    for (int net = 0; net < 2; net++)
                        for (int commutative = 0; commutative < 2; commutative++)
                            same_decision(ranks[p], counts[c], commutative, pattern, delays[d],
                                          net, &settled);
    printf("bound settled %d decisions of the grid\n", settled);
    static const char *const names[] = {"recursive_doubling", "rabenseifner", "ring",
                                        "slt", "prr", "straggler"};
    for (size_t a = 0; a < sizeof names / sizeof *names; a++)
        for (size_t p = 0; p < sizeof ranks / sizeof *ranks; p++)
            for (int pattern = 0; pattern < 3; pattern++)
                for (int net = 0; net < 2; net++) {
                    bound_holds(names[a], ranks[p], 1, pattern, net);
                    bound_holds(names[a], ranks[p], 262144, pattern, net);
                }
    /* P = 1024: the work stays within the budget, and the budget within 1 % of the
     * calls one decision serves (100), or the floor */
    static double late[1024];
    for (int net = 0; net < 2; net++)
        for (int64_t count = 16384; count <= 4194304; count *= 16) {
            arrivals_of(1, 1024, 1e-3, late);
            papcoll_sim_model model = network(net);
            papcoll_context context = context_of(late, 1024, 1e-5);
            papcoll_choice choice;
            select_trace trace;
            select_choose(1024, count, 4, 1, &context, &model, 1, &choice, &trace);
            double call = select_closed_form_seconds("rabenseifner", 1024, count * 4, &model);
            double allowed = fmax(262144, 0.01 * 100 * call * 1e6);
            char what[400];
            snprintf(what, sizeof what, "P=1024 count=%lld %s: simulated %lld + built %lld "
                     "operations, allowed %g", (long long)count, net ? "infiniband" : "ethernet",
                     (long long)trace.simulated_operations, (long long)trace.built_operations,
                     allowed);
            printf("%s\n", what);
            /* what was simulated and what was built to count candidates (three of their P
             * schedules each) stay within the budget together */
            expect(trace.simulated_operations + trace.built_operations <=
                           trace.budget_operations &&
                       trace.budget_operations <= allowed,
                   what);
        }
    /* the flat algorithm the closed loop measures native against: the fixed rule's (ring
     * from 1 MiB) where P is small, Rabenseifner where ring's 2 (P - 1) latencies cost more
     * than the 25 % share (SMPI, ethernet-1g, 1 MiB: ring 24.1 ms, Rabenseifner 17.2 at
     * P = 64); never ring for a non-commutative op; the rule itself without a model */
    papcoll_sim_model ethernet = network(0);
    expect(strcmp(select_flat_alternative(4, 262144, 4, 1, &ethernet, 0.25), "ring") == 0,
           "P = 4, 1 MiB: the fixed rule's ring");
    expect(strcmp(select_flat_alternative(16, 262144, 4, 1, &ethernet, 0.25), "ring") == 0,
           "P = 16, 1 MiB: ring within 25 % of Rabenseifner");
    expect(strcmp(select_flat_alternative(64, 262144, 4, 1, &ethernet, 0.25),
                  "rabenseifner") == 0, "P = 64, 1 MiB: Rabenseifner");
    expect(strcmp(select_flat_alternative(256, 262144, 4, 1, &ethernet, 0.25),
                  "rabenseifner") == 0, "P = 256, 1 MiB: Rabenseifner");
    expect(strcmp(select_flat_alternative(256, 262144, 4, 1, NULL, 0.25), "ring") == 0,
           "no model: the fixed rule");
    for (int32_t p = 2; p <= 1024; p *= 2)
        expect(strcmp(select_flat_alternative(p, 262144, 4, 0, &ethernet, 0.25), "ring") != 0,
               "a non-commutative op never gets ring");
    printf("%d checks, %d failures\n", checks, failures);
    return failures != 0;
}
