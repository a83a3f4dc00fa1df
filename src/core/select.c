/* select.c - the `auto` algorithm: for now a fixed rule in the spirit of MPICH's defaults
 * (MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE = 2048 bytes); a model-driven selector that also
 * looks at the arrival pattern replaces it in a later issue.
 *
 *   vector <= 2 KiB, or fewer elements than ranks  -> recursive_doubling (latency: log2 P rounds)
 *   commutative op and vector >= 1 MiB and P >= 3  -> ring (bandwidth optimal, seed 001)
 *   otherwise                                      -> rabenseifner (bandwidth + log2 P rounds)
 *
 * recursive_doubling and rabenseifner keep rank order, so only ring needs a commutative op,
 * and the rule never picks an algorithm that cannot take the op. */
#include "select.h"

#include "papcoll_core.h"

const char *select_default_algorithm(int32_t ranks, int64_t count, int64_t elem_size,
                                     int commutative) {
    const int64_t short_message_bytes = 2048, long_message_bytes = 1 << 20;
    int64_t bytes = count * elem_size;
    if (bytes <= short_message_bytes || count < ranks) return "recursive_doubling";
    if (commutative && bytes >= long_message_bytes && ranks >= 3) return "ring";
    return "rabenseifner";
}

const char *papcoll_select_default(int32_t ranks, int64_t count, int64_t elem_size,
                                   int32_t commutative) {
    return select_default_algorithm(ranks, count, elem_size, commutative);
}
