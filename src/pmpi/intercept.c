/* intercept.c - libpapcoll_pmpi.so: papcoll's all-reduce for programs that do not know it.
 *
 *   LD_PRELOAD=libpapcoll_pmpi.so mpiexec -n 4 ./app        (or link it before the MPI)
 *
 * Through the MPI profiling interface it defines MPI_Init, MPI_Init_thread, MPI_Finalize,
 * MPI_Allreduce (and MPI_Allreduce_c where the MPI has it) and reaches the MPI through their
 * PMPI_ twins. At each MPI_Allreduce it either runs papcoll on a papcoll communicator made
 * for the user's communicator at its first such call (cached as an attribute, freed by the
 * attribute's delete callback when the user frees the communicator, or at MPI_Finalize), or
 * passes the call to PMPI_Allreduce unchanged, counting why (statistics.h: native_reason).
 * Arrivals are predicted from history (papcoll's default PAPCOLL_ARRIVALS_AUTOMATIC: waits
 * exchanged at the end of periods of calls, no clocks), and `auto` chooses per call.
 *
 * Every rank must take the same route for one collective call, or one would wait in papcoll
 * for a rank in MPI_Allreduce. So the route depends only on what MPI already requires to
 * match across ranks - the communicator, the op, the bytes - and on the kind of datatype
 * (predefined ops take predefined datatypes only). What can differ between ranks and is not
 * checked: with a user-defined op, a derived datatype on one rank and another of the same
 * type signature on another (MPI asks for the same datatype; rare), and, under
 * MPI_THREAD_MULTIPLE, one communicator used from MPI_Init's thread on some ranks and from
 * other threads on others.
 *
 * Predictions are per communicator, not per call site: a rank cannot know which site the
 * others are calling from without a message per call, and two ranks predicting from two
 * sites' histories would build two different schedules. Call sites (call_site.h) key the
 * report instead.
 *
 * Calls papcoll makes itself (its native choice, agreement checks) come back through this
 * MPI_Allreduce: a per-thread flag sends them straight to PMPI_Allreduce, uncounted. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <math.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "intercept.h"
#include "papcoll.h"
#include "report.h"
#include "settings.h"
#include "statistics.h"

static pmpi_settings settings;
static int running;               /* between our MPI_Init and MPI_Finalize */
static int finalized;
static int finalizing;            /* MPI_Finalize is deleting our attributes */
static int thread_level = MPI_THREAD_SINGLE;
static pthread_t init_thread;
static int world_rank, world_size;
static int keyval = MPI_KEYVAL_INVALID;
/* PAPCOLL_ALGORITHM names an algorithm that needs a commutative op (papcoll_core.h) */
static int forced_commutative_only;
/* guards the records (statistics.c): threads other than MPI_Init's still count their calls */
static pthread_mutex_t records_lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local int inside_papcoll;

int intercept_inside_papcoll(void) { return inside_papcoll; }
void intercept_lock_records(void) { pthread_mutex_lock(&records_lock); }
void intercept_unlock_records(void) { pthread_mutex_unlock(&records_lock); }
void intercept_enter_papcoll(void) { inside_papcoll++; }
void intercept_leave_papcoll(void) { inside_papcoll--; }

/* ---- start and end --------------------------------------------------------------------- */

/* The attribute's delete callback: the user freed the communicator (or MPI_Finalize deletes
 * the attribute): free its papcoll communicator, keep its statistics. */
static int forget_communicator(MPI_Comm comm, int key, void *value, void *extra) {
    (void)comm, (void)key, (void)extra;
    communicator_record *record = value;
    int code = MPI_SUCCESS;
    pthread_mutex_lock(&records_lock);
    int keep = record->persistent_shells > 0;
    record->free_when_unused = keep;
    pthread_mutex_unlock(&records_lock);
    if (!keep) code = intercept_free_papcoll_communicator(record);
    pthread_mutex_lock(&records_lock);
    record->comm = MPI_COMM_NULL;
    record->freed_by_user = !finalizing;
    pthread_mutex_unlock(&records_lock);
    return code;
}

int intercept_free_papcoll_communicator(communicator_record *record) {
    inside_papcoll++;
    int code = record->pc ? papcoll_comm_free(&record->pc) : MPI_SUCCESS;
    inside_papcoll--;
    return code;
}

/* A program that exits without MPI_Finalize still leaves a report: rank 0's own records,
 * marked incomplete (no MPI call here: MPI may be half gone). */
static void report_at_exit(void) {
    if (running && !finalized && settings.report_path[0] != '\0')
        report_write(&settings, 0, world_rank, world_size);
}

static communicator_record *record_of(MPI_Comm comm);

/* Every rank stops where one refused (collective over MPI_COMM_WORLD): the lowest rank that
 * says_why prints error (the lowest that refused where none does), and every rank leaves
 * through MPI_Finalize rather than MPI_Abort: an abort can tear the job down before the
 * launcher has passed the message on (seen under MPICH's hydra: an empty stderr). */
static void stop_where_refused(int refused, int says_why, const char *error) {
    int lowest[2] = {refused ? world_rank : world_size, says_why ? world_rank : world_size};
    PMPI_Allreduce(MPI_IN_PLACE, lowest, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (lowest[0] == world_size) return;
    if (world_rank == (lowest[1] < world_size ? lowest[1] : lowest[0])) {
        fprintf(stderr, "papcoll (libpapcoll_pmpi): %s\n", error);
        fflush(stderr);
    }
    PMPI_Finalize();
    exit(1);
}

/* After PMPI_Init: read the environment; a bad value stops the program here, with a
 * message from the lowest rank that found it. */
static void start(void) {
    PMPI_Query_thread(&thread_level);
    init_thread = pthread_self();
    PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
    char error[1024];
    int bad = pmpi_settings_read(&settings, world_rank == 0,
                                 thread_level == MPI_THREAD_MULTIPLE, error, sizeof error) != 0;
    stop_where_refused(bad, bad, error);
    /* Settings that decide a call's route must agree, or one rank would wait in papcoll
     * for another in MPI_Allreduce (a hang): compared once, here, where every rank is. */
    int64_t values[2 * PMPI_AGREED_SETTINGS];
    pmpi_settings_agreed(&settings, values);
    for (int k = 0; k < PMPI_AGREED_SETTINGS; k++) values[PMPI_AGREED_SETTINGS + k] = -values[k];
    PMPI_Allreduce(MPI_IN_PLACE, values, 2 * PMPI_AGREED_SETTINGS, MPI_INT64_T, MPI_MAX,
                   MPI_COMM_WORLD);
    int differs = 0;
    for (int k = 0; k < PMPI_AGREED_SETTINGS && !differs; k++)
        if (values[k] != -values[PMPI_AGREED_SETTINGS + k]) {
            differs = 1; /* alike on every rank: rank 0 says it */
            snprintf(error, sizeof error, "%s differs between ranks; %s, so it must be the "
                     "same on every rank (set it for the whole job, e.g. mpiexec -genv / -x)",
                     pmpi_agreed_names[k], pmpi_agreed_reasons[k]);
        }
    stop_where_refused(differs, differs && world_rank == 0, error);
    /* where it runs, for the report (node.c) */
    pmpi_node_describe(&settings.ranks_on_node, &settings.cores);
    pmpi_settings_native_tuning(&settings);
    papcoll_algorithm_info info;
    forced_commutative_only = papcoll_algorithm_find(settings.algorithm, &info) == PAPCOLL_OK &&
                              info.commutative_only;
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, forget_communicator, &keyval, NULL);
    /* Ranks whose counts differ: the rank that finds it ends the job with papcoll's message
     * (include/papcoll.h). Returning the error would leave the ranks that did not find it
     * inside the all-reduce for ever, a silent hang, even under MPI_ERRORS_RETURN: the
     * program cannot know papcoll is there to recover, and MPI itself aborts. */
    papcoll_set_mismatch_ends_job(1);
    running = 1;
    atexit(report_at_exit);
    /* A program's first collective on MPI_COMM_WORLD may be an MPI_Iallreduce, which cannot
     * make a papcoll communicator (that is collective, and a post must not wait for the
     * other ranks): so world's is made here, where every rank is anyway. The communicators
     * the program makes later get theirs as they are made (communicator_constructors.c).
     * papcoll_comm_create fails alike on every rank, for a setting it reads itself
     * (PAPCOLL_CHECK, PAPCOLL_PROGRESS, PAPCOLL_RULES's file, ...): the program stops here
     * with its message, as for the settings above (a bad rules file at one rank too). */
    if (settings.intercept && (world_size > 1 || settings.rules_path[0] != '\0')) {
        communicator_record *world = record_of(MPI_COMM_WORLD);
        int code = world != NULL ? intercept_make_papcoll_communicator(world, MPI_COMM_WORLD)
                                 : MPI_ERR_NO_MEM;
        const char *message = code != MPI_SUCCESS ? papcoll_error_string(code) : "";
        /* "another rank refused ...": the rank that refused says why */
        snprintf(error, sizeof error, "%s", message);
        stop_where_refused(code != MPI_SUCCESS,
                           code != MPI_SUCCESS && strstr(message, "another rank") == NULL,
                           error);
    }
}

int MPI_Init(int *argc, char ***argv) {
    int code = PMPI_Init(argc, argv);
    if (code == MPI_SUCCESS) start();
    return code;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    int code = PMPI_Init_thread(argc, argv, required, provided);
    if (code == MPI_SUCCESS) start();
    return code;
}

int MPI_Finalize(void) {
    if (running && !finalized) {
        /* free every papcoll communicator (the delete callback), in the order first seen */
        finalizing = 1;
        for (communicator_record *r = statistics_first(); r != NULL; r = r->next)
            if (r->comm != MPI_COMM_NULL) PMPI_Comm_delete_attr(r->comm, keyval);
        PMPI_Comm_free_keyval(&keyval);
        if (settings.report_path[0] != '\0')
            report_write(&settings, 1, world_rank, world_size);
        finalized = 1;
    }
    return PMPI_Finalize();
}

/* ---- the route of a call --------------------------------------------------------------- */

static int is_predefined_op(MPI_Op op) {
    const MPI_Op predefined[] = {MPI_MAX,  MPI_MIN,  MPI_SUM,  MPI_PROD,   MPI_LAND,  MPI_BAND,
                                 MPI_LOR,  MPI_BOR,  MPI_LXOR, MPI_BXOR,   MPI_MINLOC,
                                 MPI_MAXLOC};
    for (size_t k = 0; k < sizeof predefined / sizeof predefined[0]; k++)
        if (op == predefined[k]) return 1;
    return 0;
}

/* Whether papcoll takes the datatype: a predefined one, or, with a user-defined op (MPI
 * lets predefined ops take predefined datatypes only, and both MPIs refuse others), a
 * derived one that is contiguous without holes, which papcoll moves as bytes. */
static int papcoll_takes(MPI_Datatype datatype, MPI_Op op) {
    int integers, addresses, datatypes, combiner;
    if (PMPI_Type_get_envelope(datatype, &integers, &addresses, &datatypes, &combiner) !=
        MPI_SUCCESS)
        return 0;
    if (combiner == MPI_COMBINER_NAMED) return 1;
    if (is_predefined_op(op)) return 0;
    MPI_Aint lower_bound, extent, true_lower_bound, true_extent;
    int size;
    return PMPI_Type_get_extent(datatype, &lower_bound, &extent) == MPI_SUCCESS &&
           PMPI_Type_get_true_extent(datatype, &true_lower_bound, &true_extent) ==
               MPI_SUCCESS &&
           PMPI_Type_size(datatype, &size) == MPI_SUCCESS && lower_bound == 0 &&
           true_lower_bound == 0 && size == extent && extent > 0;
}

/* Arguments MPI_Allreduce would refuse (or that MPI forbids): the MPI reports them. */
static int invalid_arguments(const void *sendbuf, const void *recvbuf, MPI_Count count,
                             MPI_Datatype datatype, MPI_Op op) {
    return count < 0 || datatype == MPI_DATATYPE_NULL || op == MPI_OP_NULL ||
           op == MPI_REPLACE || op == MPI_NO_OP || recvbuf == MPI_IN_PLACE ||
           (count > 0 && (recvbuf == NULL || sendbuf == NULL || sendbuf == recvbuf));
}

/* Whether the call goes to PMPI_Allreduce, and why. */
int intercept_route_to_native(const communicator_record *record, const void *sendbuf,
                           const void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                           MPI_Op op, native_reason *reason) {
    if (!running || finalized) return *reason = NATIVE_NOT_INITIALIZED, 1;
    if (!settings.intercept) return *reason = NATIVE_INTERCEPTION_OFF, 1;
    if (thread_level == MPI_THREAD_MULTIPLE && !pthread_equal(pthread_self(), init_thread))
        return *reason = NATIVE_OTHER_THREAD, 1;
    if (record == NULL || invalid_arguments(sendbuf, recvbuf, count, datatype, op))
        return *reason = NATIVE_INVALID_ARGUMENTS, 1;
    if (record->intercommunicator) return *reason = NATIVE_INTERCOMMUNICATOR, 1;
    if (record->size <= 1) return *reason = NATIVE_ONE_RANK, 1;
    int size = 0;
    if (PMPI_Type_size(datatype, &size) != MPI_SUCCESS)
        return *reason = NATIVE_INVALID_ARGUMENTS, 1;
    if ((double)count * size < (double)settings.min_bytes &&
        !(settings.reproducible && papcoll_order_matters(datatype, op)))
        return *reason = NATIVE_BELOW_MIN_BYTES, 1;
    if (!papcoll_takes(datatype, op)) return *reason = NATIVE_DATATYPE, 1;
    int commutative = 1;
    if (forced_commutative_only && PMPI_Op_commutative(op, &commutative) == MPI_SUCCESS &&
        !commutative)
        return *reason = NATIVE_OP, 1;
    return 0;
}

/* The record of comm, made at its first call; NULL for an invalid communicator. */
static communicator_record *record_of(MPI_Comm comm) {
    if (!running || finalized || comm == MPI_COMM_NULL) return NULL;
    void *value = NULL;
    int found = 0;
    if (PMPI_Comm_get_attr(comm, keyval, &value, &found) != MPI_SUCCESS) return NULL;
    if (found) return value;
    communicator_record *record = statistics_add_communicator(comm);
    if (record != NULL) PMPI_Comm_set_attr(comm, keyval, record);
    return record;
}

/* An error code of code's class whose MPI_Error_string is papcoll's message: a program with
 * MPI_ERRORS_RETURN would otherwise read only the class's text ("Invalid argument") where
 * papcoll knows what disagreed. One added code per class, its string replaced each time
 * (MPI-4.0 9.5 lets MPI_Add_error_string replace a string it set); the code itself where
 * MPI cannot add one. */
static int described(int code, const char *message) {
    enum { CLASSES = 64 };
    static int added[CLASSES];
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    int class = 0;
    if (PMPI_Error_class(code, &class) != MPI_SUCCESS || class <= 0 || class >= CLASSES)
        return code;
    pthread_mutex_lock(&lock);
    int described = added[class];
    if (described == 0 && PMPI_Add_error_code(class, &described) != MPI_SUCCESS) described = 0;
    added[class] = described;
    if (described != 0) {
        char text[MPI_MAX_ERROR_STRING];
        snprintf(text, sizeof text, "%s%s", strncmp(message, "papcoll", 7) == 0 ? "" :
                 "papcoll: ", message);
        if (PMPI_Add_error_string(described, text) != MPI_SUCCESS) described = 0;
    }
    pthread_mutex_unlock(&lock);
    return described != 0 ? described : code;
}

/* As MPI_Allreduce would: through the communicator's error handler, with a code whose string
 * is papcoll's message. A fatal handler gets papcoll's message on stderr first, since the
 * MPI's would only name the error class. */
int intercept_raise_error(MPI_Comm comm, int code) {
    return intercept_raise_message(comm, code, papcoll_error_string(code));
}

int intercept_raise_message(MPI_Comm comm, int code, const char *message) {
    MPI_Errhandler handler;
    if (PMPI_Comm_get_errhandler(comm, &handler) == MPI_SUCCESS) {
        int fatal = handler == MPI_ERRORS_ARE_FATAL;
#ifdef MPI_ERRORS_ABORT
        fatal |= handler == MPI_ERRORS_ABORT;
#endif
        if (fatal) fprintf(stderr, "papcoll (libpapcoll_pmpi): %s\n", message);
        /* "another rank refused ...": the rank that refused prints why as it aborts too, and
         * the first abort may end the job before its line is out (seen 1 run in 4 at P = 6
         * under Open MPI); the ranks that only relay it give it a moment first */
        if (fatal && strstr(message, "another rank refused") != NULL) {
            struct timespec moment = {0, 300 * 1000 * 1000};
            nanosleep(&moment, NULL);
        }
        PMPI_Errhandler_free(&handler);
    }
    code = described(code, message);
    PMPI_Comm_call_errhandler(comm, code);
    return code;
}

int intercept_reproducible(void) { return settings.reproducible; }

/* Says once, on stderr, that papcoll could not make its communicator for one the program
 * made: where the MPI ran out of communicators (each papcoll communicator takes one), the
 * program should hear why its MPI_Iallreduce calls went to the MPI. */
static void say_not_prepared(MPI_Comm comm, int code) {
    static int said;
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    if (rank == 0 && !__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
        fprintf(stderr, "papcoll (libpapcoll_pmpi): papcoll could not make its communicator "
                "for a communicator the program made (%s); its MPI_Iallreduce calls go to "
                "the MPI, counted as no_papcoll_communicator in the report\n",
                papcoll_error_string(code));
}

void intercept_prepare_for_posts(MPI_Comm comm) {
    /* other threads' calls go to MPI under MPI_THREAD_MULTIPLE (intercept_route_to_native) */
    if (!settings.intercept || !running || finalized || inside_papcoll ||
        comm == MPI_COMM_NULL ||
        (thread_level == MPI_THREAD_MULTIPLE && !pthread_equal(pthread_self(), init_thread)))
        return;
    pthread_mutex_lock(&records_lock);
    communicator_record *record = record_of(comm);
    pthread_mutex_unlock(&records_lock);
    /* alike on every rank of comm: its kind and size are the same everywhere, and the
     * constructor that made it was collective over it */
    if (record == NULL || record->intercommunicator || record->size <= 1) return;
    /* a failure is alike on every rank of comm too (papcoll_comm_create's promise), so
     * every rank's posts on comm go to the MPI alike; a blocking call tries again */
    int code = intercept_make_papcoll_communicator(record, comm);
    if (code != MPI_SUCCESS) say_not_prepared(comm, code);
}

int intercept_make_papcoll_communicator(communicator_record *record, MPI_Comm comm) {
    if (record->pc != NULL) return MPI_SUCCESS;
    papcoll_config config;
    papcoll_config_init(&config);
    config.algorithm = settings.algorithm;
    inside_papcoll++;
    int code = papcoll_comm_create(comm, &config, &record->pc);
    inside_papcoll--;
    return code;
}

communicator_record *intercept_record_and_site(MPI_Comm comm, const void *caller,
                                               call_kind kind, site_record **site) {
    pthread_mutex_lock(&records_lock);
    communicator_record *record = record_of(comm);
    *site = statistics_site(record ? record : statistics_unattributed(), caller, kind);
    pthread_mutex_unlock(&records_lock);
    return record;
}

/* The shape of a call papcoll decided, for the rules `papcoll report --rules` writes; the
 * records' lock held. */
static void note_decided(site_record *site, MPI_Count count, MPI_Datatype datatype) {
    char name[MPI_MAX_OBJECT_NAME] = "";
    int size = 0, length = 0, combiner = 0, integers, addresses, datatypes;
    if (PMPI_Type_size(datatype, &size) != MPI_SUCCESS) return;
    /* a derived datatype's name is the program's, no predefined type's */
    if (PMPI_Type_get_envelope(datatype, &integers, &addresses, &datatypes, &combiner) ==
            MPI_SUCCESS &&
        combiner == MPI_COMBINER_NAMED)
        PMPI_Type_get_name(datatype, name, &length);
    statistics_note_decided(site, (double)count * size, name);
}

/* Counts one call at site, the records' lock held. */
static void count_locked(site_record *site, MPI_Count count, MPI_Datatype datatype,
                         double seconds, const native_reason *reason, const char *ran) {
    if (site != NULL) {
        site->calls++;
        site->nonblocking_calls += site->call_kind != CALL_ALLREDUCE;
        site->seconds += seconds;
        int size = 0;
        if (PMPI_Type_size(datatype, &size) == MPI_SUCCESS && count > 0)
            site->bytes += (double)count * size;
        if (reason != NULL) site->native[*reason]++;
        if (ran != NULL) statistics_count_algorithm(site, ran);
        if (ran != NULL) note_decided(site, count, datatype);
    }
}

void intercept_count_call(site_record *site, MPI_Count count, MPI_Datatype datatype,
                          double seconds, const native_reason *reason, const char *ran) {
    pthread_mutex_lock(&records_lock);
    count_locked(site, count, datatype, seconds, reason, ran);
    pthread_mutex_unlock(&records_lock);
}

void intercept_count_call_at(communicator_record *record, const void *caller, call_kind kind,
                             MPI_Count count, MPI_Datatype datatype, double seconds,
                             const char *ran) {
    pthread_mutex_lock(&records_lock);
    /* looked up now: the shell keeps its record and caller, not a site */
    count_locked(statistics_site(record, caller, kind), count, datatype, seconds, NULL, ran);
    pthread_mutex_unlock(&records_lock);
}

/* papcoll's route: the record's papcoll communicator (made now at the first call) runs it. */
static int run_papcoll(communicator_record *record, const void *sendbuf, void *recvbuf,
                       MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                       site_record *site) {
    int code = intercept_make_papcoll_communicator(record, comm);
    inside_papcoll++;
    if (code == MPI_SUCCESS)
        code = papcoll_allreduce_c(record->pc, sendbuf, recvbuf, count, datatype, op);
    inside_papcoll--;
    if (code != MPI_SUCCESS) return intercept_raise_error(comm, code);
    papcoll_choice choice;
    int chose = strcmp(settings.algorithm, "auto") == 0 &&
                papcoll_last_choice(record->pc, &choice) == MPI_SUCCESS;
    /* a PAP-aware algorithm without usable predictions ran the ring: say so */
    const char *ran = chose ? choice.algorithm : settings.algorithm;
    papcoll_algorithm_info info;
    int predicted = 1;
    if (!chose && papcoll_algorithm_find(settings.algorithm, &info) == PAPCOLL_OK &&
        info.needs_arrivals && papcoll_last_prediction(record->pc, &predicted, NULL, NULL) ==
                                   MPI_SUCCESS && !predicted)
        ran = "ring";
    pthread_mutex_lock(&records_lock);
    if (site != NULL) {
        statistics_count_algorithm(site, ran);
        note_decided(site, count, datatype);
        if (chose && choice.from_arrivals && isfinite(choice.native_seconds) &&
            isfinite(choice.predicted_seconds))
            site->saving_seconds += choice.native_seconds - choice.predicted_seconds;
        if (chose) {
            site->probe_calls += choice.probe;
            site->overruled_calls += choice.overruled;
            site->has_choice = 1;
            site->last_choice = choice;
        }
    }
    pthread_mutex_unlock(&records_lock);
    return code;
}

typedef int (*native_allreduce)(const void *, void *, MPI_Count, MPI_Datatype, MPI_Op, MPI_Comm);

static int intercept(const void *sendbuf, void *recvbuf, MPI_Count count,
                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, const void *caller,
                     native_allreduce native) {
    double start_time = PMPI_Wtime();
    site_record *site = NULL;
    communicator_record *record = intercept_record_and_site(comm, caller, CALL_ALLREDUCE,
                                                           &site);
    native_reason reason = NATIVE_INVALID_ARGUMENTS;
    int native_route = intercept_route_to_native(record, sendbuf, recvbuf, count, datatype, op, &reason);
    int code = native_route ? native(sendbuf, recvbuf, count, datatype, op, comm)
                            : run_papcoll(record, sendbuf, recvbuf, count, datatype, op, comm,
                                          site);
    intercept_count_call(site, count, datatype, PMPI_Wtime() - start_time,
                         native_route ? &reason : NULL, NULL);
    return code;
}

/* ---- the entry points ------------------------------------------------------------------ */

static int native_int_count(const void *sendbuf, void *recvbuf, MPI_Count count,
                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
    return PMPI_Allreduce(sendbuf, recvbuf, (int)count, datatype, op, comm);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm) {
    if (inside_papcoll) return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    return intercept(sendbuf, recvbuf, count, datatype, op, comm, __builtin_return_address(0),
                     native_int_count);
}

#if MPI_VERSION >= 4
/* MPI 4's large-count twin (MPICH; Open MPI 5 has none). */
int MPI_Allreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                    MPI_Op op, MPI_Comm comm) {
    if (inside_papcoll) return PMPI_Allreduce_c(sendbuf, recvbuf, count, datatype, op, comm);
    return intercept(sendbuf, recvbuf, count, datatype, op, comm, __builtin_return_address(0),
                     PMPI_Allreduce_c);
}
#endif
