/* select.h - choosing an algorithm when the user asks for "auto". */
#ifndef PAPCOLL_SELECT_H
#define PAPCOLL_SELECT_H

#include "hidden.h"

#include <stdint.h>

/* The algorithm `auto` runs for this call; never one that needs a commutative op when
 * commutative is 0. */
const char *select_default_algorithm(int32_t ranks, int64_t count, int64_t elem_size,
                                     int commutative);

#endif
