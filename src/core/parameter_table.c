/* parameter_table.c - every field of papcoll_parameters declared once, as MPICH declares
 * its control variables in cvars.txt and Open MPI registers its MCA variables: name, kind,
 * range, the `papcoll` commands' option, what "unset" means, the algorithms that read it
 * and one help line. From these rows come the checks (parameter_checks.c), the copy a
 * communicator owns (parameters.c), the digest the ranks compare (src/mpi/agreement.c), the
 * Python Parameters and the command line's options and help (python/papcoll/parameters.py,
 * python/papcoll/cli/context_options.py), and the `papcoll parameters` listing. A test
 * (tests/python/test_parameters.py) holds the rows to the struct and to the algorithms'
 * sources. Adding a parameter: a field in papcoll_parameters, a row here, its use. */
#include "parameter_table.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "message.h"
#include "papcoll_core.h"

/* recursive_multiplying's schedule: blank means the default; else it must fit P. */
static int check_schedule(const void *field, int32_t ranks, char *error, size_t error_size) {
    const char *text = *(const char *const *)field;
    char detail[200];
    if (text[strspn(text, " ")] == '\0') return PAPCOLL_OK;
    if (papcoll_rm_check(text, ranks, NULL, detail, sizeof detail) == PAPCOLL_OK) return PAPCOLL_OK;
    return message_write(error, error_size, PAPCOLL_ERR_ARGUMENT, "schedule '%.60s': %s", text,
                         detail);
}

/* The name, place and width of a field of papcoll_parameters, from the field itself. */
#define FIELD(field) .name = #field, .offset = offsetof(papcoll_parameters, field), \
                     .width = (int32_t)sizeof(((papcoll_parameters *)0)->field)

static const parameter_row rows[] = {
    {.info = {FIELD(segment_elements), .kind = PAPCOLL_PARAMETER_WHOLE_NUMBER, .minimum = 0,
              .maximum = INT64_MAX, .option = "--segment-elements", .metavar = "N",
              .unset = "64 KiB of elements, more where the vector would need more than "
                       "PAPCOLL_MAX_SEGMENTS segments",
              .algorithms = "segmented_ring", .help = "elements per segment"}},
    {.info = {FIELD(segment_count), .kind = PAPCOLL_PARAMETER_WHOLE_NUMBER, .minimum = 0,
              .maximum = PAPCOLL_MAX_SEGMENTS, .option = "--segment-count", .metavar = "N",
              .unset = "P segments (straggler: its own rule)",
              .algorithms = "linear_tree,slt,straggler",
              .help = "segments the vector is cut into (at most the element count)"}},
    {.info = {FIELD(rank_order), .kind = PAPCOLL_PARAMETER_RANK_LIST,
              .count_offset = offsetof(papcoll_parameters, rank_order_count),
              .option = "--rank-order", .metavar = "R,R,...", .unset = "rank order",
              .algorithms = "ring,segmented_ring",
              .help = "the ranks in ring order, a permutation of 0..P-1"}},
    {.info = {FIELD(schedule), .kind = PAPCOLL_PARAMETER_TEXT, .option = "--schedule",
              .metavar = "STRING",
              .unset = "Ruefenacht et al. 2017's choice for P (`papcoll schedules --ranks P`)",
              .algorithms = "recursive_multiplying",
              .help = "the schedule in the language of Ruefenacht et al. 2017, e.g. a4,a3 or "
                      "c6m2,a2,a2,e6m2"},
     .check_value = check_schedule},
    {.info = {FIELD(inner_algorithm), .kind = PAPCOLL_PARAMETER_ALGORITHM, .option = "--inner",
              .metavar = "ALGORITHM", .unset = "ring", .algorithms = "hr2",
              .help = "the flat all-reduce inside each group"}},
    {.info = {FIELD(outer_algorithm), .kind = PAPCOLL_PARAMETER_ALGORITHM, .option = "--outer",
              .metavar = "ALGORITHM", .unset = "recursive_doubling", .algorithms = "hr1,hr2",
              .help = "the flat all-reduce across groups, among their leaders"}},
    {.info = {FIELD(tree), .kind = PAPCOLL_PARAMETER_TREE, .option = NULL, .metavar = "NETWORK",
              .unset = "none: the ranks keep their order; auto simulates on a crossbar",
              .algorithms = "ring_topology,auto",
              .help = "the tree the ranks run on (`papcoll` commands: from --network)"}},
};

static const int32_t row_total = (int32_t)(sizeof rows / sizeof rows[0]);

int32_t parameter_row_count(void) { return row_total; }

const parameter_row *parameter_row_at(int32_t index) {
    return index >= 0 && index < row_total ? &rows[index] : NULL;
}

int32_t papcoll_parameter_count(void) { return row_total; }

int papcoll_parameter_get(int32_t index, papcoll_parameter_info *info) {
    if (index < 0 || index >= row_total || info == NULL) return PAPCOLL_ERR_ARGUMENT;
    *info = rows[index].info;
    return PAPCOLL_OK;
}
