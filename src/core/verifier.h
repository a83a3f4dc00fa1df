/* verifier.h - the state the symbolic executor (verify.c) shares with its parts: the
 * symbolic values and buffers (verify_values.c) and the static checks run before the
 * symbolic run (verify_checks.c), and how they all report a violation (verify_report.c, the
 * one they call down into). Internal to the verifier; every function is hidden. */
#ifndef PAPCOLL_VERIFIER_H
#define PAPCOLL_VERIFIER_H

#include <stddef.h>
#include <stdint.h>

#include "hidden.h"
#include "schedule.h"

#define UNDEFINED_VALUE 0
#define BUFFERS_PER_RANK (SCHED_FIRST_SCRATCH + SCHED_MAX_SCRATCH)
enum op_state { WAITING = 0, STARTED = 1, COMPLETED = 2 };

typedef struct segment {
    int64_t start, end;
    int32_t value;
} segment;

/* A buffer's map is a sorted run of segments covering [0, size) without gaps, adjacent
 * segments holding different values. It is cut into blocks of at most MAP_BLOCK_SEGMENTS,
 * so that replacing a region moves one or two blocks' segments instead of all of them:
 * with one flat array, n writes to distinct elements cost O(n^2). */
#define MAP_BLOCK_SEGMENTS 128
typedef struct segment_block {
    int32_t count, capacity;
    segment items[]; /* capacity of them, grown up to MAP_BLOCK_SEGMENTS */
} segment_block;

typedef struct interval_map {
    segment_block **blocks;
    int32_t block_count;
    size_t block_capacity;
} interval_map;

typedef struct piece {
    int64_t length;
    int32_t value;
} piece;

typedef struct piece_list {
    piece *items;
    int64_t count;
    size_t capacity;
} piece_list;

/* Per-rank execution state. */
typedef struct rank_state {
    uint8_t *state;
    int32_t *pending;          /* dependencies not yet completed */
    int32_t *round;            /* round at which the op completed */
    int32_t *partner;          /* SEND/RECV: matching op index at the peer */
    int64_t *snapshot_first;   /* SEND: its data, in the shared piece pool */
    int64_t *snapshot_count;
    int32_t *dependent_first;  /* CSR of the reverse edges */
    int32_t *dependents;
} rank_state;

typedef struct worklist_item {
    int32_t rank, op;
} worklist_item;

typedef struct verifier {
    papcoll_schedule *const *schedules;
    int32_t ranks;
    int64_t count;
    int32_t elem_size;
    int32_t words;             /* 64-bit words per contribution set */
    int in_place;
    int require_fold;          /* papcoll_verify_options.require_canonical_order */
    int64_t eager_limit;
    /* value pool: value v has bits[v * words ..], and, if ordered, covers ranks low..high
     * combined left to right */
    uint64_t *bits;
    int32_t *low, *high;
    uint8_t *ordered;
    /* reproducible mode: fold_end[v] = k when v is the rank-order left fold
     * ((x0 op x1) op ...) op xk, else -1 (rank 0's own contribution is the fold up to 0);
     * left_operand / right_operand: what a REDUCE combined into v (0 for contributions),
     * to name the operands where a result breaks the fold */
    int32_t *fold_end, *left_operand, *right_operand;
    int32_t value_count;
    size_t value_capacity;
    interval_map *maps;        /* ranks x BUFFERS_PER_RANK */
    rank_state *states;
    piece_list pool;           /* snapshots of sent data */
    piece_list scratch_a, scratch_b, scratch_out;
    segment *spliced;          /* map_write: the segments that replace a region */
    size_t spliced_capacity;
    worklist_item *worklist;
    int64_t worklist_head, worklist_tail;
    size_t worklist_capacity;
    papcoll_verify_report *report;
    const char *mode;          /* "" or "with MPI_IN_PLACE: " */
    int failed;
    int out_of_memory;
    int32_t too_large_rank; /* >= 0: this rank's schedule is too large to check for races */
    const char *too_large_why; /* why, for the error message */
    int64_t search_steps;      /* the ancestry search's work so far (verify_checks.c), carried
                                  from one buffer mode's verifier to the next */
} verifier;

/* ---- verify_report.c: reporting -------------------------------------------------------- */

/* Records the first violation (later ones are ignored): rank and op (-1: none), and the
 * printf-style reason, prefixed by the buffer mode. */
PAPCOLL_HIDDEN
void fail_at(verifier *v, int32_t rank, int32_t op, const char *format, ...)
    __attribute__((format(printf, 4, 5)));
/* grow_array, reporting a failure as the verifier's out-of-memory violation. 0 or -1. */
PAPCOLL_HIDDEN
int verifier_grow(verifier *v, void *items, size_t *capacity, int64_t needed, size_t item_size);
/* "SEND", "RECV", "REDUCE", "COPY". */
PAPCOLL_HIDDEN
const char *kind_name(int kind);
/* "send", "recv" or "scratchK" (written into space). */
PAPCOLL_HIDDEN
const char *buffer_name(int buffer, char *space, size_t size);

/* ---- verify_values.c: contributions and the buffers that hold them ----------------------- */

/* A new value with no contribution; UNDEFINED_VALUE when out of memory (reported). */
PAPCOLL_HIDDEN
int32_t new_value(verifier *v);
/* The lowest rank whose contribution value lacks, or -1 when it has all. */
PAPCOLL_HIDDEN
int32_t first_missing_contribution(const verifier *v, int32_t value);
/* Where value, a result element, is not the rank-order left fold of all P contributions:
 * writes the first combination that breaks it, with its operands, into text ("" when it is
 * the fold). */
PAPCOLL_HIDDEN
void describe_canonical_break(const verifier *v, int32_t value, char *text, size_t size);
/* left (op) right; reports and returns UNDEFINED_VALUE on a double count. */
PAPCOLL_HIDDEN
int32_t combine(verifier *v, int32_t left, int32_t right, int32_t rank, int32_t op,
                int64_t element);
/* The map of rank's buffer (the send buffer is the receive buffer with MPI_IN_PLACE). */
PAPCOLL_HIDDEN
interval_map *map_of(verifier *v, int32_t rank, int32_t buffer);
/* Appends [start, end) -> value at the end of map, merging with the last segment. */
PAPCOLL_HIDDEN
int map_push(verifier *v, interval_map *map, int64_t start, int64_t end, int32_t value);
/* Frees what map holds and leaves it empty. */
PAPCOLL_HIDDEN
void map_release(interval_map *map);
/* The pieces of map over [start, end), into out (replacing what it held). */
PAPCOLL_HIDDEN
int map_read(verifier *v, const interval_map *map, int64_t start, int64_t end, piece_list *out);
/* Replaces map over [start, start + total length of pieces) with pieces. */
PAPCOLL_HIDDEN
int map_write(verifier *v, interval_map *map, int64_t start, const piece *pieces,
              int64_t piece_count);

/* ---- verify_checks.c: what is checked before the symbolic run ---------------------------- */

/* Regions inside their buffers, peers that are other ranks, no RECV into the send buffer. */
PAPCOLL_HIDDEN
void check_bounds(verifier *v, int32_t rank);
/* Races and deterministic matching for one rank; aliased = MPI_IN_PLACE buffers. */
PAPCOLL_HIDDEN
void check_ordering(verifier *v, int32_t rank, int aliased);
/* Pairs the k-th SEND of each channel with its k-th RECV (states[].partner). */
PAPCOLL_HIDDEN
void match_messages(verifier *v);

#endif /* PAPCOLL_VERIFIER_H */
