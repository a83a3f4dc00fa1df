/* parameter_table.h - the rows of papcoll_parameters as the core's other units read them:
 * each public description (papcoll_parameter_info) with the check only that parameter
 * needs, and reads of a field by its row. The checks (parameter_checks.c) and the
 * communicator's copy (parameters.c) loop over these rows, so neither names a field. */
#ifndef PAPCOLL_PARAMETER_TABLE_H
#define PAPCOLL_PARAMETER_TABLE_H

#include "hidden.h"

#include <string.h>

#include "papcoll_core.h"

typedef struct parameter_row {
    papcoll_parameter_info info;
    /* The parameter's own check, beyond its kind's, of a value that is set (not 0 or NULL):
     * a text's grammar, a number's bound that depends on P. `field` points to the field in
     * papcoll_parameters. NULL: the kind's checks are all. Returns PAPCOLL_OK or a status
     * with the message in error. */
    int (*check_value)(const void *field, int32_t ranks, char *error, size_t error_size);
} parameter_row;

PAPCOLL_HIDDEN int32_t parameter_row_count(void);
PAPCOLL_HIDDEN const parameter_row *parameter_row_at(int32_t index);

/* The field a row describes, inside `parameters` (cast by its kind). */
static inline const void *parameter_field(const papcoll_parameters *parameters,
                                          const papcoll_parameter_info *info) {
    return (const char *)parameters + info->offset;
}

/* A whole number's value, whatever its width. */
static inline int64_t parameter_whole_number(const papcoll_parameters *parameters,
                                             const papcoll_parameter_info *info) {
    const void *field = parameter_field(parameters, info);
    return info->width == 8 ? *(const int64_t *)field : *(const int32_t *)field;
}

/* A text's, an algorithm's, a rank list's or a tree's pointer. Copied out with memcpy: the
 * field is a `const char *`, `const int32_t *` or tree pointer, and reading it through a
 * `void *` lvalue would break C's aliasing rule (all object pointers share one size and,
 * on every platform papcoll builds on, one representation). */
static inline const void *parameter_pointer(const papcoll_parameters *parameters,
                                            const papcoll_parameter_info *info) {
    const void *pointer;
    memcpy(&pointer, parameter_field(parameters, info), sizeof pointer);
    return pointer;
}

/* Points the field a row describes, in `parameters`, at `value` (memcpy: see above). */
static inline void parameter_set_pointer(papcoll_parameters *parameters,
                                         const papcoll_parameter_info *info, const void *value) {
    memcpy((char *)parameters + info->offset, &value, sizeof value);
}

/* A rank list's entry count. */
static inline int32_t parameter_list_count(const papcoll_parameters *parameters,
                                           const papcoll_parameter_info *info) {
    return *(const int32_t *)((const char *)parameters + info->count_offset);
}

/* The O(1) checks of every row (ranges, counts against P, a count without its list): the
 * first problem in words, or NULL. papcoll_schedule_build runs them for every rank it
 * builds; the O(P) ones are in papcoll_parameters_check. */
PAPCOLL_HIDDEN const char *parameters_check_shape(const papcoll_parameters *parameters,
                                                  int32_t ranks, char *text, size_t size);

#endif /* PAPCOLL_PARAMETER_TABLE_H */
