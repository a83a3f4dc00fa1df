/* progress_hook.c - how the MPI library's own calls advance papcoll's progress engine
 * (progress.c), so that a program's MPI_Wait, MPI_Test or MPI_Waitall on a papcoll request,
 * or on any request at all, moves papcoll's operations too
 * (docs/nonblocking.md "Progress"). One route per MPI:
 *
 *   - MPICH >= 4.3: MPIX_Async_start, a documented extension. MPICH calls the hook from its
 *     progress engine until it answers DONE, so the hook is registered while operations are
 *     in flight and says DONE (and forgets itself, under the engine's lock) when none is.
 *     Inside MPICH's progress the engine must not drive MPICH's progress again: requests
 *     are looked at with MPIX_Request_is_complete and MPI_Test is called only on finished
 *     ones (progress_hook_request_check).
 *   - Open MPI >= 4: opal_progress_register, exported by libopen-pal but declared in no
 *     installed header, so it is found with dlsym (through libmpi's handle: mpi4py loads
 *     libmpi RTLD_LOCAL, where RTLD_DEFAULT does not see it) and declared here from
 *     opal/runtime/opal_progress.h: int (*)(void), the count of events. Open MPI calls
 *     every registered callback at each opal_progress() pass, i.e. inside every MPI call
 *     that waits or tests, as its own libnbc is driven. Registration is costly in Open MPI
 *     (it rebuilds the callback array), so it is done once and kept; the callback costs a
 *     trylock when nothing is in flight. Open MPI's MPI_Test calls opal_progress() once
 *     when the request is not complete, so the engine, testing its requests from inside the
 *     callback, re-enters opal_progress: our callback then finds the engine's lock taken
 *     and returns (depth 2 at most), and Open MPI's other callbacks are not on the stack
 *     (opal_progress calls them one after another). This route uses an internal ABI:
 *     where the symbol is missing, there is no hook and papcoll_mpi_advances_requests()
 *     says so (the drop-in then sends non-blocking calls to MPI, counted no_progress).
 *
 * Either way the library must stay loaded while MPI may call the hook: a binding may unload
 * libpapcoll before MPI_Finalize (Python's cffi library objects die at interpreter exit,
 * before mpi4py's atexit MPI_Finalize), so once a hook is registered the library is pinned
 * (RTLD_NODELETE).
 */
#define _GNU_SOURCE /* dladdr, RTLD_NODELETE */
#include <dlfcn.h>
#include <stddef.h>

#include "operation.h"

#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION >= 40300000
#define MPICH_HOOK 1
#else
#define MPICH_HOOK 0
#endif
#if defined(OPEN_MPI) && defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 4
#define OPEN_MPI_HOOK 1
#else
#define OPEN_MPI_HOOK 0
#endif

#if MPICH_HOOK || OPEN_MPI_HOOK /* an MPI with neither (SMPI) has no hook at all */
/* All guarded by the engine's lock (progress.c): the hook functions below are called with it
 * held, except the callbacks, which take it through advance_engine. */
static int registered; /* MPICH: registered now; Open MPI: registered for good */
static int failed;     /* registration was refused, or the symbol is missing: no hook */
/* The engine's entry for MPI's progress (progress.c's advance_from_hook), handed over at
 * registration so that this file does not call back into progress.c by name. */
static int (*advance_engine)(void (*when_idle)(void));

static void stay_loaded(void) {
    static int done;
    Dl_info where;
    if (done || dladdr((void *)&stay_loaded, &where) == 0 || where.dli_fname == NULL) return;
    done = dlopen(where.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE) != NULL;
}
#endif

#if MPICH_HOOK
static void forget_registration(void) { registered = 0; }

static int mpich_poll(MPIX_Async_thing thing) {
    (void)thing;
    return advance_engine(forget_registration) ? MPIX_ASYNC_DONE
                                                          : MPIX_ASYNC_NOPROGRESS;
}

static int register_hook(void) {
    return MPIX_Async_start(mpich_poll, NULL, MPIX_STREAM_NULL) == MPI_SUCCESS;
}


static int request_is_complete(MPI_Request request) {
    return MPIX_Request_is_complete(request);
}

int (*progress_hook_request_check(void))(MPI_Request) { return request_is_complete; }
#endif

#if OPEN_MPI_HOOK
typedef int (*opal_callback)(void);

/* opal_progress_register from libopen-pal, seen through libmpi when libmpi was loaded
 * privately; NULL when this Open MPI does not export it. Looked up once (the drop-in asks
 * at every post whether MPI advances papcoll). */
static int (*find_opal_register(void))(opal_callback) {
    static int searched;
    static int (*found)(opal_callback);
    if (searched) return found;
    searched = 1;
    void *symbol = dlsym(RTLD_DEFAULT, "opal_progress_register");
    Dl_info where;
    if (symbol == NULL && dladdr((void *)&PMPI_Init, &where) != 0 && where.dli_fname != NULL) {
        void *libmpi = dlopen(where.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
        if (libmpi != NULL) {
            symbol = dlsym(libmpi, "opal_progress_register"); /* searches its dependencies */
            dlclose(libmpi);
        }
    }
    *(void **)&found = symbol; /* ISO C has no object-to-function cast; POSIX allows this */
    return found;
}

static int opal_poll(void) {
    advance_engine(NULL);
    return 0; /* events: only opal_progress's choice to yield reads it */
}

static int register_hook(void) {
    int (*opal_register)(opal_callback) = find_opal_register();
    return opal_register != NULL && opal_register(opal_poll) == 0; /* OPAL_SUCCESS */
}

/* MPI_Test from inside opal_progress is safe (see above): no special look at requests. */
int (*progress_hook_request_check(void))(MPI_Request) { return NULL; }
#endif

#if MPICH_HOOK || OPEN_MPI_HOOK
void progress_hook_ensure(int (*advance)(void (*when_idle)(void))) {
    if (registered || failed) return;
    advance_engine = advance;
    stay_loaded();
    registered = register_hook();
    failed = !registered;
}

int progress_hook_available(int (*advance)(void (*when_idle)(void))) {
    /* Open MPI's hook is registered for good, so it is registered now and the answer is the
     * registration's, not a guess a later refusal could make a request wait on for ever.
     * MPICH's is registered per operation; a refusal there shows at the first post. */
    if (OPEN_MPI_HOOK) progress_hook_ensure(advance);
    return !failed;
}
#else
void progress_hook_ensure(int (*advance)(void (*when_idle)(void))) { (void)advance; }
int progress_hook_available(int (*advance)(void (*when_idle)(void))) {
    (void)advance;
    return 0;
}
int (*progress_hook_request_check(void))(MPI_Request) { return NULL; }
#endif
