/* select_bounds.c - what `auto` (select.c) can tell about a call without simulating it: the
 * closed forms of native's stand-ins, a lower bound that no algorithm can beat, and how
 * many operations a simulation would hold. Why: simulating at P = 1024 costs seconds (ring
 * alone is 2 P (P - 1) messages) for a call of a few milliseconds; these answer in O(1)
 * (the operation count in three schedule builds), so select.c simulates only where it can
 * afford to and where a candidate could still win.
 *
 * Closed forms, on a crossbar (no tree), for P ranks and n bytes with the model's L, o_s,
 * o_r, G, gamma and copy: a message alone costs alpha = L + o_s + o_r plus n G (the textbook
 * Hockney forms, each step also paying both overheads, as tests/python/test_sim.py checks);
 * p = the largest power of two <= P, and P not a power of two adds MPICH's fold (two whole-
 * vector steps, one reduction):
 *   recursive_doubling  (log2 p + 2 f) (alpha + n G) + (log2 p + f) n gamma
 *   rabenseifner        2 log2 p alpha + 2 (p-1)/p n G + (p-1)/p n gamma
 *                       + f (2 (alpha + n G) + n gamma)
 *   ring                2 (P-1) alpha + 2 (P-1)/P n G + (P-1)/P n gamma
 * (f = 1 when P is not a power of two, else 0), each plus one copy of the vector. They are
 * the balanced e-bar; with uneven arrivals select.c adds the mean wait for the last arrival,
 * which is at least what the simulator finds (an algorithm started early never finishes
 * later than one started at the last arrival).
 *
 * The lower bound, on a crossbar: every rank r other than the last to arrive (at a_last)
 * needs, for each of the n bytes of its result, a message into r carrying that byte after
 * the last rank's vector entered it: those messages leave no earlier than a_last + o_s (the
 * last rank's first send pays o_s on its CPU first), go over r's receiving NIC one after the
 * other (transfer.c: FIFO, bytes x G each), the first arriving L after it left, and the
 * last is taken off r's CPU with o_r. So f_r >= a_last + o_s + L + n G + o_r, and e-bar
 * minus the mean wait for the last arrival is at least
 *     B = (P - 1) / P (o_s + L + n G + o_r)
 * (nothing is claimed for the last rank itself, nor for the reductions, which many ranks can
 * share). With a token bucket (burst_bytes > 0) a byte may cost the burst's G_b instead: G
 * is then min(G, G_b). B is 0 for one rank or an empty vector. Noise only adds time, so B
 * holds under noise too.
 */
#include "select.h"

#include <math.h>
#include <string.h>

#include "papcoll_core.h"

/* floor(log2 ranks) for ranks >= 1, and whether ranks is a power of two */
static int32_t whole_log2(int32_t ranks, int *power_of_two) {
    int32_t steps = 0;
    while (((int64_t)1 << (steps + 1)) <= ranks) steps++;
    *power_of_two = ((int64_t)1 << steps) == ranks;
    return steps;
}

double select_closed_form_seconds(const char *name, int32_t ranks, int64_t bytes,
                                  const papcoll_sim_model *model) {
    if (ranks <= 1) return (double)bytes * model->copy_seconds_per_byte;
    int power_of_two = 0;
    double steps = whole_log2(ranks, &power_of_two), fold = power_of_two ? 0 : 1;
    double pof2 = ldexp(1.0, (int)steps), n = (double)bytes;
    double alpha = model->latency + model->overhead + model->receive_overhead;
    double wire = n * model->seconds_per_byte, reduce = n * model->reduce_seconds_per_byte;
    double copy = n * model->copy_seconds_per_byte;
    if (strcmp(name, "recursive_doubling") == 0)
        return (steps + 2 * fold) * (alpha + wire) + (steps + fold) * reduce + copy;
    if (strcmp(name, "rabenseifner") == 0)
        return 2 * steps * alpha + (pof2 - 1) / pof2 * (2 * wire + reduce) +
               fold * (2 * (alpha + wire) + reduce) + copy;
    double share = (double)(ranks - 1) / ranks; /* ring, the one left */
    return 2 * (ranks - 1) * alpha + share * (2 * wire + reduce) + copy;
}

double select_post_wait_lower_bound(int32_t ranks, int64_t bytes,
                                    const papcoll_sim_model *model) {
    if (ranks <= 1 || bytes <= 0) return 0;
    double per_byte = model->seconds_per_byte;
    if (model->burst_bytes > 0 && model->burst_seconds_per_byte < per_byte)
        per_byte = model->burst_seconds_per_byte;
    double one_message = model->overhead + model->latency + (double)bytes * per_byte +
                         model->receive_overhead;
    return (double)(ranks - 1) / ranks * one_message;
}

int64_t select_estimated_operations(const char *name, int32_t ranks, int64_t count,
                                    int32_t elem_size, const papcoll_context *context,
                                    int64_t *built_operations) {
    int32_t sampled[3] = {0, ranks / 2, ranks - 1};
    int64_t counts[3];
    int samples = 0;
    for (int i = 0; i < 3; i++) {
        if (i > 0 && sampled[i] == sampled[i - 1]) continue; /* P = 1, 2 */
        papcoll_schedule *schedule = NULL;
        if (papcoll_schedule_build(name, ranks, sampled[i], count, elem_size, context,
                                   &schedule, NULL, 0) != PAPCOLL_OK)
            return -1;
        counts[samples++] = papcoll_schedule_op_count(schedule);
        papcoll_schedule_free(schedule);
        *built_operations += counts[samples - 1];
    }
    /* the median of the ranks sampled: a root's or a late rank's extra work is not
     * multiplied by P (papcoll.core.estimated_operations does the same) */
    for (int i = 1; i < samples; i++)
        for (int j = i; j > 0 && counts[j] < counts[j - 1]; j--) {
            int64_t swap = counts[j];
            counts[j] = counts[j - 1];
            counts[j - 1] = swap;
        }
    int64_t median = counts[samples / 2];
    return median > INT64_MAX / ranks ? INT64_MAX : median * ranks;
}
