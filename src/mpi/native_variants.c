/* native_variants.c - see native_variants.h. */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include "native_variants.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "native_names.h"

/* FNV-1a over the choices this rank made, so that ranks compare them with one reduction. */
static uint64_t digest_of(const native_variants *variants) {
    uint64_t hash = 1469598103934665603ull;
    for (int k = 0; k < variants->count; k++) {
        for (const char *c = variants->names[k]; *c != '\0'; c++)
            hash = (hash ^ (uint8_t)*c) * 1099511628211ull;
        hash = (hash ^ (uint64_t)(uint32_t)variants->values[k]) * 1099511628211ull;
    }
    return hash;
}

/* Every rank must end with the same list, or fail with the others. One reduction of four
 * numbers: the digest and its complement (the largest of each is this rank's own only where
 * every rank's digest is the same), whether some rank failed, whether some rank named a
 * list. Where the lists differ and nobody named one (the default met different MPI settings
 * on different ranks: another thread level, a forced algorithm on some hosts), every rank
 * falls back to the default algorithm alone instead of failing. */
static int agree(native_variants *variants, MPI_Comm comm, int failed, int named) {
    uint64_t mine[4], largest[4];
    mine[0] = digest_of(variants);
    mine[1] = ~mine[0];
    mine[2] = (uint64_t)failed;
    mine[3] = (uint64_t)named;
    int code = MPI_Allreduce(mine, largest, 4, MPI_UINT64_T, MPI_MAX, comm);
    if (code != MPI_SUCCESS)
        return record_error(code, "papcoll_comm_create: MPI_Allreduce of the native "
                                  "variants failed");
    if (failed) return MPI_ERR_ARG; /* this rank's own message is recorded */
    if (largest[2])
        return record_error(MPI_ERR_ARG, "papcoll_comm_create: another rank refused its "
                            "PAPCOLL_NATIVE_VARIANTS (its message says why)");
    if (largest[0] == mine[0] && largest[1] == mine[1]) return MPI_SUCCESS;
    if (!largest[3]) {
        variants->count = 1;
        return MPI_SUCCESS;
    }
    return record_error(MPI_ERR_ARG, "papcoll_comm_create: the ranks differ in "
                        "PAPCOLL_NATIVE_VARIANTS or in the MPI library's %s; every rank "
                        "must set the same", NATIVE_MPICH_VARIABLE);
}

/* The variable's handle and its value now, or 0 where this MPI has no such variable (not
 * MPICH) or MPI_T cannot be started. */
static int open_variable(native_variants *variants, int *index) {
    int provided, level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    if (MPI_T_init_thread(level, &provided) != MPI_SUCCESS) return 0;
    variants->mpi_t_open = 1;
    int elements;
    if (MPI_T_cvar_get_index(NATIVE_MPICH_VARIABLE, index) != MPI_SUCCESS ||
        MPI_T_cvar_handle_alloc(*index, NULL, &variants->handle, &elements) != MPI_SUCCESS)
        return 0;
    /* one int, which this MPI lets a program read and write (tried once, here) */
    return elements == 1 &&
           MPI_T_cvar_read(variants->handle, &variants->values[0]) == MPI_SUCCESS &&
           MPI_T_cvar_write(variants->handle, &variants->values[0]) == MPI_SUCCESS;
}

/* Adds each name of list (comma separated) as a variant, or records why not. */
static int add_named(native_variants *variants, int index, const char *list) {
    char copy[512], known[2048];
    if (strlen(list) >= sizeof copy)
        return record_error(MPI_ERR_ARG, "papcoll_comm_create: PAPCOLL_NATIVE_VARIANTS is "
                            "%zu characters long; at most %zu", strlen(list), sizeof copy - 1);
    snprintf(copy, sizeof copy, "%s", list);
    char *saved = NULL;
    for (char *name = strtok_r(copy, ", ", &saved); name != NULL;
         name = strtok_r(NULL, ", ", &saved)) {
        int value = -1;
        if (strlen(name) > NATIVE_NAME_MOST)
            return record_error(MPI_ERR_ARG, "papcoll_comm_create: PAPCOLL_NATIVE_VARIANTS "
                                "names '%.64s...', longer than %d characters", name,
                                NATIVE_NAME_MOST);
        if (!native_algorithm_value(index, name, &value, known, sizeof known))
            return record_error(MPI_ERR_ARG, "papcoll_comm_create: PAPCOLL_NATIVE_VARIANTS "
                                "names '%.64s', which the MPI library does not have; it "
                                "has: %.1500s", name, known);
        if (variants->count == NATIVE_VARIANTS_MOST)
            return record_error(MPI_ERR_ARG, "papcoll_comm_create: PAPCOLL_NATIVE_VARIANTS "
                                "names more than %d algorithms", NATIVE_VARIANTS_MOST - 1);
        snprintf(variants->names[variants->count], sizeof variants->names[0], "native:%s",
                 name);
        variants->values[variants->count++] = value;
    }
    return MPI_SUCCESS;
}

static int choose_variants(native_variants *variants, int ranks, int measured,
                           int *named_out) {
    const char *asked = getenv("PAPCOLL_NATIVE_VARIANTS");
    int named = asked != NULL && asked[0] != '\0';
    const char *list = named ? asked : NATIVE_VARIANTS_DEFAULT;
    *named_out = named && strcmp(list, "none") != 0;
    /* one rank runs the default alone; a list named there is still checked below */
    if (strcmp(list, "none") == 0 || (ranks < 2 && !named)) return MPI_SUCCESS;
    if (!measured) {
        if (!named) return MPI_SUCCESS;
        return record_error(MPI_ERR_ARG, "papcoll_comm_create: PAPCOLL_NATIVE_VARIANTS is "
                            "set, but only the AUTOMATIC arrival source measures which "
                            "algorithm is fastest (EDGE and HISTORY send no period messages); "
                            "set it to none or use PAPCOLL_ARRIVALS_AUTOMATIC");
    }
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    if (level == MPI_THREAD_MULTIPLE) {
        if (!named) return MPI_SUCCESS; /* see the header */
        return record_error(MPI_ERR_ARG, "papcoll_comm_create: PAPCOLL_NATIVE_VARIANTS is "
                            "set, but MPI runs with MPI_THREAD_MULTIPLE: the variable that "
                            "picks the algorithm is the whole process's, and another thread's "
                            "all-reduce during papcoll's could run another algorithm on some "
                            "ranks than on others; set it to none");
    }
    int index, automatic = -1;
    char known[2048];
    if (!open_variable(variants, &index)) {
        if (!named) return MPI_SUCCESS; /* not MPICH: its default only (see the header) */
        return record_error(MPI_ERR_ARG, "papcoll_comm_create: PAPCOLL_NATIVE_VARIANTS is "
                            "set, but this MPI library has no %s to choose its algorithm "
                            "call by call (MPICH has; set it to none)", NATIVE_MPICH_VARIABLE);
    }
    if (!native_algorithm_value(index, "auto", &automatic, known, sizeof known) ||
        variants->values[0] != automatic) {
        if (!named) return MPI_SUCCESS; /* the user forced an algorithm: it stays */
        return record_error(MPI_ERR_ARG, "papcoll_comm_create: PAPCOLL_NATIVE_VARIANTS is "
                            "set, but %s forces one algorithm already; unset one of them",
                            NATIVE_MPICH_VARIABLE);
    }
    /* checked at one rank too, so that a list is refused or taken the same way at every
     * size; one rank then keeps the default alone, having nothing to weigh */
    int code = add_named(variants, index, list);
    if (ranks < 2) variants->count = 1;
    return code;
}

int native_variants_open(native_variants *variants, MPI_Comm comm, int measured) {
    memset(variants, 0, sizeof *variants);
    variants->handle = MPI_T_CVAR_HANDLE_NULL;
    variants->count = 1;
    snprintf(variants->names[0], sizeof variants->names[0], "native");
    int ranks = 1, named = 0;
    MPI_Comm_size(comm, &ranks);
    int code = choose_variants(variants, ranks, measured, &named);
    if (code != MPI_SUCCESS) variants->count = 1;
    int agreed = agree(variants, comm, code != MPI_SUCCESS, named);
    return code != MPI_SUCCESS ? code : agreed;
}

void native_variants_close(native_variants *variants) {
    if (variants->mpi_t_open && variants->handle != MPI_T_CVAR_HANDLE_NULL)
        MPI_T_cvar_handle_free(&variants->handle);
    if (variants->mpi_t_open) MPI_T_finalize();
    variants->mpi_t_open = 0;
    variants->count = 1;
}

int native_variants_allreduce(const native_variants *variants, int variant,
                              const void *sendbuf, void *recvbuf, int count,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
    /* read now, not only at create: a program that forced an algorithm since keeps it
     * (on every rank alike, or its own collectives would not match either) */
    int now = variants->values[0];
    int forced = variant > 0 && variant < variants->count &&
                 MPI_T_cvar_read(variants->handle, &now) == MPI_SUCCESS &&
                 now == variants->values[0] &&
                 MPI_T_cvar_write(variants->handle, &variants->values[variant]) == MPI_SUCCESS;
    int code = MPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    if (forced && MPI_T_cvar_write(variants->handle, &now) != MPI_SUCCESS && code == MPI_SUCCESS)
        code = record_error(MPI_ERR_INTERN, "papcoll: MPI_T could not put %s back after a "
                            "call", NATIVE_MPICH_VARIABLE);
    return code;
}
