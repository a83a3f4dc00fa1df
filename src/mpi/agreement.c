/* agreement.c - the opt-in check that every rank makes the same call.
 *
 * MPI calls a collective erroneous when its ranks disagree on the count, the type signature,
 * the op or (for papcoll) the algorithm and its parameters; papcoll would then build
 * schedules that do not match and hang, or fail on one rank with MPI_ERR_TRUNCATE while the
 * others wait forever. With the check on, every call first reduces a digest of itself
 * (call_digest, six 64-bit numbers) with one MPI_Allreduce of 12 numbers: the maximum of
 * each value and of its complement, which gives its maximum and minimum at once. Equal
 * everywhere: the call goes on. Not: every rank returns an error, so none is left waiting;
 * then, and only then, an MPI_Allgather of the digests finds which ranks differ, so the
 * message can say "rank 0 has 1000, rank 3 has 1001". Like MPICH's error checking and the
 * MUST tool, the price is paid only by those who ask for it (docs/mpi.md measures it).
 *
 * A rank whose own checks refused the call (a NULL buffer, a bad op) takes part too, with
 * AGREEMENT_LOCAL_ERROR set: with the check on, one rank's refusal becomes an error on every
 * rank instead of a hang of the others.
 *
 * Choice: the datatype is known by its size, extent, combiner and, for predefined types,
 * its name; two different derived types of the same size and shape agree here (MPI would
 * call that a mismatch of signatures only if the basic types differ, which papcoll, reducing
 * contiguous types, cannot tell from the handle without walking its contents).
 */
#include "agreement.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "operations.h"

/* FNV-1a, 64 bits: a digest, not a defence against an adversary. */
static uint64_t mix(uint64_t hash, const void *bytes, size_t length) {
    const unsigned char *byte = bytes;
    if (hash == 0) hash = 1469598103934665603ULL;
    for (size_t i = 0; i < length; i++) hash = (hash ^ byte[i]) * 1099511628211ULL;
    return hash;
}

int64_t agreement_bytes_digest(const void *bytes, size_t length) {
    return (int64_t)(mix(0, bytes, length) >> 2) | 1;
}

static uint64_t mix_text(uint64_t hash, const char *text) {
    /* the terminating zero goes in too, so "ab" + "c" differs from "a" + "bc" */
    return text ? mix(hash, text, strlen(text) + 1) : mix(hash, "", 1);
}

static uint64_t datatype_digest(MPI_Datatype datatype) {
    MPI_Count size = 0, lower_bound = 0, extent = 0;
    int integers, addresses, datatypes, combiner = 0;
    MPI_Type_size_x(datatype, &size);
    MPI_Type_get_extent_x(datatype, &lower_bound, &extent);
    MPI_Type_get_envelope(datatype, &integers, &addresses, &datatypes, &combiner);
    int64_t shape[3] = {(int64_t)size, (int64_t)extent, combiner == MPI_COMBINER_NAMED};
    uint64_t hash = mix(0, shape, sizeof shape);
    if (combiner == MPI_COMBINER_NAMED) {
        char name[MPI_MAX_OBJECT_NAME] = "";
        int length = 0;
        MPI_Type_get_name(datatype, name, &length);
        hash = mix_text(hash, name);
    }
    return hash;
}

/* Every parameter, read by its row of the parameter table (papcoll_parameter_get), so a
 * new parameter is compared across ranks by declaring it. Its kind says what to hash: a
 * number's value, a text, a rank list's count and entries, a tree's arrays. */
static uint64_t parameters_digest(const papcoll_parameters *parameters) {
    uint64_t hash = mix(0, "", 0);
    papcoll_parameter_info info;
    for (int32_t index = 0; papcoll_parameter_get(index, &info) == PAPCOLL_OK; index++) {
        const char *field = (const char *)parameters + info.offset;
        const void *pointer = NULL; /* memcpy: the field is a char, int32_t or tree pointer */
        if (info.kind != PAPCOLL_PARAMETER_WHOLE_NUMBER) memcpy(&pointer, field, sizeof pointer);
        if (info.kind == PAPCOLL_PARAMETER_WHOLE_NUMBER) {
            int64_t value = info.width == 8 ? *(const int64_t *)field : *(const int32_t *)field;
            hash = mix(hash, &value, sizeof value);
        } else if (info.kind == PAPCOLL_PARAMETER_TEXT ||
                   info.kind == PAPCOLL_PARAMETER_ALGORITHM) {
            hash = mix_text(hash, pointer);
        } else if (info.kind == PAPCOLL_PARAMETER_RANK_LIST) {
            int32_t listed = *(const int32_t *)((const char *)parameters + info.count_offset);
            hash = mix(hash, &listed, sizeof listed);
            if (pointer != NULL) hash = mix(hash, pointer, (size_t)listed * sizeof(int32_t));
        } else if (info.kind == PAPCOLL_PARAMETER_TREE && pointer != NULL) {
            const papcoll_sim_topology *tree = pointer;
            size_t vertices = (size_t)tree->vertex_count, ranks = (size_t)tree->rank_count;
            hash = mix(hash, tree->parent, vertices * sizeof *tree->parent);
            hash = mix(hash, tree->link_latency, vertices * sizeof *tree->link_latency);
            hash = mix(hash, tree->link_seconds_per_byte,
                       vertices * sizeof *tree->link_seconds_per_byte);
            hash = mix(hash, tree->rank_vertex, ranks * sizeof *tree->rank_vertex);
        }
    }
    return hash;
}

void call_digest_describe(call_digest *digest, int local_error, int64_t count,
                          MPI_Datatype datatype, MPI_Op op, const char *algorithm,
                          const papcoll_parameters *parameters) {
    memset(digest, 0, sizeof *digest);
    digest->value[AGREEMENT_LOCAL_ERROR] = local_error != 0;
    if (local_error) return;
    digest->value[AGREEMENT_COUNT] = (uint64_t)count;
    digest->value[AGREEMENT_DATATYPE] = datatype_digest(datatype);
    int commutative = 0;
    MPI_Op_commutative(op, &commutative);
    int index = predefined_op_index(op);
    /* user-defined ops: only whether they commute can be compared across processes */
    digest->value[AGREEMENT_OP] = index >= 0 ? (uint64_t)index + 1 : 1000u + (uint64_t)commutative;
    digest->value[AGREEMENT_ALGORITHM] = mix_text(0, algorithm);
    digest->value[AGREEMENT_PARAMETERS] = parameters_digest(parameters);
}

static const char *const field_names[AGREEMENT_FIELD_COUNT] = {
    "", "count", "datatype", "op", "algorithm", "algorithm's parameters"};

/* The message for a mismatch, from every rank's digest. */
static int record_difference(const call_digest *all, int size, const char *caller) {
    for (int r = 0; r < size; r++)
        if (all[r].value[AGREEMENT_LOCAL_ERROR])
            return record_error(MPI_ERR_ARG, "%s: rank %d refused this call (its own error "
                                "says why); every rank stops (PAPCOLL_CHECK)", caller, r);
    for (int field = AGREEMENT_COUNT; field < AGREEMENT_FIELD_COUNT; field++) {
        for (int r = 1; r < size; r++) {
            if (all[r].value[field] == all[0].value[field]) continue;
            if (field == AGREEMENT_COUNT)
                return record_error(MPI_ERR_ARG, "%s: the ranks disagree on the count: rank 0 "
                                    "has %" PRIu64 ", rank %d has %" PRIu64 " (PAPCOLL_CHECK)",
                                    caller, all[0].value[field], r, all[r].value[field]);
            return record_error(MPI_ERR_ARG, "%s: the ranks disagree on the %s: rank %d's "
                                "differs from rank 0's (PAPCOLL_CHECK)",
                                caller, field_names[field], r);
        }
    }
    return record_error(MPI_ERR_INTERN, "%s: the ranks disagreed on the call's digest, but "
                        "their gathered digests are equal (PAPCOLL_CHECK)", caller);
}

int agreement_check(MPI_Comm comm, const call_digest *mine, const char *caller) {
    uint64_t local[2 * AGREEMENT_FIELD_COUNT], reduced[2 * AGREEMENT_FIELD_COUNT];
    for (int k = 0; k < AGREEMENT_FIELD_COUNT; k++) {
        local[k] = mine->value[k];
        local[AGREEMENT_FIELD_COUNT + k] = ~mine->value[k]; /* max of ~v is ~(min of v) */
    }
    int code = MPI_Allreduce(local, reduced, 2 * AGREEMENT_FIELD_COUNT, MPI_UINT64_T, MPI_MAX,
                             comm);
    if (code != MPI_SUCCESS)
        return record_error(code, "%s: MPI_Allreduce of the call's digest failed", caller);
    int agreed = 1;
    for (int k = 0; k < AGREEMENT_FIELD_COUNT; k++)
        if (reduced[k] != ~reduced[AGREEMENT_FIELD_COUNT + k]) agreed = 0;
    if (agreed) return MPI_SUCCESS;

    /* Every rank saw the mismatch; now all gather the digests to say where. */
    int size;
    MPI_Comm_size(comm, &size);
    call_digest *all = malloc((size_t)size * sizeof *all);
    int have_memory = all != NULL, everyone_has_memory = 0;
    /* the gather is collective: all must go into it, or none */
    code = MPI_Allreduce(&have_memory, &everyone_has_memory, 1, MPI_INT, MPI_MIN, comm);
    if (code == MPI_SUCCESS && everyone_has_memory)
        code = MPI_Allgather(mine->value, AGREEMENT_FIELD_COUNT, MPI_UINT64_T, all,
                             AGREEMENT_FIELD_COUNT, MPI_UINT64_T, comm);
    if (mine->value[AGREEMENT_LOCAL_ERROR]) {
        free(all); /* this rank keeps the message of its own refusal */
        return MPI_ERR_ARG;
    }
    if (code != MPI_SUCCESS || !everyone_has_memory) {
        free(all);
        return record_error(code != MPI_SUCCESS ? code : MPI_ERR_NO_MEM,
                            "%s: the ranks disagree on the call (PAPCOLL_CHECK); finding where "
                            "failed", caller);
    }
    code = record_difference(all, size, caller);
    free(all);
    return code;
}
