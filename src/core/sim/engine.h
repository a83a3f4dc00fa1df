/* engine.h - the simulator's engine state (simulate.c, the run loop), shared with its parts:
 * the one that moves the bytes (transfer.c), message matching (matching.c), converting the
 * schedules into op records (convert.c) and the checks of the model (checks.c). Laid out
 * for speed at P = 2^20: all ranks' ops in one array of 32-byte records, everything per
 * rank in one 32-byte record, so an event touches one or two cache lines. Internal to the simulator; every function is hidden. */
#ifndef PAPCOLL_SIM_ENGINE_H
#define PAPCOLL_SIM_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "../hidden.h"
#include "../message.h"
#include "../schedule.h"
#include "event_queue.h"

/* ---- what the engine keeps of each op -------------------------------------------------- */

typedef struct sim_op {
    double bytes;        /* message or region size; 0 for an empty message or a self-copy */
    uint32_t dependents; /* the ops waiting for this one are dependents[this .. next op's) */
    int32_t rank;
    int32_t pending;     /* ops this one still waits for */
    int32_t peer;        /* SEND / RECV */
    int32_t channel;     /* SEND / RECV: its (source, destination, tag), an index in channels */
    uint8_t kind;        /* enum sched_op_kind */
    uint8_t synchronous; /* SEND: a rendezvous whatever its size (sched_send_is_synchronous) */
    uint8_t padding[2];
} sim_op;
/* Ops are named by their index in the one array of all ranks' ops (32 bits: up to 4 G ops,
 * some 170 GB of engine memory, far beyond any machine this runs on). */
#define SIM_MAX_OPS ((int64_t)UINT32_MAX - 1)
_Static_assert(sizeof(sim_op) == 32, "an engine op should stay 32 bytes");

/* ---- message matching: per channel, posted receives and unexpected sends ---------------- */

typedef struct message_side {
    double time;       /* SEND: when it arrives (eager) or is offered (rendezvous); RECV: posted */
    int32_t source;    /* the sending rank */
    uint32_t sequence; /* SEND: the how-manieth unexpected send it was, for the leftover report */
    uint32_t op;       /* the SEND or RECV */
    int32_t next;
    int32_t eager;
    int32_t partner;   /* rendezvous SEND in its sender's NIC queue: its RECV's side; else -1 */
} message_side;

typedef struct side_list {
    int32_t head, tail;
} side_list;

/* A channel: the messages from one rank to another with one tag. MPI matches in order
 * within a channel only (papcoll has no wildcards), so a FIFO per channel finds a partner
 * at its head; one list per destination would be searched past other channels' messages,
 * which made `linear` quadratic (rank 0 receives from P - 1 down, the sends arrive from 1
 * up). Channels are numbered while the schedules are converted. */
typedef struct channel {
    int32_t source, destination, tag;
    side_list posted, unexpected; /* receives posted, sends waiting, oldest first */
} channel;

/* Everything the engine keeps per rank, in one 32-byte record: an event touches one line. */
typedef struct rank_state {
    double cpu_free, send_nic_free, receive_nic_free; /* next-free times of its resources */
    double finish;                                    /* its last op's completion */
} rank_state;

/* ---- the simulation ---------------------------------------------------------------------- */

typedef struct simulation {
    const papcoll_sim_model *model;
    const papcoll_sim_topology *topology;
    int32_t ranks;
    sim_op *ops;                    /* all ranks' ops, rank by rank, plus one sentinel */
    int64_t op_count;
    size_t op_capacity;
    int64_t *first_op;              /* rank r's ops are ops[first_op[r] .. first_op[r + 1]) */
    uint32_t *dependents;           /* indices in ops */
    int64_t dependent_count;
    size_t dependent_capacity;
    rank_state *rank;
    channel *channels;
    int32_t channel_count;
    size_t channel_capacity;
    int32_t *channel_slots;         /* open-addressing hash (source, destination, tag) ->
                                       channel, -1: empty; only while converting */
    int64_t channel_slot_count;     /* a power of two, at least twice channel_count */
    uint32_t unexpected_sends;      /* sends that waited so far: the next one's sequence */
    message_side *sides;
    size_t side_capacity;
    side_list *nic_queue;           /* per rank: SENDs waiting for its NIC, oldest first */
    int32_t side_used, side_free;
    event_queue queue;
    /* token buckets (model->burst_bytes > 0): when each NIC side's bucket is full again */
    double *send_bucket_full, *receive_bucket_full;
    /* topology */
    int32_t *depth;
    double *link_free;              /* [2v] up from v, [2v + 1] down to v */
    int64_t *link_bytes;
    /* noise */
    double noise_mean;
    uint64_t noise_state;
    /* timeline */
    double *op_start, *op_end;
    int64_t remaining;
    char *error;
    size_t error_size;
} simulation;

static inline double max2(double a, double b) { return a > b ? a : b; }

/* Records a refusal in the caller's error buffer and returns its status code. */
#define sim_fail(s, code, ...) message_write((s)->error, (s)->error_size, (code), __VA_ARGS__)

/* ---- matching.c: channels and the FIFOs of their sides ------------------------------------ */

/* The channel of messages from `source` to `destination` with `tag`, numbered on first
 * sight (only while converting: s->channel_slots); -1 when out of memory or out of channel
 * numbers. */
PAPCOLL_HIDDEN
int32_t sim_channel_of(simulation *s, int32_t source, int32_t destination, int32_t tag);
/* A free side from the pool, or -1 when out of memory. */
PAPCOLL_HIDDEN
int32_t sim_side_take(simulation *s);
/* Appends side `index` at the end (the newest) of a channel's list. */
PAPCOLL_HIDDEN
void sim_side_append(simulation *s, side_list *list, int32_t index);
/* Removes and returns the oldest side of a channel's list, or -1. */
PAPCOLL_HIDDEN
int32_t sim_side_take_oldest(simulation *s, side_list *list);
/* Gives side `index` back to the pool. */
PAPCOLL_HIDDEN
void sim_side_free(simulation *s, int32_t index);

/* ---- convert.c: the schedules into op records -------------------------------------------- */

/* Builds every rank's schedule of `algorithm` and appends its ops to s->ops (channels
 * numbered, dependents in one array); PAPCOLL_ERR_LIMIT past max_operations ops (> 0).
 * Returns the status, its message in s->error. */
PAPCOLL_HIDDEN
int sim_convert_schedules(simulation *s, const char *algorithm, int64_t count,
                          int32_t elem_size, const papcoll_context *context,
                          int64_t max_operations);

/* ---- checks.c: what is refused before the run -------------------------------------------- */

/* 1 when value is finite and >= 0; otherwise 0 and "<what> must be ..." in error. */
PAPCOLL_HIDDEN
int sim_check_number(const char *what, double value, char *error, size_t error_size);
/* 1 when every cost of the model is a finite number >= 0 and a token bucket has a rate. */
PAPCOLL_HIDDEN
int sim_check_model(const papcoll_sim_model *m, char *error, size_t error_size);
/* The tree (tree.c) plus finite link and local costs; the status, its message in s->error. */
PAPCOLL_HIDDEN
int sim_check_topology(simulation *s, int32_t ranks);

/* ---- transfer.c: where the bytes go ------------------------------------------------------ */

/* A message of `bytes` from `source` to `destination` leaves no earlier than `ready`: books
 * the NICs (and links) it uses and returns when it has arrived; *out_of_sender is when its
 * last byte has left the sender (an eager SEND completes then). */
PAPCOLL_HIDDEN
double transfer(simulation *s, int32_t source, int32_t destination, double ready,
                double bytes, double *out_of_sender);

#endif /* PAPCOLL_SIM_ENGINE_H */
