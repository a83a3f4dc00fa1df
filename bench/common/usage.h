/* usage.h - how papcoll's MPI programs (papcoll-bench, papcoll-calibrate) refuse a command
 * line: rank 0 names the problem and prints the usage, every rank leaves MPI and exits 2
 * (--help: the usage on stdout, exit 0). One piece, so the programs word it alike. */
#ifndef PAPCOLL_BENCH_USAGE_H
#define PAPCOLL_BENCH_USAGE_H

/* The program's name ("papcoll-bench") and usage text, before any usage_error. */
void usage_init(const char *program, const char *usage);
/* Prints the problem (format with value, one %s) and the usage, then exits 2; with format
 * NULL (--help) prints only the usage and exits 0. */
_Noreturn void usage_error(const char *format, const char *value);

#endif /* PAPCOLL_BENCH_USAGE_H */
