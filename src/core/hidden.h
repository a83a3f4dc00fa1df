/* hidden.h - keeping internal functions out of the shared libraries' symbol tables: the
 * libraries export papcoll_* names only, so an internal function that one file of the core
 * calls in another is declared PAPCOLL_HIDDEN. Besides keeping the ABI to the public API,
 * a hidden call is bound at link time (no PLT indirection), which the hot loops want. */
#ifndef PAPCOLL_HIDDEN_H
#define PAPCOLL_HIDDEN_H

#define PAPCOLL_HIDDEN __attribute__((visibility("hidden")))

/* The few internal functions the MPI library (src/mpi) calls across the library boundary
 * must be exported, so they leave the core under papcoll_internal_* names (in no public
 * header); inside papcoll the short names stay readable. cmake/exports.map lets only
 * papcoll_* out of either library. */
#define registry_find papcoll_internal_registry_find
#define sched_dependents papcoll_internal_sched_dependents
#define sched_send_is_synchronous papcoll_internal_sched_send_is_synchronous
#define select_default_algorithm papcoll_internal_select_default_algorithm
#define select_flat_alternative papcoll_internal_select_flat_alternative
#define select_flat_candidates papcoll_internal_select_flat_candidates
#define select_is_flat_stand_in papcoll_internal_select_is_flat_stand_in
#define owned_parameters_set papcoll_internal_owned_parameters_set
#define owned_parameters_release papcoll_internal_owned_parameters_release

#endif /* PAPCOLL_HIDDEN_H */
