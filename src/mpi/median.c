/* median.c - see median.h. */
#include "median.h"

#include <assert.h>

double median_of(const double *values, int count) {
    assert(count >= 0 && count <= MEDIAN_MOST_VALUES);
    if (count <= 0) return 0;
    if (count > MEDIAN_MOST_VALUES) count = MEDIAN_MOST_VALUES; /* never past the copy */
    double sorted[MEDIAN_MOST_VALUES];
    for (int i = 0; i < count; i++) { /* insertion sort: a few numbers */
        int at = i;
        for (; at > 0 && sorted[at - 1] > values[i]; at--) sorted[at] = sorted[at - 1];
        sorted[at] = values[i];
    }
    return count % 2 ? sorted[count / 2] : (sorted[count / 2 - 1] + sorted[count / 2]) / 2;
}
