/* sleep.h - the emulated compute phase of papcoll's MPI programs (papcoll-bench's Fig. 9
 * loop, tests/mpi/monitor.c's late ranks): a sleep of milliseconds that a signal does not
 * cut short. */
#ifndef PAPCOLL_BENCH_SLEEP_H
#define PAPCOLL_BENCH_SLEEP_H

/* Sleeps `milliseconds` (nothing if <= 0). */
void sleep_ms(double milliseconds);

#endif /* PAPCOLL_BENCH_SLEEP_H */
