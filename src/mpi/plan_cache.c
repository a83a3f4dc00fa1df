/* plan_cache.c - see plan_cache.h. */
#include "plan_cache.h"

#include <string.h>

int plan_key_equal(const plan_key *a, const plan_key *b) {
    if (a->algorithm != b->algorithm || a->count != b->count || a->extent != b->extent ||
        a->keep_order != b->keep_order)
        return 0;
    if ((a->arrival_class == NULL) != (b->arrival_class == NULL)) return 0;
    if (a->arrival_class == NULL) return 1;
    return a->ranks == b->ranks &&
           memcmp(a->arrival_class, b->arrival_class, (size_t)a->ranks) == 0;
}

executor_plan *plan_cache_find(plan_cache *cache, const plan_key *key) {
    for (int i = 0; i < PLAN_CACHE_SIZE; i++) {
        executor_plan *plan = &cache->plans[i];
        if (plan->schedule != NULL && plan_key_equal(&plan->key, key)) {
            cache->last_used[i] = ++cache->clock;
            return plan;
        }
    }
    return NULL;
}

executor_plan *plan_cache_free_slot(plan_cache *cache) {
    int oldest = -1;
    for (int i = 0; i < PLAN_CACHE_SIZE; i++) {
        if (cache->plans[i].schedule == NULL) {
            oldest = i;
            break;
        }
        if (__atomic_load_n(&cache->plans[i].users, __ATOMIC_ACQUIRE) > 0) continue;
        if (oldest < 0 || cache->last_used[i] < cache->last_used[oldest]) oldest = i;
    }
    if (oldest < 0) return NULL;
    executor_plan_release(&cache->plans[oldest]);
    cache->last_used[oldest] = ++cache->clock;
    return &cache->plans[oldest];
}

void plan_cache_clear(plan_cache *cache) {
    for (int i = 0; i < PLAN_CACHE_SIZE; i++) executor_plan_release(&cache->plans[i]);
}
