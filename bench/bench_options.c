/* bench_options.c - papcoll-bench's command line (bench_options.h). */
#include "bench_options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/usage.h"

static const char usage[] =
    "usage: papcoll-bench --algorithms a,b --counts 1M --mode one-late|rand-late\n"
    "       --max-delays-ms 0,10,50 [--iterations 20] [--warmup 2] [--compute-ms 100]\n"
    "       [--datatype int8..uint64|float|double|long_double|...] "
    "[--op sum|prod|min|max|band|bor|bxor]\n"
    "       [--seed S] [--jitter-ms MEAN] [--json FILE|-] [--progress]\n"
    "       [--schedule STRING]   (recursive_multiplying's schedule)\n"
    "       [--group-colors c0,c1,...]   (hierarchical algorithms: every rank's group, >= 0)\n"
    "   or: papcoll-bench --native-names   (the names native:NAME takes, as JSON; no mpiexec)\n";

/* "1048576", "1M", "512K": K, M, G are powers of 1024 (the paper's K and M of floats). */
static int64_t parse_count(const char *text) {
    char *end;
    errno = 0;
    long long value = strtoll(text, &end, 10);
    int64_t scale = 1;
    if (*end == 'K' || *end == 'k') scale = 1 << 10, end++;
    else if (*end == 'M' || *end == 'm') scale = 1 << 20, end++;
    else if (*end == 'G' || *end == 'g') scale = 1 << 30, end++;
    if (errno || end == text || *end != '\0' || value < 0 || value > INT32_MAX / scale)
        usage_error("bad count '%s': want a number of elements, e.g. 1009 or 1M", text);
    return value * scale;
}

static double parse_delay(const char *text) {
    char *end;
    double value = strtod(text, &end);
    if (end == text || *end != '\0' || !(value >= 0) || value > 60000)
        usage_error("bad max delay '%s': want milliseconds in [0, 60000]", text);
    return value;
}

static int split(char *list, char **items) {
    int count = 0;
    for (char *item = strtok(list, ","); item; item = strtok(NULL, ",")) {
        if (count == MAX_ITEMS) usage_error("more than 32 items in '%s'", list);
        items[count++] = item;
    }
    return count;
}

static int parse_int(const char *text, int minimum, const char *what) {
    char *end;
    long value = strtol(text, &end, 10);
    if (end == text || *end != '\0' || value < minimum || value > 1000000) usage_error(what, text);
    return (int)value;
}

/* --group-colors c0,c1,...: one color >= 0 per rank of MPI_COMM_WORLD, in rank order. Not
 * split(): a run may have more ranks than split's 32 items. */
static int32_t *parse_group_colors(const char *text, int ranks) {
    int32_t *colors = malloc((size_t)ranks * sizeof *colors);
    if (colors == NULL) usage_error("out of memory for --group-colors '%s'", text);
    int given = 0;
    const char *at = text;
    for (;;) {
        char *end;
        errno = 0;
        long value = strtol(at, &end, 10);
        /* a number, >= 0, that fits a color, ended by ',' or the end: nothing else */
        if (*at < '0' || *at > '9' || errno || value > INT32_MAX || (*end != ',' && *end)) {
            char problem[200];
            snprintf(problem, sizeof problem,
                     "bad --group-colors '%.60s': item %d is not a color (a whole number "
                     "from 0 to 2147483647)", text, given + 1);
            free(colors);
            usage_error("%s", problem);
        }
        if (given < ranks) colors[given] = (int32_t)value;
        given++;
        if (*end == '\0') break;
        at = end + 1;
    }
    if (given != ranks) {
        char problem[200];
        snprintf(problem, sizeof problem,
                 "--group-colors gives %d colors for %d ranks: give one per rank, in rank "
                 "order", given, ranks);
        free(colors);
        usage_error("%s", problem);
    }
    return colors;
}

void parse_options(int argc, char **argv, int ranks, options *o) {
    static char default_algorithms[] = "ring,native";
    usage_init("papcoll-bench", usage);
    memset(o, 0, sizeof *o);
    o->algorithm_count = split(default_algorithms, o->algorithm_names);
    o->counts[0] = 1 << 20;
    o->count_count = 1;
    o->max_delay_count = 1;
    o->one_late = 1;
    o->iterations = 20;
    o->warmup = 2;
    o->compute_ms = 100;
    o->seed = 1;
    o->datatype_name = "float";
    o->op_name = "sum";
    for (int i = 1; i < argc; i++) {
        const char *flag = argv[i];
        if (strcmp(flag, "--help") == 0 || strcmp(flag, "-h") == 0) usage_error(NULL, NULL);
        if (strcmp(flag, "--progress") == 0) {
            o->progress = 1;
            continue;
        }
        if (i + 1 >= argc) usage_error("%s needs a value", flag);
        char *value = argv[++i];
        if (strcmp(flag, "--algorithms") == 0) {
            o->algorithm_count = split(value, o->algorithm_names);
        } else if (strcmp(flag, "--counts") == 0) {
            char *items[MAX_ITEMS];
            o->count_count = split(value, items);
            for (int c = 0; c < o->count_count; c++) o->counts[c] = parse_count(items[c]);
        } else if (strcmp(flag, "--max-delays-ms") == 0) {
            char *items[MAX_ITEMS];
            o->max_delay_count = split(value, items);
            for (int d = 0; d < o->max_delay_count; d++) o->max_delays_ms[d] = parse_delay(items[d]);
        } else if (strcmp(flag, "--mode") == 0) {
            if (strcmp(value, "one-late") != 0 && strcmp(value, "rand-late") != 0)
                usage_error("bad mode '%s': want one-late or rand-late", value);
            o->one_late = strcmp(value, "one-late") == 0;
        } else if (strcmp(flag, "--iterations") == 0) {
            o->iterations = parse_int(value, 1, "bad --iterations '%s': want 1 or more");
        } else if (strcmp(flag, "--warmup") == 0) {
            o->warmup = parse_int(value, 0, "bad --warmup '%s': want 0 or more");
        } else if (strcmp(flag, "--compute-ms") == 0) {
            o->compute_ms = parse_delay(value);
        } else if (strcmp(flag, "--jitter-ms") == 0) {
            o->jitter_ms = parse_delay(value);
        } else if (strcmp(flag, "--mispredict") == 0) {
            o->mispredict = parse_int(value, 0, "bad --mispredict '%s': want 0 or 1") != 0;
        } else if (strcmp(flag, "--seed") == 0) {
            o->seed = (unsigned)parse_int(value, 0, "bad --seed '%s'");
        } else if (strcmp(flag, "--datatype") == 0) {
            o->datatype_name = value; /* checked in main, where the MPI's handles exist */
        } else if (strcmp(flag, "--op") == 0) {
            o->op_name = value;
        } else if (strcmp(flag, "--schedule") == 0) {
            o->schedule = value;
        } else if (strcmp(flag, "--group-colors") == 0) {
            free(o->group_colors);
            o->group_colors = parse_group_colors(value, ranks);
        } else if (strcmp(flag, "--json") == 0) {
            o->json_path = value;
        } else {
            usage_error("unknown option '%s'", flag);
        }
    }
    if (o->one_late && ranks < 2) usage_error("one-late delays rank 1, so it needs 2 or more ranks%s", "");
    if (o->mispredict && (!o->one_late || ranks < 3))
        usage_error("--mispredict predicts rank 2 late instead of rank 1: it needs one-late "
                    "and 3 or more ranks%s", "");
}
