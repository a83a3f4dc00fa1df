/* reproducible.c - see reproducible.h. Where the choice is written down: docs/reproducible.md
 * defines the canonical order; the algorithms that keep it say so (papcoll_algorithm_info.
 * canonical_order) and the verifier proves it per schedule (tests/c/test_algorithms.c). */
#include "reproducible.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"

int papcoll_reproducible_requested(int *on) {
    return papcoll_environment_switch("PAPCOLL_REPRODUCIBLE", on);
}

int reproducible_requested(const papcoll_config *config, int *mine) {
    *mine = config->reproducible != 0;
    const char *text = getenv("PAPCOLL_REPRODUCIBLE");
    if (text == NULL || text[0] == '\0') return MPI_SUCCESS;
    int value = 0;
    if (papcoll_reproducible_requested(&value) != MPI_SUCCESS)
        return record_error(MPI_ERR_ARG, "papcoll_comm_create: PAPCOLL_REPRODUCIBLE='%.32s' "
                            "is not 1/0, true/false, yes/no or on/off", text);
    *mine = value;
    return MPI_SUCCESS;
}

static int is_integer_type(MPI_Datatype datatype) {
    const MPI_Datatype integers[] = {
        MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_BYTE, MPI_SHORT, MPI_UNSIGNED_SHORT,
        MPI_INT, MPI_UNSIGNED, MPI_LONG, MPI_UNSIGNED_LONG, MPI_LONG_LONG, MPI_LONG_LONG_INT,
        MPI_UNSIGNED_LONG_LONG, MPI_INT8_T, MPI_INT16_T, MPI_INT32_T, MPI_INT64_T,
        MPI_UINT8_T, MPI_UINT16_T, MPI_UINT32_T, MPI_UINT64_T, MPI_AINT, MPI_OFFSET,
        MPI_COUNT, MPI_WCHAR, MPI_C_BOOL};
    for (size_t i = 0; i < sizeof integers / sizeof integers[0]; i++)
        if (datatype == integers[i]) return 1;
    return 0;
}

int papcoll_order_matters(MPI_Datatype datatype, MPI_Op op) {
    if (op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR || op == MPI_LAND ||
        op == MPI_LOR || op == MPI_LXOR)
        return 0;
    if (op == MPI_MINLOC || op == MPI_MAXLOC) /* a tie of -0.0 and +0.0 keeps either value */
        return !(datatype == MPI_2INT || datatype == MPI_SHORT_INT || datatype == MPI_LONG_INT);
    if (op == MPI_SUM || op == MPI_PROD || op == MPI_MIN || op == MPI_MAX)
        return !is_integer_type(datatype);
    return 1; /* a user-defined op: nothing is known of it */
}

/* Before the monitor has a model (no call has measured one, and no PAPCOLL_TAU_MODEL):
 * canonical_gather while its copies of the vector to the other P - 1 ranks fit in 64 KiB,
 * where one round beats the two phases of the others (parts/arrival_order.h draws the same
 * line for the latency-bound vectors of the late-rank schedules); canonical_straggler above.
 * With a model: the least predicted e-bar among the algorithms that keep the order, on
 * balanced arrivals (papcoll_choose_reproducible, src/core/select_canonical.c), kept per
 * vector size. The decision is made where the call's arguments are checked, before the
 * arrivals are gathered, so the arrivals cannot weigh in it; canonical_straggler, where
 * chosen, is built from them at the call (with no usable prediction the call runs
 * canonical_scatter, call_plan.c). Every input is the same on every rank (the monitor's model
 * is agreed at its calibration), so every rank decides alike. */
static const algorithm_entry *automatic_choice(papcoll_comm *pc, int64_t count,
                                               int64_t extent) {
    double model_numbers[3];
    double copies = (double)count * (double)extent * (double)(pc->size - 1);
    const algorithm_entry *by_size =
        registry_find(copies <= 65536.0 ? "canonical_gather" : "canonical_straggler");
    if (!monitor_model(pc, &model_numbers[0], &model_numbers[1], &model_numbers[2]))
        return by_size;
    for (int i = 0; i < REPRODUCIBLE_CHOICES; i++) {
        const struct reproducible_choice *kept = &pc->reproducible_choices[i];
        if (kept->algorithm != NULL && kept->count == count && kept->extent == extent &&
            memcmp(kept->model, model_numbers, sizeof model_numbers) == 0)
            return kept->algorithm;
    }
    papcoll_sim_model model;
    choice_model(model_numbers[0], model_numbers[1], model_numbers[2], &model);
    papcoll_context context;
    memset(&context, 0, sizeof context);
    context.parameters = pc->parameters.parameters;
    papcoll_choice decided;
    int32_t elem_size = extent > INT32_MAX ? INT32_MAX : (int32_t)extent;
    const algorithm_entry *chosen = NULL;
    if (papcoll_choose_reproducible(pc->size, count, elem_size, &context, &model, &decided) ==
        PAPCOLL_OK)
        chosen = registry_find(decided.algorithm);
    if (chosen == NULL) /* out of memory, or nothing built: the rule, the same everywhere */
        return by_size;
    struct reproducible_choice *slot = &pc->reproducible_choices[pc->reproducible_next];
    pc->reproducible_next = (pc->reproducible_next + 1) % REPRODUCIBLE_CHOICES;
    slot->count = count;
    slot->extent = extent;
    memcpy(slot->model, model_numbers, sizeof model_numbers);
    slot->algorithm = chosen;
    return chosen;
}

int reproducible_algorithm(papcoll_comm *pc, int64_t count, int64_t extent,
                           MPI_Datatype datatype, MPI_Op op, const algorithm_entry **chosen) {
    if (!pc->config.reproducible || !papcoll_order_matters(datatype, op))
        return MPI_SUCCESS;
    if (*chosen == NULL) { /* auto */
        *chosen = automatic_choice(pc, count, extent);
        return MPI_SUCCESS;
    }
    if ((*chosen)->info.canonical_order) return MPI_SUCCESS;
    char keeping[256] = "";
    size_t used = 0;
    papcoll_algorithm_info info;
    for (int32_t i = 0; papcoll_algorithm_get(i, &info) == PAPCOLL_OK; i++)
        if (info.canonical_order && used < sizeof keeping)
            used += (size_t)snprintf(keeping + used, sizeof keeping - used, "%s, ", info.name);
    return record_error(MPI_ERR_ARG, "papcoll_allreduce: algorithm '%s' does not keep the "
                        "canonical order, which reproducible mode (PAPCOLL_REPRODUCIBLE) "
                        "needs for this datatype and op; use %sor auto", (*chosen)->info.name,
                        keeping);
}
