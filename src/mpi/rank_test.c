/* rank_test.c - is one side's time lower beyond the noise? The one-sided Mann-Whitney U
 * test (Mann and Whitney 1947), exact.
 *
 * Why this test: the closed loop keeps at most 5 times a side, taken calls apart, on
 * machines whose noise is neither normal nor symmetric (a rank that waits a scheduler slice
 * for a core adds milliseconds to one call in ten). A t-test's variance is then made by the
 * outliers; a rank test asks only how the times interleave: U counts the pairs (c, i) in
 * which the candidate's time c is above the incumbent's i (a tie counts half), and p is the
 * share of the C(n + m, n) equally likely interleavings whose U is at most the one measured.
 * With 3 against 3, all three candidate times below all three incumbent ones gives
 * p = 1 / 20 = 0.05; with 5 against 5, 1 / 252.
 *
 *   e.g. candidate 31, 33, 30 us; incumbent 40, 54, 36: no candidate time is above an
 *   incumbent one, U = 0, p = 1 / C(6, 3) = 0.05
 *        candidate 31, 45, 30; incumbent 40, 54, 36: 45 is above 40 and 36, U = 2,
 *        p = (interleavings with U <= 2: 1 + 1 + 2) / 20 = 0.20
 *
 * The counts: N(n, m, u), the interleavings of n candidate and m incumbent values with
 * U = u, follow from where the largest value is: a candidate one is above all m incumbent
 * ones (N(n - 1, m, u - m)), an incumbent one is above none of the candidate's
 * (N(n, m - 1, u)). At most 8 a side: the counts are made per call, on the stack. */
#include "rank_test.h"

enum { MOST = RANK_TEST_MOST_SAMPLES, MOST_U = MOST * MOST };

double rank_test_lower_p(const double *candidate, int candidates, const double *incumbent,
                         int incumbents) {
    if (candidates <= 0 || incumbents <= 0) return 1;
    if (candidates > MOST) candidates = MOST;
    if (incumbents > MOST) incumbents = MOST;
    double u = 0;
    for (int c = 0; c < candidates; c++)
        for (int i = 0; i < incumbents; i++)
            u += candidate[c] > incumbent[i] ? 1 : candidate[c] == incumbent[i] ? 0.5 : 0;
    /* ways[n][k]: interleavings of n candidate and m incumbent values with U = k, for m
     * from 0 up to incumbents (the previous m's row kept beside); on the stack, so that
     * threads calling at once share nothing */
    double previous[MOST + 1][MOST_U + 1], ways[MOST + 1][MOST_U + 1];
    for (int m = 0; m <= incumbents; m++) {
        for (int n = 0; n <= candidates; n++)
            for (int k = 0; k <= MOST_U; k++) {
                if (n == 0 || m == 0) ways[n][k] = k == 0;
                else ways[n][k] = (k >= m ? ways[n - 1][k - m] : 0) + previous[n][k];
            }
        for (int n = 0; n <= candidates; n++)
            for (int k = 0; k <= MOST_U; k++) previous[n][k] = ways[n][k];
    }
    double at_most = 0, all = 0;
    for (int k = 0; k <= candidates * incumbents; k++) {
        all += ways[candidates][k];
        if (k <= u) at_most += ways[candidates][k];
    }
    return at_most / all;
}
