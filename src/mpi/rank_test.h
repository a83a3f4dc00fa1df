/* rank_test.h - the closed loop's test that two sets of measured times differ beyond their
 * noise: the one-sided Mann-Whitney U test, exact for the few samples the loop keeps
 * (rank_test.c says why this test). */
#ifndef PAPCOLL_MPI_RANK_TEST_H
#define PAPCOLL_MPI_RANK_TEST_H

/* The probability, were both sets drawn from one distribution, of a U statistic at most
 * the one measured: that candidate[0 .. candidates) lies this far below
 * incumbent[0 .. incumbents) by chance (1 where a set is empty). Each set holds at most
 * RANK_TEST_MOST_SAMPLES values; ties count half. */
enum { RANK_TEST_MOST_SAMPLES = 8 };
double rank_test_lower_p(const double *candidate, int candidates, const double *incumbent,
                         int incumbents);

#endif /* PAPCOLL_MPI_RANK_TEST_H */
