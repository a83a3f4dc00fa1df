/* schedule.h - the schedule IR: what one rank does in one all-reduce, as data.
 * Builders (src/core/algorithms/) only describe; executors (MPI, simulator, verifier) act.
 * See ../shared/DESIGN.md, "One idea: an algorithm is a schedule".
 *
 * Semantics (every executor follows them):
 * - A schedule is a flat array of operations; op i may only wait for ops with a smaller
 *   index, so the array order is a topological order of the dependency DAG.
 * - An op starts when all ops it waits for have completed. SEND and RECV are posted when
 *   they start (MPI_Isend / MPI_Irecv) and complete when the message is done; REDUCE and
 *   COPY run, and complete, when they start.
 * - A SEND reads its region at any time between start and completion; a RECV writes its
 *   region at any time between start and completion. So an op that overwrites a region a
 *   SEND reads must wait for that SEND (write-after-read), and that is how a non-blocking
 *   send overlapping later work is expressed: nothing waits for it until then.
 * - Messages match as in MPI: per (source, destination, tag), in the order the SENDs and
 *   the RECVs start. The verifier requires that two SENDs (or two RECVs) with the same peer
 *   and tag are ordered by the DAG, so the matching cannot depend on timing. Give
 *   segments distinct tags to let them arrive out of order.
 * - Empty messages (length 0) are kept in the schedule so both sides agree on matching;
 *   executors complete them at once without communicating.
 * - REDUCE(src, dst) combines two equal-length regions into dst. Its flags state the
 *   operand order, which matters for non-commutative ops: SCHED_SOURCE_LEFT means
 *   dst = src (op) dst (MPI_Reduce_local's own order); SCHED_TARGET_LEFT means
 *   dst = dst (op) src.
 * - Buffers: 0 = the user's send buffer (read only), 1 = the user's receive buffer, and
 *   2.. = scratch buffers the schedule declares with their sizes. With MPI_IN_PLACE the send
 *   and receive buffers are the same memory; the verifier checks schedules that way too.
 */
#ifndef PAPCOLL_SCHEDULE_H
#define PAPCOLL_SCHEDULE_H

#include <stdarg.h>
#include <stdint.h>

#include "hidden.h"
#include "papcoll_core.h"

enum sched_op_kind { SCHED_SEND = 0, SCHED_RECV = 1, SCHED_REDUCE = 2, SCHED_COPY = 3 };

enum sched_buffer { SCHED_SEND_BUFFER = 0, SCHED_RECV_BUFFER = 1, SCHED_FIRST_SCRATCH = 2 };

enum sched_reduce_order { SCHED_SOURCE_LEFT = 0, SCHED_TARGET_LEFT = 1 };
/* A SEND's flags. PACED: one piece of a stream to this peer (a pipeline's chunk); the next
 * send to the same peer should leave only once this one is delivered, whatever its size, so
 * that the pieces arrive one after another instead of side by side, each at a fraction of
 * the link (sched_pace; the MPI executor sends it as MPI_Issend when another send to the
 * peer waits for it). */
enum sched_send_flags { SCHED_SEND_PACED = 1 };

#define SCHED_MAX_SCRATCH 32
#define SCHED_NONE (-1)      /* "no op": ignored wherever a dependency is expected */
#define SCHED_MAX_TAG 32767  /* the smallest MPI_TAG_UB the MPI standard allows */

/* One operation, 32 bytes, so a simulator can hold every rank's schedule at large P. */
typedef struct sched_op {
    uint8_t kind;             /* enum sched_op_kind */
    uint8_t flags;            /* REDUCE: enum sched_reduce_order; SEND: sched_send_flags */
    uint8_t buffer;           /* SEND: source; RECV: destination; REDUCE/COPY: source */
    uint8_t target_buffer;    /* REDUCE/COPY: destination */
    uint32_t first_dependency;/* this op waits for dependencies[first_dependency ..
                                 next op's first_dependency) */
    int64_t offset;           /* region of `buffer`, in elements */
    int64_t length;           /* elements (both regions of REDUCE/COPY have this length) */
    union {
        int64_t target_offset;                   /* REDUCE/COPY */
        struct { int32_t peer, tag; } message;   /* SEND/RECV */
    } u;
} sched_op;
_Static_assert(sizeof(sched_op) == 32, "an operation should stay 32 bytes");

struct papcoll_schedule {
    int32_t ranks, rank;
    int64_t count;
    int32_t elem_size;
    sched_op *ops;
    int32_t op_count;
    size_t op_capacity;
    int32_t *dependencies;
    uint32_t dependency_count;
    size_t dependency_capacity;
    int64_t scratch_elements[SCHED_MAX_SCRATCH];
    int32_t scratch_count;
    /* The part of the receive buffer that holds the result: [0, count) for an all-reduce;
     * a reduce-scatter (rs_halving, priority_rs) sets the rank's own block. */
    int64_t result_offset, result_length;
    int status;               /* sticky: the first failure of any builder call */
    char error[256];
};

typedef struct sched_region {
    int32_t buffer;
    int64_t offset, length;
} sched_region;

static inline sched_region sched_region_of(int32_t buffer, int64_t offset, int64_t length) {
    sched_region region = {buffer, offset, length};
    return region;
}
#define SCHED_SEND_REGION(offset, length) sched_region_of(SCHED_SEND_BUFFER, (offset), (length))
#define SCHED_RECV_REGION(offset, length) sched_region_of(SCHED_RECV_BUFFER, (offset), (length))

/* Dependency lists: SCHED_AFTER(a, b) passes {a, b}; SCHED_NONE entries are skipped, so a
 * builder may pass "the previous op, if any" without a branch. */
#define SCHED_AFTER(...)                                        \
    (const int32_t[]){__VA_ARGS__},                             \
        (int32_t)(sizeof((int32_t[]){__VA_ARGS__}) / sizeof(int32_t))
#define SCHED_FIRST NULL, 0

/* Life cycle. sched_init prepares an empty schedule; sched_release frees its arrays. */
PAPCOLL_HIDDEN
void sched_init(papcoll_schedule *schedule, int32_t ranks, int32_t rank, int64_t count,
                int32_t elem_size);
PAPCOLL_HIDDEN
void sched_release(papcoll_schedule *schedule);

/* Declares a scratch buffer of `elements` elements; returns its buffer id. */
PAPCOLL_HIDDEN
int32_t sched_add_scratch(papcoll_schedule *schedule, int64_t elements);

/* Each adds one op and returns its index (or SCHED_NONE after a failure, which is then
 * sticky in schedule->status; builders check it once at the end via sched_finish). */
PAPCOLL_HIDDEN
int32_t sched_send(papcoll_schedule *schedule, int32_t peer, int32_t tag, sched_region source,
                   const int32_t *after, int32_t after_count);
PAPCOLL_HIDDEN
int32_t sched_recv(papcoll_schedule *schedule, int32_t peer, int32_t tag, sched_region target,
                   const int32_t *after, int32_t after_count);
/* Marks SEND `send` PACED (above) and returns it; SCHED_NONE (a failed build) passes
 * through. */
PAPCOLL_HIDDEN
int32_t sched_pace(papcoll_schedule *schedule, int32_t send);
PAPCOLL_HIDDEN
int32_t sched_reduce(papcoll_schedule *schedule, sched_region source, sched_region target,
                     int order, const int32_t *after, int32_t after_count);
PAPCOLL_HIDDEN
int32_t sched_copy(papcoll_schedule *schedule, sched_region source, sched_region target,
                   const int32_t *after, int32_t after_count);

/* The first op of most all-reduces: this rank's own vector (the send buffer, all `count`
 * elements) copied into the receive buffer, where it is then reduced in place. It reads the
 * send buffer once and first, so MPI_IN_PLACE (send and receive the same) stays safe. */
PAPCOLL_HIDDEN
int32_t sched_copy_own_vector(papcoll_schedule *schedule);

/* Records a builder's refusal: message is printf-style. Returns code. */
PAPCOLL_HIDDEN
int sched_fail(papcoll_schedule *schedule, int code, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
/* The builder's return value: the sticky status. */
static inline int sched_finish(papcoll_schedule *schedule) { return schedule->status; }

/* A key and the index it belongs to, as qsort orders them with sched_by_key_then_index: by
 * key, then by index (sends by peer, ranks by group id). */
typedef struct sched_keyed_index {
    int32_t key, index;
} sched_keyed_index;
PAPCOLL_HIDDEN
int sched_by_key_then_index(const void *a, const void *b);

/* One message at a time to each peer: every SEND with a payload also waits for the
 * previous SEND (by index) to the same peer. papcoll_schedule_build applies it to every
 * schedule, so all three executors run the same DAG.
 *
 * Why: a rank ahead of a late peer posts every send whose data is ready. A network that
 * shares a link among a pair's messages in flight (SimGrid's SMPI; RDMA transports moving
 * several rendezvous transfers at once) then delivers a pipeline's first segment last, and
 * the pipeline the schedule was built on (forward one segment while the next is in flight)
 * never forms: prr with a late rank took 88.96 ms in SMPI at P = 16, 1 MiB, against 23.48
 * in papcoll's simulator, whose ports are FIFO (25.42 with the chain). In index
 * order the first segment goes first on every transport. It cannot deadlock a schedule the
 * verifier passes: the verifier runs the DAG with this dependency in it, rendezvous sends
 * blocking until their RECV is posted. Cost: a rendezvous send now starts after the previous
 * one to that peer arrived, a latency per message on a pipeline's link (segmented ring,
 * balanced, 4 MiB: 10 % in SMPI). So a builder emits a peer's sends in the order they
 * become ready: a send emitted before one that is ready earlier holds it back (prr's
 * Fig. 7 order took 20 tau instead of 8 in the paper's own example; prr.c says more). */
PAPCOLL_HIDDEN
int sched_order_sends(papcoll_schedule *schedule);

/* Dependencies of op `index`: *count entries starting at the returned pointer. */
PAPCOLL_HIDDEN
const int32_t *sched_dependencies(const papcoll_schedule *schedule, int32_t index,
                                  int32_t *count);

/* The dependency graph turned around, as executors walk it: pending[i] = how many ops op i
 * waits for; the ops that wait for op i are dependents[dependent_first[i] ..
 * dependent_first[i + 1]). Sizes: op_count, op_count + 1, dependency_count. Returns 0 when
 * out of memory. Exported: the MPI executor (src/mpi) calls it. */
int sched_dependents(const papcoll_schedule *schedule, int32_t *pending,
                     int32_t *dependent_first, int32_t *dependents);

/* Whether SEND op i goes synchronous: the MPI executor sends it as MPI_Issend, which
 * completes only once the receiver has taken it, and the simulator as a rendezvous (it
 * leaves once its RECV is posted and completes when it has arrived). So where the next SEND
 * to the same peer waits for it (sched_order_sends) and it holds synchronous_elements or
 * more, or is PACED (src/mpi/executor.c says why). dependent_first, dependents:
 * sched_dependents's. Exported, as sched_dependents is. */
int sched_send_is_synchronous(const papcoll_schedule *schedule, int32_t i,
                              const int32_t *dependent_first, const int32_t *dependents,
                              int64_t synchronous_elements);

/* Near-equal split of `count` elements into `parts` blocks: the first count % parts blocks
 * get one element more. Block b covers [sched_block_start(b), sched_block_start(b + 1)). */
static inline int64_t sched_block_start(int64_t count, int64_t parts, int64_t block) {
    int64_t base = count / parts, extra = count % parts;
    return block * base + (block < extra ? block : extra);
}
static inline int64_t sched_block_length(int64_t count, int64_t parts, int64_t block) {
    return sched_block_start(count, parts, block + 1) - sched_block_start(count, parts, block);
}

/* Largest power of two <= n (n >= 1). */
static inline int32_t sched_floor_power_of_two(int32_t n) {
    int32_t power = 1;
    while (power <= n / 2) power *= 2;
    return power;
}

/* MPICH's fold for P not a power of two (Ruefenacht et al. 2017, Fig. 2), shared by
 * recursive_doubling, rabenseifner and priority_rabenseifner: with surplus = P - (largest power
 * of two <= P), ranks below 2 x surplus pair up as (2i, 2i+1), the odd one taking part as
 * exchange rank i and the even one waiting; ranks from 2 x surplus on are exchange rank rank -
 * surplus. Both maps are increasing, which is what keeps the operand order. */
static inline int32_t sched_fold_exchange_rank(int32_t rank, int32_t surplus) {
    return rank < 2 * surplus ? rank / 2 : rank - surplus;
}
static inline int32_t sched_fold_real_rank(int32_t exchange_rank, int32_t surplus) {
    return exchange_rank < surplus ? 2 * exchange_rank + 1 : exchange_rank + surplus;
}

/* The algorithm registry: each algorithm file defines one entry. */
typedef int (*sched_builder)(int32_t ranks, int32_t rank, int64_t count, int32_t elem_size,
                             const papcoll_context *context, papcoll_schedule *out);
typedef struct algorithm_entry {
    papcoll_algorithm_info info;
    sched_builder build;
} algorithm_entry;

/* Exported, as sched_dependents is: the MPI library (src/mpi) calls it. */
const algorithm_entry *registry_find(const char *name);
/* A flat all-reduce: not PAP-aware, not hierarchical, not a reduce-scatter. Only those can
 * run inside a hierarchy (hr1, hr2, smp_*), as its inner or outer algorithm. */
PAPCOLL_HIDDEN
int registry_is_flat(const algorithm_entry *entry);

#endif /* PAPCOLL_SCHEDULE_H */
