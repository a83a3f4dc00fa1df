/* bench_output.c - papcoll-bench's JSON and table (bench_output.h). */
#include "bench_output.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_timing.h"
#include "common/json.h"
#include "common/statistics.h"
#include "native_algorithms.h"

void tally_choice(choice_tally *tally, const papcoll_choice *choice) {
    int k = 0;
    while (k < tally->distinct && strcmp(tally->names[k], choice->algorithm) != 0) k++;
    if (k == tally->distinct && k < MOST_CHOSEN) {
        snprintf(tally->names[k], sizeof tally->names[k], "%s", choice->algorithm);
        tally->distinct++;
    }
    if (k < MOST_CHOSEN) tally->counts[k]++;
    tally->gain_sum += choice->predicted_seconds > 0
                           ? choice->native_seconds / choice->predicted_seconds
                           : 1.0;
    tally->calls++;
    tally->probes += choice->probe;
    tally->overruled += choice->overruled;
    tally->path_sum += choice->path_seconds;
}

/* `, "name": [[...], ...]`: a number per rank in every timed call of series s. */
static void write_per_rank_list(FILE *out, const char *name, const double *values,
                                const options *o, int ranks, int s) {
    fprintf(out, ", \"%s\": [", name);
    for (int i = 0; i < o->iterations; i++) {
        const double *at = values + ((size_t)s * (size_t)o->iterations + (size_t)i) * (size_t)ranks;
        fprintf(out, "%s[", i ? ", " : "");
        for (int k = 0; k < ranks; k++) fprintf(out, "%s%.6f", k ? ", " : "", at[k]);
        fprintf(out, "]");
    }
    fprintf(out, "]");
}

/* The lists that end a series' object: auto's choices, e-bar per call, arrivals and
 * papcoll's own work per call and rank. */
static void write_series_lists(FILE *out, const options *o, int ranks, const results *r,
                               int s) {
    if (r->tallies[s].calls > 0) { /* auto: what it ran, and the gain it predicted */
        fprintf(out, ", \"chosen\": {");
        for (int k = 0; k < r->tallies[s].distinct; k++) {
            fprintf(out, "%s", k ? ", " : "");
            json_write_string(out, r->tallies[s].names[k]);
            fprintf(out, ": %d", r->tallies[s].counts[k]);
        }
        fprintf(out, "}, \"predicted_gain\": %.4f, \"probes\": %d, \"overruled\": %d, "
                "\"auto_path_us\": %.3f", r->tallies[s].gain_sum / r->tallies[s].calls,
                r->tallies[s].probes, r->tallies[s].overruled,
                r->tallies[s].path_sum / r->tallies[s].calls * 1e6);
    }
    fprintf(out, ", \"ebar_ms\": [");
    for (int i = 0; i < o->iterations; i++)
        fprintf(out, "%s%.6f", i ? ", " : "", r->ebars[(size_t)s * (size_t)o->iterations + (size_t)i]);
    fprintf(out, "]");
    write_per_rank_list(out, "arrival_offsets_ms", r->arrivals, o, ranks, s);
    write_per_rank_list(out, "own_before_ms", r->own_before, o, ranks, s);
    write_per_rank_list(out, "own_after_ms", r->own_after, o, ranks, s);
}

/* IMB's t_min and t_max of series s: over ranks, of each rank's mean time in the call. */
static void rank_spread(const results *r, int s, int ranks, int iterations, double *t_min,
                        double *t_max) {
    const double *sums = r->rank_sums + (size_t)s * (size_t)ranks;
    *t_min = *t_max = sums[0] / iterations;
    for (int k = 1; k < ranks; k++) {
        double mean = sums[k] / iterations;
        if (mean < *t_min) *t_min = mean;
        if (mean > *t_max) *t_max = mean;
    }
}

/* e-bar of series s: the mean over its timed calls of each call's mean over ranks. */
static double series_mean(const options *o, const results *r, int s) {
    double sum = 0;
    for (int i = 0; i < o->iterations; i++) sum += r->ebars[(size_t)s * (size_t)o->iterations + (size_t)i];
    return sum / o->iterations;
}

void write_finished(const options *o, const char *const *names, int ranks, int element_size,
                    const results *r, int c, int d) {
    for (int a = 0; a < o->algorithm_count; a++) {
        int s = (a * o->count_count + c) * o->max_delay_count + d;
        double t_min, t_max;
        rank_spread(r, s, ranks, o->iterations, &t_min, &t_max);
        fprintf(stderr, "finished {\"algorithm\": ");
        json_write_string(stderr, names[a]);
        fprintf(stderr, ", \"bytes\": %lld, \"max_delay_ms\": %g, \"iterations\": %d, "
                "\"avg_elapsed_ms\": %.6f, \"t_min_ms\": %.6f, \"t_max_ms\": %.6f, "
                "\"correct\": %s}\n", (long long)o->counts[c] * element_size,
                o->max_delays_ms[d], o->iterations, series_mean(o, r, s), t_min, t_max,
                r->correct[s] ? "true" : "false");
    }
    fflush(stderr);
}

void write_results(const options *o, const char *const *names, int ranks, int element_size,
                   const results *r) {
    char library[256];
    native_library_name(library, sizeof library);
    FILE *out = stdout;
    if (o->json_path && strcmp(o->json_path, "-") != 0) out = fopen(o->json_path, "w");
    if (out == NULL && o->json_path) {
        fprintf(stderr, "papcoll-bench: cannot write %s: %s\n", o->json_path, strerror(errno));
        MPI_Abort(MPI_COMM_WORLD, 5);
    }
    double *ebar = malloc((size_t)o->iterations * sizeof *ebar);
    if (ebar == NULL) MPI_Abort(MPI_COMM_WORLD, 3);
    if (o->json_path) fprintf(out, "[\n");
    else fprintf(out, "%-28s %6s %10s %6s %10s %10s %10s %8s\n", "algorithm", "ranks",
                 "bytes", "delay", "ebar_ms", "2sigma_ms", "median_ms", "correct");
    for (int s = 0; s < r->series; s++) {
        int a = s / (o->count_count * o->max_delay_count);
        int c = (s / o->max_delay_count) % o->count_count, d = s % o->max_delay_count;
        for (int i = 0; i < o->iterations; i++) ebar[i] = r->ebars[(size_t)s * (size_t)o->iterations + (size_t)i];
        statistics st = summarize(ebar, o->iterations);
        double bound = 0;
        for (int i = 0; i < o->iterations; i++)
            bound += lower_bound_ms(r->arrivals + ((size_t)s * (size_t)o->iterations + (size_t)i) *
                                                      (size_t)ranks, ranks, r->p2p_ms[c]) / o->iterations;
        long long bytes = (long long)o->counts[c] * element_size;
        double t_min, t_max;
        rank_spread(r, s, ranks, o->iterations, &t_min, &t_max);
        if (!o->json_path) {
            fprintf(out, "%-28s %6d %10lld %6g %10.3f %10.3f %10.3f %8s\n", names[a], ranks,
                    bytes, o->max_delays_ms[d], st.mean, 2 * st.standard_deviation, st.median,
                    r->correct[s] ? "yes" : "NO");
            continue;
        }
        fprintf(out, "  {\"algorithm\": ");
        json_write_string(out, names[a]);
        fprintf(out, ", \"ranks\": %d, \"count\": %lld, \"datatype\": \"%s\", \"op\": \"%s\","
                " \"bytes\": %lld,"
                " \"mode\": \"%s\", \"mispredicted\": %s,"
                " \"max_delay_ms\": %g, \"compute_ms\": %g, \"jitter_ms\": %g,"
                " \"iterations\": %d, \"avg_elapsed_ms\": %.6f, \"stddev_ms\": %.6f,"
                " \"median_ms\": %.6f, \"min_ms\": %.6f, \"max_ms\": %.6f,"
                " \"t_min_ms\": %.6f, \"t_max_ms\": %.6f,"
                " \"p2p_ms\": %.6f, \"lower_bound_ms\": %.6f, \"excess_ms\": %.6f,"
                " \"predicted_calls\": %d, \"late_rank_predicted\": %d,"
                " \"correct\": %s, \"mpi_library\": ",
                ranks, (long long)o->counts[c], o->datatype_name, o->op_name, bytes,
                o->one_late ? "one-late" : "rand-late", o->mispredict ? "true" : "false",
                o->max_delays_ms[d], o->compute_ms, o->jitter_ms, o->iterations, st.mean,
                st.standard_deviation, st.median, st.minimum, st.maximum, t_min, t_max,
                r->p2p_ms[c],
                bound, st.mean - bound, r->predicted_calls[s], r->late_rank_predicted[s],
                r->correct[s] ? "true" : "false");
        json_write_string(out, library);
        fprintf(out, ", \"group_colors\": ");
        if (o->group_colors == NULL) fprintf(out, "null");
        for (int k = 0; o->group_colors && k < ranks; k++)
            fprintf(out, "%s%d%s", k ? ", " : "[", (int)o->group_colors[k],
                    k + 1 < ranks ? "" : "]");
        write_series_lists(out, o, ranks, r, s);
        fprintf(out, "}%s\n", s + 1 < r->series ? "," : "");
    }
    if (o->json_path) fprintf(out, "]\n");
    if (out != stdout) fclose(out);
    free(ebar);
}
