/* completion_calls.c - where the program completes, cancels or frees a request of the
 * drop-in's: an operation's error is raised on the program's communicator, with papcoll's
 * message, by the call that completes the request.
 *
 * Why here: a generalized request's error (its query or free function's code) is raised by
 * MPI on MPI_COMM_SELF, fatal by default, whatever handler the program gave the
 * communicator it posted on, and MPICH replaces the code by its own ("user request free
 * function returned error code 14"); the persistent requests' shells (nonblocking_calls.c)
 * are receives that cannot fail at all. So papcoll's requests complete with MPI_SUCCESS
 * (papcoll_iallreduce_notifying, papcoll_start_notifying), the engine hands the error to
 * the drop-in, and these calls raise it after the MPI's own call returned, as MPI raises a
 * native MPI_Iallreduce's on its communicator. MPI_Cancel of such a request is refused
 * with MPI_ERR_REQUEST, as Open MPI refuses a collective's (MPI-4.1 makes it erroneous).
 *
 * Cost where the program has none of papcoll's requests alive: one atomic load per call.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

#include "completion_calls.h"
#include "intercept.h"
#include "posted_requests.h"

/* ---- the completion calls ---------------------------------------------------------------- */

/* The drop-in's request behind one of the program's handles, seen before the MPI's call
 * (which sets a completed handle to MPI_REQUEST_NULL). A post is claimed there (taken out of
 * the table, posted_requests.h says why), and after the call either completed or put back. */
typedef struct {
    posted_request *post;
    void *shell;
    MPI_Comm comm;
} owner;

static const owner nobody = {NULL, NULL, MPI_COMM_NULL};

static int any_alive(void) {
    return !intercept_inside_papcoll() &&
           (posted_requests_alive() > 0 || nonblocking_shells_alive());
}

static owner owner_of(MPI_Request request) {
    owner found = nobody;
    if (request == MPI_REQUEST_NULL) return found;
    if ((found.post = posted_request_claim(request)) != NULL)
        found.comm = posted_request_comm(found.post);
    else found.shell = nonblocking_shell_of(request, &found.comm);
    return found;
}

/* What owners_of returns where it found papcoll's requests and had no memory to list them:
 * the call is then refused before the MPI's (MPI_ERR_NO_MEM), since a request of papcoll's
 * that the MPI completed unseen would never leave the drop-in's table. */
static owner no_memory_for_owners;

/* The owners of count handles (NULL where none is papcoll's: then nothing to do after). */
static owner *owners_of(int count, const MPI_Request requests[], owner *few, int few_size) {
    owner *owners = NULL;
    for (int k = 0; k < count; k++) {
        owner found = owner_of(requests[k]);
        if (found.post == NULL && found.shell == NULL) continue;
        if (owners == NULL) {
            owners = count <= few_size ? few : calloc((size_t)count, sizeof *owners);
            if (owners == NULL) {
                if (found.post != NULL) posted_request_unclaim(found.post);
                return &no_memory_for_owners;
            }
            memset(owners, 0, (size_t)count * sizeof *owners);
        }
        owners[k] = found;
    }
    return owners;
}

static int refused_for_memory(void) {
    return intercept_raise_message(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "papcoll (libpapcoll_pmpi):"
                                   " no memory to follow papcoll's requests through this "
                                   "completion call; nothing was completed");
}

/* After the MPI's call: a claimed post whose handle the MPI did not complete (a post is
 * never persistent, so completed means MPI_REQUEST_NULL now) goes back to the table and
 * out of owners; the posts left in owners are the completed ones. */
static void unclaim_pending(owner *owners, int count, const MPI_Request requests[]) {
    for (int k = 0; owners != NULL && k < count; k++)
        if (owners[k].post != NULL && requests[k] != MPI_REQUEST_NULL) {
            posted_request_unclaim(owners[k].post);
            owners[k] = nobody;
        }
}

/* After the MPI completed the request of found: its operation's error, raised on the
 * program's communicator (MPI_SUCCESS where it succeeded or is not papcoll's); found is
 * then nobody's. */
static int completed(owner *found, MPI_Status *status) {
    char message[MPI_MAX_ERROR_STRING] = "";
    int error = MPI_SUCCESS;
    if (found->post != NULL) {
        error = posted_request_completed(found->post, message, sizeof message);
    } else if (found->shell != NULL) {
        error = nonblocking_shell_completed(found->shell, message, sizeof message);
        /* the shell's status is its private receive's (itself, a tag of its own): a
         * collective's source and tag are undefined (MPI-4.1 6.12), so it reads as a
         * post's does (MPI_UNDEFINED, count 0), not as a message the program never sent */
        if (status != MPI_STATUS_IGNORE) {
            status->MPI_SOURCE = MPI_UNDEFINED;
            status->MPI_TAG = MPI_UNDEFINED;
        }
    }
    MPI_Comm comm = found->comm;
    *found = nobody;
    if (error == MPI_SUCCESS) return MPI_SUCCESS;
    int code = intercept_raise_message(comm, error, message);
    if (status != MPI_STATUS_IGNORE) status->MPI_ERROR = code;
    return code;
}

/* The end of every completion call: completed posts the call did not report (the MPI's
 * own call failed) are freed, their errors dropped behind the MPI's; then owners. */
static void finish(owner *owners, owner *few, int count) {
    char ignored[MPI_MAX_ERROR_STRING];
    for (int k = 0; owners != NULL && k < count; k++)
        if (owners[k].post != NULL) posted_request_completed(owners[k].post, ignored,
                                                             sizeof ignored);
    if (owners != NULL && owners != few) free(owners);
}

/* The statuses array a call was given, NULL for MPI_STATUSES_IGNORE: the helpers below
 * index only a real array (MPI_STATUSES_IGNORE is a constant address such as 1, which an
 * optimizing compiler sees indexed on paths that never run, and refuses under -Werror). */
static MPI_Status *given(MPI_Status statuses[]) {
    return statuses == MPI_STATUSES_IGNORE ? NULL : statuses;
}

/* The first error of the completed ones among owners (indices: which; NULL: all; statuses:
 * NULL where ignored). */
static int completed_all(owner *owners, int count, const int *indices, MPI_Status *statuses) {
    int first = MPI_SUCCESS;
    for (int k = 0; owners != NULL && k < count; k++) {
        int index = indices != NULL ? indices[k] : k;
        MPI_Status *status = statuses == NULL ? MPI_STATUS_IGNORE : &statuses[k];
        int code = completed(&owners[index], status);
        if (first == MPI_SUCCESS) first = code;
    }
    return first;
}

/* Waitall / Testall: which of ours completed. The posts left in owners did (unclaim_pending);
 * a shell on success where flag, and where another request failed (MPI_ERR_IN_STATUS) where
 * its status says MPI_SUCCESS: a shell left active would refuse the program's next start. */
static int all_completed(int code, int flag, owner *owners, owner *few, int count,
                         const MPI_Request requests[], MPI_Status *statuses) {
    unclaim_pending(owners, count, requests);
    int in_status = code == MPI_ERR_IN_STATUS && statuses != NULL;
    for (int k = 0; owners != NULL && k < count; k++) {
        if (owners[k].shell == NULL) continue;
        int done = code == MPI_SUCCESS ? flag
                                       : in_status && statuses[k].MPI_ERROR == MPI_SUCCESS;
        if (!done) owners[k] = nobody;
    }
    int error = code == MPI_SUCCESS || code == MPI_ERR_IN_STATUS
                    ? completed_all(owners, count, NULL, statuses) : MPI_SUCCESS;
    finish(owners, few, count);
    return code != MPI_SUCCESS ? code : error;
}

enum { FEW = 16 };

/* Wait / Test / Waitany / Testany: the one the MPI completed (index; done: whether any). */
static int one_completed(int code, int done, owner *owners, owner *few, int count,
                         const MPI_Request requests[], int index, MPI_Status *status) {
    unclaim_pending(owners, count, requests);
    int error = code == MPI_SUCCESS && done && owners != NULL && index != MPI_UNDEFINED
                    ? completed(&owners[index], status) : MPI_SUCCESS;
    finish(owners, few, count);
    return code != MPI_SUCCESS ? code : error;
}

int MPI_Wait(MPI_Request *request, MPI_Status *status) {
    if (request == NULL || !any_alive()) return PMPI_Wait(request, status);
    owner found = owner_of(*request);
    int code = PMPI_Wait(request, status);
    return one_completed(code, 1, &found, &found, 1, request, 0, status);
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status) {
    if (request == NULL || flag == NULL || !any_alive()) return PMPI_Test(request, flag, status);
    owner found = owner_of(*request);
    int code = PMPI_Test(request, flag, status);
    return one_completed(code, *flag, &found, &found, 1, request, 0, status);
}

int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status) {
    if (requests == NULL || index == NULL || !any_alive())
        return PMPI_Waitany(count, requests, index, status);
    owner few[FEW], *owners = owners_of(count, requests, few, FEW);
    if (owners == &no_memory_for_owners) return refused_for_memory();
    int code = PMPI_Waitany(count, requests, index, status);
    return one_completed(code, 1, owners, few, count, requests, *index, status);
}

int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status) {
    if (requests == NULL || index == NULL || flag == NULL || !any_alive())
        return PMPI_Testany(count, requests, index, flag, status);
    owner few[FEW], *owners = owners_of(count, requests, few, FEW);
    if (owners == &no_memory_for_owners) return refused_for_memory();
    int code = PMPI_Testany(count, requests, index, flag, status);
    return one_completed(code, *flag, owners, few, count, requests, *index, status);
}

/* The statuses Waitall / Testall pass the MPI: the program's, or where it ignores them and
 * a shell is among its requests, ours: where another request fails (MPI_ERR_IN_STATUS),
 * only a shell's status says whether its receive completed, and a shell left active would
 * refuse the program's next MPI_Start. */
/* What statuses_to_pass returns where it had no memory for statuses of its own: not NULL,
 * which is Open MPI's MPI_STATUSES_IGNORE. */
static MPI_Status no_memory_for_statuses;

static MPI_Status *statuses_to_pass(MPI_Status statuses[], const owner *owners, int count,
                                    MPI_Status *few) {
    if (statuses != MPI_STATUSES_IGNORE || owners == NULL) return statuses;
    for (int k = 0; k < count; k++)
        if (owners[k].shell != NULL) {
            MPI_Status *ours = count <= FEW ? few : malloc((size_t)count * sizeof *ours);
            if (ours == NULL) return &no_memory_for_statuses; /* the call is refused */
            /* where the MPI writes no error field, a shell's reads as not completed */
            for (int j = 0; j < count; j++) ours[j].MPI_ERROR = MPI_ERR_PENDING;
            return ours;
        }
    return statuses;
}

/* Waitall / Testall refused for want of memory for the statuses: nothing was completed. */
static int refused_before_all(owner *owners, owner *few, int count,
                              const MPI_Request requests[]) {
    unclaim_pending(owners, count, requests);
    finish(owners, few, count);
    return refused_for_memory();
}

/* PMPI_Testall, or PMPI_Waitall in its shape (its flag always set). */
typedef int (*all_call)(int, MPI_Request[], int *, MPI_Status[]);

static int waitall_with_flag(int count, MPI_Request requests[], int *flag,
                             MPI_Status statuses[]) {
    *flag = 1;
    return PMPI_Waitall(count, requests, statuses);
}

static int all(all_call pmpi, int count, MPI_Request requests[], int *flag,
               MPI_Status statuses[]) {
    if (requests == NULL || flag == NULL || !any_alive())
        return pmpi(count, requests, flag, statuses);
    owner few[FEW], *owners = owners_of(count, requests, few, FEW);
    if (owners == &no_memory_for_owners) return refused_for_memory();
    MPI_Status few_statuses[FEW], *passed = statuses_to_pass(statuses, owners, count,
                                                              few_statuses);
    if (passed == &no_memory_for_statuses)
        return refused_before_all(owners, few, count, requests);
    int code = pmpi(count, requests, flag, passed);
    code = all_completed(code, *flag, owners, few, count, requests, given(passed));
    if (passed != statuses && passed != few_statuses) free(passed);
    return code;
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
    int flag = 0;
    return all(waitall_with_flag, count, requests, &flag, statuses);
}

int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[]) {
    return all(PMPI_Testall, count, requests, flag, statuses);
}

/* Waitsome / Testsome: the completed ones are indices[0 .. outcount) */
static int some_completed(int code, owner *owners, owner *few, int count,
                          const MPI_Request requests[], int outcount, const int indices[],
                          MPI_Status *statuses) {
    unclaim_pending(owners, count, requests);
    /* with MPI_ERR_IN_STATUS too: indices still name every completed one */
    int reported = (code == MPI_SUCCESS || code == MPI_ERR_IN_STATUS) &&
                   outcount != MPI_UNDEFINED;
    int error = reported ? completed_all(owners, outcount, indices, statuses) : MPI_SUCCESS;
    finish(owners, few, count);
    return code != MPI_SUCCESS ? code : error;
}

/* PMPI_Waitsome or PMPI_Testsome (one signature), with papcoll's requests followed. */
typedef int (*some_call)(int, MPI_Request[], int *, int[], MPI_Status[]);

static int some(some_call pmpi, int incount, MPI_Request requests[], int *outcount,
                int indices[], MPI_Status statuses[]) {
    if (requests == NULL || outcount == NULL || indices == NULL || !any_alive())
        return pmpi(incount, requests, outcount, indices, statuses);
    owner few[FEW], *owners = owners_of(incount, requests, few, FEW);
    if (owners == &no_memory_for_owners) return refused_for_memory();
    int code = pmpi(incount, requests, outcount, indices, statuses);
    return some_completed(code, owners, few, incount, requests, *outcount, indices,
                          given(statuses));
}

int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[]) {
    return some(PMPI_Waitsome, incount, requests, outcount, indices, statuses);
}

int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[]) {
    return some(PMPI_Testsome, incount, requests, outcount, indices, statuses);
}

int MPI_Cancel(MPI_Request *request) {
    if (request == NULL || !any_alive()) return PMPI_Cancel(request);
    owner found = owner_of(*request);
    if (found.post == NULL && found.shell == NULL) return PMPI_Cancel(request);
    if (found.post != NULL) posted_request_unclaim(found.post); /* it goes on */
    return intercept_raise_message(found.comm, MPI_ERR_REQUEST, "papcoll (libpapcoll_pmpi): "
                                   "MPI_Cancel of an all-reduce's request is refused: MPI "
                                   "makes cancelling a collective (non-blocking or "
                                   "persistent) erroneous; complete it with MPI_Wait or "
                                   "MPI_Test instead");
}
