/* hidden.h - keeping internal functions out of the shared libraries' symbol tables: the
 * libraries export papcoll_* names only, so an internal function that one file of the core
 * calls in another is declared PAPCOLL_HIDDEN. Besides keeping the ABI to the public API,
 * a hidden call is bound at link time (no PLT indirection), which the hot loops want. */
#ifndef PAPCOLL_HIDDEN_H
#define PAPCOLL_HIDDEN_H

#define PAPCOLL_HIDDEN __attribute__((visibility("hidden")))

#endif /* PAPCOLL_HIDDEN_H */
