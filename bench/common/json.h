/* json.h - a JSON string as papcoll's MPI programs write it (papcoll-bench,
 * papcoll-calibrate): their JSON is written by hand with fprintf, and only strings need
 * escaping. */
#ifndef PAPCOLL_BENCH_JSON_H
#define PAPCOLL_BENCH_JSON_H

#include <stdio.h>

/* text in double quotes; '"' and '\\' escaped, a newline as \n, other control characters
 * left out. */
void json_write_string(FILE *out, const char *text);

#endif /* PAPCOLL_BENCH_JSON_H */
