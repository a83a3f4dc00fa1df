/* select.h - choosing an algorithm when the user asks for "auto" (select.c), and what it
 * knows of a call without simulating it (select_bounds.c). */
#ifndef PAPCOLL_SELECT_H
#define PAPCOLL_SELECT_H

#include "hidden.h"

/* exported (cmake/exports.map lets papcoll_* out) for tests/c/test_select.c alone, which
 * compares the decisions with and without the shortcuts and checks the bound */
#define select_choose papcoll_internal_select_choose
#define select_closed_form_seconds papcoll_internal_select_closed_form_seconds
#define select_post_wait_lower_bound papcoll_internal_select_post_wait_lower_bound

#include <stdint.h>

#include "papcoll_core.h"

/* The algorithm `auto` runs for this call; never one that needs a commutative op when
 * commutative is 0. */
const char *select_default_algorithm(int32_t ranks, int64_t count, int64_t elem_size,
                                     int commutative);

/* The flat algorithm auto's closed loop measures native against where the model named
 * nothing (src/mpi/choose.c): the fixed rule's, unless another of native's stand-ins is
 * faster by more than `share` in its closed form on `model` (a crossbar). */
const char *select_flat_alternative(int32_t ranks, int64_t count, int64_t elem_size,
                                    int commutative, const papcoll_sim_model *model,
                                    double share);

/* Whether name is one of native's stand-ins (recursive_doubling, rabenseifner, ring). */
int select_is_flat_stand_in(const char *name);

/* papcoll's flat algorithms the closed loop may measure as native's alternative, named
 * first (select.c says which and why) into out (3 at most); how many, 0 where named is
 * none of native's stand-ins. */
int select_flat_candidates(int32_t ranks, int64_t count, int64_t elem_size, int commutative,
                           const papcoll_sim_model *model, double share, const char *named,
                           const char **out);

/* What one decision did (select_choose): for tests and the sweep, which must see the work
 * a decision spends and whether its shortcuts fired. */
typedef struct select_trace {
    int64_t simulated_operations; /* operations in the schedules the decision simulated */
    int64_t built_operations;     /* operations built only to count them (estimates) */
    int64_t budget_operations;    /* what the decision allowed itself (0: no budget) */
    int32_t bound_settled;        /* 1: native was within the margin of the lower bound, so
                                     no candidate was simulated */
    int32_t closed_form_stand_ins;/* native's stand-ins taken from their closed forms */
    int32_t skipped_candidates;   /* candidates left out for the budget */
} select_trace;

/* papcoll_choose with its shortcuts (the lower bound, the budget, the closed forms)
 * switched on (1) or off (0: every candidate simulated up to the fixed cap, as before
 * them); trace may be NULL. Exported under papcoll_internal_ for the C tests. */
int select_choose(int32_t ranks, int64_t count, int32_t elem_size, int32_t commutative,
                  const papcoll_context *context, const papcoll_sim_model *model,
                  int shortcuts, papcoll_choice *choice, select_trace *trace);

/* select_bounds.c: the balanced e-bar of recursive_doubling, rabenseifner or ring on a
 * crossbar, in closed form */
double select_closed_form_seconds(const char *name, int32_t ranks, int64_t bytes,
                                  const papcoll_sim_model *model);
/* a lower bound, on a crossbar, of any algorithm's e-bar less the mean wait for the last
 * arrival */
double select_post_wait_lower_bound(int32_t ranks, int64_t bytes,
                                    const papcoll_sim_model *model);
/* P x the median operation count of ranks 0, P/2 and P-1's schedules (-1 where one does
 * not build); adds what it built to *built_operations */
PAPCOLL_HIDDEN int64_t select_estimated_operations(const char *name, int32_t ranks,
                                                   int64_t count, int32_t elem_size,
                                                   const papcoll_context *context,
                                                   int64_t *built_operations);

#endif
