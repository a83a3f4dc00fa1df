/* intercept.h - what the drop-in's entry points share (intercept.c): the route every rank
 * takes alike, the records and their counts, the papcoll communicator behind a user's, and
 * the flag that sends papcoll's own MPI calls straight to the MPI. The blocking entry points
 * live in intercept.c, the non-blocking and persistent ones in nonblocking_calls.c. */
#ifndef PAPCOLL_PMPI_INTERCEPT_H
#define PAPCOLL_PMPI_INTERCEPT_H

#include <mpi.h>

#include "statistics.h"

/* papcoll's own MPI calls (this thread is inside papcoll): they pass straight to PMPI_. */
int intercept_inside_papcoll(void);
void intercept_enter_papcoll(void);
void intercept_leave_papcoll(void);
/* Whether a call with these arguments goes to the MPI unchanged, and why (*reason). */
int intercept_route_to_native(const communicator_record *record, const void *sendbuf,
                              const void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                              MPI_Op op, native_reason *reason);
/* The record of comm (made at first sight; NULL for an invalid one) and the site record of
 * the caller's return address for calls of this kind. */
communicator_record *intercept_record_and_site(MPI_Comm comm, const void *caller,
                                               call_kind kind, site_record **site);
/* The record's papcoll communicator, made now if it has none (collective over comm). */
int intercept_make_papcoll_communicator(communicator_record *record, MPI_Comm comm);
/* Whether PAPCOLL_REPRODUCIBLE turned reproducible mode on (read at MPI_Init). */
int intercept_reproducible(void);
/* Makes the papcoll communicator of comm, which a collective constructor has just made
 * (collective over comm), so that the program's first MPI_Iallreduce on it finds one;
 * nothing for MPI_COMM_NULL, an inter-communicator, one rank, another thread than
 * MPI_Init's, or with interception off. Where papcoll cannot make one, it says so once on
 * stderr and the constructor still succeeds (posts on comm then go to the MPI, counted as
 * no_papcoll_communicator). */
void intercept_prepare_for_posts(MPI_Comm comm);
/* Frees the record's papcoll communicator (collective, as freeing the user's is). */
int intercept_free_papcoll_communicator(communicator_record *record);
/* The records' lock (statistics.c's records are shared by every thread). */
void intercept_lock_records(void);
void intercept_unlock_records(void);
/* Counts one call at site (its kind is the site's): its bytes, its time inside, why it
 * went native (reason, or NULL) and what papcoll ran (ran, or NULL). */
void intercept_count_call(site_record *site, MPI_Count count, MPI_Datatype datatype,
                          double seconds, const native_reason *reason, const char *ran);
/* The same for a papcoll call of record's site at caller, found now (a site_record pointer
 * does not stay valid: the record's sites move as they grow). */
void intercept_count_call_at(communicator_record *record, const void *caller, call_kind kind,
                             MPI_Count count, MPI_Datatype datatype, double seconds,
                             const char *ran);
/* Raises code on comm's error handler, as the MPI call would. */
int intercept_raise_error(MPI_Comm comm, int code);
/* The same with message (papcoll's words for code, kept from where the error happened). */
int intercept_raise_message(MPI_Comm comm, int code, const char *message);

/* node.c: the ranks on this rank's node and the cores they may run on (the union of their
 * affinity masks); collective over MPI_COMM_WORLD, called once at MPI_Init. */
void pmpi_node_describe(int *ranks_on_node, int *cores);

#endif /* PAPCOLL_PMPI_INTERCEPT_H */
