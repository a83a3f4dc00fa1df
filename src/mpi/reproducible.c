/* reproducible.c - see reproducible.h. Where the choice is written down: docs/reproducible.md
 * defines the canonical order; the algorithms that keep it say so (papcoll_algorithm_info.
 * canonical_order) and the verifier proves it per schedule (tests/c/test_algorithms.c). */
#include "reproducible.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "errors.h"

/* "1"/"0" and their words; -1 for anything else. */
static int switch_value(const char *text) {
    static const char *const on[] = {"1", "true", "yes", "on"};
    static const char *const off[] = {"0", "false", "no", "off"};
    for (size_t i = 0; i < sizeof on / sizeof on[0]; i++) {
        if (strcasecmp(text, on[i]) == 0) return 1;
        if (strcasecmp(text, off[i]) == 0) return 0;
    }
    return -1;
}

int papcoll_reproducible_requested(int *on) {
    const char *text = getenv("PAPCOLL_REPRODUCIBLE");
    *on = 0;
    if (text == NULL || text[0] == '\0') return MPI_SUCCESS;
    int value = switch_value(text);
    if (value < 0)
        return record_error(MPI_ERR_ARG, "PAPCOLL_REPRODUCIBLE='%.32s' is not 1/0, "
                            "true/false, yes/no or on/off", text);
    *on = value;
    return MPI_SUCCESS;
}

int reproducible_setting(papcoll_comm *pc) {
    int mine = pc->config.reproducible != 0, valid = 1;
    const char *text = getenv("PAPCOLL_REPRODUCIBLE");
    if (text != NULL && text[0] != '\0') {
        int value = 0;
        valid = papcoll_reproducible_requested(&value) == MPI_SUCCESS;
        if (valid) mine = value;
    }
    /* every rank takes part, a refusing one too: the others then fail, not hang */
    int local[3] = {mine, -mine, !valid}, all[3];
    int code = MPI_Allreduce(local, all, 3, MPI_INT, MPI_MAX, pc->comm);
    if (code != MPI_SUCCESS)
        return record_error(code, "papcoll_comm_create: MPI_Allreduce of the reproducible "
                                  "setting failed");
    if (!valid)
        return record_error(MPI_ERR_ARG, "papcoll_comm_create: PAPCOLL_REPRODUCIBLE='%.32s' "
                            "is not 1/0, true/false, yes/no or on/off", text);
    if (all[2])
        return record_error(MPI_ERR_ARG, "papcoll_comm_create: another rank's "
                            "PAPCOLL_REPRODUCIBLE is not 1/0, true/false, yes/no or on/off");
    if (all[0] != -all[1])
        return record_error(MPI_ERR_ARG, "papcoll_comm_create: reproducible mode is on for "
                            "some ranks and off for others (config.reproducible or "
                            "PAPCOLL_REPRODUCIBLE must be the same on every rank)");
    pc->config.reproducible = mine;
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

/* canonical_gather while its copies of the vector to the other P - 1 ranks fit in 64 KiB:
 * there one round beats the two phases of the others (parts/arrival_order.h draws the same
 * line for the latency-bound vectors of the late-rank schedules). Above, canonical_straggler,
 * built from the predicted arrivals like straggler: with nobody predicted late it sends
 * canonical_scatter's bytes (its finals straight to every rank), and without a usable
 * prediction the call runs canonical_scatter itself (call_plan.c). */
static const char *automatic_choice(const papcoll_comm *pc, int64_t count, int64_t extent) {
    double copies = (double)count * (double)extent * (double)(pc->size - 1);
    return copies <= 65536.0 ? "canonical_gather" : "canonical_straggler";
}

int reproducible_algorithm(papcoll_comm *pc, int64_t count, int64_t extent,
                           MPI_Datatype datatype, MPI_Op op, const algorithm_entry **chosen) {
    if (!pc->config.reproducible || !papcoll_order_matters(datatype, op))
        return MPI_SUCCESS;
    if (*chosen == NULL) { /* auto */
        *chosen = registry_find(automatic_choice(pc, count, extent));
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
