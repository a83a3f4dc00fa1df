/* statistics.h - what the PMPI library saw, per user communicator and call site
 * (statistics.c): calls, bytes, time inside, the algorithms that ran and the calls passed to
 * native with their reason. report.c merges every rank's records into the report. */
#ifndef PAPCOLL_PMPI_STATISTICS_H
#define PAPCOLL_PMPI_STATISTICS_H

#include <mpi.h>
#include <stdint.h>

#include "papcoll.h"

/* Why a call went to PMPI_Allreduce unchanged. Never silent: each is counted. */
typedef enum native_reason {
    NATIVE_INTERCEPTION_OFF = 0, /* PAPCOLL_ALGORITHM=native */
    NATIVE_BELOW_MIN_BYTES,      /* fewer bytes than PAPCOLL_MIN_BYTES */
    NATIVE_ONE_RANK,             /* nothing to combine */
    NATIVE_INTERCOMMUNICATOR,    /* papcoll's schedules are for intra-communicators */
    NATIVE_DATATYPE,             /* not a predefined datatype or a contiguous run of one (a
                                    user-defined op: not a predefined datatype) */
    NATIVE_OP,                   /* PAPCOLL_ALGORITHM names an algorithm that reorders
                                    operands, and the op is not commutative */
    NATIVE_OTHER_THREAD,         /* MPI_THREAD_MULTIPLE, from a thread other than MPI_Init's */
    NATIVE_INVALID_ARGUMENTS,    /* the MPI reports the error, as it would without papcoll */
    NATIVE_NOT_INITIALIZED,      /* before MPI_Init or after MPI_Finalize */
    /* non-blocking and persistent calls (nonblocking_calls.c): */
    NATIVE_NO_PROGRESS,          /* nothing inside MPI's completion calls would advance
                                    papcoll (Open MPI without PAPCOLL_PROGRESS=thread) */
    NATIVE_NO_PAPCOLL_COMMUNICATOR, /* MPI_Iallreduce on a communicator papcoll has no
                                    communicator for yet: making one is collective, and a
                                    non-blocking post must not wait for the other ranks */
    NATIVE_REASON_COUNT
} native_reason;

/* The reasons' names in the report, indexed by native_reason. */
extern const char *const native_reason_names[NATIVE_REASON_COUNT];

/* What the program called at a site. Part of a site's key: one return address is one call
 * of one MPI function, and a persistent request's starts count at its init's site. */
typedef enum call_kind {
    CALL_ALLREDUCE = 0, /* MPI_Allreduce, MPI_Allreduce_c */
    CALL_IALLREDUCE,    /* MPI_Iallreduce, MPI_Iallreduce_c: each post */
    CALL_PERSISTENT,    /* MPI_Allreduce_init(_c): the init and each MPI_Start(all) of it */
    CALL_KIND_COUNT
} call_kind;

/* The kinds' names in the report ("call"), indexed by call_kind. */
extern const char *const call_kind_names[CALL_KIND_COUNT];

enum { SITE_ALGORITHMS_MOST = 8, RECORD_LABEL_SIZE = 112, RECORD_SITE_SIZE = 192 };

/* One rank's statistics of one (communicator, call site): plain data, so ranks can send
 * them to rank 0 as bytes at MPI_Finalize. */
typedef struct site_record {
    char communicator[RECORD_LABEL_SIZE]; /* the same on every member rank (statistics.c) */
    char site[RECORD_SITE_SIZE];          /* call_site.h */
    int32_t communicator_size;
    int32_t freed;                        /* the user freed the communicator */
    int64_t calls;                        /* all calls, native ones included */
    double bytes;                         /* count x datatype size, summed over calls */
    double seconds;                       /* time inside MPI_Allreduce, summed */
    /* auto's model: the e-bar MPI_Allreduce would have taken minus that of the algorithm
     * chosen, summed over calls where the choice came from predicted arrivals */
    double saving_seconds;
    int64_t native[NATIVE_REASON_COUNT];  /* calls passed to native, by reason */
    char algorithm_names[SITE_ALGORITHMS_MOST][48]; /* what papcoll ran ("native": auto
                                                       chose MPI_Allreduce) */
    int64_t algorithm_calls[SITE_ALGORITHMS_MOST];
    /* auto's closed loop (src/mpi/auto_feedback.c): calls that probed the model's
     * alternative, calls where measurements overruled the model, and the last choice with
     * its predicted and measured times (has_choice: there was one) */
    int64_t probe_calls, overruled_calls;
    int32_t has_choice;
    papcoll_choice last_choice;
    int64_t nonblocking_calls;            /* of calls: MPI_Iallreduce posts and MPI_Start
                                             of persistent all-reduces (seconds: the post) */
    /* The calls papcoll decided here, as a rule would name them (`papcoll report --rules`,
     * docs/rules.md): the least and most bytes of one call, and the datatype's name ("" where
     * the calls' datatypes differ or have none; decided_calls 0: none yet). */
    int64_t decided_calls;
    double decided_bytes_low, decided_bytes_high;
    char decided_datatype[40];
    int32_t call_kind;                    /* call_kind */
} site_record;

/* A user communicator the library has seen; kept after the user frees it, for the report. */
typedef struct communicator_record {
    MPI_Comm comm;             /* the user's; MPI_COMM_NULL once freed */
    papcoll_comm *pc;          /* made at the first call papcoll takes, freed with comm */
    int32_t size;
    int intercommunicator;
    int freed_by_user;
    /* persistent all-reduces made on it and not yet freed (nonblocking_calls.c): they keep
     * its papcoll communicator after the user frees the communicator (MPI-4.1 7.4.3), which
     * the last one's MPI_Request_free then frees (free_when_unused) */
    int persistent_shells, free_when_unused;
    char label[RECORD_LABEL_SIZE];
    /* each site allocated alone: a pointer to one (a call holds its site from route to
     * count) stays valid while another thread's new site grows the table */
    site_record **sites;
    const void **addresses;    /* this process's return address of each site */
    int site_count, site_capacity;
    struct communicator_record *next; /* in the order first seen */
} communicator_record;

/* A new record for comm (local: the label comes from its group, not from messages). NULL
 * when out of memory. */
communicator_record *statistics_add_communicator(MPI_Comm comm);
/* Calls the library cannot put on a communicator (an invalid one, or MPI not running). */
communicator_record *statistics_unattributed(void);
/* The records in the order first seen. */
communicator_record *statistics_first(void);
/* The site record of a return address and call kind, made at first sight; NULL when out of
 * memory. */
site_record *statistics_site(communicator_record *record, const void *address,
                             call_kind kind);
/* Counts one call of algorithm name on the site. */
void statistics_count_algorithm(site_record *site, const char *name);
/* Notes the shape of a call papcoll decided on the site (bytes, the datatype's name). */
void statistics_note_decided(site_record *site, double bytes, const char *datatype);
/* Merges from's decided shapes into into's (the same site on another rank). */
void statistics_merge_decided(site_record *into, const site_record *from);
/* Every site record of every communicator in one array (malloc'd; *count of them). */
site_record *statistics_all_sites(int *count);

#endif /* PAPCOLL_PMPI_STATISTICS_H */
