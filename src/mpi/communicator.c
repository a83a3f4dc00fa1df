/* communicator.c - the papcoll communicator (include/papcoll.h): a private duplicate of the
 * user's communicator, the algorithm choice, the plans kept for reuse (plan_cache.h), and
 * papcoll_allreduce with MPI_Allreduce's semantics and argument checks. */
#define _POSIX_C_SOURCE 200809L /* sched_yield */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agreement.h"
#include "arrival_class.h"
#include "auto_call.h"
#include "call_arguments.h"
#include "config_agreement.h"
#include "environment.h"
#include "call_plan.h"
#include "internal.h"
#include "operation.h"
#include "operations.h"
#include "rank_groups.h"
#include "reproducible.h"
#include "select.h"

/* ---- life cycle ------------------------------------------------------------------------ */

void papcoll_config_init(papcoll_config *config) {
    memset(config, 0, sizeof *config);
    config->algorithm = "auto";
    config->arrival_source = PAPCOLL_ARRIVALS_AUTOMATIC;
    papcoll_tuning_defaults(&config->tuning);
}

/* auto's constants as they take effect: the config's, then PAPCOLL_TUNING's field by field,
 * checked (a bad value is refused naming the constant). */
static int read_tuning(papcoll_tuning *tuning) {
    char why[240];
    int status = papcoll_tuning_check(tuning, why, sizeof why);
    if (status != PAPCOLL_OK)
        return record_error(MPI_ERR_ARG, "papcoll_comm_create: config.tuning: %s", why);
    const char *text = getenv("PAPCOLL_TUNING");
    if (text == NULL || text[0] == '\0') return MPI_SUCCESS;
    status = papcoll_tuning_parse(text, tuning, why, sizeof why);
    if (status != PAPCOLL_OK)
        return record_error(MPI_ERR_ARG, "papcoll_comm_create: PAPCOLL_TUNING='%.80s': %s",
                            text, why);
    return MPI_SUCCESS;
}

static int valid_algorithm(const char *name) {
    return name != NULL && (strcmp(name, "auto") == 0 || registry_find(name) != NULL);
}

/* Refuses to change or free pc while its non-blocking calls are outstanding: their plans
 * and communicator are in use. */
static int check_idle(papcoll_comm *pc, const char *caller) {
    int32_t outstanding = __atomic_load_n(&pc->nonblocking_outstanding, __ATOMIC_ACQUIRE);
    if (outstanding == 0) return MPI_SUCCESS;
    return record_error(MPI_ERR_PENDING, "%s: %d non-blocking all-reduces on this "
                        "communicator are not completed yet; complete them first", caller,
                        (int)outstanding);
}

/* Checks parameters for pc's size and makes them pc's own copy; the next call builds anew. */
static int store_parameters(papcoll_comm *pc, const papcoll_parameters *parameters,
                            const char *caller) {
    char error[240];
    int code = check_idle(pc, caller); /* before anything changes */
    if (code != MPI_SUCCESS) return code;
    /* a persistent request keeps the parameters it was made with (as MPI's keeps its
     * arguments): its cached plans would, and a plan built later would not */
    int32_t persistent = __atomic_load_n(&pc->persistent_alive, __ATOMIC_ACQUIRE);
    if (persistent > 0)
        return record_error(MPI_ERR_PENDING, "%s: %d persistent all-reduces of this "
                            "communicator are not freed, and keep the parameters they were "
                            "made with; free them first (papcoll_persistent_free)", caller,
                            (int)persistent);
    int status = papcoll_parameters_check(parameters, pc->size, error, sizeof error);
    if (status == PAPCOLL_OK) status = owned_parameters_set(&pc->parameters, parameters, pc->size);
    if (status == PAPCOLL_ERR_NO_MEMORY)
        return record_error(MPI_ERR_NO_MEM, "%s: out of memory", caller);
    if (status != PAPCOLL_OK) return record_error(MPI_ERR_ARG, "%s: %s", caller, error);
    plan_cache_clear(&pc->plans);
    plan_cache_clear(&pc->nonblocking_plans);
    decision_site_clear(&pc->decisions);
    memset(pc->reproducible_choices, 0, sizeof pc->reproducible_choices);
    return MPI_SUCCESS;
}

static void release_communicator(papcoll_comm *pc) {
    if (pc->progress_thread) progress_thread_release();
    if (pc->nonblocking_comm != MPI_COMM_NULL && !pc->shares_tag_space)
        MPI_Comm_free(&pc->nonblocking_comm);
    free(pc->groups);
    free(pc->call_classes);
    free(pc->call_arrivals);
    decision_site_release(&pc->decisions);
    rules_release(&pc->rules);
    native_variants_close(&pc->natives);
    owned_parameters_release(&pc->parameters);
    if (pc->comm != MPI_COMM_NULL) MPI_Comm_free(&pc->comm);
    free(pc);
}

/* Whether this rank asks for the agreement check (agreement.c): the config or
 * PAPCOLL_CHECK=1. One rank asking turns it on for all (SETTING_ANY_RANK), since it adds a
 * collective to every call. */
static int read_checking(const papcoll_config *config, int *asked) {
    int on = 0;
    if (papcoll_environment_switch("PAPCOLL_CHECK", &on) != MPI_SUCCESS) {
        char why[160];
        snprintf(why, sizeof why, "%s", papcoll_error_string(MPI_ERR_ARG));
        return record_error(MPI_ERR_ARG, "papcoll_comm_create: %s", why);
    }
    *asked = config->check_agreement != 0 || on;
    return MPI_SUCCESS;
}

/* PAPCOLL_TAG_LIMIT, read before the agreement: the tag counter hands out ranges below it,
 * so ranks with different limits would tag the same post differently and never match. 0:
 * unset. Only ever lowers MPI_TAG_UB: the tests set 32767, the least MPI allows, under MPICH. */
static int read_tag_limit(long *limit) {
    int64_t value = 0;
    int set = 0;
    int code = environment_read("PAPCOLL_TAG_LIMIT", "papcoll_comm_create", &value, &set);
    *limit = set ? (long)value : 0; /* the table's range: SCHED_MAX_TAG .. INT32_MAX */
    return code;
}

/* Who advances non-blocking calls: the config, or PAPCOLL_PROGRESS=calls|thread (its
 * words in the order of papcoll_progress). */
static int read_progress(papcoll_progress *progress) {
    int64_t value = 0;
    int set = 0;
    int code = environment_read("PAPCOLL_PROGRESS", "papcoll_comm_create", &value, &set);
    if (set) *progress = value == 1 ? PAPCOLL_PROGRESS_THREAD : PAPCOLL_PROGRESS_CALLS;
    return code;
}

/* PAPCOLL_PROGRESS_CPU pins the progress thread: checked here, by the rank alone before the
 * ranks compare (a core outside this rank's affinity mask is this rank's refusal), and
 * refused where this communicator runs without the thread, where it was silently ignored.
 * progress_thread_acquire reads it again to pin the thread. */
static int read_progress_cpu(papcoll_progress progress) {
    int64_t core = 0;
    int set = 0;
    int code = environment_read("PAPCOLL_PROGRESS_CPU", "papcoll_comm_create", &core, &set);
    if (code != MPI_SUCCESS || !set || progress == PAPCOLL_PROGRESS_THREAD) return code;
    return record_error(MPI_ERR_ARG, "papcoll_comm_create: PAPCOLL_PROGRESS_CPU='%lld' pins "
                        "the progress thread, and this communicator runs without it "
                        "(PAPCOLL_PROGRESS or config.progress is calls); ask for the thread, "
                        "or leave PAPCOLL_PROGRESS_CPU unset", (long long)core);
}

/* The non-blocking and persistent calls' tags (tag_counter.c), and the progress thread
 * where asked for (progress.c).
 *
 * Why the private communicator's tag space is shared: each communicator costs the MPI a
 * context id, of which MPICH has 2048 in all, and papcoll once made three for each of the
 * program's, and one more per persistent request. Where MPI_TAG_UB leaves room, pc->comm
 * alone carries everything: tags 0 .. SCHED_MAX_TAG the blocking calls' schedules, the next
 * SCHED_MAX_TAG + 1 the monitor's messages (monitor.c), the rest the counter's. Point-to-point
 * messages match by tag, and papcoll's collectives on pc->comm run on the calling thread in
 * the same order on every rank. Where it does not (MPI_TAG_UB = 32767, the least MPI
 * allows), the non-blocking calls and the monitor each get a duplicate, and persistent
 * requests one each. tag_limit (PAPCOLL_TAG_LIMIT, 0: none) lowers MPI_TAG_UB.
 * Collective (the duplicate, where one is made). */
static int prepare_nonblocking(papcoll_comm *pc, long tag_limit) {
    int *tag_upper_bound = NULL, found = 0;
    MPI_Comm_get_attr(pc->comm, MPI_TAG_UB, &tag_upper_bound, &found);
    long long highest = found ? (long long)*tag_upper_bound : SCHED_MAX_TAG;
    if (tag_limit > 0 && tag_limit < highest) highest = tag_limit;
    pc->shares_tag_space = highest + 1 >= 3LL * (SCHED_MAX_TAG + 1);
    int32_t first = 0;
    if (pc->shares_tag_space) {
        pc->nonblocking_comm = pc->comm;
        first = 2 * (SCHED_MAX_TAG + 1);
    } else {
        int code = MPI_Comm_dup(pc->comm, &pc->nonblocking_comm);
        if (code != MPI_SUCCESS) {
            pc->nonblocking_comm = MPI_COMM_NULL;
            return record_error(code, "papcoll_comm_create: MPI_Comm_dup failed "
                                      "(non-blocking)");
        }
        MPI_Comm_set_errhandler(pc->nonblocking_comm, MPI_ERRORS_RETURN);
    }
    tag_counter_prepare(&pc->tags, first, (int32_t)highest);
    if (pc->config.progress != PAPCOLL_PROGRESS_CALLS &&
        pc->config.progress != PAPCOLL_PROGRESS_THREAD)
        return record_error(MPI_ERR_ARG, "papcoll_comm_create: progress %d is neither "
                            "PAPCOLL_PROGRESS_CALLS nor PAPCOLL_PROGRESS_THREAD",
                            (int)pc->config.progress);
    int code = read_progress(&pc->config.progress);
    if (code != MPI_SUCCESS) return code;
    if (pc->config.progress != PAPCOLL_PROGRESS_THREAD) return MPI_SUCCESS;
    int provided = MPI_THREAD_SINGLE;
    MPI_Query_thread(&provided);
    if (provided != MPI_THREAD_MULTIPLE)
        return record_error(MPI_ERR_OTHER, "papcoll_comm_create: the progress thread "
                            "(PAPCOLL_PROGRESS=thread) calls MPI beside the program, which "
                            "needs MPI_THREAD_MULTIPLE; initialise MPI with MPI_Init_thread "
                            "asking for it, or use PAPCOLL_PROGRESS=calls");
    if ((code = progress_thread_acquire()) != MPI_SUCCESS) return code;
    pc->progress_thread = 1;
    return MPI_SUCCESS;
}

/* This rank's own checks of its config (for a communicator of `ranks`): MPI_SUCCESS, or the
 * error (recorded). Everything a rank may refuse alone is here, before the ranks compare
 * (config_agreement.c): a refusal after the duplicate would leave the others in its
 * collectives. */
static int config_refusal(const papcoll_config *config, const char *algorithm, int ranks) {
    if (!valid_algorithm(algorithm)) return call_arguments_unknown_algorithm(algorithm);
    char error[240];
    if (papcoll_parameters_check(&config->parameters, ranks, error, sizeof error) != PAPCOLL_OK)
        return record_error(MPI_ERR_ARG, "papcoll_comm_create: %s", error);
    if (config->max_message_elements < 0)
        return record_error(MPI_ERR_ARG, "papcoll_comm_create: max_message_elements must not "
                                         "be negative");
    if (config->grouping != PAPCOLL_GROUPS_SHARED_MEMORY &&
        config->grouping != PAPCOLL_GROUPS_COLOR)
        return record_error(MPI_ERR_ARG, "papcoll_comm_create: grouping %d is neither "
                            "PAPCOLL_GROUPS_SHARED_MEMORY nor PAPCOLL_GROUPS_COLOR",
                            (int)config->grouping);
    if (config->arrival_source != PAPCOLL_ARRIVALS_EDGE &&
        config->arrival_source != PAPCOLL_ARRIVALS_HISTORY &&
        config->arrival_source != PAPCOLL_ARRIVALS_AUTOMATIC)
        return record_error(MPI_ERR_ARG,
                            "papcoll_comm_create: arrival_source %d is neither "
                            "PAPCOLL_ARRIVALS_EDGE, PAPCOLL_ARRIVALS_HISTORY nor "
                            "PAPCOLL_ARRIVALS_AUTOMATIC",
                            (int)config->arrival_source);
    return MPI_SUCCESS;
}

/* The rules file (rules.h): config.rules_file, else PAPCOLL_RULES; read and checked by this
 * rank alone, before the ranks compare its digest. Rules are auto's, outside reproducible
 * mode (whose auto picks among the order-keeping algorithms by a rule of its own). */
static int read_rules(const papcoll_config *config, const char *algorithm, rules_set *rules) {
    const char *path = config->rules_file;
    if (path == NULL || path[0] == '\0') path = getenv("PAPCOLL_RULES");
    int code = rules_load(rules, path, "papcoll_comm_create");
    if (code != MPI_SUCCESS || rules->path[0] == '\0') return code;
    if (strcmp(algorithm, "auto") != 0)
        return record_error(MPI_ERR_ARG, "papcoll_comm_create: the rules file '%s' is "
                            "auto's, and the algorithm is '%s'; use auto, or leave the "
                            "rules file out", rules->path, algorithm);
    return MPI_SUCCESS;
}

/* Once reproducible mode is settled (every rank alike): refused with a rules file. */
static int rules_outside_reproducible(const papcoll_comm *pc) {
    if (!pc->config.reproducible || pc->rules.path[0] == '\0') return MPI_SUCCESS;
    return record_error(MPI_ERR_ARG, "papcoll_comm_create: a rules file and reproducible mode "
                        "do not go together (there auto picks among the algorithms that keep "
                        "the canonical order); leave one out");
}

int papcoll_comm_create(MPI_Comm comm, const papcoll_config *config, papcoll_comm **out) {
    if (out == NULL) return record_error(MPI_ERR_ARG, "papcoll_comm_create: out is NULL");
    *out = NULL;
    if (comm == MPI_COMM_NULL)
        return record_error(MPI_ERR_COMM, "papcoll_comm_create: comm is MPI_COMM_NULL");
    papcoll_config defaults;
    papcoll_config_init(&defaults);
    if (config == NULL) config = &defaults;
    const char *algorithm = config->algorithm ? config->algorithm : "auto";
    /* the config as it takes effect, which is what the ranks must agree on */
    papcoll_config effective = *config;
    if (effective.max_message_elements == 0) effective.max_message_elements = 1 << 30;
    if (effective.max_message_elements > INT32_MAX) effective.max_message_elements = INT32_MAX;
    int ranks = 0;
    MPI_Comm_size(comm, &ranks);
    int refusal = config_refusal(config, algorithm, ranks);
    if (refusal == MPI_SUCCESS) refusal = read_progress(&effective.progress);
    if (refusal == MPI_SUCCESS) refusal = read_progress_cpu(effective.progress);
    if (refusal == MPI_SUCCESS) refusal = read_tuning(&effective.tuning);
    long tag_limit = 0;
    if (refusal == MPI_SUCCESS) refusal = read_tag_limit(&tag_limit);
    rules_set rules;
    memset(&rules, 0, sizeof rules);
    if (refusal == MPI_SUCCESS) refusal = read_rules(config, algorithm, &rules);
    int checking = 0, reproducible = 0, natives_named = 0;
    if (refusal == MPI_SUCCESS) refusal = read_checking(config, &checking);
    if (refusal == MPI_SUCCESS) refusal = reproducible_requested(config, &reproducible);
    native_variants natives;
    memset(&natives, 0, sizeof natives); /* closed below whatever happens */
    int64_t natives_digest = 0;
    if (refusal == MPI_SUCCESS)
        refusal = native_variants_choose(&natives, ranks,
                                         config->arrival_source == PAPCOLL_ARRIVALS_AUTOMATIC,
                                         &natives_digest, &natives_named);
    /* before anything else collective, in one reduction: a rank that refused, or a field
     * that differs, fails every rank here rather than hang one in what follows. Ranks with
     * different rules files would choose different algorithms for one call (a hang):
     * their contents must agree, not their paths. */
    enum { CHECKING = 3, NATIVES = 5, NATIVES_NAMED = 6 };
    agreed_setting settings[] = {
        {"PAPCOLL_TAG_LIMIT", tag_limit, SETTING_SAME, 0, 0},
        {"the rules file's contents (PAPCOLL_RULES or config.rules_file; 0: none)",
         rules.digest, SETTING_SAME, 0, 0},
        /* shifted: the comparison negates it, which must not overflow */
        {"the tuning constants' digest (config.tuning and PAPCOLL_TUNING)",
         (int64_t)(papcoll_tuning_digest(&effective.tuning) >> 2), SETTING_SAME, 0, 0},
        [CHECKING] = {"PAPCOLL_CHECK", checking, SETTING_ANY_RANK, 0, 0},
        {"reproducible mode (config.reproducible or PAPCOLL_REPRODUCIBLE; 0: off)",
         reproducible, SETTING_SAME, 0, 0},
        [NATIVES] = {"the native variants", natives_digest, SETTING_COMPARED, 0, 0},
        [NATIVES_NAMED] = {"PAPCOLL_NATIVE_VARIANTS named", natives_named, SETTING_ANY_RANK,
                           0, 0}};
    int code = config_agreement_check(comm, &effective, settings,
                                      (int)(sizeof settings / sizeof settings[0]),
                                      refusal != MPI_SUCCESS);
    if (refusal == MPI_SUCCESS) refusal = code;
    if (refusal == MPI_SUCCESS)
        refusal = native_variants_settle(&natives, settings[NATIVES].highest ==
                                                       settings[NATIVES].lowest,
                                         (int)settings[NATIVES_NAMED].value);
    papcoll_comm *pc = refusal == MPI_SUCCESS ? calloc(1, sizeof *pc) : NULL;
    if (pc == NULL) {
        rules_release(&rules);
        native_variants_close(&natives);
    }
    if (refusal != MPI_SUCCESS) return refusal;
    if (pc == NULL) return record_error(MPI_ERR_NO_MEM, "papcoll_comm_create: out of memory");
    pc->natives = natives;
    pc->rules = rules;
    pc->checked_datatype = MPI_DATATYPE_NULL;
    pc->nonblocking_plans.tags_alike = 1; /* posts' tag counts alike on every rank */
    pc->nonblocking_comm = MPI_COMM_NULL;
    pc->checked_op = MPI_OP_NULL;
    pc->config = effective;
    pc->config.check_agreement = (int)settings[CHECKING].value;
    pc->config.reproducible = reproducible;
    pc->config.algorithm = NULL; /* the name lives in pc->algorithm, not in caller memory */
    pc->config.rules_file = NULL; /* the rules live in pc->rules */
    memset(&pc->config.parameters, 0, sizeof pc->config.parameters); /* in pc->parameters */
    snprintf(pc->algorithm, sizeof pc->algorithm, "%s", algorithm);
    code = MPI_Comm_dup(comm, &pc->comm);
    if (code != MPI_SUCCESS) {
        rules_release(&pc->rules);
        native_variants_close(&pc->natives);
        free(pc);
        return record_error(code, "papcoll_comm_create: MPI_Comm_dup failed");
    }
    /* Errors come back to us as codes, whatever handler the user's communicator has. */
    MPI_Comm_set_errhandler(pc->comm, MPI_ERRORS_RETURN);
    MPI_Comm_size(pc->comm, &pc->size);
    MPI_Comm_rank(pc->comm, &pc->rank);
    pc->call_classes = malloc((size_t)pc->size);
    pc->call_arrivals = malloc((size_t)pc->size * sizeof *pc->call_arrivals);
    if (pc->call_classes == NULL || pc->call_arrivals == NULL ||
        decision_site_init(&pc->decisions, pc->size) != MPI_SUCCESS) {
        MPI_Comm_free(&pc->comm);
        release_communicator(pc);
        return record_error(MPI_ERR_NO_MEM, "papcoll_comm_create: out of memory");
    }
    if ((code = store_parameters(pc, &config->parameters, "papcoll_comm_create")) !=
            MPI_SUCCESS ||
        (code = rank_groups_compute(pc, config)) != MPI_SUCCESS) {
        release_communicator(pc);
        return code;
    }
    if ((code = rules_outside_reproducible(pc)) != MPI_SUCCESS ||
        (code = prepare_nonblocking(pc, tag_limit)) != MPI_SUCCESS ||
        (code = rules_bind(&pc->rules, &pc->natives, "papcoll_comm_create")) != MPI_SUCCESS ||
        (code = monitor_create(pc)) != MPI_SUCCESS) {
        release_communicator(pc);
        return code;
    }
    *out = pc;
    return MPI_SUCCESS;
}

int papcoll_comm_free(papcoll_comm **pc) {
    if (pc == NULL || *pc == NULL) return MPI_SUCCESS;
    int32_t persistent = __atomic_load_n(&(*pc)->persistent_alive, __ATOMIC_ACQUIRE);
    if (persistent > 0)
        return record_error(MPI_ERR_PENDING, "papcoll_comm_free: %d persistent all-reduces "
                            "of this communicator are not freed; free them first "
                            "(papcoll_persistent_free)", (int)persistent);
    /* Non-blocking all-reduces still running finish first, as MPI_Comm_free lets pending
     * operations complete: every rank frees the communicator (it is collective), so every
     * rank advances them here. Their requests stay valid (nothing of them needs pc). */
    while (__atomic_load_n(&(*pc)->nonblocking_outstanding, __ATOMIC_ACQUIRE) > 0) {
        papcoll_progress_poll();
        sched_yield();
    }
    int code;
    plan_cache_clear(&(*pc)->plans);
    plan_cache_clear(&(*pc)->nonblocking_plans);
    executor_workspace_release(&(*pc)->workspace);
    monitor_release(*pc);
    code = MPI_Comm_free(&(*pc)->comm);
    release_communicator(*pc); /* its comm is MPI_COMM_NULL now */
    *pc = NULL;
    return code;
}

int papcoll_set_algorithm(papcoll_comm *pc, const char *name) {
    if (pc == NULL) return record_error(MPI_ERR_ARG, "papcoll_set_algorithm: pc is NULL");
    if (!valid_algorithm(name)) return call_arguments_unknown_algorithm(name);
    snprintf(pc->algorithm, sizeof pc->algorithm, "%s", name);
    return MPI_SUCCESS;
}

const char *papcoll_get_algorithm(const papcoll_comm *pc) { return pc ? pc->algorithm : ""; }

int papcoll_set_schedule(papcoll_comm *pc, const char *schedule) {
    if (pc == NULL) return record_error(MPI_ERR_ARG, "papcoll_set_schedule: pc is NULL");
    papcoll_parameters parameters = pc->parameters.parameters;
    parameters.schedule = schedule;
    return store_parameters(pc, &parameters, "papcoll_set_schedule");
}


int papcoll_last_choice(const papcoll_comm *pc, papcoll_choice *choice) {
    if (pc == NULL || choice == NULL)
        return record_error(MPI_ERR_ARG, "papcoll_last_choice: pc or choice is NULL");
    *choice = pc->last_choice.report;
    return MPI_SUCCESS;
}

int papcoll_resolve_algorithm(papcoll_comm *pc, int64_t count, MPI_Datatype datatype, MPI_Op op,
                              const char **name) {
    int64_t extent;
    int commutative, code;
    if (pc == NULL || name == NULL)
        return record_error(MPI_ERR_ARG, "papcoll_resolve_algorithm: pc or name is NULL");
    if (count < 0)
        return record_error(MPI_ERR_COUNT, "papcoll_resolve_algorithm: count %lld is negative",
                            (long long)count);
    /* refused as the call would refuse it: a resolution names what a call would run */
    if ((code = call_arguments_datatype(datatype, &extent)) != MPI_SUCCESS ||
        (code = call_arguments_op(op, &commutative)) != MPI_SUCCESS ||
        (code = call_arguments_pair(pc, datatype, op, extent)) != MPI_SUCCESS)
        return code;
    if (!call_arguments_is_auto(pc)) { /* refused as the call would be, in reproducible mode */
        const algorithm_entry *set = registry_find(pc->algorithm);
        if ((code = reproducible_algorithm(pc, count, extent, datatype, op, &set)) !=
            MPI_SUCCESS)
            return code;
        *name = pc->algorithm;
        return MPI_SUCCESS;
    }
    const algorithm_entry *reproducing = NULL; /* auto in reproducible mode (reproducible.c) */
    if ((code = reproducible_algorithm(pc, count, extent, datatype, op, &reproducing)) !=
        MPI_SUCCESS)
        return code;
    if (reproducing != NULL) {
        *name = reproducing->info.name;
        return MPI_SUCCESS;
    }
    /* auto's question as a post would ask it: on the pattern the monitor learnt between
     * calls (auto_call.h) */
    auto_call call = {.kind = AUTO_CALL_ASKED, .count = count, .extent = extent,
                      .commutative = commutative, .datatype = datatype, .op = op};
    if (monitor_learnt_arrivals(pc, pc->call_arrivals)) {
        call.arrivals = pc->call_arrivals;
        call.tau = monitor_tau(pc, (double)((count + pc->size - 1) / pc->size) * (double)extent);
    }
    auto_choice decided;
    if ((code = auto_decide(pc, &call, &decided, NULL)) != MPI_SUCCESS) return code;
    *name = decided.algorithm ? decided.algorithm->info.name
                              : pc->natives.names[decided.native_variant];
    return MPI_SUCCESS;
}

/* Runs a plan on pc's duplicate communicator and workspace. */
static int run_plan(papcoll_comm *pc, const executor_plan *plan, const void *source,
                    void *recvbuf, MPI_Datatype datatype, MPI_Op op) {
    return executor_run_blocking(plan, &pc->workspace, pc->comm,
                                 pc->config.max_message_elements, source, recvbuf, datatype, op);
}

/* auto and the PAP-aware algorithms: gather the predicted arrivals (monitor.c), round them
 * to a class, then run what auto chooses, or the PAP-aware algorithm built for the class
 * (the plain ring where some rank had no usable prediction: every rank decides alike). */
static int run_with_arrivals(papcoll_comm *pc, const algorithm_entry *algorithm,
                             const void *sendbuf, void *recvbuf, int64_t count,
                             int64_t extent, int commutative, MPI_Datatype datatype,
                             MPI_Op op) {
    double entered = MPI_Wtime(); /* auto's own path starts: papcoll_choice.path_seconds */
    int64_t segment_elements = (count + pc->size - 1) / pc->size;
    const double *arrivals = NULL;
    double tau = 0;
    int usable = 0;
    int code = monitor_gather(pc, (double)segment_elements * (double)extent, &arrivals, &tau,
                              &usable);
    if (code != MPI_SUCCESS) return code;
    const void *source = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    int choosing = algorithm == NULL;
    if (choosing) { /* auto */
        auto_call call = {.kind = AUTO_CALL_BLOCKING, .count = count, .extent = extent,
                          .commutative = commutative, .datatype = datatype, .op = op,
                          .arrivals = usable ? arrivals : NULL, .tau = tau};
        code = auto_decide(pc, &call, &pc->last_choice, NULL);
        if (code != MPI_SUCCESS) return code;
        monitor_own_work_done(pc); /* a decision not cached traveled from its decider */
        algorithm = pc->last_choice.algorithm;
        pc->last_choice.report.path_seconds = MPI_Wtime() - entered;
        if (algorithm == NULL) {
            code = native_variants_allreduce(&pc->natives, pc->last_choice.native_variant,
                                             sendbuf, recvbuf, (int)count, datatype, op,
                                             pc->comm);
            if (code != MPI_SUCCESS)
                return record_error(code, "papcoll_allreduce: MPI_Allreduce (auto chose "
                                          "%s) failed", pc->last_choice.report.algorithm);
            return monitor_finish_call(pc);
        }
    }
    executor_plan *plan = NULL;
    code = call_plan_for_call(pc, &pc->plans, algorithm, count, extent, commutative,
                                      usable ? arrivals : NULL, tau, &plan);
    if (choosing) code = rules_explain_refusal(&pc->last_choice.report, code);
    if (choosing) pc->last_choice.report.path_seconds = MPI_Wtime() - entered;
    if (algorithm->info.needs_arrivals && usable && !(choosing && pc->last_choice.report.probe))
        monitor_call_built_on_arrivals(pc);
    if (code == MPI_SUCCESS) code = run_plan(pc, plan, source, recvbuf, datatype, op);
    if (code == MPI_SUCCESS) code = monitor_finish_call(pc);
    return code;
}

/* ---- all-reduce ------------------------------------------------------------------------ */

int papcoll_allreduce_c(papcoll_comm *pc, const void *sendbuf, void *recvbuf, MPI_Count count,
                        MPI_Datatype datatype, MPI_Op op) {
    if (pc == NULL) return record_error(MPI_ERR_ARG, "papcoll_allreduce: pc is NULL");
    /* this call's own work, none until the monitor does some (papcoll_last_own_seconds):
     * a call without a monitor, or one that fails, reports no earlier call's */
    pc->monitor.own_before_seconds = pc->monitor.own_after_seconds = 0;
    if (pc->workspace.spoiled) /* why: executor_abandon() in executor.c */
        return record_error(MPI_ERR_OTHER, "papcoll_allreduce: this communicator failed "
                            "during an earlier call, with messages in flight (%lld of them "
                            "MPI could not cancel); free it and create another",
                            (long long)pc->workspace.abandoned_requests);
    call_shape shape;
    int code = call_arguments_check_agreed(pc, sendbuf, recvbuf, count, datatype, op,
                                           "papcoll_allreduce", &shape);
    if (code != MPI_SUCCESS) return code;
    if (shape.algorithm == NULL || shape.algorithm->info.needs_arrivals)
        return run_with_arrivals(pc, shape.algorithm, sendbuf, recvbuf, count, shape.extent,
                                 shape.commutative, datatype, op);
    executor_plan *plan = NULL;
    if ((code = call_plan_for_call(pc, &pc->plans, shape.algorithm, count, shape.extent,
                                   shape.commutative, NULL, 0, &plan)) != MPI_SUCCESS)
        return code;
    const void *source = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    return run_plan(pc, plan, source, recvbuf, datatype, op);
}

int papcoll_allreduce(papcoll_comm *pc, const void *sendbuf, void *recvbuf, int count,
                      MPI_Datatype datatype, MPI_Op op) {
    return papcoll_allreduce_c(pc, sendbuf, recvbuf, (MPI_Count)count, datatype, op);
}
