/* native_variants.c - see native_variants.h. */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include "native_variants.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "native_names.h"

/* FNV-1a over the choices this rank made, so that ranks compare them in the config's
 * reduction (config_agreement.c). */
static uint64_t digest_of(const native_variants *variants) {
    uint64_t hash = 1469598103934665603ull;
    for (int k = 0; k < variants->count; k++) {
        for (const char *c = variants->names[k]; *c != '\0'; c++)
            hash = (hash ^ (uint8_t)*c) * 1099511628211ull;
        hash = (hash ^ (uint64_t)(uint32_t)variants->values[k]) * 1099511628211ull;
    }
    return hash;
}

#if PAPCOLL_HAVE_MPI_T
/* The variable's handle and its value now, or 0 where this MPI has no such variable (not
 * MPICH) or MPI_T cannot be started. */
static int open_variable(native_variants *variants, int *index) {
    int provided, level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    if (MPI_T_init_thread(level, &provided) != MPI_SUCCESS) return 0;
    variants->mpi_t_open = 1;
    int elements;
    /* the index is the process's (MPI_T's variables are fixed once found): looked up once,
     * since the lookup compares the name with every variable's, a cost in every
     * communicator the drop-in makes */
    static int variable_index = -1;
    if (variable_index < 0 && MPI_T_cvar_get_index(NATIVE_MPICH_VARIABLE, &variable_index) !=
                                  MPI_SUCCESS) {
        variable_index = -1;
        return 0;
    }
    *index = variable_index;
    if (MPI_T_cvar_handle_alloc(*index, NULL, &variants->handle, &elements) != MPI_SUCCESS)
        return 0;
    /* one int, which this MPI lets a program read and write (tried once, here) */
    return elements == 1 &&
           MPI_T_cvar_read(variants->handle, &variants->values[0]) == MPI_SUCCESS &&
           MPI_T_cvar_write(variants->handle, &variants->values[0]) == MPI_SUCCESS;
}

static void close_variable(native_variants *variants) {
    if (variants->mpi_t_open && variants->handle != MPI_T_CVAR_HANDLE_NULL)
        MPI_T_cvar_handle_free(&variants->handle);
    if (variants->mpi_t_open) MPI_T_finalize();
}

/* Sets the variable to variant's value where it still holds the default's, which *now
 * gets (to put back); 0 where it was not set. */
static int force_variant(const native_variants *variants, int variant, int *now) {
    return MPI_T_cvar_read(variants->handle, now) == MPI_SUCCESS &&
           *now == variants->values[0] &&
           MPI_T_cvar_write(variants->handle, &variants->values[variant]) == MPI_SUCCESS;
}

static int restore_variable(const native_variants *variants, int now) {
    return MPI_T_cvar_write(variants->handle, &now);
}
#else /* no MPI_T (SMPI): the library's default alone */
static int open_variable(native_variants *variants, int *index) {
    (void)variants;
    (void)index;
    return 0;
}
static void close_variable(native_variants *variants) { (void)variants; }
static int force_variant(const native_variants *variants, int variant, int *now) {
    (void)variants;
    (void)variant;
    (void)now;
    return 0;
}
static int restore_variable(const native_variants *variants, int now) {
    (void)variants;
    (void)now;
    return MPI_SUCCESS;
}
#endif

/* The values of the last list of names that was taken whole, and of "auto": the MPI
 * library's algorithms are the process's, and reading them parses the variable's
 * description anew (a cost in every communicator the drop-in makes). Only reached below
 * MPI_THREAD_MULTIPLE (choose_variants), so one thread at a time. */
static struct remembered_list {
    char list[512];
    int automatic, automatic_found; /* "auto"'s value, where read */
    native_variants variants;
} remembered;

/* Adds each name of list (comma separated) as a variant, or records why not. */
static int add_named(native_variants *variants, int index, const char *list) {
    if (remembered.list[0] != '\0' && strcmp(remembered.list, list) == 0) {
        for (int k = 1; k < remembered.variants.count; k++) {
            memcpy(variants->names[k], remembered.variants.names[k], sizeof variants->names[k]);
            variants->values[k] = remembered.variants.values[k];
        }
        variants->count = remembered.variants.count;
        return MPI_SUCCESS;
    }
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
    snprintf(remembered.list, sizeof remembered.list, "%s", list);
    remembered.variants = *variants;
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
    int index;
    char known[2048];
    if (!open_variable(variants, &index)) {
        if (!named) return MPI_SUCCESS; /* not MPICH: its default only (see the header) */
        return record_error(MPI_ERR_ARG, "papcoll_comm_create: PAPCOLL_NATIVE_VARIANTS is "
                            "set, but this MPI library has no %s to choose its algorithm "
                            "call by call (MPICH has; set it to none)", NATIVE_MPICH_VARIABLE);
    }
    if (!remembered.automatic_found)
        remembered.automatic_found = native_algorithm_value(index, "auto", &remembered.automatic,
                                                            known, sizeof known);
    if (!remembered.automatic_found || variants->values[0] != remembered.automatic) {
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

int native_variants_choose(native_variants *variants, int ranks, int measured,
                           int64_t *digest, int *named) {
    memset(variants, 0, sizeof *variants);
#if PAPCOLL_HAVE_MPI_T
    variants->handle = MPI_T_CVAR_HANDLE_NULL;
#endif
    variants->count = 1;
    snprintf(variants->names[0], sizeof variants->names[0], "native");
    *named = 0;
    int code = choose_variants(variants, ranks, measured, named);
    if (code != MPI_SUCCESS) variants->count = 1;
    /* shifted: the agreement negates it, which must not overflow */
    *digest = (int64_t)(digest_of(variants) >> 2);
    return code;
}

/* Where the lists differ and nobody named one (the default met different MPI settings on
 * different ranks: another thread level, a forced algorithm on some hosts), every rank
 * falls back to the default algorithm alone instead of failing. */
int native_variants_settle(native_variants *variants, int same, int any_named) {
    if (same) return MPI_SUCCESS;
    if (!any_named) {
        variants->count = 1;
        return MPI_SUCCESS;
    }
    return record_error(MPI_ERR_ARG, "papcoll_comm_create: the ranks differ in "
                        "PAPCOLL_NATIVE_VARIANTS or in the MPI library's %s; every rank "
                        "must set the same", NATIVE_MPICH_VARIABLE);
}

void native_variants_close(native_variants *variants) {
    close_variable(variants);
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
                 force_variant(variants, variant, &now);
    int code = MPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    if (forced && restore_variable(variants, now) != MPI_SUCCESS && code == MPI_SUCCESS)
        code = record_error(MPI_ERR_INTERN, "papcoll: MPI_T could not put %s back after a "
                            "call", NATIVE_MPICH_VARIABLE);
    return code;
}
