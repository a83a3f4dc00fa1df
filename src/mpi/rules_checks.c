/* rules_checks.c - a rules file checked as a whole (rules.h): a rule the first-match order
 * hides, one that can never match and one whose algorithm cannot run what it matches are
 * refused when the communicator is made, naming the line. A rule that silently never
 * applies would leave the user believing a choice was forced that never is. */
#include <stdio.h>
#include <string.h>

#include "errors.h"
#include "rules.h"

static int count_range_covers(int has_outer, const rules_count_range *outer, int has_inner,
                              const rules_count_range *inner) {
    return !has_outer ||
           (has_inner && outer->low <= inner->low && outer->high >= inner->high);
}

/* Whether every call `later` matches, `earlier` matches too (so `later` never decides).
 * Sufficient, not necessary: it judges condition by condition. */
static int covers(const rule *earlier, const rule *later) {
    int commutative_covered =
        earlier->commutative == RULES_COMMUTATIVE_ANY ||
        earlier->commutative == later->commutative ||
        /* every predefined op commutes */
        (earlier->commutative == 1 && later->op >= 0);
    int lateness_covered = !earlier->has_lateness ||
                           (later->has_lateness && earlier->lateness_low <= later->lateness_low &&
                            earlier->lateness_high >= later->lateness_high);
    return count_range_covers(earlier->has_ranks, &earlier->ranks, later->has_ranks,
                              &later->ranks) &&
           count_range_covers(earlier->has_bytes, &earlier->bytes, later->has_bytes,
                              &later->bytes) &&
           (earlier->datatype[0] == '\0' || strcmp(earlier->datatype, later->datatype) == 0) &&
           (earlier->op == RULES_OP_ANY || earlier->op == later->op) && commutative_covered &&
           (earlier->arrival == RULES_ARRIVAL_ANY || earlier->arrival == later->arrival) &&
           (earlier->kind == RULES_KIND_ANY || earlier->kind == later->kind) &&
           lateness_covered;
}

/* A rule whose own conditions exclude each other. */
static int never_matches(const rules_set *rules, const rule *r, const char *caller) {
    if (r->op >= 0 && r->commutative == 0)
        return rules_fault(rules, r->line, caller, "the rule can never match: every "
                           "predefined op commutes, and it asks for \"commutative\": false");
    if (r->arrival == RULES_ARRIVAL_UNPREDICTED && r->has_lateness)
        return rules_fault(rules, r->line, caller, "the rule can never match: a call with "
                           "\"arrival\": \"unpredicted\" has no lateness to compare with "
                           "\"lateness_seconds\"");
    return MPI_SUCCESS;
}

/* Whether the rule's algorithm can run every call the rule matches, as far as the file can
 * tell (native:NAME is judged at rules_bind, a call's own limits at rules_decide). */
static int applies(const rules_set *rules, const rule *r, const char *caller) {
    if (r->target == RULES_TARGET_NATIVE && strcmp(r->algorithm, "native") != 0 &&
        r->kind != RULES_KIND_BLOCKING)
        return rules_fault(rules, r->line, caller, "'%s' sets the algorithm of the MPI "
                           "library's MPI_Allreduce, and this rule also matches non-blocking "
                           "or persistent calls, which run MPI_Iallreduce (it has none to "
                           "set): add \"call\": \"blocking\"", r->algorithm);
    if (r->target != RULES_TARGET_PAPCOLL || !r->entry->info.commutative_only)
        return MPI_SUCCESS;
    if (r->commutative == 1 || r->op >= 0) return MPI_SUCCESS;
    return rules_fault(rules, r->line, caller, "algorithm '%s' reorders operands, so it needs "
                       "a commutative op, and this rule also matches ops that are not (add "
                       "\"commutative\": true, or name a predefined \"op\")", r->algorithm);
}

int rules_check(const rules_set *rules, const char *caller) {
    for (int k = 0; k < rules->count; k++) {
        const rule *later = &rules->rules[k];
        int code = never_matches(rules, later, caller);
        if (code == MPI_SUCCESS) code = applies(rules, later, caller);
        if (code != MPI_SUCCESS) return code;
        for (int e = 0; e < k; e++) {
            const rule *earlier = &rules->rules[e];
            if (!covers(earlier, later)) continue;
            if (covers(later, earlier) && strcmp(earlier->algorithm, later->algorithm) != 0)
                return rules_fault(rules, later->line, caller, "the rule has the same "
                                   "conditions as the rule on line %d but names '%s' where "
                                   "that one names '%s': the two contradict", earlier->line,
                                   later->algorithm, earlier->algorithm);
            return rules_fault(rules, later->line, caller, "the rule can never apply: the "
                               "rule on line %d comes first and matches every call this one "
                               "matches (the first matching rule decides)", earlier->line);
        }
    }
    return MPI_SUCCESS;
}

int rules_bind(rules_set *rules, const native_variants *natives, const char *caller) {
    for (int k = 0; k < rules->count; k++) {
        rule *r = &rules->rules[k];
        if (r->target != RULES_TARGET_NATIVE) continue;
        r->native_variant = -1;
        for (int v = 0; v < natives->count; v++)
            if (strcmp(natives->names[v], r->algorithm) == 0) r->native_variant = v;
        if (r->native_variant >= 0) continue;
        char known[NATIVE_VARIANTS_MOST * 50] = "";
        size_t used = 0;
        for (int v = 0; v < natives->count && used < sizeof known; v++)
            used += (size_t)snprintf(known + used, sizeof known - used, "%s%s", v ? ", " : "",
                                     natives->names[v]);
        return rules_fault(rules, r->line, caller, "'%s' is not one of this communicator's "
                           "native variants (here: %s); PAPCOLL_NATIVE_VARIANTS names them, "
                           "and they run under MPICH below MPI_THREAD_MULTIPLE with the "
                           "automatic arrival source (docs/mpi.md)", r->algorithm, known);
    }
    return MPI_SUCCESS;
}
