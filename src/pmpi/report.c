/* report.c - see report.h. Ranks' records of one site are merged thus: calls, algorithms and
 * native reasons are per collective call, the same on every member, so the largest count
 * is taken (a rank that called from another site shows up under that site); seconds and the
 * model's saving are averaged over the ranks; the imbalance is the spread of the ranks' mean
 * time per call (the rank that arrives last waits least: for one late rank it is its
 * delay). */
#define _POSIX_C_SOURCE 200809L /* O_NOFOLLOW, fdopen, getpid */
#include "report.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "settings.h"
#include "statistics.h"

typedef struct merged_site {
    site_record total;         /* counts: largest over ranks; seconds, saving: summed */
    int ranks;
    double fastest_per_call, slowest_per_call; /* over ranks: mean seconds per call */
} merged_site;

static void merge(merged_site *into, const site_record *from) {
    site_record *total = &into->total;
    double per_call = from->calls > 0 ? from->seconds / (double)from->calls : 0;
    if (into->ranks == 0) {
        *total = *from;
        into->fastest_per_call = into->slowest_per_call = per_call;
        into->ranks = 1;
        return;
    }
    into->ranks++;
    into->fastest_per_call = fmin(into->fastest_per_call, per_call);
    into->slowest_per_call = fmax(into->slowest_per_call, per_call);
    if (from->calls > total->calls) total->calls = from->calls;
    if (from->nonblocking_calls > total->nonblocking_calls)
        total->nonblocking_calls = from->nonblocking_calls;
    if (from->bytes > total->bytes) total->bytes = from->bytes;
    total->seconds += from->seconds;
    total->saving_seconds += from->saving_seconds;
    total->freed |= from->freed;
    /* decisions are the same on every rank: the largest count, any rank's last choice */
    if (from->probe_calls > total->probe_calls) total->probe_calls = from->probe_calls;
    if (from->overruled_calls > total->overruled_calls)
        total->overruled_calls = from->overruled_calls;
    statistics_merge_decided(total, from);
    if (!total->has_choice && from->has_choice) {
        total->has_choice = 1;
        total->last_choice = from->last_choice;
    }
    for (int k = 0; k < NATIVE_REASON_COUNT; k++)
        if (from->native[k] > total->native[k]) total->native[k] = from->native[k];
    for (int a = 0; a < SITE_ALGORITHMS_MOST && from->algorithm_names[a][0]; a++) {
        int b = 0;
        while (b < SITE_ALGORITHMS_MOST && total->algorithm_names[b][0] &&
               strcmp(total->algorithm_names[b], from->algorithm_names[a]) != 0)
            b++;
        if (b == SITE_ALGORITHMS_MOST) continue; /* full: keep the first ones seen */
        memcpy(total->algorithm_names[b], from->algorithm_names[a],
               sizeof total->algorithm_names[b]);
        if (from->algorithm_calls[a] > total->algorithm_calls[b])
            total->algorithm_calls[b] = from->algorithm_calls[a];
    }
}

/* Merges records per (communicator, site, call kind); returns how many sites (in first-seen
 * order). */
static int merge_all(const site_record *records, int count, merged_site *sites) {
    int used = 0;
    for (int k = 0; k < count; k++) {
        int s = 0;
        while (s < used && (strcmp(sites[s].total.communicator, records[k].communicator) != 0 ||
                            strcmp(sites[s].total.site, records[k].site) != 0 ||
                            sites[s].total.call_kind != records[k].call_kind))
            s++;
        if (s == used) memset(&sites[used++], 0, sizeof sites[0]);
        merge(&sites[s], &records[k]);
    }
    return used;
}

static void write_string(FILE *file, const char *text) {
    fputc('"', file);
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        if (*c == '"' || *c == '\\') fprintf(file, "\\%c", *c);
        else if (*c < 0x20) fprintf(file, "\\u%04x", *c);
        else fputc(*c, file);
    }
    fputc('"', file);
}

static int64_t native_calls(const site_record *site) {
    int64_t calls = 0;
    for (int k = 0; k < NATIVE_REASON_COUNT; k++) calls += site->native[k];
    return calls;
}

static void write_reasons(FILE *file, const int64_t *native) {
    fputc('{', file);
    int written = 0;
    for (int k = 0; k < NATIVE_REASON_COUNT; k++)
        if (native[k] > 0)
            fprintf(file, "%s\"%s\": %lld", written++ ? ", " : "", native_reason_names[k],
                    (long long)native[k]);
    fputc('}', file);
}

static void write_number_or_null(FILE *file, int known, double value) {
    if (known) fprintf(file, "%.9g", value);
    else fprintf(file, "null");
}

/* auto's closed loop: its probes and overrulings, and the last choice's times after the
 * last arrival, predicted (e-bar less the predicted wait) and measured, for the model's
 * choice and its alternative (null where not measured). */
static void write_closed_loop(FILE *file, const site_record *s) {
    fprintf(file, "     \"probe_calls\": %lld, \"overruled_calls\": %lld, \"last_choice\": ",
            (long long)s->probe_calls, (long long)s->overruled_calls);
    if (!s->has_choice) {
        fprintf(file, "null,\n");
        return;
    }
    const papcoll_choice *c = &s->last_choice;
    fprintf(file, "{\"ran\": ");
    write_string(file, c->algorithm);
    fprintf(file, ", \"model\": ");
    write_string(file, c->model_algorithm);
    fprintf(file, ", \"alternative\": ");
    write_string(file, c->alternative);
    /* null where the model made no prediction (balanced arrivals: the fixed rule picks
     * native; the flat algorithm measured against it has no predicted time) */
    fprintf(file, ", \"wait_seconds\": %.9g, \"model_predicted_seconds\": ", c->wait_seconds);
    write_number_or_null(file, c->predicted_seconds > 0, c->predicted_seconds - c->wait_seconds);
    fprintf(file, ", \"model_observed_seconds\": ");
    write_number_or_null(file, c->observed_calls > 0, c->observed_seconds);
    fprintf(file, ", \"alternative_predicted_seconds\": ");
    write_number_or_null(file, c->alternative[0] && c->alternative_seconds > 0,
                         c->alternative_seconds - c->wait_seconds);
    fprintf(file, ", \"alternative_observed_seconds\": ");
    write_number_or_null(file, c->alternative_observed_calls > 0,
                         c->alternative_observed_seconds);
    fprintf(file, "},\n");
}

static void write_site(FILE *file, const merged_site *merged) {
    const site_record *s = &merged->total;
    int64_t native = native_calls(s);
    fprintf(file, "    {\"communicator\": ");
    write_string(file, s->communicator);
    fprintf(file, ", \"communicator_size\": %d, \"freed\": %s, \"site\": ",
            s->communicator_size, s->freed ? "true" : "false");
    write_string(file, s->site);
    fprintf(file, ", \"call\": ");
    write_string(file, s->call_kind >= 0 && s->call_kind < CALL_KIND_COUNT
                           ? call_kind_names[s->call_kind] : "unknown");
    fprintf(file, ",\n     \"ranks_reporting\": %d, \"calls\": %lld, \"papcoll_calls\": %lld, "
            "\"native_calls\": %lld, \"nonblocking_calls\": %lld, \"bytes_per_call\": %.0f,\n",
            merged->ranks, (long long)s->calls, (long long)(s->calls - native),
            (long long)native, (long long)s->nonblocking_calls,
            s->calls > 0 ? s->bytes / (double)s->calls : 0.0);
    fprintf(file, "     \"seconds_inside\": %.9g, \"seconds_per_call\": %.9g, "
            "\"imbalance_seconds\": %.9g, \"estimated_saving_seconds\": %.9g,\n",
            s->seconds / merged->ranks,
            s->calls > 0 ? s->seconds / merged->ranks / (double)s->calls : 0.0,
            merged->slowest_per_call - merged->fastest_per_call,
            s->saving_seconds / merged->ranks);
    write_closed_loop(file, s);
    fprintf(file, "     \"algorithms\": {");
    for (int a = 0; a < SITE_ALGORITHMS_MOST && s->algorithm_names[a][0]; a++) {
        fprintf(file, "%s", a ? ", " : "");
        write_string(file, s->algorithm_names[a]);
        fprintf(file, ": %lld", (long long)s->algorithm_calls[a]);
    }
    fprintf(file, "}, \"native_reasons\": ");
    write_reasons(file, s->native);
    /* the calls papcoll decided, as a rule names them (`papcoll report --rules`) */
    fprintf(file, ",\n     \"decided\": ");
    if (s->decided_calls == 0) {
        fprintf(file, "null}");
        return;
    }
    fprintf(file, "{\"bytes\": [%.0f, %.0f], \"datatype\": ", s->decided_bytes_low,
            s->decided_bytes_high);
    if (s->decided_datatype[0]) write_string(file, s->decided_datatype);
    else fprintf(file, "null");
    fprintf(file, "}}");
}

static void write_report(FILE *file, const pmpi_settings *settings, int complete,
                         int world_size, int ranks_reporting, const merged_site *sites,
                         int count) {
    char version[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int length = 0;
    PMPI_Get_library_version(version, &length);
    version[strcspn(version, "\n")] = '\0';
    site_record total;
    memset(&total, 0, sizeof total);
    double seconds = 0, saving = 0;
    for (int k = 0; k < count; k++) {
        total.calls += sites[k].total.calls;
        for (int r = 0; r < NATIVE_REASON_COUNT; r++) total.native[r] += sites[k].total.native[r];
        seconds += sites[k].total.seconds / sites[k].ranks;
        saving += sites[k].total.saving_seconds / sites[k].ranks;
    }
    int64_t native = native_calls(&total);
    fprintf(file, "{\n  \"papcoll_report\": 1,\n  \"complete\": %s,\n  \"ranks\": %d,\n"
            "  \"ranks_reporting\": %d,\n  \"algorithm\": ",
            complete ? "true" : "false", world_size, ranks_reporting);
    write_string(file, settings->algorithm);
    fprintf(file, ",\n  \"min_bytes\": %lld,\n  \"mpi\": ", (long long)settings->min_bytes);
    write_string(file, version);
    fprintf(file, ",\n  \"node\": {\"ranks\": %d, \"cores\": %d, \"oversubscribed\": %s, "
            "\"native_tuning\": ", settings->ranks_on_node, settings->cores,
            settings->cores > 0 && settings->ranks_on_node > settings->cores ? "true" : "false");
    write_string(file, settings->native_settings);
    fprintf(file, "}");
    fprintf(file, ",\n  \"totals\": {\"calls\": %lld, \"papcoll_calls\": %lld, "
            "\"native_calls\": %lld, \"seconds_inside\": %.9g, "
            "\"estimated_saving_seconds\": %.9g, \"native_reasons\": ",
            (long long)total.calls, (long long)(total.calls - native), (long long)native,
            seconds, saving);
    write_reasons(file, total.native);
    fprintf(file, "},\n  \"sites\": [\n");
    for (int k = 0; k < count; k++) {
        write_site(file, &sites[k]);
        fprintf(file, "%s\n", k + 1 < count ? "," : "");
    }
    fprintf(file, "  ]\n}\n");
}

/* Rank 0 writes path.partial.PID, made new (never through a link or a file already
 * there), then renames it over path: a reader never sees half a report. The path is
 * checked again first: MPI_Init checked it, but the program may have made something there
 * since. */
static int write_file(const pmpi_settings *settings, int complete, int world_size,
                      int ranks_reporting, const merged_site *sites, int count) {
    const char *path = settings->report_path;
    char why[256];
    if (pmpi_report_path_usable(path, why, sizeof why) != 0) {
        fprintf(stderr, "papcoll (libpapcoll_pmpi): not writing the report: %s %s\n", path,
                why);
        return -1;
    }
    size_t length = strlen(path) + 40;
    char *temporary = malloc(length);
    if (temporary == NULL) return -1;
    snprintf(temporary, length, "%s.partial.%ld", path, (long)getpid());
    int descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
    FILE *file = descriptor >= 0 ? fdopen(descriptor, "w") : NULL;
    if (file == NULL) {
        fprintf(stderr, "papcoll (libpapcoll_pmpi): cannot write the report %s: %s\n",
                temporary, strerror(errno));
        if (descriptor >= 0) {
            close(descriptor);
            remove(temporary);
        }
        free(temporary);
        return -1;
    }
    write_report(file, settings, complete, world_size, ranks_reporting, sites, count);
    int failed = ferror(file);
    failed |= fclose(file) != 0;
    if (failed || rename(temporary, path) != 0) {
        fprintf(stderr, "papcoll (libpapcoll_pmpi): cannot write the report %s: %s\n", path,
                strerror(errno));
        remove(temporary);
        free(temporary);
        return -1;
    }
    free(temporary);
    return 0;
}

int report_write(const pmpi_settings *settings, int complete, int world_rank, int world_size) {
    int count = 0;
    site_record *mine = statistics_all_sites(&count);
    site_record *all = mine;
    int total = count, ranks_reporting = 1;
    int *counts = NULL, *displacements = NULL;
    if (complete) {
        /* every rank takes part, even one whose records could not be gathered (count 0) */
        int bytes = mine ? count * (int)sizeof *mine : 0;
        if (world_rank == 0) {
            counts = calloc((size_t)world_size, sizeof *counts);
            displacements = calloc((size_t)world_size, sizeof *displacements);
        }
        PMPI_Gather(&bytes, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (world_rank == 0) {
            total = 0;
            for (int r = 0; r < world_size; r++) {
                displacements[r] = total;
                total += counts[r];
            }
            all = malloc((size_t)(total > 0 ? total : 1));
        }
        PMPI_Gatherv(mine, bytes, MPI_BYTE, all, counts, displacements, MPI_BYTE, 0,
                     MPI_COMM_WORLD);
        if (world_rank == 0) total /= (int)sizeof *mine;
        ranks_reporting = world_size;
    }
    int status = 0;
    if (world_rank == 0) {
        merged_site *sites = calloc((size_t)(total > 0 ? total : 1), sizeof *sites);
        if (sites == NULL || all == NULL) {
            fprintf(stderr, "papcoll (libpapcoll_pmpi): out of memory writing the report\n");
            status = -1;
        } else {
            status = write_file(settings, complete, world_size, ranks_reporting, sites,
                                merge_all(all, total, sites));
        }
        free(sites);
    }
    if (all != mine) free(all);
    free(mine);
    free(counts);
    free(displacements);
    return status;
}
