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

/* Every rank must hold the same list: the largest digest and the largest complement are
 * this rank's own only where every rank's digest is the same. */
static int agree(const native_variants *variants, MPI_Comm comm, int record) {
    uint64_t mine[2], largest[2];
    mine[0] = digest_of(variants);
    mine[1] = ~mine[0];
    int code = MPI_Allreduce(mine, largest, 2, MPI_UINT64_T, MPI_MAX, comm);
    if (code != MPI_SUCCESS)
        return record_error(code, "papcoll_comm_create: MPI_Allreduce of the native "
                                  "variants failed");
    if ((largest[0] != mine[0] || largest[1] != mine[1]) && !record) return MPI_ERR_ARG;
    if (largest[0] != mine[0] || largest[1] != mine[1])
        return record_error(MPI_ERR_ARG, "papcoll_comm_create: the ranks differ in "
                            "PAPCOLL_NATIVE_VARIANTS or in the MPI library's %s; every rank "
                            "must set the same", NATIVE_MPICH_VARIABLE);
    return MPI_SUCCESS;
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
    return MPI_T_cvar_read(variants->handle, &variants->values[0]) == MPI_SUCCESS;
}

/* Adds each name of list (comma separated) as a variant, or records why not. */
static int add_named(native_variants *variants, int index, const char *list) {
    char copy[512], known[2048];
    snprintf(copy, sizeof copy, "%s", list);
    char *saved = NULL;
    for (char *name = strtok_r(copy, ", ", &saved); name != NULL;
         name = strtok_r(NULL, ", ", &saved)) {
        int value = -1;
        if (!native_algorithm_value(index, name, &value, known, sizeof known))
            return record_error(MPI_ERR_ARG, "papcoll_comm_create: PAPCOLL_NATIVE_VARIANTS "
                                "names '%.64s', which the MPI library does not have; it "
                                "has: %.1500s", name, known);
        if (variants->count == NATIVE_VARIANTS_MOST)
            return record_error(MPI_ERR_ARG, "papcoll_comm_create: PAPCOLL_NATIVE_VARIANTS "
                                "names more than %d algorithms", NATIVE_VARIANTS_MOST - 1);
        snprintf(variants->names[variants->count], sizeof variants->names[0], "native:%.40s",
                 name);
        variants->values[variants->count++] = value;
    }
    return MPI_SUCCESS;
}

static int choose_variants(native_variants *variants) {
    const char *asked = getenv("PAPCOLL_NATIVE_VARIANTS");
    int named = asked != NULL && asked[0] != '\0';
    const char *list = named ? asked : NATIVE_VARIANTS_DEFAULT;
    if (strcmp(list, "none") == 0) return MPI_SUCCESS;
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
    return add_named(variants, index, list);
}

int native_variants_open(native_variants *variants, MPI_Comm comm) {
    memset(variants, 0, sizeof *variants);
    variants->handle = MPI_T_CVAR_HANDLE_NULL;
    variants->count = 1;
    snprintf(variants->names[0], sizeof variants->names[0], "native");
    int code = choose_variants(variants);
    if (code != MPI_SUCCESS) variants->count = 1; /* still compared: every rank must fail */
    /* a rank that failed keeps its own message */
    int agreed = agree(variants, comm, code == MPI_SUCCESS);
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
    int forced = variant > 0 && variant < variants->count;
    if (forced) MPI_T_cvar_write(variants->handle, &variants->values[variant]);
    int code = MPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    if (forced) MPI_T_cvar_write(variants->handle, &variants->values[0]);
    return code;
}
