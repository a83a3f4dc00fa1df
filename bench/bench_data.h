/* bench_data.h - papcoll-bench's data: the ops it times, the random values it reduces and
 * the check of every result against MPI_Allreduce's. The values are chosen so a reduction
 * stays inside its type in any order of evaluation; the element-level pieces (generator,
 * widths, rounding bound) are common/element_values.h, shared with the differential test. */
#ifndef PAPCOLL_BENCH_DATA_H
#define PAPCOLL_BENCH_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "element_types.h"

typedef enum { OP_SUM, OP_PROD, OP_MIN, OP_MAX, OP_BAND, OP_BOR, OP_BXOR } op_code;

/* --op's names, in op_code's order (also the JSON's "op"). */
extern const char *const op_names[];

/* The op named `name`, refused (usage_error) where MPI does not define it on `kind`. */
op_code parse_op(const char *name, element_kind kind);
MPI_Op mpi_op(op_code op);

/* count random elements of type (size bytes each) for rank `rank` of `ranks`, from *state:
 *   sum: integers in +-max/P (unsigned 0..max/P), reals in [-1, 1);
 *   prod: rank 0 any value of the type (reals [0.5, 2) with a sign), the others +-1 (unsigned
 *         1), reals within 1 +- 1/P with a sign (complex: that modulus at a random angle);
 *   min, max, bitwise: any bit pattern of an integer, reals in [-1, 1). */
void fill_random(void *data, int64_t count, const element_type *type, size_t size, op_code op,
                 int rank, int ranks, uint64_t *state);

/* Whether result matches MPI_Allreduce's expected: integers, and min/max of reals, bit for
 * bit; floating-point sums within sum_tolerance; products within 8 P eps relative (P
 * roundings of factors near 1, complex ones a few each). */
int same_result(const void *result, const void *expected, int64_t count,
                const element_type *type, size_t size, op_code op, int ranks);

#endif /* PAPCOLL_BENCH_DATA_H */
