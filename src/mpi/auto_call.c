/* auto_call.c - see auto_call.h. The steps, each in its own file:
 *   1. the arrivals rounded to their class (arrival_class.c);
 *   2. the model's decision for the shape and class profile, kept or made by one rank and
 *      sent (choose.c, choice_sharing.c);
 *   3. the closed loop: the model's choice or its alternative, by what each was measured
 *      to take (auto_feedback.c), and where native runs, as which of the MPI library's
 *      algorithms (native_variants.h), by what each was measured to take for the shape
 *      (native_feedback.c);
 *   4. the call tagged, so that its measured time comes back to step 3 (monitor).
 */
#include "auto_call.h"

#include <string.h>

#include "arrival_class.h"
#include "choice_sharing.h"

int auto_choose_for_call(papcoll_comm *pc, int64_t count, int64_t extent, int commutative,
                         const rules_call *call, const double *arrivals, double tau,
                         int count_use, auto_choice *out) {
    choice_input input;
    memset(&input, 0, sizeof input);
    input.ranks = pc->size;
    input.count = count;
    input.extent = extent;
    input.commutative = commutative;
    input.parameters = &pc->parameters.parameters;
    input.calibrated = monitor_model(pc, &input.latency, &input.seconds_per_byte,
                                     &input.reduce_seconds_per_byte);
    int ruled = 0; /* a rule of the rules file decides before the model (rules.h) */
    int code = rules_decide(&pc->rules, call, &input, arrivals, tau * pc->size, out, &ruled);
    if (code != MPI_SUCCESS || ruled) return code;
    if (arrivals != NULL) {
        arrival_class_of(arrivals, pc->size, tau * pc->size, pc->call_classes,
                         pc->call_arrivals);
        input.arrival_class = pc->call_classes;
        input.profile = pc->call_profile;
        input.arrivals = pc->call_arrivals;
        input.tau = tau;
    }
    /* a call decides with every rank (choice_sharing.c); papcoll_resolve_algorithm, which
     * one rank may call alone, decides locally and leaves the cache as it is (choose.h) */
    double started = MPI_Wtime();
    if (count_use)
        code = choice_share(pc, &input, out);
    else if (!choice_cache_find(&input, &pc->choices, 0, out))
        choice_decide(&input, out);
    out->native_variant = 0;
    out->report.decision_seconds = MPI_Wtime() - started;
    if (code != MPI_SUCCESS || !monitor_measures_calls(pc)) return code;
    const monitor_call_tag *tags;
    const double *seconds;
    /* only a call, which every rank makes, takes the measurements: one rank's
     * papcoll_resolve_algorithm must leave its table as every other rank's */
    int measured = count_use ? monitor_take_observations(pc, &tags, &seconds) : 0;
    for (int k = 0; k < measured; k++)
        feedback_observe(&pc->feedback, tags[k].decision, tags[k].native, seconds[k]);
    int level = 0; /* the lateness level: the call's highest arrival class */
    for (int32_t r = 0; arrivals != NULL && r < pc->size; r++)
        if (pc->call_classes[r] > level) level = pc->call_classes[r];
    monitor_call_tag tag;
    tag.decision = feedback_decide(&pc->feedback, &input, level, &pc->natives, count_use, out,
                                   &tag.native);
    if (count_use) monitor_tag_call(pc, tag);
    return MPI_SUCCESS;
}
