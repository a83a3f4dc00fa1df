/* posted_requests.h - the drop-in's MPI_Iallreduce requests that papcoll took, between their
 * post (nonblocking_calls.c) and the program's completion or free of them
 * (completion_calls.c, nonblocking_calls.c's MPI_Request_free). */
#ifndef PAPCOLL_PMPI_POSTED_REQUESTS_H
#define PAPCOLL_PMPI_POSTED_REQUESTS_H

#include <stddef.h>

#include <mpi.h>

/* Made before its post (the engine may finish it inside the post), taken with its request
 * once posted, discarded where the post was refused. */
typedef struct posted_request posted_request;
posted_request *posted_request_new(MPI_Comm comm);
void posted_request_taken(posted_request *post, MPI_Request request);
void posted_request_discard(posted_request *post);
/* papcoll_iallreduce_notifying's notice (argument: the posted_request); no MPI call. */
void posted_request_finished(void *argument, int error, const char *message);
/* MPI_Request_free of a request that is no persistent shell: a post's error then has
 * nobody to reach, as with MPI's own requests. */
int posted_request_free(MPI_Request *request);
/* How many are posted and not yet claimed by a completion call; its program's
 * communicator. */
int posted_requests_alive(void);
MPI_Comm posted_request_comm(const posted_request *post);
/* A completion call claims the post of request (NULL: none) before the MPI's call, taking
 * it out of the table: once the MPI completes the request its handle may be MPI's next
 * request's at once (another thread's), which must not find this post. Where the MPI did
 * not complete it, unclaim puts it back. */
posted_request *posted_request_claim(MPI_Request request);
void posted_request_unclaim(posted_request *post);
/* After the program's call completed the claimed request: frees it; its error (MPI_SUCCESS,
 * or the code with papcoll's message in message). */
int posted_request_completed(posted_request *post, char *message, size_t size);

#endif /* PAPCOLL_PMPI_POSTED_REQUESTS_H */
