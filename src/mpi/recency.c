/* recency.c - see recency.h. */
#include "recency.h"

int least_recently_used(const int64_t *first_stamp, size_t stride, int count,
                        int (*in_use)(const void *context, int index), const void *context) {
    int oldest = -1;
    int64_t oldest_stamp = 0;
    for (int i = 0; i < count; i++) {
        if (in_use != NULL && in_use(context, i)) continue;
        int64_t stamp = *(const int64_t *)(const void *)((const char *)first_stamp +
                                                          (size_t)i * stride);
        if (oldest < 0 || stamp < oldest_stamp) {
            oldest = i;
            oldest_stamp = stamp;
        }
    }
    return oldest;
}
