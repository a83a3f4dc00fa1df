/* completion_calls.h - the program's completion calls (MPI_Wait, MPI_Test and their
 * any/all/some forms), MPI_Cancel and MPI_Request_free, where they meet a request of the
 * drop-in's (completion_calls.c): a post's generalized request (posted_requests.h), or a
 * persistent all-reduce's shell, whose functions here nonblocking_calls.c defines. */
#ifndef PAPCOLL_PMPI_COMPLETION_CALLS_H
#define PAPCOLL_PMPI_COMPLETION_CALLS_H

#include <stddef.h>

#include <mpi.h>

/* nonblocking_calls.c: the persistent shells. How many live; the shell behind request
 * (NULL: none) and its program's communicator; and, once the program's call completed the
 * shell, its start's error (MPI_SUCCESS, or the code with papcoll's message). */
int nonblocking_shells_alive(void);
void *nonblocking_shell_of(MPI_Request request, MPI_Comm *comm);
int nonblocking_shell_completed(void *shell, char *message, size_t size);

#endif /* PAPCOLL_PMPI_COMPLETION_CALLS_H */
