/* registry.c - name -> builder. Each algorithm file defines its entry (name, one-line
 * description, source, limitations, flags by name); this list is the one place they are
 * registered. Building a schedule by name, with the checks of its context, is in build.c. */
#include <string.h>

#include "hidden.h"
#include "schedule.h"

/* Hidden here hides them in the library: the linker keeps the strictest visibility. */
PAPCOLL_HIDDEN extern const algorithm_entry linear_algorithm;
PAPCOLL_HIDDEN extern const algorithm_entry binomial_algorithm;
PAPCOLL_HIDDEN extern const algorithm_entry linear_tree_algorithm;
PAPCOLL_HIDDEN extern const algorithm_entry recursive_doubling_algorithm;
PAPCOLL_HIDDEN extern const algorithm_entry ring_algorithm;
PAPCOLL_HIDDEN extern const algorithm_entry segmented_ring_algorithm;
PAPCOLL_HIDDEN extern const algorithm_entry rabenseifner_algorithm;
PAPCOLL_HIDDEN extern const algorithm_entry slt_algorithm;
PAPCOLL_HIDDEN extern const algorithm_entry prr_algorithm;
PAPCOLL_HIDDEN extern const algorithm_entry straggler_algorithm;
PAPCOLL_HIDDEN extern const algorithm_entry recursive_multiplying_algorithm;
PAPCOLL_HIDDEN extern const algorithm_entry ring_topology_algorithm;
PAPCOLL_HIDDEN extern const algorithm_entry smp_binomial_algorithm;
PAPCOLL_HIDDEN extern const algorithm_entry smp_butterfly_algorithm;
PAPCOLL_HIDDEN extern const algorithm_entry hr1_algorithm;
PAPCOLL_HIDDEN extern const algorithm_entry hr2_algorithm;
PAPCOLL_HIDDEN extern const algorithm_entry rs_halving_algorithm;
PAPCOLL_HIDDEN extern const algorithm_entry priority_rs_algorithm;
PAPCOLL_HIDDEN extern const algorithm_entry priority_rabenseifner_algorithm;
PAPCOLL_HIDDEN extern const algorithm_entry pap_hierarchical_algorithm;
PAPCOLL_HIDDEN extern const algorithm_entry canonical_scatter_algorithm;
PAPCOLL_HIDDEN extern const algorithm_entry canonical_gather_algorithm;
PAPCOLL_HIDDEN extern const algorithm_entry canonical_straggler_algorithm;

static const algorithm_entry *const algorithms[] = {
    &linear_algorithm,       &binomial_algorithm, &linear_tree_algorithm,
    &recursive_doubling_algorithm, &ring_algorithm, &segmented_ring_algorithm,
    &rabenseifner_algorithm, &slt_algorithm, &prr_algorithm, &straggler_algorithm,
    &recursive_multiplying_algorithm, &ring_topology_algorithm, &smp_binomial_algorithm,
    &smp_butterfly_algorithm, &hr1_algorithm, &hr2_algorithm, &rs_halving_algorithm,
    &priority_rs_algorithm, &priority_rabenseifner_algorithm, &pap_hierarchical_algorithm,
    &canonical_scatter_algorithm, &canonical_gather_algorithm, &canonical_straggler_algorithm,
};

static const int32_t algorithm_total = (int32_t)(sizeof algorithms / sizeof algorithms[0]);

const algorithm_entry *registry_find(const char *name) {
    for (int32_t i = 0; i < algorithm_total; i++)
        if (strcmp(algorithms[i]->info.name, name) == 0) return algorithms[i];
    return NULL;
}

int registry_is_flat(const algorithm_entry *entry) {
    return !entry->info.needs_arrivals && !entry->info.needs_groups && !entry->info.reduce_scatter;
}

int32_t papcoll_algorithm_count(void) { return algorithm_total; }

int papcoll_algorithm_get(int32_t index, papcoll_algorithm_info *info) {
    if (index < 0 || index >= algorithm_total || info == NULL) return PAPCOLL_ERR_ARGUMENT;
    *info = algorithms[index]->info;
    return PAPCOLL_OK;
}

int papcoll_algorithm_find(const char *name, papcoll_algorithm_info *info) {
    const algorithm_entry *entry = name ? registry_find(name) : NULL;
    if (entry == NULL) return PAPCOLL_ERR_UNKNOWN_ALGORITHM;
    if (info != NULL) *info = entry->info;
    return PAPCOLL_OK;
}
