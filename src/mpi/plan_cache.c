/* plan_cache.c - see plan_cache.h. */
#include "plan_cache.h"

#include <string.h>

#include "recency.h"

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

/* A plan an operation in flight runs (executor_plan.users) is never dropped. */
static int plan_in_use(const void *context, int index) {
    const plan_cache *cache = context;
    return __atomic_load_n(&cache->plans[index].users, __ATOMIC_ACQUIRE) > 0;
}

executor_plan *plan_cache_free_slot(plan_cache *cache) {
    /* an empty slot first (one whose build failed keeps a recent stamp) */
    for (int i = 0; i < PLAN_CACHE_SIZE; i++)
        if (cache->plans[i].schedule == NULL) cache->last_used[i] = 0;
    int oldest = least_recently_used(&cache->last_used[0], sizeof cache->last_used[0],
                                     PLAN_CACHE_SIZE, plan_in_use, cache);
    if (oldest < 0) return NULL;
    executor_plan_release(&cache->plans[oldest]);
    cache->last_used[oldest] = ++cache->clock;
    return &cache->plans[oldest];
}

void plan_cache_clear(plan_cache *cache) {
    for (int i = 0; i < PLAN_CACHE_SIZE; i++) executor_plan_release(&cache->plans[i]);
}
