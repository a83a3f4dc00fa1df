/* auto_call.c - see auto_call.h. The steps, each in its own file:
 *   0. a rule of the rules file, where one matches (rules.c): then nothing below;
 *   1. the arrivals rounded to their class (arrival_class.c);
 *   2. the model's decision for the shape and class profile, kept in the site's cache or
 *      made now: by one rank and sent (choice_sharing.c) in a blocking call, locally
 *      otherwise (choose.c);
 *   3. the closed loop: the model's choice or its alternative, by what each was measured
 *      to take (auto_feedback.c), and where native runs in a blocking call, as which of
 *      the MPI library's algorithms (native_variants.h), by what each was measured to take
 *      for the shape (native_feedback.c);
 *   4. the call tagged, so that its measured time comes back to step 3.
 */
#include "auto_call.h"

#include <limits.h>
#include <string.h>

#include "arrival_class.h"
#include "choice_sharing.h"
#include "mpi_features.h"

/* What native runs as in a post or start: MPI_Iallreduce, whose algorithm papcoll cannot
 * choose (the MPI_T variables native_variants.h sets are the blocking call's). */
static const native_variants default_only = {.count = 1, .names = {"native"}};

/* The call kind a rule names (rules.h); papcoll_resolve_algorithm asks as a blocking call
 * would, as it always has (docs/rules.md). */
static rules_kind rules_kind_of(auto_call_kind kind) {
    return kind == AUTO_CALL_POSTED    ? RULES_KIND_NONBLOCKING
           : kind == AUTO_CALL_STARTED ? RULES_KIND_PERSISTENT
                                       : RULES_KIND_BLOCKING;
}

/* The model's decision (step 2). */
static int model_decision(papcoll_comm *pc, const auto_call *call, decision_site *site,
                          const choice_input *input, auto_choice *out) {
    switch (call->kind) {
    case AUTO_CALL_BLOCKING:
        return choice_share(pc, &site->choices, input, out);
    case AUTO_CALL_ASKED: /* one rank may ask alone: every rank's cache must stay alike */
        if (choice_cache_find(input, &site->choices, 0, out)) return MPI_SUCCESS;
        choice_decide(input, out);
        out->report.decided_by = pc->rank;
        return MPI_SUCCESS;
    case AUTO_CALL_POSTED:
    case AUTO_CALL_STARTED:
        if (choice_cache_find(input, &site->choices, 1, out)) return MPI_SUCCESS;
        choice_decide(input, out); /* the same input on every rank: the same decision */
        out->report.decided_by = pc->rank; /* each rank simulated for itself */
        choice_cache_keep(input, &site->choices, out);
        return MPI_SUCCESS;
    }
    return MPI_ERR_INTERN;
}

int auto_decide(papcoll_comm *pc, const auto_call *call, auto_choice *out,
                monitor_call_tag *tag) {
    decision_site *site = call->site != NULL ? call->site : &pc->decisions;
    if (tag != NULL) *tag = MONITOR_NO_TAG;
    choice_input input;
    memset(&input, 0, sizeof input);
    input.ranks = pc->size;
    input.count = call->count;
    input.extent = call->extent;
    input.commutative = call->commutative;
    input.native_runs = call->count <= INT_MAX &&
                        (PAPCOLL_NONBLOCKING_NATIVE || call->kind == AUTO_CALL_BLOCKING ||
                         call->kind == AUTO_CALL_ASKED);
    input.parameters = &pc->parameters.parameters;
    input.tuning = &pc->config.tuning;
    input.calibrated = monitor_model(pc, &input.latency, &input.seconds_per_byte,
                                     &input.reduce_seconds_per_byte);
    /* a rule of the rules file decides before the model (rules.h), on the raw predicted
     * lateness: before the arrivals are rounded to their class */
    rules_call question = {call->datatype, call->op, rules_kind_of(call->kind)};
    int ruled = 0;
    int code = rules_decide(&pc->rules, &question, &input, call->arrivals,
                            arrival_unit(call->tau), out, &ruled);
    if (code != MPI_SUCCESS || ruled) return code;
    if (call->arrivals != NULL) {
        arrival_class_of(call->arrivals, pc->size, arrival_unit(call->tau),
                         pc->config.tuning.arrival_jitter_seconds, site->classes,
                         site->class_arrivals);
        input.arrival_class = site->classes;
        input.profile = site->profile;
        input.arrivals = site->class_arrivals;
        input.tau = call->tau;
    }
    double started = MPI_Wtime();
    code = model_decision(pc, call, site, &input, out);
    out->native_variant = 0;
    out->report.decision_seconds = MPI_Wtime() - started;
    if (code != MPI_SUCCESS) return code;
    /* the closed loop (step 3): who measures, and so who may count uses and probe */
    int counts_use = 0;
    if (call->kind == AUTO_CALL_BLOCKING && monitor_measures_calls(pc)) {
        const monitor_call_tag *tags;
        const double *seconds;
        int measured = monitor_take_observations(pc, &tags, &seconds);
        for (int k = 0; k < measured; k++)
            feedback_observe(site->feedback, tags[k].decision, tags[k].native, seconds[k]);
        counts_use = 1;
    } else if (call->kind == AUTO_CALL_STARTED) {
        for (int k = 0; k < call->observed_count; k++)
            feedback_observe(site->feedback, call->observed_tags[k].decision,
                             call->observed_tags[k].native, call->observed_seconds[k]);
        counts_use = call->measured;
    }
    int level = 0; /* the lateness level: the call's highest arrival class */
    for (int32_t r = 0; call->arrivals != NULL && r < pc->size; r++)
        if (site->classes[r] > level) level = site->classes[r];
    const native_variants *natives =
        call->kind == AUTO_CALL_BLOCKING || call->kind == AUTO_CALL_ASKED ? &pc->natives
                                                                          : &default_only;
    monitor_call_tag decided;
    decided.decision = feedback_decide(site->feedback, &input, level, natives, counts_use,
                                       out, &decided.native);
    if (out->algorithm == NULL && natives == &default_only) {
        out->native_variant = 0;
        strcpy(out->report.algorithm, "native");
    }
    if (call->kind == AUTO_CALL_BLOCKING && counts_use) monitor_tag_call(pc, decided);
    if (tag != NULL) *tag = decided;
    return MPI_SUCCESS;
}
