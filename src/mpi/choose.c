/* choose.c - `auto` in the MPI library (issue 20): the decision of src/core/select.c
 * (papcoll_choose) on the predicted arrivals rounded to their class (arrival_class.h), with
 * the monitor's cost model, kept per (shape, op commutativity, arrival class).
 *
 * The model is the simulator's on a crossbar with the monitor's three numbers: latency L,
 * seconds per byte G and reduce seconds per byte gamma, measured at the first call or taken
 * from PAPCOLL_TAU_MODEL (what `papcoll calibrate` prints); copies at gamma / 2, an eager
 * limit of 64 KiB, no per-message CPU overhead (folded into L by the ping-pong).
 * Counts beyond INT_MAX cannot go to MPI_Allreduce's int count: there select.c's fixed
 * rule stands in for native.
 *
 * Cost: a decision simulates every candidate once per key and is kept (CHOICE_CACHE_SIZE
 * keys, least recently used out); a call whose decision is cached costs a lookup. Every
 * input is identical on every rank and the decision deterministic, so every rank decides
 * alike without a message.
 */
#include "choose.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrival_class.h"
#include "errors.h"
#include "select.h"

static void decide(const choice_input *input, auto_choice *out) {
    memset(out, 0, sizeof *out);
    papcoll_sim_model model;
    memset(&model, 0, sizeof model);
    model.latency = input->latency;
    model.seconds_per_byte = input->seconds_per_byte;
    model.reduce_seconds_per_byte = input->reduce_seconds_per_byte;
    model.copy_seconds_per_byte = input->reduce_seconds_per_byte / 2;
    model.eager_limit_bytes = 65536;
    papcoll_context context;
    memset(&context, 0, sizeof context);
    context.parameters = *input->parameters;
    if (input->arrival_class != NULL && input->calibrated &&
        !arrival_class_balanced(input->arrival_class, input->ranks)) {
        context.arrivals = input->arrivals;
        context.arrival_count = input->ranks;
        context.tau = input->tau;
    }
    int32_t elem_size = input->extent > INT32_MAX ? INT32_MAX : (int32_t)input->extent;
    papcoll_choose(input->ranks, input->count, elem_size, input->commutative, &context, &model,
                   &out->report);
    if (strcmp(out->report.algorithm, "native") != 0)
        out->algorithm = registry_find(out->report.algorithm);
    if (out->algorithm == NULL && input->count > INT_MAX) {
        out->algorithm = registry_find(select_default_algorithm(
            input->ranks, input->count, input->extent, input->commutative));
        snprintf(out->report.algorithm, sizeof out->report.algorithm, "%s",
                 out->algorithm->info.name);
    }
}

static int entry_matches(const choice_entry *entry, const choice_input *input) {
    if (entry->last_used == 0 || entry->count != input->count ||
        entry->extent != input->extent || entry->commutative != input->commutative)
        return 0;
    if ((entry->arrival_class == NULL) != (input->arrival_class == NULL)) return 0;
    return entry->arrival_class == NULL ||
           (entry->ranks == input->ranks &&
            memcmp(entry->arrival_class, input->arrival_class, (size_t)input->ranks) == 0);
}

int choose_algorithm(const choice_input *input, choice_cache *cache, auto_choice *out) {
    int oldest = 0;
    for (int i = 0; i < CHOICE_CACHE_SIZE; i++) {
        choice_entry *entry = &cache->entries[i];
        if (entry_matches(entry, input)) {
            entry->last_used = ++cache->clock;
            *out = entry->decided;
            return MPI_SUCCESS;
        }
        if (entry->last_used < cache->entries[oldest].last_used) oldest = i;
    }
    decide(input, out);
    choice_entry *entry = &cache->entries[oldest];
    free(entry->arrival_class);
    memset(entry, 0, sizeof *entry);
    if (input->arrival_class != NULL) {
        entry->arrival_class = malloc((size_t)input->ranks);
        if (entry->arrival_class == NULL)
            return record_error(MPI_ERR_NO_MEM, "papcoll: out of memory choosing for auto");
        memcpy(entry->arrival_class, input->arrival_class, (size_t)input->ranks);
    }
    entry->decided = *out;
    entry->count = input->count;
    entry->extent = input->extent;
    entry->commutative = input->commutative;
    entry->ranks = input->ranks;
    entry->last_used = ++cache->clock;
    return MPI_SUCCESS;
}

void choice_cache_clear(choice_cache *cache) {
    for (int i = 0; i < CHOICE_CACHE_SIZE; i++) free(cache->entries[i].arrival_class);
    memset(cache, 0, sizeof *cache);
}
