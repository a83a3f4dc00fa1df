/* papcoll_core.h - the MPI-free core of papcoll: algorithms as schedules, the registry,
 * the symbolic verifier. Everything here builds and runs without MPI; the MPI executor
 * (include/papcoll.h) and the Python bindings (cffi) sit on top of it.
 *
 * Terms used throughout (defined once, here):
 *   P        number of ranks (processes) in the collective.
 *   count    number of elements each rank contributes; elem_size is bytes per element.
 *   PAP      process arrival pattern: when each rank enters the collective.
 *   schedule the program one rank runs for one all-reduce: SEND / RECV / REDUCE / COPY
 *            operations on buffer regions, each with the operations it waits for.
 */
#ifndef PAPCOLL_CORE_H
#define PAPCOLL_CORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The text between the cffi markers is read by python/papcoll/_core.py as the cdef of the
 * bindings, so it must stay plain C declarations (no macros, no preprocessor lines). */
/* cffi-begin */
typedef enum papcoll_status {
    PAPCOLL_OK = 0,
    PAPCOLL_ERR_ARGUMENT = 1,          /* invalid argument; the message names it */
    PAPCOLL_ERR_UNKNOWN_ALGORITHM = 2, /* no algorithm of that name is registered */
    PAPCOLL_ERR_UNSUPPORTED = 3,       /* the algorithm cannot handle this input */
    PAPCOLL_ERR_NO_MEMORY = 4,
    PAPCOLL_ERR_LIMIT = 5              /* input exceeds a documented size limit */
} papcoll_status;

/* The most segments a segmented algorithm cuts one vector into (segment_count of linear_tree
 * and slt; count / segment_elements of segmented_ring). Every segment costs a few operations
 * on every rank, so this bounds the work and memory a parameter can ask for: 2^20 segments
 * of 64 KiB are a 64 GiB vector. */
enum { PAPCOLL_MAX_SEGMENTS = 1048576 };

/* A tree of vertices (switches and hosts): every vertex but the root has a full-duplex link
 * to its parent. The simulator times messages on it; ring_topology lays its ring out on it
 * (only parent and rank_vertex matter there). Ranks run on vertices (usually the leaves, the hosts); a message between
 * ranks on different vertices crosses the links of the tree path between them, and those
 * links are shared with every other message crossing them (see simulate.c for the sharing
 * rule). Two ranks on one vertex talk through shared memory: local_latency and
 * local_seconds_per_byte on the per-rank resources, as on a crossbar. With a topology the
 * model's latency and seconds_per_byte are not used: the links carry their own. */
typedef struct papcoll_sim_topology {
    int32_t vertex_count;
    const int32_t *parent;               /* per vertex: its parent, -1 for the one root */
    const double *link_latency;          /* per vertex: latency of its link to the parent */
    const double *link_seconds_per_byte; /* per vertex: that link's time per byte, each way */
    const int32_t *rank_vertex;          /* per rank: the vertex it runs on */
    int32_t rank_count;                  /* entries in rank_vertex: must be P */
    double local_latency;                /* between two ranks on one vertex */
    double local_seconds_per_byte;
} papcoll_sim_topology;

/* The parameters a user chooses for an algorithm: the one home of every tunable. The
 * C config of a communicator (papcoll_config in papcoll.h) and the Python Config embed it,
 * and so does the context a schedule is built from. A zero-filled struct means "defaults";
 * fields an algorithm does not use are ignored. It must be identical on every rank.
 * Each field is declared once more, as a row of src/core/parameter_table.c (its kind,
 * range, command-line option, the algorithms that read it, one help line; listed by
 * papcoll_parameter_get): the checks, the communicator's copy, the agreement digest, the
 * Python Parameters and the command line's options are all made from that row. A new
 * parameter is a field here, a row there, and its use in its algorithm's file. */
typedef struct papcoll_parameters {
    int64_t segment_elements;     /* segmented_ring: elements per segment; 0 = default; the
                                     vector may hold at most PAPCOLL_MAX_SEGMENTS of them */
    int32_t segment_count;        /* linear_tree, slt, straggler: segments the vector is
                                     cut into; 0 = P;
                                     at most PAPCOLL_MAX_SEGMENTS and at most count */
    const int32_t *rank_order;    /* ring, segmented_ring: the ranks in ring order (a
                                     permutation), or NULL */
    int32_t rank_order_count;     /* entries in rank_order: 0 or P */
    const char *schedule;         /* recursive_multiplying: the schedule in Ruefenacht
                                     et al. 2017's language, e.g. "a4,a3"; NULL or "": the default for P */
    const char *inner_algorithm;  /* hr2: the all-reduce inside groups (NULL: ring) */
    const char *outer_algorithm;  /* hr1, hr2: the all-reduce across groups (NULL:
                                     recursive_doubling) */
    const papcoll_sim_topology *tree; /* the tree the ranks run on, or NULL: ring_topology
                                         lays its ring on it, auto (papcoll_choose)
                                         simulates its candidates on it */
} papcoll_parameters;

/* What a parameter holds (papcoll_parameter_info.kind); the kind decides how it is
 * checked, copied, compared across ranks and given on the command line. */
typedef enum papcoll_parameter_kind {
    PAPCOLL_PARAMETER_WHOLE_NUMBER = 0, /* int32_t or int64_t (width), in minimum..maximum */
    PAPCOLL_PARAMETER_TEXT = 1,         /* const char *, NULL for the default */
    PAPCOLL_PARAMETER_ALGORITHM = 2,    /* const char *: a flat all-reduce's name, or NULL */
    PAPCOLL_PARAMETER_RANK_LIST = 3,    /* const int32_t * of P entries (a permutation), its
                                           count in the int32_t field at count_offset */
    PAPCOLL_PARAMETER_TREE = 4          /* const papcoll_sim_topology *, or NULL */
} papcoll_parameter_kind;

/* One parameter of papcoll_parameters, as declared in src/core/parameter_table.c. */
typedef struct papcoll_parameter_info {
    const char *name;          /* the field of papcoll_parameters and of Python's Parameters */
    int32_t kind;              /* papcoll_parameter_kind */
    int32_t width;             /* bytes of the field (a whole number: 4 or 8) */
    size_t offset;             /* offsetof(papcoll_parameters, name) */
    size_t count_offset;       /* a rank list: offsetof its count field; else 0 */
    int64_t minimum;           /* a whole number: the least value accepted */
    int64_t maximum;           /* a whole number: the greatest value accepted */
    const char *option;        /* the `papcoll` commands' option ("--segment-count"), or NULL
                                  where a command sets it otherwise (tree: --network) */
    const char *metavar;       /* the option's value in help, e.g. "N", "ALGORITHM" */
    const char *unset;         /* what 0 or NULL means, e.g. "P segments" */
    const char *algorithms;    /* the algorithms that read it, comma-separated */
    const char *help;          /* one line */
} papcoll_parameter_info;

int32_t papcoll_parameter_count(void);
/* Fills info for the parameter at index (0 .. count-1); PAPCOLL_ERR_ARGUMENT if out of range. */
int papcoll_parameter_get(int32_t index, papcoll_parameter_info *info);

/* The constants that steer auto's decision (src/core/select.c) and the MPI library's use of
 * it (src/mpi/choose.c), once fixed at compile time: one struct a communicator's config
 * holds (papcoll_config.tuning) and PAPCOLL_TUNING overrides field by field. Each field is
 * declared once more, as a row of src/core/tuning_table.c (kind, default, range, where it
 * is read, one help line; listed by papcoll_tuning_get): the defaults, the checks, the
 * environment's parser, the digest the ranks compare and `papcoll settings` come from it.
 * Every rank must hold the same values, or the ranks decide differently (a hang). */
typedef struct papcoll_tuning {
    double margin;                     /* share of e-bar a candidate must beat native by */
    double alternative_share;          /* a candidate within this share is still measured */
    double decision_share;             /* the decision budget's share of the calls it serves */
    double calls_per_decision;         /* calls one decision is taken to serve */
    double operations_per_second;      /* operations built and simulated a second */
    int64_t budget_floor;              /* the least budget, in operations */
    int64_t most_simulated_operations; /* the most operations one candidate may hold */
    double switch_share;               /* the closed loop's margin (src/mpi/native_feedback.c) */
    double switch_seconds;             /* and its absolute part */
    double switch_significance;        /* and the rank test's p it needs (src/mpi/rank_test.c) */
    int64_t samples_to_compare;        /* the closed loop's measurements a side needs */
    int64_t probe_every;               /* then it runs the other side every this many calls */
    int64_t probe_phase;               /* at this call of each probe_every (below it) */
    int64_t neighbour_levels;          /* a new lateness level inherits from this far */
    double arrival_jitter_seconds;     /* the least lateness taken for a pattern */
    int64_t history_starts;            /* a persistent request predicts from this many starts */
    int64_t flat_alternative_most_bytes; /* the largest vector whose flat alternative the
                                            closed loop measures (src/mpi/choose.c) */
    int64_t synchronous_send_bytes;    /* a chained send this large goes as MPI_Issend
                                          (src/mpi/executor.c) */
} papcoll_tuning;

/* The most measurements the closed loop keeps a side (samples_to_compare's bound), and the
 * most starts a persistent request's history keeps (history_starts' bound): array sizes. */
enum { PAPCOLL_TUNING_MOST_SAMPLES = 5, PAPCOLL_TUNING_MOST_HISTORY_STARTS = 15 };

/* What an environment setting's value is (papcoll_setting_info.kind). */
typedef enum papcoll_setting_kind {
    PAPCOLL_SETTING_SWITCH = 0,       /* 1/0, true/false, yes/no or on/off (any case): 1 or 0 */
    PAPCOLL_SETTING_WHOLE_NUMBER = 1, /* decimal digits alone, minimum .. maximum */
    PAPCOLL_SETTING_CHOICE = 2,       /* one of the words of choices: its index */
    PAPCOLL_SETTING_BYTE_COUNT = 3,   /* digits, then K, M or G (x 1024, also KB or KiB) or B */
    PAPCOLL_SETTING_TEXT = 4          /* its own grammar (PAPCOLL_TUNING's, ...): 0 */
} papcoll_setting_kind;

/* One environment variable of the C libraries whose value has a grammar, as declared in
 * src/core/environment_table.c: the one parser every reader of it calls (papcoll_comm_create,
 * the progress thread, the drop-in's MPI_Init, which checks every row). Whatever the kind,
 * the value is taken as written: spaces around it are refused. */
typedef struct papcoll_setting_info {
    const char *name;    /* the environment variable */
    int32_t kind;        /* papcoll_setting_kind */
    int64_t minimum;     /* WHOLE_NUMBER, BYTE_COUNT: the least value accepted */
    int64_t maximum;     /* ... and the greatest */
    const char *noun;    /* WHOLE_NUMBER: what the number is ("a whole number", "a core
                            number"), for the refusal */
    const char *note;    /* why the range is what it is, said with a refusal; "" for none */
    const char *choices; /* CHOICE: the words, comma separated, in the order of their index */
} papcoll_setting_info;

int32_t papcoll_setting_count(void);
/* Fills info for the setting at index (0 .. count-1); PAPCOLL_ERR_ARGUMENT if out of range. */
int papcoll_setting_get(int32_t index, papcoll_setting_info *info);
/* Parses text as the value of the setting `name` (a row's name): PAPCOLL_OK and *value (the
 * switch's 1 or 0, the number, the choice's index; 0 for TEXT), or PAPCOLL_ERR_ARGUMENT with
 * one line naming the variable, its value and what it accepts. text is the variable's
 * value, set and not empty (empty means unset, for every setting: the caller's default). */
int papcoll_setting_parse(const char *name, const char *text, int64_t *value, char *error,
                          size_t error_size);

/* What a tuning constant holds (papcoll_tuning_info.kind). */
typedef enum papcoll_tuning_kind {
    PAPCOLL_TUNING_REAL = 0,        /* double */
    PAPCOLL_TUNING_WHOLE_NUMBER = 1 /* int64_t */
} papcoll_tuning_kind;

/* One field of papcoll_tuning, as declared in src/core/tuning_table.c. */
typedef struct papcoll_tuning_info {
    const char *name;     /* the field, and its name in PAPCOLL_TUNING */
    int32_t kind;         /* papcoll_tuning_kind */
    size_t offset;        /* offsetof(papcoll_tuning, name) */
    double default_value;
    double minimum;       /* the least value accepted */
    double maximum;       /* the greatest value accepted */
    const char *read_in;  /* the source file that reads it */
    const char *help;     /* one line */
} papcoll_tuning_info;

int32_t papcoll_tuning_count(void);
/* Fills info for the constant at index (0 .. count-1); PAPCOLL_ERR_ARGUMENT if out of range. */
int papcoll_tuning_get(int32_t index, papcoll_tuning_info *info);
/* Fills tuning with every row's default. */
void papcoll_tuning_defaults(papcoll_tuning *tuning);
/* PAPCOLL_OK, or PAPCOLL_ERR_ARGUMENT with a message naming the first constant out of its
 * range (or not a whole number where it must be one) and the range. */
int papcoll_tuning_check(const papcoll_tuning *tuning, char *error, size_t error_size);
/* Sets the constants text names, "name=value,name=value" (PAPCOLL_TUNING's text), leaving
 * the others as they are: PAPCOLL_OK, or PAPCOLL_ERR_ARGUMENT with a message naming the
 * unknown name, the value that is not a number or the value out of range (tuning then
 * untouched). */
int papcoll_tuning_parse(const char *text, papcoll_tuning *tuning, char *error,
                         size_t error_size);
/* A digest of every constant's value (FNV-1a over the rows), which the ranks compare. */
uint64_t papcoll_tuning_digest(const papcoll_tuning *tuning);

/* Everything that may shape a schedule besides (P, rank, count, elem_size): the user's
 * parameters, and what the caller learns per communicator or per call. It must be identical
 * on every rank, or the ranks build schedules that do not match. A zero-filled context
 * means "defaults". */
typedef struct papcoll_context {
    papcoll_parameters parameters;
    const double *arrivals;       /* per call: predicted arrival time per rank (seconds), or
                                     NULL (slt, prr, straggler; auto's papcoll_choose) */
    int32_t arrival_count;        /* entries in arrivals: 0 or P */
    double tau;                   /* per call: time to transfer and reduce one segment (s);
                                     prr, straggler */
    int32_t keep_order;           /* per call: 1 when the op is not commutative, so schedules
                                     that reorder operands are refused (recursive_multiplying
                                     with merges) */
    const int32_t *groups;        /* per communicator: the group of each rank (any ids >= 0:
                                     a site, a node) for hr1, hr2, smp_*, or NULL */
    int32_t group_count;          /* entries in groups: 0 or P */
    const papcoll_tuning *tuning; /* auto's constants (papcoll_choose), or NULL: the
                                     defaults (papcoll_tuning_defaults) */
} papcoll_context;

typedef struct papcoll_algorithm_info {
    const char *name;
    const char *description;      /* one line */
    const char *source;           /* paper and section it follows */
    const char *limitations;      /* what it refuses, in words; enforced by the builder */
    int32_t commutative_only;     /* 1: reorders operands, so needs a commutative op */
    int32_t needs_arrivals;       /* 1: builds from arrival estimates and tau (PAP-aware) */
    int32_t needs_groups;         /* 1: builds from context->groups (hierarchical) */
    int32_t reduce_scatter;       /* 1: a reduce-scatter, not an all-reduce: rank r ends with
                                     block r of P near-equal blocks (rs_halving, priority_rs);
                                     papcoll_allreduce refuses it */
    /* 1: every result element is the canonical order's value, the rank-order left fold
     * ((x0 op x1) op x2) ... op x(P-1), whatever the count, segmentation and arrivals: the
     * algorithm keeps reproducible mode (the verifier proves it per schedule) */
    int32_t canonical_order;
} papcoll_algorithm_info;

int32_t papcoll_algorithm_count(void);
/* Fills info for the algorithm at index (0 .. count-1); PAPCOLL_ERR_ARGUMENT if out of range. */
int papcoll_algorithm_get(int32_t index, papcoll_algorithm_info *info);
/* Fills info for the named algorithm; PAPCOLL_ERR_UNKNOWN_ALGORITHM if there is none. */
int papcoll_algorithm_find(const char *name, papcoll_algorithm_info *info);

typedef struct papcoll_schedule papcoll_schedule;

/* The model of tau, the time to move and reduce one segment (Proficz 2018, Sect. 4), which the arrival
 * monitor measures or reads from PAPCOLL_TAU_MODEL: three numbers, latency,
 * seconds_per_byte, reduce_seconds_per_byte (seconds; in this order in model[]). Parses
 * PAPCOLL_TAU_MODEL's text, "latency=S,seconds_per_byte=S,reduce_seconds_per_byte=S" (each
 * name once, each value a finite number >= 0; what `papcoll calibrate` prints), into model:
 * PAPCOLL_OK, or PAPCOLL_ERR_ARGUMENT with the reason in why (model then untouched). */
int papcoll_tau_model_parse(const char *text, double model[3], char *why, size_t why_size);
/* tau = latency + segment_bytes x (seconds_per_byte + reduce_seconds_per_byte), kept > 0
 * (a model of zeros still orders segments). */
double papcoll_tau_model_tau(const double model[3], double segment_bytes);

/* Checks parameters for P ranks, row by row of the parameter table (ranges, a rank order
 * that is a permutation, a recursive_multiplying schedule that fits P, inner and outer
 * algorithms that are flat all-reduces, a tree that places P ranks): PAPCOLL_OK, or
 * PAPCOLL_ERR_ARGUMENT (or PAPCOLL_ERR_UNKNOWN_ALGORITHM) with a message naming the field.
 * papcoll_comm_create runs it, so a communicator never holds a bad parameter;
 * papcoll_schedule_build runs its O(1) part (ranges, counts), since the simulator builds P
 * schedules, and each builder refuses what it cannot build. */
int papcoll_parameters_check(const papcoll_parameters *parameters, int32_t ranks, char *error,
                             size_t error_size);

/* Builds the schedule of one rank. On failure *out is NULL and error (if not NULL) holds a
 * message naming the problem. Free the result with papcoll_schedule_free. */
int papcoll_schedule_build(const char *algorithm, int32_t ranks, int32_t rank, int64_t count,
                           int32_t elem_size, const papcoll_context *context,
                           papcoll_schedule **out, char *error, size_t error_size);
void papcoll_schedule_free(papcoll_schedule *schedule);
int64_t papcoll_schedule_op_count(const papcoll_schedule *schedule);
/* Writes the text dump (one operation per line) into text, truncated to size; returns the
 * length the whole dump needs, without the terminating NUL. */
size_t papcoll_schedule_dump(const papcoll_schedule *schedule, char *text, size_t size);

typedef struct papcoll_verify_options {
    /* Messages of at most this many bytes complete without a matching receive (eager);
     * larger ones block until their receive is posted (rendezvous). Negative: every
     * message is eager. The default, 0, makes every non-empty message rendezvous, the
     * strictest setting: a schedule free of deadlock here is free of it for any limit. */
    int64_t eager_limit_bytes;
    /* Also run every schedule with the send and receive buffers aliased (MPI_IN_PLACE). */
    int32_t check_in_place;
    /* 1: reproducible mode (docs/reproducible.md): every result element must be
     * the rank-order left fold ((x0 op x1) op x2) ... op x(P-1); a schedule that forms one
     * otherwise fails, its reason naming the element and the REDUCE's operands. */
    int32_t require_canonical_order;
} papcoll_verify_options;

typedef struct papcoll_verify_report {
    int32_t ok;                   /* 1: every property holds */
    int32_t violation_rank;       /* first violation: rank, op index (-1 if none / global) */
    int32_t violation_op;
    char reason[256];
    int32_t order_preserved;      /* every result combines contributions in rank order */
    int32_t rounds;               /* communication rounds on the critical path: a message
                                     completes one round after both its SEND and its RECV
                                     have started (a rank may have several in flight);
                                     empty messages take none */
    /* The counts below saturate at INT64_MAX (hand-written schedules can pass it). */
    int64_t max_bytes_sent;       /* by the busiest rank */
    int64_t max_bytes_received;
    int64_t total_bytes_sent;     /* over all ranks */
    int64_t lower_bound_bytes;    /* ceil(2 (P-1)/P x count) x elem_size, Patarasuk & Yuan 2009, Lemma 4 */
    int64_t max_ops;              /* operations in the longest schedule */
    int64_t max_scratch_elements; /* scratch the hungriest rank declares */
    /* Reproducible mode (appended): every result element is the rank-order left fold
     * ((x0 op x1) op x2) ... op x(P-1), bit for bit the same whatever the algorithm, so
     * the algorithm keeps reproducible mode; else canonical_break says where it is not. */
    int32_t canonical_order;
    char canonical_break[256];
} papcoll_verify_report;

/* Builds the schedules of all P ranks and runs them symbolically. Returns PAPCOLL_OK when the
 * verification ran (report->ok then says whether the schedules are correct), or an error
 * code with a message when a schedule could not be built. */
int papcoll_verify(const char *algorithm, int32_t ranks, int64_t count, int32_t elem_size,
                   const papcoll_context *context, const papcoll_verify_options *options,
                   papcoll_verify_report *report, char *error, size_t error_size);

/* Verifies schedules given by the caller (schedules[r] is rank r's), e.g. hand-written
 * ones. All must have the same P, count and elem_size. */
int papcoll_verify_schedules(papcoll_schedule *const *schedules, int32_t ranks,
                             const papcoll_verify_options *options,
                             papcoll_verify_report *report, char *error, size_t error_size);

/* Parses a text dump (the format papcoll_schedule_dump writes) back into a schedule. */
int papcoll_schedule_parse(const char *text, papcoll_schedule **out, char *error,
                           size_t error_size);

const char *papcoll_status_name(int status);

/* A fixed rule by size (src/core/select.c): what "auto" runs where MPI_Allreduce cannot be
 * called (counts beyond INT_MAX). Never an algorithm that needs a commutative op when
 * commutative is 0. */
const char *papcoll_select_default(int32_t ranks, int64_t count, int64_t elem_size,
                                   int32_t commutative);


/* The contention-free logical ring of Patarasuk & Yuan 2009, Sect. 4 on a tree: the ranks in depth-first order of
 * their vertices (children in index order, a vertex's own ranks first, in rank order), so
 * every link carries at most one ring message in each direction. order gets
 * tree->rank_count entries. PAPCOLL_OK, or PAPCOLL_ERR_ARGUMENT naming what is wrong. */
int papcoll_tree_ring_order(const papcoll_sim_topology *tree, int32_t *order, char *error,
                            size_t error_size);

/* ---- recursive multiplying schedules (src/core/algorithms/recursive_multiplying.c) -------
 * Checks a schedule string of Ruefenacht et al. 2017's language for P ranks: PAPCOLL_OK, or
 * PAPCOLL_ERR_ARGUMENT with a message naming the stage at fault. reorders (may be NULL) is
 * set to 1 when the schedule merges (mRgGaB / nRgGaB), which needs a commutative op. */
int papcoll_rm_check(const char *schedule, int32_t ranks, int32_t *reorders, char *error,
                     size_t error_size);
/* Writes the schedule an empty string runs for P (the default), or MPICH's recursive
 * doubling as a schedule string; returns the length the text needs (without the NUL). */
size_t papcoll_rm_default(int32_t ranks, char *text, size_t size);
size_t papcoll_rm_recursive_doubling(int32_t ranks, char *text, size_t size);
/* The most vectors one rank may receive in one stage: every base B is at most this, and so
 * is B - 1 plus the extras a merge mRgGaB sends each block member (ceil(R / G)).
 * papcoll_rm_check refuses a schedule needing more; python's enumeration obeys the same. */
enum { PAPCOLL_RM_MAX_BASE = 1024 };

/* ---- the discrete-event simulator (src/core/sim/simulate.c) ------------------------------
 * Runs the schedules of all P ranks against a LogGP-family cost model, on a crossbar or on a
 * tree of switches and hosts. Hockney (alpha, beta, gamma) is latency = alpha,
 * seconds_per_byte = beta, reduce_seconds_per_byte = gamma, the rest 0; Ruefenacht et al.
 * 2017's pipelining postal model is latency = alpha_p, overhead = alpha_r. */
typedef struct papcoll_sim_model {
    double latency;                 /* L: wire time of a message; overlaps with everything */
    double overhead;                /* o (o_s): the sender's CPU time per message, not
                                       overlapped */
    double receive_overhead;        /* o_r: the receiver's CPU time per message (LogP's
                                       o_r; over TCP a send costs a system call, a receive
                                       far less); set it equal to overhead for one o */
    double gap;                     /* g: least time between two messages leaving one NIC */
    double seconds_per_byte;        /* G: NIC time per byte, at the sender and the receiver */
    double reduce_seconds_per_byte; /* gamma: CPU time per byte reduced */
    double copy_seconds_per_byte;   /* CPU time per byte copied */
    int64_t eager_limit_bytes;      /* messages up to this size complete without their
                                       receive; larger wait for it (rendezvous); -1: all eager */
    double burst_bytes;             /* a token bucket of this many bytes on each NIC's send
                                       and receive side (a shaped link, as tc's tbf or a
                                       cloud's rate limit): bytes covered by tokens cost
                                       burst_seconds_per_byte, not G; 0: none. Crossbar
                                       only. */
    double burst_seconds_per_byte;  /* the unshaped path's time per byte (what a burst
                                       costs) */
} papcoll_sim_model;



typedef struct papcoll_sim_options {
    const papcoll_sim_topology *topology; /* NULL: a crossbar with the model's L and G */
    double noise_mean;          /* seconds: every op starts late by an exponentially
                                   distributed delay of this mean (OS noise); 0: none */
    uint64_t noise_seed;        /* the same seed gives the same delays */
    int32_t record_timeline;    /* 1: fill result->timeline */
    int64_t max_operations;     /* refuse (PAPCOLL_ERR_LIMIT) when the schedules of all
                                   ranks hold more ops than this; 0: no limit. About 40
                                   bytes per op are needed (result->memory_bytes). */
    const double *own_work;     /* P seconds, or NULL (none): how long after its arrival
                                   each rank's schedule starts, papcoll's own work there
                                   (the MPI library's monitor receiving the others'
                                   predictions, waits included: papcoll_last_own_seconds);
                                   its CPU is busy then, its NIC not; e-bar still counts
                                   from the arrival */
} papcoll_sim_options;

typedef struct papcoll_sim_span {
    int32_t rank, op;           /* op: index in the rank's schedule */
    int32_t kind;               /* 0 SEND, 1 RECV, 2 REDUCE, 3 COPY */
    int32_t peer;               /* SEND/RECV: the other rank; else -1 */
    int64_t bytes;
    double start, end;          /* SEND: offered; RECV: posted; REDUCE/COPY: CPU start */
} papcoll_sim_span;

typedef struct papcoll_sim_result {
    double average_elapsed;         /* e-bar: mean over ranks of finish - arrival, seconds */
    double max_elapsed;
    double makespan;                /* last finish - first arrival */
    int64_t operations;             /* operations simulated, all ranks together */
    int64_t events;                 /* events the engine processed */
    int64_t memory_bytes;           /* the engine's largest arrays, summed (not the timeline) */
    double build_seconds;           /* wall time spent building and converting the schedules */
    double run_seconds;             /* wall time spent running the events */
    papcoll_sim_span *timeline;     /* record_timeline: every op, rank by rank; else NULL */
    int64_t timeline_count;
    int64_t *link_bytes;            /* with a topology: bytes over each link, [2v] from
                                       vertex v up to its parent, [2v + 1] down; else NULL */
    int32_t link_count;             /* 2 x vertex_count, or 0 */
} papcoll_sim_result;

/* Simulates one all-reduce. arrivals: when each rank reaches the call (P seconds, or NULL for
 * all 0); the context's arrivals are the *predictions* slt, prr and straggler build from,
 * which may differ. options may be NULL (crossbar, no noise, no timeline). finish (P
 * entries, may be NULL) gets each rank's finish time. Returns PAPCOLL_OK, or an error code
 * with a message (bad model or topology, a schedule that cannot be built, deadlock). Free
 * what the result holds with papcoll_sim_result_release, whatever the status. */
int papcoll_simulate(const char *algorithm, int32_t ranks, int64_t count, int32_t elem_size,
                     const papcoll_context *context, const papcoll_sim_model *model,
                     const papcoll_sim_options *options, const double *arrivals,
                     double *finish, papcoll_sim_result *result, char *error,
                     size_t error_size);
void papcoll_sim_result_release(papcoll_sim_result *result);

/* What "auto" runs for a call, and why (src/core/select.c). */
typedef struct papcoll_choice {
    char algorithm[64];        /* a registered name, or "native": MPI_Allreduce itself (over
                                  MPI, auto may name "native:NAME": one of the MPI
                                  library's own algorithms, docs/mpi.md) */
    /* 1: the predicted arrivals were not all equal, and the cost model compared the PAP-aware
     * algorithms that accept the call with native; with from_groups also 0, auto ran native
     * without simulating */
    int32_t from_arrivals;
    double predicted_seconds;  /* the model's e-bar for the algorithm it chose
                                  (model_algorithm; the MPI library's closed loop may run
                                  the alternative instead) */
    double native_seconds;     /* the model's e-bar for MPI_Allreduce (its likely algorithm);
                                  native_seconds / predicted_seconds is the predicted gain */
    /* 1: the context's groups formed a hierarchy (two groups or more, one with two ranks or
     * more) on a tree it gave (parameters.tree), and the cost model weighed the hierarchical
     * algorithms too, balanced or not (appended last: the fields before keep their offsets) */
    int32_t from_groups;
    /* The closed loop (appended: the fields before keep their offsets). The
     * model's time "after the last arrival" is its e-bar less wait_seconds, the mean wait
     * for the last arrival, which no algorithm changes; the measured one is from the last
     * arrival to completion (the latest exit less the latest entry). */
    double wait_seconds;       /* the predicted mean wait for the last arrival */
    /* what the model compares its choice with: "native" where it chose a papcoll
     * algorithm, its best papcoll candidate where it chose native, "" where none */
    char alternative[64];
    double alternative_seconds;          /* the model's e-bar for the alternative */
    char model_algorithm[64];            /* the model's choice (algorithm may differ) */
    /* The MPI library's observations (0 in papcoll_choose): the median measured time from
     * the last arrival (papcoll's own work before the algorithm done) to completion of the
     * last (at most 5) calls of each, in this call's shape and lateness level, and how many
     * calls were measured. */
    double observed_seconds;             /* of the model's choice */
    double alternative_observed_seconds; /* of the alternative */
    int32_t observed_calls, alternative_observed_calls;
    /* 1: this call ran the alternative to measure it (a probe) */
    int32_t probe;
    /* 1: the observations overruled the model (algorithm is the alternative, not a probe) */
    int32_t overruled;
    /* This rank's time in auto's own path in this call, before the algorithm ran: the
     * monitor's gathering of arrivals, the decision, the plan (0 in papcoll_choose). */
    double path_seconds;
    /* The rank whose simulation made this decision: where the MPI library had not decided
     * this shape and arrival profile before, the rank predicted to arrive first decided
     * while it waited, and sent the decision to the others, so that it costs a late rank
     * one receive, not a simulation (a non-blocking post or a persistent start, which may
     * wait for no message, decides on every rank: this rank); -1: a decision kept from an
     * earlier call (of any kind: a post finds a blocking call's), or made by
     * papcoll_choose. */
    int32_t decided_by;
    /* This rank's time on the decision in this call: simulating (the decider), waiting for
     * the decider's message, or looking up a kept one (0 in papcoll_choose). */
    double decision_seconds;
    /* Where a rules file decided (docs/rules.md): "FILE:LINE" of the rule, the file's path
     * shortened from the left to fit; "" where auto's model did (0 in papcoll_choose). */
    char rule[256];
} papcoll_choice;

/* auto's decision for a call of P ranks: context->arrivals (P predicted arrival times, or
 * NULL) and tau, context->groups (where they form a hierarchy, the hierarchical algorithms
 * are candidates too), context->parameters.tree (where given, the candidates are simulated
 * on it, else on a crossbar), and the algorithms' parameters; model: the cost model (the
 * monitor's, or `papcoll calibrate`'s). Deterministic: the same input gives the same choice on every
 * rank. PAPCOLL_OK, or PAPCOLL_ERR_ARGUMENT for a NULL choice or model or a bad shape. */
int papcoll_choose(int32_t ranks, int64_t count, int32_t elem_size, int32_t commutative,
                   const papcoll_context *context, const papcoll_sim_model *model,
                   papcoll_choice *choice);
/* auto's decision in reproducible mode (src/core/select_canonical.c): among the algorithms
 * that keep the canonical order (never native), the least predicted e-bar for
 * context->arrivals (NULL: balanced; the PAP-aware candidates are then built on balanced
 * predictions). PAPCOLL_OK; PAPCOLL_ERR_ARGUMENT for a NULL argument or a bad shape;
 * PAPCOLL_ERR_UNSUPPORTED where no candidate builds. */
int papcoll_choose_reproducible(int32_t ranks, int64_t count, int32_t elem_size,
                                const papcoll_context *context,
                                const papcoll_sim_model *model, papcoll_choice *choice);
/* cffi-end */

#ifdef __cplusplus
}
#endif

#endif /* PAPCOLL_CORE_H */
