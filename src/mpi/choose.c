/* choose.c - `auto` in the MPI library: the decision of src/core/select.c
 * (papcoll_choose) on the predicted arrivals rounded to their class (arrival_class.h), with
 * the monitor's cost model, kept per (shape, op commutativity, arrival class).
 *
 * The model is the simulator's on a crossbar with the monitor's three numbers: latency L,
 * seconds per byte G and reduce seconds per byte gamma, measured at the first call or taken
 * from PAPCOLL_TAU_MODEL (what `papcoll calibrate` prints); copies at gamma / 2, an eager
 * limit of 64 KiB, no per-message CPU overhead (folded into L by the ping-pong).
 * Where native cannot run the call (counts beyond INT_MAX, which MPI_Allreduce's int count
 * cannot hold; a post or a start in SMPI: choice_input.native_runs) select.c's fixed rule
 * stands in for native.
 *
 * Cost: a decision simulates every candidate once per key and is kept (CHOICE_CACHE_SIZE
 * keys, least recently used out); a call whose decision is cached costs a lookup. Every
 * input is identical on every rank and the decision deterministic, so any rank could decide
 * alone; in a call one rank does, off the late rank's path (choice_sharing.c).
 */
#include "choose.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recency.h"
#include "select.h"
#include "tuning.h"

static int ascending(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void choice_model(double latency, double seconds_per_byte, double reduce_seconds_per_byte,
                  papcoll_sim_model *model) {
    memset(model, 0, sizeof *model);
    /* the ping-pong's one-way time is wire and CPU: a third each to the wire, the sender's
     * and the receiver's CPU (LogP's L, o_s, o_r), so that an algorithm of many small
     * messages pays per message, as it does */
    model->latency = latency / 3;
    model->overhead = latency / 3;
    model->receive_overhead = latency / 3;
    model->seconds_per_byte = seconds_per_byte;
    model->reduce_seconds_per_byte = reduce_seconds_per_byte;
    model->copy_seconds_per_byte = reduce_seconds_per_byte / 2;
    model->eager_limit_bytes = 65536;
}

/* input's decision, made on the arrivals sorted (the canonical order of its profile, see
 * choice_cache_find). */
void choice_decide(const choice_input *input, auto_choice *out) {
    memset(out, 0, sizeof *out);
    papcoll_sim_model model;
    choice_model(input->latency, input->seconds_per_byte, input->reduce_seconds_per_byte,
                 &model);
    papcoll_context context;
    memset(&context, 0, sizeof context);
    context.parameters = *input->parameters;
    context.tuning = input->tuning;
    double *sorted = NULL;
    /* every rank in class 0 gives arrivals all 0, which papcoll_choose runs native for */
    if (input->arrival_class != NULL && input->calibrated) {
        sorted = malloc((size_t)input->ranks * sizeof *sorted);
        if (sorted != NULL) { /* out of memory: native, undecided */
            memcpy(sorted, input->arrivals, (size_t)input->ranks * sizeof *sorted);
            qsort(sorted, (size_t)input->ranks, sizeof *sorted, ascending);
            context.arrivals = sorted;
            context.arrival_count = input->ranks;
            context.tau = input->tau;
        }
    }
    int32_t elem_size = input->extent > INT32_MAX ? INT32_MAX : (int32_t)input->extent;
    papcoll_choose(input->ranks, input->count, elem_size, input->commutative, &context, &model,
                   &out->report);
    free(sorted);
    choice_from_report(out);
    /* Where the model picks native and names nothing to measure it against (balanced
     * arrivals, or no PAP-aware candidate within its uncertainty), the closed loop measures
     * native against papcoll's flat algorithm for the shape (select_flat_alternative: the
     * fixed rule's, or a stand-in its closed form says is faster by alternative_share).
     * The model stands native in by papcoll's own flat schedules, so it cannot see where
     * the MPI library is slower than they are, and that depends on the machine: with a
     * core per rank (P = 4 on 16 cores, MPICH 5.0.2, shared memory) papcoll's ring took
     * 0.55 ms at 1 MiB balanced and 2.6 ms at 4 MiB, every MPICH algorithm 1.14 - 1.20 ms
     * and 5.3 - 5.5 ms; Rabenseifner 0.103 ms at 64 KiB against 0.126 ms. With 4 ranks on
     * 2 cores the flat schedules measured no better than the default above 2 KiB; there
     * the loop keeps native, and its probes cost 3 calls early and one in 16 after
     * (docs/benchmarks.md, "the grid with a core per rank"). Up to 16 MiB, the largest
     * size measured: a probe grows the communicator's scratch to the vector's size and
     * keeps it (executor.c), and a probe that cannot get it fails a call MPI_Allreduce
     * would have run. No prediction is made for it (alternative_seconds stays 0). The
     * bound is papcoll_tuning's flat_alternative_most_bytes (16 MiB by default). */
    const int64_t flat_alternative_most_bytes =
        tuning_in_force(input->tuning).flat_alternative_most_bytes;
    if (out->report.alternative[0] == '\0' && out->algorithm == NULL && input->ranks > 1 &&
        input->native_runs &&
        input->count <= flat_alternative_most_bytes / (input->extent > 0 ? input->extent : 1)) {
        snprintf(out->report.alternative, sizeof out->report.alternative, "%s",
                 select_flat_alternative(input->ranks, input->count, input->extent,
                                         input->commutative, input->calibrated ? &model : NULL,
                                         tuning_in_force(input->tuning).alternative_share));
        if (out->report.model_algorithm[0] == '\0') /* the fixed rule's native */
            snprintf(out->report.model_algorithm, sizeof out->report.model_algorithm,
                     "native");
    }
    if (out->algorithm == NULL && !input->native_runs) {
        out->algorithm = registry_find(select_default_algorithm(
            input->ranks, input->count, input->extent, input->commutative));
        snprintf(out->report.algorithm, sizeof out->report.algorithm, "%s",
                 out->algorithm->info.name);
    }
}

/* profile: the input's classes sorted, or NULL when it has none */
static int entry_matches(const choice_entry *entry, const choice_input *input,
                         const uint8_t *profile) {
    if (entry->last_used == 0 || entry->count != input->count ||
        entry->extent != input->extent || entry->commutative != input->commutative ||
        entry->native_runs != input->native_runs)
        return 0;
    if (entry->has_profile != (profile != NULL)) return 0;
    return profile == NULL ||
           (entry->ranks == input->ranks &&
            memcmp(entry->arrival_class, profile, (size_t)input->ranks) == 0);
}

/* The input's classes sorted into input->profile (the caller's P bytes: no allocation on
 * a cached call), or NULL where it has none. */
static const uint8_t *sorted_profile(const choice_input *input) {
    if (input->arrival_class == NULL) return NULL;
    uint8_t *profile = input->profile;
    int32_t filled = 0; /* counting sort: classes are 0..60 */
    for (int level = 0; level < 256 && filled < input->ranks; level++)
        for (int32_t r = 0; r < input->ranks; r++)
            if (input->arrival_class[r] == level) profile[filled++] = (uint8_t)level;
    return profile;
}

/* A decision is kept per shape and sorted class profile: which rank is late does not change
 * which algorithm wins (the candidates treat ranks alike, up to their place in a ring), and
 * rand-late patterns, a new order of the same classes every call, then share one decision
 * instead of simulating every candidate again on every call. */
int choice_cache_find(const choice_input *input, choice_cache *cache, int touch,
                      auto_choice *out) {
    const uint8_t *profile = sorted_profile(input);
    for (int i = 0; i < CHOICE_CACHE_SIZE; i++) {
        choice_entry *entry = &cache->entries[i];
        if (!entry_matches(entry, input, profile)) continue;
        if (touch) entry->last_used = ++cache->clock;
        *out = entry->decided;
        out->report.decided_by = -1;
        return 1;
    }
    return 0;
}

void choice_from_report(auto_choice *choice) {
    choice->algorithm = strcmp(choice->report.algorithm, "native") == 0
                            ? NULL
                            : registry_find(choice->report.algorithm);
}

void choice_cache_keep(const choice_input *input, choice_cache *cache,
                       const auto_choice *decided) {
    const uint8_t *profile = sorted_profile(input);
    choice_entry *entry = &cache->entries[least_recently_used(
        &cache->entries[0].last_used, sizeof cache->entries[0], CHOICE_CACHE_SIZE, NULL, NULL)];
    uint8_t *kept = entry->arrival_class; /* the cache's own P bytes, made at init */
    memset(entry, 0, sizeof *entry);
    entry->arrival_class = kept;
    entry->has_profile = profile != NULL;
    if (profile != NULL) memcpy(kept, profile, (size_t)input->ranks);
    entry->decided = *decided;
    entry->count = input->count;
    entry->extent = input->extent;
    entry->commutative = input->commutative;
    entry->native_runs = input->native_runs;
    entry->ranks = input->ranks;
    entry->last_used = ++cache->clock;
}

int choice_cache_init(choice_cache *cache, int32_t ranks) {
    memset(cache, 0, sizeof *cache);
    cache->profiles = malloc((size_t)CHOICE_CACHE_SIZE * (size_t)ranks);
    if (cache->profiles == NULL) return MPI_ERR_NO_MEM;
    for (int i = 0; i < CHOICE_CACHE_SIZE; i++)
        cache->entries[i].arrival_class = cache->profiles + (size_t)i * (size_t)ranks;
    return MPI_SUCCESS;
}

void choice_cache_clear(choice_cache *cache) {
    for (int i = 0; i < CHOICE_CACHE_SIZE; i++) cache->entries[i].last_used = 0;
    cache->clock = 0;
}

void choice_cache_release(choice_cache *cache) {
    free(cache->profiles);
    memset(cache, 0, sizeof *cache);
}
