/* bench_data.c - papcoll-bench's ops, values and result check (bench_data.h). */
#include "bench_data.h"

#include <complex.h>
#include <math.h>
#include <string.h>

#include "common/element_values.h"
#include "common/usage.h"

const char *const op_names[] = {"sum", "prod", "min", "max", "band", "bor", "bxor"};

op_code parse_op(const char *name, element_kind kind) {
    for (int i = 0; i <= OP_BXOR; i++) {
        if (strcmp(name, op_names[i]) != 0) continue;
        /* MPI defines the bitwise ops on integers only, min and max not on complex */
        if (i >= OP_BAND && (kind == KIND_REAL || kind == KIND_COMPLEX))
            usage_error("--op %s applies to integer types only", name);
        if ((i == OP_MIN || i == OP_MAX) && kind == KIND_COMPLEX)
            usage_error("--op %s is not defined on complex types", name);
        return (op_code)i;
    }
    usage_error("bad op '%s': want sum, prod, min, max, band, bor or bxor", name);
}

MPI_Op mpi_op(op_code op) {
    switch (op) {
    case OP_PROD: return MPI_PROD;
    case OP_MIN: return MPI_MIN;
    case OP_MAX: return MPI_MAX;
    case OP_BAND: return MPI_BAND;
    case OP_BOR: return MPI_BOR;
    case OP_BXOR: return MPI_BXOR;
    default: return MPI_SUM;
    }
}

/* One integer element: signed overflow is undefined in C, so sums and products stay small. */
static uint64_t random_integer(uint64_t random, int is_signed, size_t size, op_code op,
                               int rank, int ranks, uint64_t *state) {
    int bits = (int)(size * 8);
    /* 16-byte integer types (128 bits) hold any 64-bit value: a shift by 64 or more is
     * undefined (UBSan caught 1 << 128) */
    uint64_t unsigned_max = bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
    uint64_t top = is_signed ? unsigned_max >> 1 : unsigned_max;
    if (op == OP_SUM || (op == OP_PROD && rank == 0)) {
        uint64_t magnitude = op == OP_SUM ? top / (uint64_t)ranks : top;
        uint64_t value = magnitude == UINT64_MAX ? random : random % (magnitude + 1);
        /* two's complement negation in unsigned arithmetic, stored by its bits */
        return is_signed && (next_random(state) & 1) ? ~value + 1 : value;
    }
    if (op == OP_PROD) return is_signed && (random & 1) ? UINT64_MAX : 1; /* -1 or 1 */
    return random;
}

void fill_random(void *data, int64_t count, const element_type *type, size_t size, op_code op,
                 int rank, int ranks, uint64_t *state) {
    char *bytes = data;
    for (int64_t i = 0; i < count; i++) {
        char *at = bytes + (size_t)i * size;
        uint64_t random = next_random(state); /* drawn for reals too: the data of a seed */
        if (type->kind == KIND_SIGNED || type->kind == KIND_UNSIGNED) {
            store_integer(at, size, random_integer(random, type->kind == KIND_SIGNED, size, op,
                                                   rank, ranks, state));
            continue;
        }
        size_t part = type->kind == KIND_COMPLEX ? size / 2 : size;
        long double value = 2 * uniform(state) - 1;
        /* A product of P factors: each within 1 +- 1/P, so P of them stay within e^+-1 and
         * neither overflow nor underflow even in float at P = 4096 (factors in [0.5, 2)
         * would drift as 2^(0.55 sqrt(P))). */
        if (op == OP_PROD)
            value = (value < 0 ? -1 : 1) * (1 + (2 * uniform(state) - 1) / ranks);
        if (type->kind == KIND_REAL) {
            store_real(at, part, value);
        } else if (op == OP_PROD) {
            double angle = 6.283185307179586 * uniform(state);
            store_real(at, part, fabsl(value) * cos(angle));
            store_real(at + part, part, fabsl(value) * sin(angle));
        } else {
            store_real(at, part, value);
            store_real(at + part, part, 2 * uniform(state) - 1);
        }
    }
}

int same_result(const void *result, const void *expected, int64_t count,
                const element_type *type, size_t size, op_code op, int ranks) {
    if (type->kind == KIND_SIGNED || type->kind == KIND_UNSIGNED)
        return memcmp(result, expected, (size_t)count * size) == 0;
    size_t part = type->kind == KIND_COMPLEX ? size / 2 : size;
    int parts = type->kind == KIND_COMPLEX ? 2 : 1;
    long double epsilon = epsilon_of(part);
    const char *got = result, *want = expected;
    for (int64_t i = 0; i < count; i++) {
        long double a[2] = {0, 0}, b[2] = {0, 0};
        for (int k = 0; k < parts; k++) {
            a[k] = load_real(got + (size_t)i * size + (size_t)k * part, part);
            b[k] = load_real(want + (size_t)i * size + (size_t)k * part, part);
        }
        long double tolerance = op == OP_SUM ? sum_tolerance(ranks, epsilon)
                                : op == OP_PROD ? 8.0L * ranks * epsilon * hypotl(b[0], b[1])
                                                : 0;
        for (int k = 0; k < parts; k++)
            if (!(fabsl(a[k] - b[k]) <= tolerance)) return 0;
    }
    return 1;
}
