/* posted_requests.c - the MPI_Iallreduce calls papcoll took under the drop-in, by request,
 * until the program completes or frees them: the engine's notice of each one's outcome
 * (papcoll_iallreduce_notifying) waits here for the completion call that raises it
 * (completion_calls.c). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

#include "intercept.h"
#include "posted_requests.h"

struct posted_request {
    MPI_Request request;
    MPI_Comm comm;             /* the program's */
    int finished, orphaned;    /* guarded by posts_lock */
    int error;
    char message[MPI_MAX_ERROR_STRING];
    struct posted_request *next;
};

enum { BUCKETS = 1024 };
static pthread_mutex_t posts_lock = PTHREAD_MUTEX_INITIALIZER;
static posted_request *buckets[BUCKETS]; /* posted, not yet claimed: by request */
static int posts_alive;                   /* atomic */

static size_t bucket_of(MPI_Request request) {
    uint64_t bits = 0; /* an int under MPICH, a pointer under Open MPI */
    memcpy(&bits, &request, sizeof request < sizeof bits ? sizeof request : sizeof bits);
    return (size_t)((bits * 0x9E3779B97F4A7C15ull) >> 54) % BUCKETS;
}

posted_request *posted_request_new(MPI_Comm comm) {
    posted_request *post = calloc(1, sizeof *post);
    if (post != NULL) post->comm = comm;
    return post;
}

void posted_request_discard(posted_request *post) { free(post); }

/* Puts post in the table, or takes it out (posts_lock held). */
static void link_post(posted_request *post) {
    posted_request **bucket = &buckets[bucket_of(post->request)];
    post->next = *bucket;
    *bucket = post;
    __atomic_add_fetch(&posts_alive, 1, __ATOMIC_ACQ_REL);
}

static void unlink_post(posted_request *post) {
    posted_request **link = &buckets[bucket_of(post->request)];
    while (*link != post) link = &(*link)->next;
    *link = post->next;
    __atomic_sub_fetch(&posts_alive, 1, __ATOMIC_ACQ_REL);
}

void posted_request_taken(posted_request *post, MPI_Request request) {
    post->request = request;
    pthread_mutex_lock(&posts_lock);
    link_post(post);
    pthread_mutex_unlock(&posts_lock);
}

/* From the engine, possibly inside MPI's progress: no MPI call here. */
void posted_request_finished(void *argument, int error, const char *message) {
    posted_request *post = argument;
    pthread_mutex_lock(&posts_lock);
    post->finished = 1;
    post->error = error;
    if (error != MPI_SUCCESS) snprintf(post->message, sizeof post->message, "%s", message);
    int orphaned = post->orphaned;
    pthread_mutex_unlock(&posts_lock);
    if (orphaned) free(post);
}

posted_request *posted_request_claim(MPI_Request request) {
    pthread_mutex_lock(&posts_lock);
    posted_request *post = buckets[bucket_of(request)];
    while (post != NULL && post->request != request) post = post->next;
    if (post != NULL) unlink_post(post);
    pthread_mutex_unlock(&posts_lock);
    return post;
}

void posted_request_unclaim(posted_request *post) {
    pthread_mutex_lock(&posts_lock);
    link_post(post);
    pthread_mutex_unlock(&posts_lock);
}

int posted_request_free(MPI_Request *request) {
    posted_request *post = intercept_inside_papcoll() || request == NULL ||
                                    !__atomic_load_n(&posts_alive, __ATOMIC_ACQUIRE)
                                ? NULL : posted_request_claim(*request);
    int code = PMPI_Request_free(request);
    if (post == NULL) return code;
    if (code != MPI_SUCCESS) {
        posted_request_unclaim(post);
        return code;
    }
    pthread_mutex_lock(&posts_lock);
    int finished = post->finished;
    post->orphaned = !finished; /* the engine's notice frees it */
    pthread_mutex_unlock(&posts_lock);
    if (finished) free(post);
    return code;
}

int posted_requests_alive(void) { return __atomic_load_n(&posts_alive, __ATOMIC_ACQUIRE); }

MPI_Comm posted_request_comm(const posted_request *post) { return post->comm; }

int posted_request_completed(posted_request *post, char *message, size_t size) {
    pthread_mutex_lock(&posts_lock);
    int error = post->error; /* finished: the notice comes before the completion */
    if (error != MPI_SUCCESS) snprintf(message, size, "%s", post->message);
    pthread_mutex_unlock(&posts_lock);
    free(post);
    return error;
}
