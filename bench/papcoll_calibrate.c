/* papcoll_calibrate.c - measures the parameters of papcoll's simulator (python/papcoll/
 * model.py, SimModel) on the machine it runs on, with real MPI: `papcoll calibrate` runs it
 * under mpiexec and fits the model to what it writes (python/papcoll/lab/calibrate.py). The
 * simulator can then predict this machine, and the arrival monitor's tau comes from the
 * same numbers.
 *
 * What it measures (every time with MPI_Wtime; each figure is the median of several
 * samples, because a busy machine makes single samples late, never early):
 *
 *   1. Ping-pong between ranks 0 and 1 over a sweep of sizes (0 B, then 4 B .. 16 MiB in
 *      powers of 4): one-way time = round trip / 2. A sample averages several round trips
 *      (more for small messages, so the clock's resolution does not matter), and the
 *      number of samples falls with the size so the whole sweep takes about a second.
 *      The simulator's one message costs latency + overhead + receive_overhead + bytes x
 *      seconds_per_byte (with a shaped link's bucket, fewer of the bytes pay the rate).
 *
 *   2. Fan-out (Ruefenacht et al. 2017, Sect. 5.1, "multicast"): rank 0 posts b messages
 *      of 8 bytes with MPI_Isend back to back, to ranks 1, 2, ..., P-1, 1, 2, ... (round
 *      robin, so P = 2 works: then all go to rank 1), and waits for them. The peer that got the last
 *      message answers it with 8 bytes. Two times on rank 0, for b = 1 .. --fan-out:
 *        post: from before the first MPI_Isend to after the last (the paper: "the timing
 *              routines are issued directly before and after the message initiation");
 *        done: from the same start until the answer is in.
 *      The paper's Eq. 3 (lost in our copy) gives a stage of b pipelined
 *      messages the cost alpha_p + b alpha_r, found by linear regression over b = 1..8.
 *      Choice: the paper times DMAPP puts, whose completion is remote; MPI's Isend
 *      completes locally, so we add the answer to see the message arrive. In the
 *      simulator's model (latency L = alpha_p, the sender's overhead o = alpha_r, the
 *      receiver's o_r) done(b) = 2 L + (b + 1) o + 2 o_r + 16 G: the b sends' o, L, o_r to
 *      receive, o to send the answer, L, o_r to receive it. The fit (calibrate.py) takes o
 *      from the slope in b, G from the large ping-pongs, L + o_r from the small ones.
 *
 *   2b. Receive overhead (LogP's o_r): rank 0 times MPI_Recv of an 8-byte message that
 *      has had 200 us to arrive (receive_overhead below). With it the fit can tell the
 *      sender's per-message cost (the fan-out's slope) from the receiver's and from the
 *      wire: over TCP, posting a send is a system call of ~7 us, taking in a message ~1 us.
 *
 *   3. Reduction speed for each datatype: MPI_Reduce_local (MPI_SUM) of one buffer of
 *      several MiB into another on rank 0, seconds per byte; and memcpy of the same buffer
 *      (the simulator's copy_seconds_per_byte). The buffers are zero, so integer sums
 *      cannot overflow and floating-point sums meet no denormal numbers (which would be
 *      slower than real data on some processors).
 *
 * Ranks other than 0 and 1 take part only in the fan-out; they wait in barriers otherwise.
 *
 * Options: --json FILE|- (rank 0 writes the JSON there; a plain summary on stdout without
 * it), --quick (fewer samples, sizes up to 1 MiB, fan-out up to 4, 1 MiB reduction
 * buffers: for tests), --max-bytes N (largest ping-pong size), --fan-out B (largest b),
 * --datatypes a,b,c (default: every type papcoll-bench knows, with its names).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "common/json.h"
#include "common/statistics.h"
#include "common/usage.h"
#include "element_types.h"
#include "ping_pong.h"

#define MAX_SIZES 32
#define MAX_FAN_OUT 64
#define MAX_DATATYPES 32
#define MAX_SAMPLES 128 /* the most samples any measurement takes (fan-out: 101) */
#define PING_PONG_TAG 11
#define FAN_OUT_TAG 12
#define ANSWER_TAG 13
#define RECEIVE_TAG 14

static int rank, ranks;

typedef struct options {
    const char *json_path;
    int quick;
    int64_t max_bytes;
    int fan_out;
    const char *datatype_names[MAX_DATATYPES];
    int datatype_count;
} options;


static const char usage[] =
    "usage: papcoll-calibrate [--json FILE|-] [--quick] [--max-bytes N] [--fan-out B]\n"
    "       [--datatypes int8,...,double,...]   (2 ranks or more)\n";

static long long parse_whole(const char *text, long long low, long long high, const char *what) {
    char *end;
    errno = 0;
    long long value = strtoll(text, &end, 10);
    if (errno || end == text || *end || value < low || value > high) usage_error(what, text);
    return value;
}

static void parse_options(int argc, char **argv, options *o) {
    usage_init("papcoll-calibrate", usage);
    *o = (options){.json_path = NULL, .quick = 0, .max_bytes = -1, .fan_out = -1,
                   .datatype_count = 0};
    for (int i = 1; i < argc; i++) {
        const char *flag = argv[i];
        if (strcmp(flag, "--help") == 0) usage_error(NULL, NULL);
        if (strcmp(flag, "--quick") == 0) {
            o->quick = 1;
            continue;
        }
        if (i + 1 >= argc) usage_error("%s needs a value", flag);
        char *value = argv[++i];
        if (strcmp(flag, "--json") == 0) {
            o->json_path = value;
        } else if (strcmp(flag, "--max-bytes") == 0) {
            o->max_bytes = parse_whole(value, 0, 1 << 30, "bad --max-bytes '%s': want 0 .. 2^30");
        } else if (strcmp(flag, "--fan-out") == 0) {
            o->fan_out = (int)parse_whole(value, 1, MAX_FAN_OUT, "bad --fan-out '%s': want 1 .. 64");
        } else if (strcmp(flag, "--datatypes") == 0) {
            for (char *name = strtok(value, ","); name; name = strtok(NULL, ",")) {
                element_type unused;
                if (!find_element_type(name, &unused))
                    usage_error("unknown datatype '%s' (or one this MPI lacks)", name);
                if (o->datatype_count == MAX_DATATYPES) usage_error("more than 32 datatypes%s", "");
                o->datatype_names[o->datatype_count++] = name;
            }
        } else {
            usage_error("unknown option '%s'", flag);
        }
    }
    if (o->max_bytes < 0) o->max_bytes = o->quick ? 1 << 20 : 16 << 20;
    if (o->fan_out < 0) o->fan_out = o->quick ? 4 : 8;
    if (o->datatype_count == 0) /* every type papcoll-bench knows that this MPI has */
        for (int i = 0; i < element_type_count() && o->datatype_count < MAX_DATATYPES; i++) {
            element_type type;
            if (element_type_at(i, &type)) o->datatype_names[o->datatype_count++] = type.name;
        }
}

typedef struct ping_pong_result {
    int64_t bytes;
    double one_way_seconds, minimum_seconds;
    int samples, round_trips_per_sample;
} ping_pong_result;

/* Round trips per sample: enough that a sample lasts well beyond MPI_Wtime's tick for small
 * messages, one for large ones (where a round trip takes milliseconds). */
static int round_trips_for(int64_t bytes) {
    int64_t trips = (1 << 20) / (bytes + 1024);
    return (int)(trips < 1 ? 1 : trips > 200 ? 200 : trips);
}

static void measure_ping_pong(char *buffer, int64_t bytes, int samples, ping_pong_result *result) {
    int trips = round_trips_for(bytes);
    double times[MAX_SAMPLES];
    int count = (int)bytes;
    for (int sample = -1; sample < samples; sample++) { /* sample -1: warm-up, not kept */
        MPI_Barrier(MPI_COMM_WORLD);
        double start = MPI_Wtime();
        ping_pong(MPI_COMM_WORLD, buffer, count, MPI_BYTE, PING_PONG_TAG, trips);
        if (sample >= 0) times[sample] = (MPI_Wtime() - start) / trips / 2;
    }
    result->bytes = bytes;
    result->samples = samples;
    result->round_trips_per_sample = trips;
    result->one_way_seconds = median(times, samples, &result->minimum_seconds);
}

typedef struct fan_out_result {
    int messages;
    double done_seconds, done_minimum_seconds, post_seconds;
} fan_out_result;

/* Message k of a fan-out goes to rank 1 + k mod (P - 1): distinct peers while b < P. */
static int peer_of(int message) { return 1 + message % (ranks - 1); }

static void fan_out(int messages, int samples, fan_out_result *result) {
    double done[MAX_SAMPLES], post[MAX_SAMPLES];
    int64_t payload[MAX_FAN_OUT] = {0}, answer = 0;
    MPI_Request requests[MAX_FAN_OUT];
    int answering = peer_of(messages - 1);
    for (int sample = -1; sample < samples; sample++) {
        /* Receivers post their receives before the barrier, so every message finds its
         * receive waiting: the fan-out then times sending, not a late MPI_Irecv. */
        int posted = 0;
        for (int k = 0; k < messages && rank != 0; k++)
            if (peer_of(k) == rank)
                MPI_Irecv(&payload[k], 1, MPI_INT64_T, 0, FAN_OUT_TAG, MPI_COMM_WORLD,
                          &requests[posted++]);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            double start = MPI_Wtime();
            for (int k = 0; k < messages; k++)
                MPI_Isend(&payload[k], 1, MPI_INT64_T, peer_of(k), FAN_OUT_TAG, MPI_COMM_WORLD,
                          &requests[k]);
            double after_posting = MPI_Wtime();
            MPI_Waitall(messages, requests, MPI_STATUSES_IGNORE);
            MPI_Recv(&answer, 1, MPI_INT64_T, answering, ANSWER_TAG, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            double end = MPI_Wtime();
            if (sample >= 0) {
                done[sample] = end - start;
                post[sample] = after_posting - start;
            }
        } else {
            MPI_Waitall(posted, requests, MPI_STATUSES_IGNORE);
            if (rank == answering)
                MPI_Send(&answer, 1, MPI_INT64_T, 0, ANSWER_TAG, MPI_COMM_WORLD);
        }
    }
    result->messages = messages;
    if (rank == 0) {
        result->done_seconds = median(done, samples, &result->done_minimum_seconds);
        result->post_seconds = median(post, samples, NULL);
    }
}

/* The receive overhead o_r (LogP's, measured as netgauge and LogGOPSim's authors do): rank
 * 1 sends 8 bytes; rank 0 waits RECEIVE_WAIT_SECONDS, long enough for the message to be in
 * its socket or queue, and times MPI_Recv alone: what it costs to take in a message that is
 * already there. Median over `samples`. */
#define RECEIVE_WAIT_SECONDS 200e-6
static double receive_overhead(int samples, double *minimum) {
    double times[MAX_SAMPLES];
    int64_t message = 0;
    for (int sample = -1; sample < samples; sample++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1) MPI_Send(&message, 1, MPI_INT64_T, 0, RECEIVE_TAG, MPI_COMM_WORLD);
        if (rank == 0) {
            double until = MPI_Wtime() + RECEIVE_WAIT_SECONDS;
            while (MPI_Wtime() < until) {
            }
            double start = MPI_Wtime();
            MPI_Recv(&message, 1, MPI_INT64_T, 1, RECEIVE_TAG, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            if (sample >= 0) times[sample] = MPI_Wtime() - start;
        }
    }
    return rank == 0 ? median(times, samples, minimum) : 0;
}

/* Seconds per byte of MPI_Reduce_local (sum) on `bytes` of `datatype`, the median of
 * `samples` after one warm-up (rank 0 only). */
static double reduce_seconds_per_byte(char *input, char *accumulator, int64_t bytes,
                                      MPI_Datatype datatype, int samples) {
    int element_size;
    MPI_Type_size(datatype, &element_size);
    int count = (int)(bytes / element_size);
    double times[MAX_SAMPLES];
    for (int sample = -1; sample < samples; sample++) {
        double start = MPI_Wtime();
        MPI_Reduce_local(input, accumulator, count, datatype, MPI_SUM);
        if (sample >= 0) times[sample] = MPI_Wtime() - start;
    }
    return median(times, samples, NULL) / ((double)count * element_size);
}

static double copy_seconds_per_byte(char *source, char *destination, int64_t bytes,
                                    int samples) {
    double times[MAX_SAMPLES];
    for (int sample = -1; sample < samples; sample++) {
        double start = MPI_Wtime();
        memcpy(destination, source, (size_t)bytes);
        double elapsed = MPI_Wtime() - start;
        /* Read a byte back so the compiler cannot drop a copy that nothing else reads. */
        if (destination[bytes - 1] != source[bytes - 1]) abort();
        if (sample >= 0) times[sample] = elapsed;
    }
    return median(times, samples, NULL) / (double)bytes;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    options o;
    parse_options(argc, argv, &o);
    if (ranks < 2) usage_error("needs at least 2 ranks (a ping-pong has two ends), not %s", "1");

    /* 1. ping-pong: 0 B, then 4 B, 16 B, ... up to --max-bytes */
    int64_t sizes[MAX_SIZES];
    int size_count = 0;
    sizes[size_count++] = 0;
    for (int64_t bytes = 4; bytes <= o.max_bytes && size_count < MAX_SIZES; bytes *= 4)
        sizes[size_count++] = bytes;
    char *buffer = calloc((size_t)o.max_bytes + 1, 1);
    if (buffer == NULL) usage_error("out of memory for a %s-byte buffer", "max-bytes");
    ping_pong_result ping_pongs[MAX_SIZES];
    for (int s = 0; s < size_count; s++) {
        /* fewer samples for large messages: 16 MiB round trips take milliseconds each */
        int samples = sizes[s] >= (1 << 20) ? 7 : 15;
        if (o.quick) samples = 5;
        measure_ping_pong(buffer, sizes[s], samples, &ping_pongs[s]);
    }
    free(buffer);

    /* 2. fan-out, b = 1 .. --fan-out */
    fan_out_result fan_outs[MAX_FAN_OUT];
    for (int b = 1; b <= o.fan_out; b++) fan_out(b, o.quick ? 21 : 101, &fan_outs[b - 1]);

    /* 2b. the receive overhead */
    double receive_minimum = 0;
    double receive_seconds = receive_overhead(o.quick ? 21 : 101, &receive_minimum);

    /* 3. reduction and copy on rank 0 */
    int64_t reduce_bytes = o.quick ? 1 << 20 : 8 << 20;
    int reduce_samples = o.quick ? 3 : 7;
    double reduce_speed[MAX_DATATYPES], copy_speed = 0;
    if (rank == 0) {
        char *input = calloc((size_t)reduce_bytes, 1);
        char *accumulator = calloc((size_t)reduce_bytes, 1);
        if (input == NULL || accumulator == NULL) usage_error("out of memory%s", "");
        for (int t = 0; t < o.datatype_count; t++) {
            /* every name was checked by parse_options; the initialiser keeps the compiler
             * from seeing a path where it is unset */
            element_type type = {o.datatype_names[t], MPI_DATATYPE_NULL, KIND_REAL};
            if (!find_element_type(o.datatype_names[t], &type)) MPI_Abort(MPI_COMM_WORLD, 2);
            reduce_speed[t] = reduce_seconds_per_byte(input, accumulator, reduce_bytes,
                                                      type.datatype, reduce_samples);
        }
        copy_speed = copy_seconds_per_byte(input, accumulator, reduce_bytes, reduce_samples);
        free(input);
        free(accumulator);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    if (rank == 0) {
        char library[MPI_MAX_LIBRARY_VERSION_STRING];
        int length;
        MPI_Get_library_version(library, &length);
        library[strcspn(library, "\n")] = '\0'; /* the first line names the MPI and version */
        FILE *out = stdout;
        if (o.json_path && strcmp(o.json_path, "-") != 0) {
            out = fopen(o.json_path, "w");
            if (out == NULL) {
                fprintf(stderr, "papcoll-calibrate: cannot write %s: %s\n", o.json_path,
                        strerror(errno));
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
        }
        if (o.json_path) {
            fprintf(out, "{\"program\": \"papcoll-calibrate\", \"ranks\": %d, \"quick\": %s, "
                         "\"mpi_library\": ", ranks, o.quick ? "true" : "false");
            json_write_string(out, library);
            fprintf(out, ",\n \"ping_pong\": [\n");
            for (int s = 0; s < size_count; s++)
                fprintf(out, "  {\"bytes\": %lld, \"one_way_seconds\": %.9e, "
                             "\"minimum_seconds\": %.9e, \"samples\": %d, "
                             "\"round_trips_per_sample\": %d}%s\n",
                        (long long)ping_pongs[s].bytes, ping_pongs[s].one_way_seconds,
                        ping_pongs[s].minimum_seconds, ping_pongs[s].samples,
                        ping_pongs[s].round_trips_per_sample, s + 1 < size_count ? "," : "");
            fprintf(out, " ],\n \"fan_out\": [\n");
            for (int b = 0; b < o.fan_out; b++)
                fprintf(out, "  {\"messages\": %d, \"message_bytes\": 8, \"done_seconds\": %.9e, "
                             "\"done_minimum_seconds\": %.9e, \"post_seconds\": %.9e}%s\n",
                        fan_outs[b].messages, fan_outs[b].done_seconds,
                        fan_outs[b].done_minimum_seconds, fan_outs[b].post_seconds,
                        b + 1 < o.fan_out ? "," : "");
            fprintf(out, " ],\n \"receive_overhead\": {\"seconds\": %.9e, "
                         "\"minimum_seconds\": %.9e, \"wait_seconds\": %.9e},\n",
                    receive_seconds, receive_minimum, RECEIVE_WAIT_SECONDS);
            fprintf(out, " \"reduce\": [\n");
            for (int t = 0; t < o.datatype_count; t++) {
                fprintf(out, "  {\"datatype\": ");
                json_write_string(out, o.datatype_names[t]);
                fprintf(out, ", \"bytes\": %lld, \"seconds_per_byte\": %.9e}%s\n",
                        (long long)reduce_bytes, reduce_speed[t],
                        t + 1 < o.datatype_count ? "," : "");
            }
            fprintf(out, " ],\n \"copy\": {\"bytes\": %lld, \"seconds_per_byte\": %.9e}}\n",
                    (long long)reduce_bytes, copy_speed);
        } else {
            fprintf(out, "%s, %d ranks\n%12s %16s\n", library, ranks, "bytes", "one-way us");
            for (int s = 0; s < size_count; s++)
                fprintf(out, "%12lld %16.3f\n", (long long)ping_pongs[s].bytes,
                        ping_pongs[s].one_way_seconds * 1e6);
            fprintf(out, "%12s %16s %16s\n", "fan-out b", "done us", "post us");
            for (int b = 0; b < o.fan_out; b++)
                fprintf(out, "%12d %16.3f %16.3f\n", fan_outs[b].messages,
                        fan_outs[b].done_seconds * 1e6, fan_outs[b].post_seconds * 1e6);
            fprintf(out, "%18s %16s\n", "datatype", "reduce ns/B");
            for (int t = 0; t < o.datatype_count; t++)
                fprintf(out, "%18s %16.4f\n", o.datatype_names[t], reduce_speed[t] * 1e9);
            fprintf(out, "%18s %16.4f\n", "memcpy", copy_speed * 1e9);
        }
        if (out != stdout) fclose(out);
    }
    MPI_Finalize();
    return 0;
}
