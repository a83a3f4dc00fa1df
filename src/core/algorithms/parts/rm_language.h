/* rm_language.h - the schedule language of recursive multiplying (Ruefenacht et al. 2017,
 * Sect. 4.2): parsing and checking a schedule string, and the default schedules
 * (rm_language.c); the builder that runs a parsed schedule is recursive_multiplying.c. The
 * paper's Algorithms 2-6 are figures missing from our copy, so the semantics below are our
 * reading of the text and of Figs. 2, 5-7 and 20-22; each choice is marked "choice".
 *
 * The language: stages separated by commas, each working on the current *group* of
 * processes (at first all P ranks, numbered 0..P-1 as "virtual ranks" of the group).
 *   aB      all-to-all among B processes: the group is cut along its next mixed-radix digit.
 *           With stride s = the product of the bases already applied in this group, process
 *           v exchanges its whole vector with v + (j - d) s, j = 0..B-1 (d = (v / s) mod B),
 *           and reduces the B vectors. The bases of a group must multiply to its size.
 *   cTmB    collapse: processes v < T form T/B blocks of B; in each block, members 0..B-2
 *           send their vector to member B-1 (MPICH: even to odd), which reduces them and
 *           stays; processes v >= T stay too. The stages up to the matching eTmB work on the
 *           new group of T/B + (N - T) processes (block g is its process g, process v >= T
 *           is T/B + v - T). Choice: T must be a multiple of B, and a collapse must come
 *           first in its group (no aB before it there).
 *   eTmB    expand: closes the innermost cTmB (same T and B): each block's member B-1 sends
 *           the result to the other B - 1 members. The collapsed group must be complete.
 *   mRgGaB  merge: the last R processes of the group (the "extras") join a group of the
 *           other N - R = G x B processes (the "interior"). This stage is the interior's
 *           first aB stage (G blocks of B); in it extra j also sends its vector to every
 *           member of block j mod G (choice: extras are dealt round-robin), who reduce it in.
 *   nRgGaB  inverse of merge: the interior's last aB stage (G groups of B, stride N / B); in
 *           it, before the exchange, the B members of n-group j mod G also send their vector
 *           to extra j, who reduces those B vectors and so holds the result (its own vector
 *           is already in them). Between m and n: the interior's middle aB stages; the
 *           interior's bases (m, middle, n) multiply to N - R, so it has >= 2 stages. Choice:
 *           G x B must equal N - R in both (G is redundant; it is checked).
 *
 * Worked examples (x_r is rank r's vector, ".." a sum over a range):
 *   P = 6, "a3,a2" (Fig. 5, 17): stage 1 (stride 1): {0,1,2}, {3,4,5} exchange
 *     all-to-all, each holds x0..x2 or x3..x5; stage 2 (stride 3): pairs {0,3}, {1,4}, {2,5}
 *     exchange: everyone holds x0..x5. Two stages instead of recursive doubling's four.
 *   P = 7, "c6m2,a2,a2,e6m2" (Fig. 20, MPICH's fix): 0->1, 2->3, 4->5 (collapse); the group
 *     {1, 3, 5, 6} runs a2,a2 (pairs {1,3}, {5,6}; then {1,5}, {3,6}); 1->0, 3->2, 5->4.
 *   P = 7, "m1g2a3,n1g3a2" (Fig. 7, 21): stage 1: {0,1,2} and {3,4,5} exchange all-to-all
 *     and 6 sends x6 to 0, 1, 2: they hold x0..x2 + x6, the others x3..x5. Stage 2
 *     (stride 3): pairs {0,3}, {1,4}, {2,5} exchange, and 0 and 3 (n-group 0) also send to
 *     6: everyone holds x0..x6.
 *
 * Default (empty string): see papcoll_rm_default in rm_language.c.
 */
#ifndef PAPCOLL_ALGORITHMS_PARTS_RM_LANGUAGE_H
#define PAPCOLL_ALGORITHMS_PARTS_RM_LANGUAGE_H

#include <stddef.h>
#include <stdint.h>

#include "../../hidden.h"
#include "papcoll_core.h" /* PAPCOLL_RM_MAX_BASE */

#define RM_MAX_STAGES 64

typedef struct rm_stage {
    char kind;                  /* 'a', 'c', 'e', 'm', 'n' */
    int32_t threshold, base;    /* T (c, e) and B (all) */
    int32_t remaining, groups;  /* R and G (m, n) */
} rm_stage;

/* A group of processes, as the stages see it. */
typedef struct rm_level {
    char kind;          /* 'r' (all ranks), 'c' (made by a collapse), 'm' (a merge's interior) */
    int32_t size;       /* processes in the group */
    int32_t done;       /* product of the bases applied to it so far (the stride) */
    int32_t threshold, base, remaining, groups; /* of the stage that made it */
} rm_level;

typedef struct rm_parsed {
    rm_stage stages[RM_MAX_STAGES];
    int32_t count;
    int32_t merges;     /* > 0: operands are reordered */
} rm_parsed;

/* Where a refusal's text goes: the caller's buffer (NULL or size 0: nowhere). */
typedef struct rm_error {
    char *text;
    size_t size;
} rm_error;

/* Parses `text` and checks it against `ranks` (the bases multiply to the group sizes, the
 * collapses close, ...). PAPCOLL_OK, or PAPCOLL_ERR_ARGUMENT with a message in error. */
PAPCOLL_HIDDEN int rm_parse(const char *text, int32_t ranks, rm_parsed *parsed,
                            rm_error *error);

#endif /* PAPCOLL_ALGORITHMS_PARTS_RM_LANGUAGE_H */
