/* papcoll.h - the public C API of papcoll: all-reduce for MPI programs whose processes do
 * not arrive at the collective together. This is the only header a user includes.
 *
 *   papcoll_comm *pc;
 *   papcoll_comm_create(MPI_COMM_WORLD, NULL, &pc);          // NULL config: defaults
 *   papcoll_allreduce(pc, send, recv, n, MPI_FLOAT, MPI_SUM); // MPI_Allreduce semantics
 *   papcoll_comm_free(&pc);
 *
 * Every function returns MPI_SUCCESS or an MPI error class (MPI_ERR_COUNT, MPI_ERR_TYPE,
 * MPI_ERR_OP, MPI_ERR_ARG, ...); papcoll_error_string(code) then says what was wrong.
 *
 * Python binds the parts between the cffi markers (python/papcoll/_core.py reads them from
 * this file). The functions outside them take MPI types, whose C definitions differ from one
 * MPI library to another; each has a twin at the end that takes the handle's address.
 */
#ifndef PAPCOLL_H
#define PAPCOLL_H

#include <mpi.h>
#include <stdint.h>

#include "papcoll_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* cffi-begin */
typedef struct papcoll_comm papcoll_comm;
typedef struct papcoll_persistent papcoll_persistent; /* papcoll_allreduce_init */

/* Where `auto` and the PAP-aware algorithms (slt, prr, straggler) get each rank's predicted
 * arrival time. */
typedef enum papcoll_arrival_source {
    /* From papcoll_compute_begin + papcoll_edge (or papcoll_predict_arrival) during the
     * compute phase before each call (Proficz 2018, Sect. 3). A call where some rank gave no valid
     * prediction runs the plain ring (auto: MPI_Allreduce) on every rank. */
    PAPCOLL_ARRIVALS_EDGE = 0,
    /* From the arrival times seen in earlier calls (a moving average per rank), for
     * programs that never call edge(): the first call runs the plain ring (auto:
     * MPI_Allreduce). */
    PAPCOLL_ARRIVALS_HISTORY = 1,
    /* The default: history, and edge() when the program calls it. Calls run in periods (1,
     * 2, 4, then 8 calls); at a period's end every rank sends the others when it entered
     * each call, on rank 0's clock, and how long it waited (eager, no collective), and
     * every rank derives the same arrival pattern from those entries. If every rank
     * made a prediction before every call of the period and arrivals were spread, the
     * predictions travel per call as in EDGE (one small message round) until a call lacks
     * one; else the period's pattern predicts. No per-call messages otherwise. */
    PAPCOLL_ARRIVALS_AUTOMATIC = 2
} papcoll_arrival_source;

/* How the hierarchical algorithms (hr1, hr2, smp_binomial, smp_butterfly) group ranks. */
typedef enum papcoll_grouping {
    /* One group per shared-memory node (MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)). */
    PAPCOLL_GROUPS_SHARED_MEMORY = 0,
    /* By papcoll_config.group_color: ranks with the same color form a group. */
    PAPCOLL_GROUPS_COLOR = 1
} papcoll_grouping;

/* Who advances non-blocking and persistent all-reduces while the program computes
 * (src/mpi/progress.c; docs/nonblocking.md measures each). */
typedef enum papcoll_progress {
    /* Inside MPI and papcoll calls: papcoll_wait/papcoll_test/papcoll_progress_poll, and
     * every MPI call that drives MPI's progress, MPI_Wait and MPI_Test on the request
     * included, through MPI's progress hook (MPICH >= 4.3: MPIX_Async_start; Open MPI >= 4:
     * opal_progress_register). Where papcoll_mpi_advances_requests() says 0 (no hook), only
     * papcoll's calls advance it: complete its requests with papcoll_wait/papcoll_test. */
    PAPCOLL_PROGRESS_CALLS = 0,
    /* Also a progress thread, one per process, that advances every outstanding operation
     * while the program computes; needs MPI_THREAD_MULTIPLE (papcoll_comm_create refuses it
     * otherwise). PAPCOLL_PROGRESS_CPU=N pins it to core N. Measured without overlap under
     * Open MPI 5 (docs/nonblocking.md): prefer calls there. */
    PAPCOLL_PROGRESS_THREAD = 1
} papcoll_progress;
/* Options of a papcoll communicator. Start from papcoll_config_init() (or pass NULL). The
 * algorithm's parameters live in the embedded papcoll_parameters (papcoll_core.h), the same
 * struct a schedule is built from; the rest is what needs MPI. Every field must be the same
 * on every rank, except group_color. Whatever the config points to is copied at create. */
typedef struct papcoll_config {
    const char *algorithm;         /* a name from `papcoll algorithms`, or "auto" (default) */
    /* segments, rank order, recursive_multiplying's schedule (`papcoll schedules --ranks P`
     * lists them), hr1/hr2's inner and outer algorithms, ring_topology's tree: checked
     * against the communicator's size at create (papcoll_parameters_check). */
    papcoll_parameters parameters;
    /* Messages longer than this many elements are sent as several MPI messages, so counts
     * beyond INT_MAX work with MPI's int-count calls; 0 = 2^30. Tests lower it to exercise
     * the split on small buffers. */
    int64_t max_message_elements;
    papcoll_arrival_source arrival_source; /* default PAPCOLL_ARRIVALS_AUTOMATIC */
    papcoll_grouping grouping;     /* hr1, hr2, smp_*: default PAPCOLL_GROUPS_SHARED_MEMORY */
    int32_t group_color;           /* PAPCOLL_GROUPS_COLOR: this rank's group, >= 0 */
    /* 1: before each call the ranks check that they make the same call (count, datatype,
     * op, algorithm and its parameters), so a mismatch is an error on every rank instead
     * of a hang; costs one small MPI_Allreduce per call. PAPCOLL_CHECK=1 in the environment
     * turns it on too; one rank asking turns it on for all. */
    int check_agreement;
    /* Non-blocking and persistent calls: who advances them (above). PAPCOLL_PROGRESS=calls or
     * thread in the environment overrides it; it must be the same on every rank. */
    papcoll_progress progress;
    /* 1: reproducible mode (docs/reproducible.md): every result is the canonical
     * order's value, the rank-order left fold ((x0 op x1) op x2) ... op x(P-1), bit for bit
     * whatever the algorithm, the arrivals or auto's choice (for a given communicator
     * size). Algorithms that do not keep that order are refused for floating-point data and
     * user-defined ops (integers and bitwise ops are exact already), auto picks among those
     * that do, never MPI_Allreduce. PAPCOLL_REPRODUCIBLE=1 in the environment turns it on
     * (0 off); it must be the same on every rank (papcoll_comm_create refuses otherwise). */
    int reproducible;
    /* A rules file (docs/rules.md): JSON rules, each naming the algorithm for calls of a
     * communicator size, byte count, datatype, op and arrival class, consulted by auto
     * before its model; NULL or "": PAPCOLL_RULES in the environment, where set. Read and
     * checked at create (a bad, contradictory or inapplicable rule is refused naming its
     * line); its contents must be the same on every rank. Needs algorithm "auto" and
     * reproducible mode off. */
    const char *rules_file;
    /* The constants that steer auto (papcoll_tuning, papcoll_core.h: margins, the
     * decision's budget); papcoll_config_init sets the defaults. PAPCOLL_TUNING in the
     * environment ("margin=0.1,budget_floor=65536") overrides it field by field. Checked at
     * create (a value out of range is refused naming it); it must be the same on every rank
     * (papcoll_comm_create compares a digest). */
    papcoll_tuning tuning;
} papcoll_config;

void papcoll_config_init(papcoll_config *config);
/* The fields of papcoll_config, by index (0, 1, ... until MPI_ERR_ARG): each one's name and
 * whether every rank must give it the same value (papcoll_comm_create checks those and fails
 * on every rank, naming the field, where they differ; src/mpi/config_agreement.c). */
int papcoll_config_field(int32_t index, const char **name, int32_t *must_agree);
/* cffi-end */

/* Creates a papcoll communicator over a private duplicate of comm (collective over comm). */
int papcoll_comm_create(MPI_Comm comm, const papcoll_config *config, papcoll_comm **out);

/* Reproducible mode (docs/reproducible.md), for callers that route calls themselves (the
 * drop-in library). What PAPCOLL_REPRODUCIBLE asks: *on is 1 or 0 (0 when unset);
 * MPI_ERR_ARG, with the message for papcoll_error_string, when it is not 1/0, true/false,
 * yes/no or on/off. */
int papcoll_reproducible_requested(int *on);
/* An on/off environment variable of the settings table (PAPCOLL_REPRODUCIBLE, PAPCOLL_CHECK;
 * papcoll_setting_parse in papcoll_core.h): *on is 1 for 1, true, yes or on, 0 for 0, false,
 * no or off (any case, no spaces around) and when unset or empty; MPI_ERR_ARG, with the
 * message naming the variable for papcoll_error_string, otherwise. */
int papcoll_environment_switch(const char *variable, int *on);
/* 1 where the bits of an all-reduce of datatype with op depend on the order the
 * contributions are combined in (floating-point data, min and max and MINLOC/MAXLOC on it
 * included: -0.0 and +0.0 tie; user-defined ops), 0 where any order gives the same bits
 * (integers, bitwise and logical ops, MINLOC/MAXLOC on integer pairs). */
int papcoll_order_matters(MPI_Datatype datatype, MPI_Op op);
/* cffi-begin */
/* Frees it and sets *pc to NULL (collective, as it frees the duplicate communicator). Its
 * non-blocking all-reduces still running are completed first, as MPI_Comm_free lets
 * pending operations complete (their requests stay valid; every rank advances them in its
 * own free, and MPI's calls do where MPI's hook runs papcoll: docs/nonblocking.md); its
 * persistent requests must be freed before (MPI_ERR_PENDING otherwise). */
int papcoll_comm_free(papcoll_comm **pc);

/* Chooses the algorithm of later calls: a registered name or "auto". Must be the same on
 * every rank. Unknown names return MPI_ERR_ARG. */
int papcoll_set_algorithm(papcoll_comm *pc, const char *name);
/* The algorithm set ("auto" or a name). */
const char *papcoll_get_algorithm(const papcoll_comm *pc);
/* Sets the recursive_multiplying schedule of later calls (NULL or "": the default); checked
 * against the communicator's size. Must be the same on every rank. MPI_ERR_PENDING while a
 * non-blocking call of pc runs or a persistent request of it lives. */
int papcoll_set_schedule(papcoll_comm *pc, const char *schedule);
/* cffi-end */
/* The algorithm a call with these arguments would run (resolves "auto": a registered name,
 * "native" or "native:NAME" (one of the MPI library's own algorithms), from the arrival pattern of the last period as the next call without
 * per-call predictions would see it; local, no message). */
int papcoll_resolve_algorithm(papcoll_comm *pc, int64_t count, MPI_Datatype datatype, MPI_Op op,
                              const char **name);

/* MPI_Allreduce semantics: MPI_IN_PLACE as sendbuf, every predefined datatype and op,
 * user-defined ops (non-commutative ones need an order-keeping algorithm), count 0, count
 * below the number of ranks. Every rank gets a bitwise identical result. */
int papcoll_allreduce(papcoll_comm *pc, const void *sendbuf, void *recvbuf, int count,
                      MPI_Datatype datatype, MPI_Op op);
/* The same with a 64-bit count (counts beyond 2^31). */
int papcoll_allreduce_c(papcoll_comm *pc, const void *sendbuf, void *recvbuf, MPI_Count count,
                        MPI_Datatype datatype, MPI_Op op);

/* ---- non-blocking and persistent all-reduce (docs/nonblocking.md) -----------------------
 * MPI_Iallreduce's semantics: the call returns at once with an MPI request; sendbuf and
 * recvbuf belong to papcoll until the request completes. The request is a generalized MPI
 * request (MPI_Grequest_start), so it completes through MPI_Wait, MPI_Test, MPI_Waitall,
 * ... mixed with the program's own requests, where something advances it (papcoll_progress
 * above); papcoll_wait and papcoll_test always work. Several may be outstanding on one
 * communicator; every rank posts them in the same order, as MPI requires of collectives.
 * Errors of the operation come back from the completing call. auto decides at the post
 * from the arrival pattern the communicator learnt in earlier blocking calls (a post cannot
 * wait for messages; docs/nonblocking.md), or runs MPI_Iallreduce itself as native. */
int papcoll_iallreduce(papcoll_comm *pc, const void *sendbuf, void *recvbuf, int count,
                       MPI_Datatype datatype, MPI_Op op, MPI_Request *request);
int papcoll_iallreduce_c(papcoll_comm *pc, const void *sendbuf, void *recvbuf,
                         MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                         MPI_Request *request);
/* Persistent (MPI_Allreduce_init's semantics): collective, builds the plan once on a
 * private duplicate communicator; each papcoll_start then posts one all-reduce of these
 * arguments and gives its request, which completes like papcoll_iallreduce's. A start while
 * the previous one's request is not yet completed is refused. Every start sends this
 * rank's start time to the others, so auto and the PAP-aware algorithms decide each start
 * from the arrivals of the starts before it, per request: a persistent request is one call
 * site that every rank agrees on. */
int papcoll_allreduce_init(papcoll_comm *pc, const void *sendbuf, void *recvbuf,
                           MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                           papcoll_persistent **out);
int papcoll_start(papcoll_persistent *persistent, MPI_Request *request);
/* The same, and finished(argument, error, message) is called once the operation is done
 * (error: an MPI error class or MPI_SUCCESS), before its request completes, from whatever
 * advanced it: possibly inside MPI's progress engine, so it may post (MPI_Isend) but must
 * not wait. For completion routes of one's own: the drop-in library completes the
 * program's persistent request with it (src/pmpi/nonblocking_calls.c). */
int papcoll_start_notifying(papcoll_persistent *persistent, MPI_Request *request,
                            void (*finished)(void *argument, int error, const char *message),
                            void *argument);
/* papcoll_iallreduce_c with the same notice. With a notice, the owner reports the error
 * (message: papcoll's words, "" on success, valid during the call only): the request itself
 * then completes with MPI_SUCCESS, since MPI would raise a generalized request's error on
 * MPI_COMM_SELF under a message of its own ("user request free function returned error
 * code N"). The drop-in library raises it on the program's communicator instead. */
int papcoll_iallreduce_notifying(papcoll_comm *pc, const void *sendbuf, void *recvbuf,
                                 MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                                 MPI_Request *request,
                                 void (*finished)(void *argument, int error,
                                                  const char *message),
                                 void *argument);
/* Ranks whose calls differ in count or datatype (erroneous: MPI requires the same) are
 * found by papcoll on some ranks only: a receive of the wrong size (a forced algorithm), or
 * auto's decision made for another count. The ranks that did not find it wait inside the
 * operation for a rank that has left it, and nothing can complete that wait: they may be
 * inside the MPI's own all-reduce. With ends_job 0 (the default) the call that found it
 * returns the error (MPI_ERR_TRUNCATE or MPI_ERR_ARG) and the program decides what to do;
 * with 1 the rank that finds it prints papcoll's message on stderr and ends the job with
 * MPI_Abort, as the MPI itself would on a truncated message. The drop-in library sets 1: the
 * program it runs does not know papcoll is there. Process-wide; any thread. */
void papcoll_set_mismatch_ends_job(int ends_job);
/* Completes the request like MPI_Wait / MPI_Test (any MPI request; papcoll's advance
 * meanwhile, whatever the progress setting). */
int papcoll_wait(MPI_Request *request, MPI_Status *status);
int papcoll_test(MPI_Request *request, int *flag, MPI_Status *status);
/* cffi-begin */
/* Frees an inactive persistent request and sets *persistent to NULL (local); refused while
 * a start's request is not completed. */
int papcoll_persistent_free(papcoll_persistent **persistent);
/* What auto chose for the persistent request's last start (zeros before the first), and
 * how many starts it has made. */
int papcoll_persistent_last_choice(const papcoll_persistent *persistent,
                                   papcoll_choice *choice, int64_t *starts);
/* Advances every outstanding operation of the process once, without blocking: for a
 * program that computes between posts and waits under PAPCOLL_PROGRESS_CALLS on an MPI
 * without the progress hook. Returns MPI_SUCCESS (an operation's error comes back from its
 * completion). */
int papcoll_progress_poll(void);
/* 1 where MPI's own completion calls (MPI_Wait, MPI_Waitall, ...) advance papcoll's
 * operations in this process: MPI's progress hook (MPICH >= 4.3, Open MPI >= 4), or a
 * running progress thread;
 * 0 where only papcoll_wait / papcoll_test / papcoll_progress_poll do. */
int papcoll_mpi_advances_requests(void);
/* The tags of pc's non-blocking all-reduces (docs/nonblocking.md, "Tags"): how many of its
 * posts are in flight on this rank holding their tag ranges now (*holding), and how many
 * posts so far had to wait for an earlier one's range (*waited; only where the counter came
 * round onto a range still in flight). Either pointer may be NULL. */
int papcoll_tag_holders(papcoll_comm *pc, int *holding, int64_t *waited);
/* ---- the arrival monitor (Proficz 2018, Sect. 3): predictions for auto, slt, prr, straggler
 * In a loop of compute phases each followed by an all-reduce on pc:
 *   papcoll_compute_begin(pc);  ...half the work...  papcoll_edge(pc, 0.5);  ...rest...
 *   papcoll_allreduce(pc, ...);
 * edge() predicts this rank's arrival as begin + (now - begin) / fraction. Under
 * PAPCOLL_ARRIVALS_EDGE, and AUTOMATIC in its edge mode, it sends the prediction to every
 * other rank at once (small messages, so they travel while this rank computes), and the
 * next call of auto or of a PAP-aware algorithm on pc gathers all predictions and decides
 * or builds its schedule from them; AUTOMATIC outside its edge mode only notes that a
 * prediction was made. Only the first prediction per compute phase counts. A fraction
 * outside (0, 1], an edge() before compute_begin(), or a prediction that is not finite,
 * lies in the past of compute_begin() or more than an hour ahead is refused with
 * MPI_ERR_ARG; if it was the phase's first it counts as no prediction, as does a call
 * before which some rank made none: under EDGE that call runs the plain ring (auto:
 * MPI_Allreduce) on every rank, under AUTOMATIC it runs on the last period's pattern.
 * Every rank always builds the same schedule. Times are put on rank 0's clock with offsets
 * measured when pc is created. These calls are local. */
int papcoll_compute_begin(papcoll_comm *pc);
int papcoll_edge(papcoll_comm *pc, double fraction);
/* A prediction made by the caller: this rank will call the next all-reduce in `seconds`. */
int papcoll_predict_arrival(papcoll_comm *pc, double seconds);
/* What the last call of auto or of a PAP-aware algorithm (slt, prr, straggler) ran on:
 * *predicted = 1 if it had usable predictions, 0 if not (the PAP-aware algorithms then
 * fell back to the ring, auto to MPI_Allreduce); arrivals (P entries, may be NULL) gets the
 * predicted arrival of each rank in seconds relative to the earliest, and *tau the tau it
 * used:
 *   tau = latency + ceil(count / P) x extent x (seconds_per_byte + reduce_seconds_per_byte),
 * its three numbers (also auto's cost model) measured at the first such call on pc, or,
 * where rank 0's environment has
 * PAPCOLL_TAU_MODEL=latency=S,seconds_per_byte=S,reduce_seconds_per_byte=S (what
 * `papcoll calibrate` prints), taken from there. Malformed PAPCOLL_TAU_MODEL text on any
 * rank fails those calls with MPI_ERR_ARG on every rank (src/mpi/monitor.c). The
 * arrivals are the predictions as gathered; schedules and auto's decision are made from
 * their arrival classes (src/mpi/arrival_class.h). */
int papcoll_last_prediction(const papcoll_comm *pc, int *predicted, double *arrivals,
                            double *tau);

/* This rank's time in papcoll's own work in the last blocking call on pc, in seconds:
 * *before the algorithm, the monitor's (the calibration at the first call, the receives of
 * the other ranks' predictions or of a period's messages) and, for auto, the decision's;
 * *after it, the monitor's (a period's messages sent at its end). Both 0 after a call of
 * an algorithm that needs no arrivals; either pointer may be NULL. What a call's time holds
 * beyond its schedule, e.g. for a simulator of the schedule alone (bench/smpi_scale.py). */
int papcoll_last_own_seconds(const papcoll_comm *pc, double *before, double *after);

/* The choice of the last "auto" call on pc (zeros before the first). */
int papcoll_last_choice(const papcoll_comm *pc, papcoll_choice *choice);

/* What the last error with this code (in this thread) was about, or a generic description
 * of the MPI error class. Never NULL. */
const char *papcoll_error_string(int code);

/* ---- for language bindings: MPI handles by address -------------------------------------
 * A binding that knows no mpi.h (Python's cffi in ABI mode, over mpi4py) cannot pass an
 * MPI_Comm by value: it is an int in MPICH and a pointer in Open MPI. It passes the address
 * where the handle is stored instead (mpi4py: MPI._addressof(handle)); these read the
 * handle there and call the function of the same name above. A NULL address is
 * MPI_ERR_ARG. */
int papcoll_comm_create_from_handle(const void *comm_handle, const papcoll_config *config,
                                    papcoll_comm **out);
int papcoll_allreduce_from_handles(papcoll_comm *pc, const void *sendbuf, void *recvbuf,
                                   int64_t count, const void *datatype_handle,
                                   const void *op_handle);
int papcoll_resolve_algorithm_from_handles(papcoll_comm *pc, int64_t count,
                                           const void *datatype_handle, const void *op_handle,
                                           const char **name);
/* The non-blocking and persistent calls by handle address; request_handle receives (or
 * holds) the MPI_Request. */
int papcoll_iallreduce_from_handles(papcoll_comm *pc, const void *sendbuf, void *recvbuf,
                                    int64_t count, const void *datatype_handle,
                                    const void *op_handle, void *request_handle);
int papcoll_allreduce_init_from_handles(papcoll_comm *pc, const void *sendbuf, void *recvbuf,
                                        int64_t count, const void *datatype_handle,
                                        const void *op_handle, papcoll_persistent **out);
int papcoll_start_from_handle(papcoll_persistent *persistent, void *request_handle);
int papcoll_wait_from_handle(void *request_handle);
int papcoll_test_from_handle(void *request_handle, int *flag);
/* MPI_IN_PLACE of the MPI papcoll was built with, to pass as sendbuf. */
const void *papcoll_in_place(void);
/* MPI_Get_library_version of the MPI papcoll was built with, copied into text (size bytes,
 * always terminated). It may be called before MPI_Init: a binding compares it with the MPI
 * it loaded to make sure both are one library. */
int papcoll_mpi_library_version(char *text, int size);
/* cffi-end */

#ifdef __cplusplus
}
#endif

#endif /* PAPCOLL_H */
