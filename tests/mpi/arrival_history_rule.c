/* arrival_history_rule.c (test) - a persistent request's arrival history
 * (src/mpi/arrival_history.c), its rule alone: which predictions it trusts, fed with
 * made-up start times so that the right answer is known. The history's code is compiled in
 * (no MPI call is made: it is local arithmetic, every rank's alike); tests/mpi/
 * nonblocking.c checks it under mpiexec on real times.
 *
 * The case a loaded machine once made (3 ranks on 2 cores, sanitizers): the medians kept a
 * few milliseconds of noise, a rank was named late by 1.5 ms, and it then came last by
 * 200 ms. It came last, but the prediction said 1.5 ms: a miss, or auto trusts a pattern
 * that foretold nothing. Prints "N passed, M failed". */
#include <stdio.h>

#include "arrival_history.h"

enum { RANKS = 3 };

static int passed, failed;

static void check(int condition, const char *what) {
    if (condition) {
        passed++;
        return;
    }
    failed++;
    printf("FAIL %s\n", what);
}

/* tau 20 us: the on-time unit is the jitter floor, 100 us */
static const double tau = 20e-6;

/* Records rows (each RANKS start times) one by one, predicting before each as a start does;
 * returns whether the prediction after the last is trusted. */
static int trusted_after(arrival_history *history, const double (*rows)[RANKS], int count) {
    for (int k = 0; k < count; k++) {
        arrival_history_predict(history);
        arrival_history_record(history, rows[k], 1, tau);
    }
    return arrival_history_predict(history);
}

/* A fresh history of 3 starts fed rows: is its prediction after them trusted as wanted? */
static void expect_trust(const double (*rows)[RANKS], int count, int wanted, const char *what) {
    papcoll_tuning tuning;
    papcoll_tuning_defaults(&tuning);
    tuning.history_starts = 3;
    arrival_history history;
    if (!arrival_history_init(&history, RANKS, &tuning)) {
        check(0, "history made (out of memory)");
        return;
    }
    check(trusted_after(&history, rows, count) == wanted, what);
    arrival_history_release(&history);
}

int main(void) {
    /* rank 1 noisy by 1.5 ms three times, then 200 ms late twice: the two predictions
     * (1.5 ms) named the rank that came last, 130 x too early: two misses of three */
    const double jump[][RANKS] = {{0, 1.5e-3, 0}, {0, 1.5e-3, 0}, {0, 1.5e-3, 0},
                                  {0, 0.2, 0},    {0, 0.2, 0}};
    expect_trust(jump, 5, 0, "a prediction 130 x too small for the rank it named is a miss");

    /* a steady late rank whose lateness scatters by 20 % stays trusted: its class, or
     * one beside it */
    const double steady[][RANKS] = {{0, 0.2, 0}, {0, 0.17, 0}, {0, 0.23, 0},
                                    {0, 0.19, 0}, {0, 0.24, 0}, {0, 0.16, 0}};
    expect_trust(steady, 6, 1, "a steady late rank (+-20 %) is trusted");

    /* a late rank that moves each start (0, 1, 2, 0, ...) is never foretold by medians:
     * not trusted once judged */
    const double moving[][RANKS] = {{0.2, 0, 0}, {0, 0.2, 0}, {0, 0, 0.2},
                                    {0.2, 0, 0}, {0, 0.2, 0}, {0, 0, 0.2}};
    expect_trust(moving, 6, 0, "a moving late rank is not trusted");

    /* two ranks 200 ms late that swap last place by a few milliseconds: the rank named
     * came last or in the last one's class, as late as named: trusted */
    const double two[][RANKS] = {{0, 0.2, 0.203}, {0, 0.204, 0.2}, {0, 0.2, 0.202},
                                 {0, 0.205, 0.2}, {0, 0.2, 0.204}, {0, 0.203, 0.2}};
    expect_trust(two, 6, 1, "two late ranks swapping last place are trusted");

    /* nobody late, with jitter below the unit: balanced predictions, all hits */
    const double even[][RANKS] = {{0, 50e-6, 0}, {20e-6, 0, 0}, {0, 0, 70e-6}, {0, 0, 0}};
    expect_trust(even, 4, 1, "balanced arrivals are trusted");

    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
