/* expect.h - the one check of the MPI test programs (errors.c, agreement.c): a call's
 * error class and message, counted per rank; rank 0 prints every check, other ranks their
 * failures. Each program sums `failures` over ranks at the end. */
#ifndef PAPCOLL_TESTS_EXPECT_H
#define PAPCOLL_TESTS_EXPECT_H

#include <stdio.h>
#include <string.h>

#include "papcoll.h"

static int rank, failures, checks;

static void expect(const char *what, int code, int expected_code, const char *expected_text) {
    checks++;
    const char *message = papcoll_error_string(code);
    int ok = code == expected_code && strstr(message, expected_text) != NULL;
    if (!ok) failures++;
    if (rank == 0 || !ok)
        printf("%s rank %d %-45s -> %d: %s\n", ok ? "ok  " : "FAIL", rank, what, code,
               message);
}

#endif /* PAPCOLL_TESTS_EXPECT_H */
