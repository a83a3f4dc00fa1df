/* statistics.c - see statistics.h. Not thread-safe by itself: intercept.c holds its lock
 * around every use. */
#include "statistics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call_site.h"

const char *const native_reason_names[NATIVE_REASON_COUNT] = {
    [NATIVE_INTERCEPTION_OFF] = "interception_off",
    [NATIVE_BELOW_MIN_BYTES] = "below_min_bytes",
    [NATIVE_ONE_RANK] = "one_rank",
    [NATIVE_INTERCOMMUNICATOR] = "intercommunicator",
    [NATIVE_DATATYPE] = "datatype",
    [NATIVE_OP] = "op",
    [NATIVE_OTHER_THREAD] = "other_thread",
    [NATIVE_INVALID_ARGUMENTS] = "invalid_arguments",
    [NATIVE_NOT_INITIALIZED] = "not_initialized",
    [NATIVE_NO_PROGRESS] = "no_progress",
    [NATIVE_NO_PAPCOLL_COMMUNICATOR] = "no_papcoll_communicator",
};

const char *const call_kind_names[CALL_KIND_COUNT] = {
    [CALL_ALLREDUCE] = "MPI_Allreduce",
    [CALL_IALLREDUCE] = "MPI_Iallreduce",
    [CALL_PERSISTENT] = "persistent",
};

static communicator_record *first, *last;
static communicator_record unattributed = {.label = "(no valid communicator)"};

communicator_record *statistics_first(void) { return first; }
communicator_record *statistics_unattributed(void) { return &unattributed; }

/* FNV-1a over the member list: tells apart communicators of equal size and first ranks. */
static uint32_t hash_ranks(const int *ranks, int count) {
    uint32_t hash = 2166136261u;
    for (int k = 0; k < count; k++) {
        hash ^= (uint32_t)ranks[k];
        hash *= 16777619u;
    }
    return hash;
}

/* How many communicators got each label text before (a chained table: a program may make
 * communicators by the thousand, and counting by walking every record made each
 * constructor cost more the longer the program ran). Counted before the " (N)" suffix. */
enum { LABEL_BUCKETS = 256 };
typedef struct label_count {
    struct label_count *next;
    int count;
    char text[RECORD_LABEL_SIZE];
} label_count;
static label_count *label_buckets[LABEL_BUCKETS];

/* The times text was seen before this one (0: never); without memory, 0. */
static int label_seen(const char *text) {
    uint32_t hash = 2166136261u;
    for (const char *c = text; *c != '\0'; c++) hash = (hash ^ (uint8_t)*c) * 16777619u;
    label_count **bucket = &label_buckets[hash % LABEL_BUCKETS];
    for (label_count *entry = *bucket; entry != NULL; entry = entry->next)
        if (strcmp(entry->text, text) == 0) return entry->count++;
    label_count *entry = calloc(1, sizeof *entry);
    if (entry == NULL) return 0;
    snprintf(entry->text, sizeof entry->text, "%s", text);
    entry->count = 1;
    entry->next = *bucket;
    *bucket = entry;
    return 0;
}

/* The label names the communicator the same way on every member without a message: its
 * world ranks (a range, or the first three and a hash of all), and for the second and later
 * communicator over the same ranks (a dup) its number among them, counted in the order this
 * process first used them - which SPMD programs share. */
static void make_label(communicator_record *record, MPI_Comm comm) {
    if (comm == MPI_COMM_WORLD) {
        snprintf(record->label, sizeof record->label, "MPI_COMM_WORLD");
        return;
    }
    if (comm == MPI_COMM_SELF) {
        snprintf(record->label, sizeof record->label, "MPI_COMM_SELF");
        return;
    }
    int size = record->size;
    int *ranks = malloc((size_t)size * 2 * sizeof *ranks);
    MPI_Group group, world;
    if (ranks == NULL || PMPI_Comm_group(comm, &group) != MPI_SUCCESS) {
        free(ranks);
        snprintf(record->label, sizeof record->label, "size %d", size);
        return;
    }
    PMPI_Comm_group(MPI_COMM_WORLD, &world);
    for (int r = 0; r < size; r++) ranks[r] = r;
    PMPI_Group_translate_ranks(group, size, ranks, world, ranks + size);
    PMPI_Group_free(&group);
    PMPI_Group_free(&world);
    const int *members = ranks + size;
    int range = 1;
    for (int r = 1; r < size; r++) range &= members[r] == members[0] + r;
    char text[RECORD_LABEL_SIZE - 16]; /* room for " (N)" */
    if (size == 1)
        snprintf(text, sizeof text, "world rank %d", members[0]);
    else if (range)
        snprintf(text, sizeof text, "world ranks %d-%d", members[0], members[size - 1]);
    else if (size <= 3)
        snprintf(text, sizeof text, "world ranks %d,%d%s", members[0], members[1],
                 size == 3 ? "," : "");
    else
        snprintf(text, sizeof text, "world ranks %d,%d,%d... #%08x", members[0], members[1],
                 members[2], hash_ranks(members, size));
    if (!range && size == 3) /* the third member after the comma */
        snprintf(text + strlen(text), sizeof text - strlen(text), "%d", members[2]);
    free(ranks);
    if (record->intercommunicator) { /* its group is the local one */
        char local[sizeof text];
        snprintf(local, sizeof local, "%s", text);
        snprintf(text, sizeof text, "intercommunicator, local %.70s", local);
    }
    int same = label_seen(text);
    if (same == 0)
        snprintf(record->label, sizeof record->label, "%s", text);
    else
        snprintf(record->label, sizeof record->label, "%s (%d)", text, same + 1);
}

communicator_record *statistics_add_communicator(MPI_Comm comm) {
    communicator_record *record = calloc(1, sizeof *record);
    if (record == NULL) return NULL;
    record->comm = comm;
    PMPI_Comm_test_inter(comm, &record->intercommunicator);
    PMPI_Comm_size(comm, &record->size);
    make_label(record, comm);
    if (last) last->next = record;
    else first = record;
    last = record;
    return record;
}

site_record *statistics_site(communicator_record *record, const void *address,
                             call_kind kind) {
    for (int k = 0; k < record->site_count; k++)
        if (record->addresses[k] == address && record->sites[k]->call_kind == (int32_t)kind)
            return record->sites[k];
    if (record->site_count == record->site_capacity) {
        int capacity = record->site_capacity ? 2 * record->site_capacity : 4;
        site_record **sites = realloc(record->sites, (size_t)capacity * sizeof *sites);
        if (sites == NULL) return NULL;
        record->sites = sites;
        const void **addresses = realloc(record->addresses,
                                         (size_t)capacity * sizeof *addresses);
        if (addresses == NULL) return NULL;
        record->addresses = addresses;
        record->site_capacity = capacity;
    }
    site_record *site = calloc(1, sizeof *site);
    if (site == NULL) return NULL;
    snprintf(site->communicator, sizeof site->communicator, "%s", record->label);
    site->communicator_size = record->size;
    site->call_kind = kind;
    call_site_name(address, site->site, sizeof site->site);
    record->sites[record->site_count] = site;
    record->addresses[record->site_count++] = address;
    return site;
}

void statistics_note_decided(site_record *site, double bytes, const char *datatype) {
    site_record one;
    one.decided_calls = 1;
    one.decided_bytes_low = one.decided_bytes_high = bytes;
    snprintf(one.decided_datatype, sizeof one.decided_datatype, "%s", datatype);
    statistics_merge_decided(site, &one);
}

void statistics_merge_decided(site_record *into, const site_record *from) {
    if (from->decided_calls == 0) return;
    if (into->decided_calls == 0) {
        into->decided_bytes_low = from->decided_bytes_low;
        into->decided_bytes_high = from->decided_bytes_high;
        memcpy(into->decided_datatype, from->decided_datatype, sizeof into->decided_datatype);
    } else {
        into->decided_bytes_low = fmin(into->decided_bytes_low, from->decided_bytes_low);
        into->decided_bytes_high = fmax(into->decided_bytes_high, from->decided_bytes_high);
        if (strcmp(into->decided_datatype, from->decided_datatype) != 0)
            into->decided_datatype[0] = '\0';
    }
    into->decided_calls += from->decided_calls;
}

void statistics_count_algorithm(site_record *site, const char *name) {
    for (int k = 0; k < SITE_ALGORITHMS_MOST; k++) {
        if (site->algorithm_names[k][0] == '\0')
            snprintf(site->algorithm_names[k], sizeof site->algorithm_names[k], "%s", name);
        if (strcmp(site->algorithm_names[k], name) == 0) {
            site->algorithm_calls[k]++;
            return;
        }
    }
    /* more than SITE_ALGORITHMS_MOST names at one site: the last slot counts the rest */
    snprintf(site->algorithm_names[SITE_ALGORITHMS_MOST - 1],
             sizeof site->algorithm_names[0], "other");
    site->algorithm_calls[SITE_ALGORITHMS_MOST - 1]++;
}

site_record *statistics_all_sites(int *count) {
    int total = unattributed.site_count;
    for (const communicator_record *r = first; r != NULL; r = r->next) total += r->site_count;
    site_record *all = malloc((size_t)(total > 0 ? total : 1) * sizeof *all);
    *count = 0;
    if (all == NULL) return NULL;
    for (const communicator_record *r = first; r != NULL; r = r->next)
        for (int k = 0; k < r->site_count; k++) {
            all[*count] = *r->sites[k];
            all[(*count)++].freed = r->freed_by_user;
        }
    for (int k = 0; k < unattributed.site_count; k++) all[(*count)++] = *unattributed.sites[k];
    return all;
}
