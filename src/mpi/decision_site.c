/* decision_site.c - see decision_site.h. */
#include "decision_site.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

int decision_site_init(decision_site *site, int32_t ranks) {
    memset(site, 0, sizeof *site);
    site->feedback = calloc(1, sizeof *site->feedback);
    site->classes = malloc((size_t)ranks);
    site->profile = malloc((size_t)ranks);
    site->class_arrivals = malloc((size_t)ranks * sizeof *site->class_arrivals);
    if (site->feedback == NULL || site->classes == NULL || site->profile == NULL ||
        site->class_arrivals == NULL)
        return MPI_ERR_NO_MEM;
    return choice_cache_init(&site->choices, ranks);
}

void decision_site_clear(decision_site *site) {
    choice_cache_clear(&site->choices);
    if (site->feedback != NULL) feedback_clear(site->feedback);
}

void decision_site_release(decision_site *site) {
    choice_cache_release(&site->choices);
    free(site->feedback);
    free(site->classes);
    free(site->profile);
    free(site->class_arrivals);
    memset(site, 0, sizeof *site);
}
