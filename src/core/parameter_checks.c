/* parameter_checks.c - the checks of papcoll_parameters, one loop over the rows of
 * parameter_table.c: what a row's kind asks (a range, a list of P ranks that is a
 * permutation, a flat algorithm's name, a tree that places P ranks) and the row's own check
 * of its value. So a new parameter is checked by declaring it; no field is named here. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "message.h"
#include "parameter_table.h"
#include "schedule.h"

const char *parameters_check_shape(const papcoll_parameters *parameters, int32_t ranks,
                                   char *text, size_t size) {
    for (int32_t index = 0; index < parameter_row_count(); index++) {
        const papcoll_parameter_info *info = &parameter_row_at(index)->info;
        if (info->kind == PAPCOLL_PARAMETER_WHOLE_NUMBER) {
            int64_t value = parameter_whole_number(parameters, info);
            if (value < 0 && info->minimum == 0)
                snprintf(text, size, "%s must not be negative", info->name);
            else if (value < info->minimum)
                snprintf(text, size, "%s must be at least %" PRId64 ", not %" PRId64,
                         info->name, info->minimum, value);
            else if (value > info->maximum)
                snprintf(text, size, "%s must be at most %" PRId64 ", not %" PRId64, info->name,
                         info->maximum, value);
            else
                continue;
            return text;
        }
        if (info->kind == PAPCOLL_PARAMETER_RANK_LIST) {
            int32_t listed = parameter_list_count(parameters, info);
            if (listed != 0 && listed != ranks)
                snprintf(text, size, "%s must list every rank once (%s_count 0 or P)",
                         info->name, info->name);
            else if (listed != 0 && parameter_pointer(parameters, info) == NULL)
                snprintf(text, size, "%s_count is set but %s is NULL", info->name, info->name);
            else
                continue;
            return text;
        }
    }
    return NULL;
}

/* A rank list that lists P entries: each of 0..P-1 exactly once. */
static int check_permutation(const papcoll_parameter_info *info, const int32_t *order,
                             int32_t ranks, char *error, size_t error_size) {
    unsigned char *seen = calloc((size_t)ranks, 1);
    if (seen == NULL)
        return message_write(error, error_size, PAPCOLL_ERR_NO_MEMORY, "out of memory");
    int32_t bad = -1;
    for (int32_t i = 0; i < ranks && bad < 0; i++) {
        if (order[i] < 0 || order[i] >= ranks || seen[order[i]]) bad = i;
        else seen[order[i]] = 1;
    }
    free(seen);
    if (bad < 0) return PAPCOLL_OK;
    return message_write(error, error_size, PAPCOLL_ERR_ARGUMENT,
                         "%s is not a permutation of 0..%d: entry %d is %d", info->name,
                         ranks - 1, bad, order[bad]);
}

/* The algorithm of a hierarchy's level: a registered flat all-reduce. Its role is the
 * parameter's name without "_algorithm" ("inner", "outer"). */
static int check_flat(const papcoll_parameter_info *info, const char *algorithm, char *error,
                      size_t error_size) {
    const char *suffix = strstr(info->name, "_algorithm");
    int role = suffix ? (int)(suffix - info->name) : (int)strlen(info->name);
    const algorithm_entry *entry = registry_find(algorithm);
    if (entry == NULL)
        return message_write(error, error_size, PAPCOLL_ERR_UNKNOWN_ALGORITHM,
                             "unknown %.*s algorithm '%.64s' (parameter %s; `papcoll "
                             "algorithms` lists them)", role, info->name, algorithm, info->name);
    if (!registry_is_flat(entry))
        return message_write(error, error_size, PAPCOLL_ERR_ARGUMENT,
                             "'%s' cannot be the %.*s algorithm of a hierarchy (parameter %s): "
                             "it must be a flat all-reduce (not PAP-aware, not hierarchical, "
                             "not a reduce-scatter)", algorithm, role, info->name, info->name);
    return PAPCOLL_OK;
}

/* A tree the ranks run on: it places P ranks and its ring order can be laid out. */
static int check_tree(const papcoll_parameter_info *info, const papcoll_sim_topology *tree,
                      int32_t ranks, char *error, size_t error_size) {
    char detail[200];
    if (tree->rank_count != ranks)
        return message_write(error, error_size, PAPCOLL_ERR_ARGUMENT,
                             "%s: it places %d ranks, not %d", info->name, tree->rank_count,
                             ranks);
    int32_t *order = malloc((size_t)ranks * sizeof *order);
    if (order == NULL)
        return message_write(error, error_size, PAPCOLL_ERR_NO_MEMORY, "out of memory");
    int status = papcoll_tree_ring_order(tree, order, detail, sizeof detail);
    free(order);
    if (status != PAPCOLL_OK)
        return message_write(error, error_size, status, "%s: %s", info->name, detail);
    return PAPCOLL_OK;
}

/* The O(P) checks of one row whose value is set: its kind's, then its own. */
static int check_row(const parameter_row *row, const papcoll_parameters *parameters,
                     int32_t ranks, char *error, size_t error_size) {
    const papcoll_parameter_info *info = &row->info;
    const void *value = info->kind == PAPCOLL_PARAMETER_WHOLE_NUMBER
                            ? NULL : parameter_pointer(parameters, info);
    int set = info->kind == PAPCOLL_PARAMETER_WHOLE_NUMBER
                  ? parameter_whole_number(parameters, info) != 0 : value != NULL;
    if (!set) return PAPCOLL_OK;
    int status = PAPCOLL_OK;
    if (info->kind == PAPCOLL_PARAMETER_RANK_LIST &&
        parameter_list_count(parameters, info) == ranks)
        status = check_permutation(info, value, ranks, error, error_size);
    else if (info->kind == PAPCOLL_PARAMETER_ALGORITHM)
        status = check_flat(info, value, error, error_size);
    else if (info->kind == PAPCOLL_PARAMETER_TREE)
        status = check_tree(info, value, ranks, error, error_size);
    if (status != PAPCOLL_OK || row->check_value == NULL) return status;
    return row->check_value(parameter_field(parameters, info), ranks, error, error_size);
}

int papcoll_parameters_check(const papcoll_parameters *parameters, int32_t ranks, char *error,
                             size_t error_size) {
    char problem[200];
    if (parameters == NULL) return PAPCOLL_OK;
    if (ranks < 1)
        return message_write(error, error_size, PAPCOLL_ERR_ARGUMENT,
                             "the number of ranks must be at least 1");
    if (parameters_check_shape(parameters, ranks, problem, sizeof problem) != NULL)
        return message_write(error, error_size, PAPCOLL_ERR_ARGUMENT, "%s", problem);
    for (int32_t index = 0; index < parameter_row_count(); index++) {
        int status = check_row(parameter_row_at(index), parameters, ranks, error, error_size);
        if (status != PAPCOLL_OK) return status;
    }
    return PAPCOLL_OK;
}
