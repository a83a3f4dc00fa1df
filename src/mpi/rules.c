/* rules.c - a call matched against a rules file (rules.h): the first rule whose every
 * condition holds decides, before auto's cost model. Every input is the same on every rank
 * (the shape, the gathered arrivals, the file, which papcoll_comm_create compares), so every
 * rank picks the same rule without a message. */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "arrival_class.h"
#include "errors.h"
#include "mpi_features.h"
#include "operations.h"
#include "rules.h"
#include "tuning.h"

static const char *const arrival_names[] = {"", "unpredicted", "balanced", "one_late",
                                            "several_late"};

const char *rules_arrival_name(int arrival) {
    if (arrival < RULES_ARRIVAL_ANY || arrival > RULES_ARRIVAL_SEVERAL_LATE) return "";
    return arrival_names[arrival];
}

static const char *const kind_names[] = {"", "blocking", "nonblocking", "persistent"};

const char *rules_kind_name(int kind) {
    if (kind < RULES_KIND_ANY || kind > RULES_KIND_PERSISTENT) return "";
    return kind_names[kind];
}

rules_arrival rules_arrival_of(const double *arrivals, int32_t ranks, double unit,
                               double jitter, double *lateness) {
    *lateness = 0;
    if (arrivals == NULL) return RULES_ARRIVAL_UNPREDICTED;
    /* a class 0 rank is on time (arrival_class.h) */
    double on_time = arrival_on_time(unit, jitter);
    int32_t late = 0;
    for (int32_t r = 0; r < ranks; r++) {
        if (arrivals[r] >= on_time) late++;
        if (arrivals[r] > *lateness) *lateness = arrivals[r];
    }
    return late == 0 ? RULES_ARRIVAL_BALANCED
                     : late == 1 ? RULES_ARRIVAL_ONE_LATE : RULES_ARRIVAL_SEVERAL_LATE;
}

/* A table built on each call, not a static one: the handles need not be compile-time
 * constants (in Open MPI they are addresses of library objects). */
int rules_datatype_canonical(const char *name, char canonical[MPI_MAX_OBJECT_NAME]) {
    const struct {
        const char *name;
        MPI_Datatype handle;
    } predefined[] = {
#define PREDEFINED(type) {#type, type}
        PREDEFINED(MPI_CHAR), PREDEFINED(MPI_SIGNED_CHAR), PREDEFINED(MPI_UNSIGNED_CHAR),
        PREDEFINED(MPI_BYTE), PREDEFINED(MPI_SHORT), PREDEFINED(MPI_UNSIGNED_SHORT),
        PREDEFINED(MPI_INT), PREDEFINED(MPI_UNSIGNED), PREDEFINED(MPI_LONG),
        PREDEFINED(MPI_UNSIGNED_LONG), PREDEFINED(MPI_LONG_LONG), PREDEFINED(MPI_LONG_LONG_INT),
        PREDEFINED(MPI_UNSIGNED_LONG_LONG), PREDEFINED(MPI_FLOAT), PREDEFINED(MPI_DOUBLE),
        PREDEFINED(MPI_LONG_DOUBLE), PREDEFINED(MPI_WCHAR), PREDEFINED(MPI_C_BOOL),
        PREDEFINED(MPI_INT8_T), PREDEFINED(MPI_INT16_T), PREDEFINED(MPI_INT32_T),
        PREDEFINED(MPI_INT64_T), PREDEFINED(MPI_UINT8_T), PREDEFINED(MPI_UINT16_T),
        PREDEFINED(MPI_UINT32_T), PREDEFINED(MPI_UINT64_T), PREDEFINED(MPI_AINT),
        PREDEFINED(MPI_OFFSET), PREDEFINED(MPI_COUNT), PREDEFINED(MPI_C_COMPLEX),
        PREDEFINED(MPI_C_FLOAT_COMPLEX), PREDEFINED(MPI_C_DOUBLE_COMPLEX),
        PREDEFINED(MPI_C_LONG_DOUBLE_COMPLEX), PREDEFINED(MPI_FLOAT_INT),
        PREDEFINED(MPI_DOUBLE_INT), PREDEFINED(MPI_LONG_INT), PREDEFINED(MPI_2INT),
        PREDEFINED(MPI_SHORT_INT), PREDEFINED(MPI_LONG_DOUBLE_INT)
#undef PREDEFINED
    };
    for (size_t k = 0; k < sizeof predefined / sizeof predefined[0]; k++) {
        int length = 0;
        if (strcmp(predefined[k].name, name) == 0 && predefined[k].handle != MPI_DATATYPE_NULL)
            return MPI_Type_get_name(predefined[k].handle, canonical, &length) == MPI_SUCCESS;
    }
    return 0;
}

int rules_fault(const rules_set *rules, int line, const char *caller, const char *format, ...) {
    char message[480];
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(message, sizeof message, format, arguments);
    va_end(arguments);
    return record_error(MPI_ERR_ARG, "%s: rules file '%s', line %d: %s", caller, rules->path,
                        line, message);
}

/* The datatype's name where it is predefined (named), "" otherwise: a derived datatype may
 * carry a name the program gave it, which is no predefined type's. */
static void datatype_name(MPI_Datatype datatype, char name[MPI_MAX_OBJECT_NAME]) {
    int integers, addresses, datatypes, combiner, length = 0;
    name[0] = '\0';
    if (MPI_Type_get_envelope(datatype, &integers, &addresses, &datatypes, &combiner) ==
            MPI_SUCCESS &&
        combiner == MPI_COMBINER_NAMED)
        MPI_Type_get_name(datatype, name, &length);
}

static int in_count_range(int has, const rules_count_range *range, int64_t value) {
    return !has || (value >= range->low && value < range->high);
}

typedef struct call_facts {
    int64_t bytes;
    char datatype[MPI_MAX_OBJECT_NAME];
    int op; /* RULES_OP_USER or the predefined index */
    rules_arrival arrival;
    double lateness;
} call_facts;

static int matches(const rule *r, const rules_call *call, const choice_input *input,
                   const call_facts *facts) {
    return (r->kind == RULES_KIND_ANY || r->kind == call->kind) &&
           in_count_range(r->has_ranks, &r->ranks, input->ranks) &&
           in_count_range(r->has_bytes, &r->bytes, facts->bytes) &&
           (r->datatype[0] == '\0' || strcmp(r->datatype, facts->datatype) == 0) &&
           (r->op == RULES_OP_ANY || r->op == facts->op) &&
           (r->commutative == RULES_COMMUTATIVE_ANY || r->commutative == input->commutative) &&
           (r->arrival == RULES_ARRIVAL_ANY || r->arrival == facts->arrival) &&
           /* a lateness condition holds only where there is a prediction to compare */
           (!r->has_lateness || (facts->arrival != RULES_ARRIVAL_UNPREDICTED &&
                                 facts->lateness >= r->lateness_low &&
                                 facts->lateness < r->lateness_high));
}

/* Whether r's algorithm can run this call: MPI_SUCCESS, or the error naming the rule. */
static int runnable(const rules_set *rules, const rule *r, const rules_call *call,
                    const choice_input *input) {
    const char *caller = "papcoll (a call that a rule decides)";
    /* rules_check refuses such rules; kept for defence in depth */
    if (r->target == RULES_TARGET_NATIVE && r->native_variant > 0 &&
        call->kind != RULES_KIND_BLOCKING)
        return rules_fault(rules, r->line, caller, "the rule names '%s', one of the MPI "
                           "library's MPI_Allreduce algorithms, and matched a %s call, which "
                           "runs MPI_Iallreduce (it has no variants to set)", r->algorithm,
                           rules_kind_name(call->kind));
    if (r->target == RULES_TARGET_NATIVE && !PAPCOLL_NONBLOCKING_NATIVE &&
        call->kind != RULES_KIND_BLOCKING)
        return rules_fault(rules, r->line, caller, "the rule names '%s' and matched a %s call; "
                           "in SMPI papcoll never runs MPI_Iallreduce, whose ranks' results "
                           "differ (docs/smpi.md)", r->algorithm, rules_kind_name(call->kind));
    /* MPI 4's large-count twins run posts and persistent starts (MPI_Iallreduce_c,
     * MPI_Allreduce_init_c); a blocking call's native is MPI_Allreduce's int count */
    int large_counts_run = MPI_VERSION >= 4 && call->kind != RULES_KIND_BLOCKING;
    if (r->target == RULES_TARGET_NATIVE && input->count > INT_MAX && !large_counts_run)
        return rules_fault(rules, r->line, caller, "the rule names '%s', and MPI's all-reduce "
                           "takes at most INT_MAX elements; this call has %lld",
                           r->algorithm, (long long)input->count);
    if (r->target == RULES_TARGET_PAPCOLL && r->entry->info.commutative_only &&
        !input->commutative) /* rules_check refuses such rules; kept for defence in depth */
        return rules_fault(rules, r->line, caller, "algorithm '%s' needs a commutative op; "
                           "this call's op is not", r->algorithm);
    return MPI_SUCCESS;
}

int rules_explain_refusal(const papcoll_choice *choice, int code) {
    if (code == MPI_SUCCESS || choice->rule[0] == '\0') return code;
    char refusal[400];
    snprintf(refusal, sizeof refusal, "%s", papcoll_error_string(code));
    return record_error(code, "papcoll: the rule at %s chose '%s', which cannot run this "
                        "call: %s", choice->rule, choice->algorithm, refusal);
}

/* "PATH:LINE", the path shortened from the left to fit papcoll_choice.rule. */
static void describe_rule(const rules_set *rules, const rule *r, char *text, size_t size) {
    char line[24];
    snprintf(line, sizeof line, ":%d", r->line);
    size_t path_length = strlen(rules->path), room = size - 1 - strlen(line);
    const char *path = rules->path;
    if (path_length > room) path += path_length - room;
    size_t kept = strlen(path); /* at most room */
    memcpy(text, path, kept);
    snprintf(text + kept, size - kept, "%s", line);
}

int rules_decide(const rules_set *rules, const rules_call *call, const choice_input *input,
                 const double *arrivals, double unit, auto_choice *out, int *decided) {
    *decided = 0;
    if (rules->count == 0) return MPI_SUCCESS;
    call_facts facts;
    facts.bytes = input->count * input->extent;
    datatype_name(call->datatype, facts.datatype);
    int op_index = predefined_op_index(call->op);
    facts.op = op_index >= 0 ? op_index : RULES_OP_USER;
    facts.arrival = rules_arrival_of(arrivals, input->ranks, unit,
                                     tuning_in_force(input->tuning).arrival_jitter_seconds,
                                     &facts.lateness);
    const rule *found = NULL;
    for (int k = 0; k < rules->count && found == NULL; k++)
        if (matches(&rules->rules[k], call, input, &facts)) found = &rules->rules[k];
    if (found == NULL || found->target == RULES_TARGET_AUTO) return MPI_SUCCESS;
    int code = runnable(rules, found, call, input);
    if (code != MPI_SUCCESS) return code;
    memset(out, 0, sizeof *out);
    out->algorithm = found->entry; /* NULL: native */
    out->native_variant = found->target == RULES_TARGET_NATIVE ? found->native_variant : 0;
    snprintf(out->report.algorithm, sizeof out->report.algorithm, "%s", found->algorithm);
    out->report.from_arrivals = arrivals != NULL;
    out->report.decided_by = -1;
    describe_rule(rules, found, out->report.rule, sizeof out->report.rule);
    *decided = 1;
    return MPI_SUCCESS;
}
