/* pap_hierarchical.c - the PAP-aware hierarchical all-reduce: the answer to Proficz et al.'s
 * open problem ("new hybrid algorithms combining advantages of the hierarchical and
 * PAP-aware solutions", Section 6). Proficz et al. found that on sites joined by a slow link the
 * hierarchical HR1 / HR2 win by far and that the arrival-aware PRR beats the ring; neither
 * uses what the other knows. HR1 and HR2 make every rank wait for the slowest rank anywhere
 * before the slow link is crossed; PRR and straggler cross it on many hops.
 *
 * Idea: each site (group) combines what its on-time ranks hold while late ones compute
 * (straggler's idea, per site) and sends its partial across the slow link as soon as it is
 * ready, not when the slowest rank anywhere arrives; so when a site is late the others have
 * combined everything between them already. A site's late ranks are summed at its leaders
 * and its last late rank adds its own vector and sends that late partial to the leaders of
 * every site directly: one local transfer for its own site, one crossing for each other, so
 * every late vector crosses the slow link once, inside its site's late partial. The limit
 * is the bound that knows the network (papcoll.sim.network_lower_bound): a rank cannot
 * finish before the last rank's data has reached it.
 *
 * Layout (from the context's predicted arrivals and groups, identical on every rank):
 *   - each site's members in predicted arrival order (ties by rank); its late ones by the
 *     straggler rule (late_rank_count, with the site's own tau = tau x P / n), the rest its
 *     on-time core of Q_g members; a site's readiness: its last on-time arrival;
 *   - L slices of the vector, L leaders in every site, leader l owning slice l. Large
 *     vectors (count x elem_size x (P - 1) > 64 KiB, straggler's threshold): L = the least,
 *     over the sites, of the on-time members that arrive before the earliest other site is
 *     ready (leader_count: a large message crosses only once its receive is posted, so a
 *     leader that comes later would hold every partial bound for it until its arrival).
 *     Small vectors: L = 1, one message across per site pair, the least where the slow
 *     link is latency-bound (choice: the schedule cannot see the links, so the vector's
 *     size decides, as in straggler);
 *   - a site's leaders are its L earliest members, in rank order around a ring: placed by
 *     blocks (consecutive ranks on one host), most ring messages stay on a host, so one
 *     site of hundreds of ranks on ten hosts is not bound by its hosts' links (direct
 *     sends from every member to every leader were: 23 ms against hr1's 20 at P = 64);
 *   - the sites in order of readiness (ties by group number): the order in which every
 *     leader combines the sites' on-time partials; the sites with late ranks in the
 *     predicted order of their last late rank: the order in which it adds their late
 *     partials.
 *
 * Phases (tags: the leaders' ring 0..3, 4 on-time member to leader, 5 across, 6 late,
 * 7 finals, 8 the earlier late ranks' sum to the last):
 *   1. each site's on-time partial of slice l at leader l: a ring reduce-scatter among the
 *      leaders, then the on-time members outside the ring send their slices to the leaders;
 *   2. across: leader l sends its site's partial to leader l of every other site and
 *      combines all sites' partials in readiness order (the early ones while a late site
 *      still works); every site's leader l does it with the same operands in the same
 *      order, so all hold bitwise identical results;
 *   3. late: a site's earlier late ranks send slice l to leader l, which sums them in
 *      predicted order and hands the sum to the site's last late rank; that one adds its
 *      own slice (sum (op) own, the same bits for everyone) and sends the late partial to
 *      leader l of every site, one site after another (its own first); every leader adds
 *      the sites' late partials;
 *   4. finals: a ring all-gather among the leaders, and leader l's slice to each member
 *      outside the ring.
 * After the last arrival: its hand-off (one local transfer) and the finals for its own
 * site; one crossing and the finals for the others.
 *
 * Worked example, P = 10, sites A = {0..4} and B = {5..9}, rank 7 predicted late, a large
 * vector (`papcoll schedule --algorithm pap_hierarchical --ranks 10 --rank R --count 8000
 * --groups 0,0,0,0,0,1,1,1,1,1 --arrivals 0,0,0,0,0,0,0,1,0,0 --tau 1e-4`): Q_A = 5,
 * Q_B = 4, both sites ready at 0, so L = 4 slices s0..s3; leaders A: 0 1 2 3, B: 5 6 8 9;
 * rank 4 on time outside A's ring ("+" reduced, "=" kept; A, B' the on-time partials):
 *   on time      ring reduce-scatter among 0 1 2 3, and among 5 6 8 9
 *                4 -s0-> 0+   4 -s1-> 1+   4 -s2-> 2+   4 -s3-> 3+
 *                0 <-s0-> 5   1 <-s1-> 6   2 <-s2-> 8   3 <-s3-> 9    (each: A + B')
 *   7 comes      7 -s0-> 5+ 0+   7 -s1-> 6+ 1+   7 -s2-> 8+ 2+   7 -s3-> 9+ 3+
 *                (the first of each pair local, the second across; 7 is B's only late
 *                rank, so its slices are B's late partial)
 *   finals       ring all-gather among 0 1 2 3, and among 5 6 8 9
 *                0 -s0-> 4=  1 -s1-> 4=  2 -s2-> 4=  3 -s3-> 4=   5 -s0-> 7=  ...  9 -s3-> 7=
 * (In a site of three ranks or fewer the straggler rule finds no gain in a late rank: it
 * stays in the core, and its vector crosses inside its site's partial.)
 *
 * Choices: ops must be commutative (operands are reordered). Sites of any sizes; one site
 * is a PAP-aware reduce-scatter + all-gather among its members. Across, each leader sends
 * its partial to every other site directly: one round, (G - 1) slices over the slow links
 * per leader, which for the 2-3 sites of Proficz et al. a latency-bound link hardly notices. A
 * site's last late rank sends its crossings from the late partial in scratch (a copy of its
 * vector when it is the site's only late rank), so that its finals (MPI_IN_PLACE: where its
 * sends read) need not wait for a send across the slow link to complete; the rank that
 * sends a crossing still completes only when it has crossed, so one rank of a
 * late site pays a crossing (its share in e-bar: crossing / P). Wrong predictions only
 * change who waits: a late leader delays its slice by its lateness, a late member outside
 * the ring is waited for like any late rank, an earlier late rank that comes after the
 * last holds the late partial back, and a leader later than predicted holds back, on its
 * slice's lane, the late partial for the sites after it (a rendezvous send waits for its
 * receive). Not host-aware: with hundreds of ranks a site the ring
 * of leaders takes hundreds of steps, which a spread of arrivals serialises (P = 1024,
 * rand-late 100 ms in docs/benchmarks.md). Scratch: a leader 2 ring slots, the partial
 * copy, the earlier late ranks' sum and up to 4 + 4 + (G - 1) + G landing slices (at most
 * 32 a kind; a slice: count / L): at most 11 + 2G slices; the last late rank of a site
 * count elements; the others none. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../schedule.h"
#include "parts/arrival_order.h"
#include "parts/hierarchical.h"
#include "parts/ring_phases.h"

enum {
    RING_WINDOW = 4,   /* the leaders' ring: tags 0 .. 3, one windowed link each way */
    RING_SLOTS = 2,    /* its reduce-scatter's landing slots */
    TO_LEADER_TAG = 4, /* an on-time member's slice to its site's leader */
    ACROSS_TAG = 5,    /* a site's on-time partial to the same slice's leader elsewhere */
    LATE_TAG = 6,      /* a late rank's slice, or a site's late partial, to a leader */
    FINAL_TAG = 7,     /* the result's slice from a leader to a member outside the ring */
    PREFIX_TAG = 8,    /* a leader's sum of its site's earlier late ranks to the last one */
    MEMBER_SLOTS = 4,  /* on-time members' slices a leader receives ahead of reducing */
    MOST_SLOTS = 32,   /* other sites' partials, sites' late partials: see landing_open */
};

typedef struct site_layout {
    hierarchy h;
    int32_t *site_order;  /* site g's members in predicted arrival order, at
                             h.group_first[g] .. (packed as h.members) */
    int32_t *core_count;  /* per site: its on-time members, the first of site_order */
    int32_t *readiness;   /* the sites, earliest predicted on-time partial first */
    int32_t *late_sites;  /* the sites with late members, in the predicted arrival order of
                             their last member: the order every leader adds their late
                             partials in */
    int32_t late_site_count;
    int32_t slices;       /* L */
    int32_t *ring;        /* site g's L leaders in rank order, at g x L ..: leader l owns
                             slice l */
    int32_t my_position;  /* this rank's place in its site's arrival order */
    int32_t my_slice;     /* the slice this rank leads, or -1 */
} site_layout;

static void site_layout_release(site_layout *layout) {
    hierarchy_free(&layout->h);
    free(layout->site_order);
    free(layout->core_count);
    free(layout->readiness);
    free(layout->late_sites);
    free(layout->ring);
}

static int by_rank(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* L for a large vector: every site needs L leaders among its on-time members, and a leader
 * should be there before the other sites' on-time partials are: a large message crosses
 * only once its receive is posted, so a leader that comes later makes every partial bound
 * for it start across the slow link at its own arrival. So L is the least, over the sites,
 * of the on-time members that arrive no later than the earliest other site's partial is
 * predicted ready (its last on-time member's arrival), and at least 1. ready[g] (in site
 * order): site g's predicted readiness; site_sorted: each site's arrivals, ascending. */
static int32_t leader_count(const site_layout *layout, const double *site_sorted,
                            const double *ready) {
    const hierarchy *h = &layout->h;
    const int32_t sites = h->group_count;
    /* the earliest and second-earliest readiness, so each site finds the earliest of the
     * others' in O(1) */
    int32_t first = 0, second = -1;
    for (int32_t g = 1; g < sites; g++) {
        if (ready[g] < ready[first]) {
            second = first;
            first = g;
        } else if (second < 0 || ready[g] < ready[second]) {
            second = g;
        }
    }
    int32_t slices = INT32_MAX;
    for (int32_t g = 0; g < sites; g++) {
        const double *arrivals = &site_sorted[h->group_first[g]];
        int32_t core = layout->core_count[g], in_time = core;
        if (sites > 1) {
            double others = ready[g == first ? second : first];
            in_time = 0;
            while (in_time < core && arrivals[in_time] <= others) in_time++;
        }
        if (in_time < 1) in_time = 1;
        if (in_time < slices) slices = in_time;
    }
    return slices;
}

/* Fills the layout; 0 (and a failure in out) on bad arrivals or no memory. */
static int lay_out(int32_t ranks, int32_t rank, int64_t count, int32_t elem_size,
                   const papcoll_context *context, site_layout *layout,
                   papcoll_schedule *out) {
    memset(layout, 0, sizeof *layout);
    if (!(isfinite(context->tau) && context->tau > 0)) {
        sched_fail(out, PAPCOLL_ERR_ARGUMENT, "pap_hierarchical needs tau > 0 (got %g)",
                   context->tau);
        return 0;
    }
    if (!hierarchy_of(ranks, rank, context, &layout->h, out)) return 0;
    const hierarchy *h = &layout->h;
    const int32_t sites = h->group_count;
    int32_t *order = malloc((size_t)ranks * sizeof *order);
    double *sorted = malloc((size_t)ranks * sizeof *sorted);
    int32_t *group_of = malloc((size_t)ranks * sizeof *group_of);
    int32_t *place_of = calloc((size_t)ranks, sizeof *place_of);
    int32_t *filled = calloc((size_t)sites, sizeof *filled);
    double *site_sorted = malloc((size_t)ranks * sizeof *site_sorted);
    double *ready = malloc((size_t)sites * sizeof *ready); /* per site: its readiness */
    layout->site_order = malloc((size_t)ranks * sizeof *layout->site_order);
    layout->core_count = malloc((size_t)sites * sizeof *layout->core_count);
    layout->readiness = malloc((size_t)sites * sizeof *layout->readiness);
    layout->late_sites = malloc((size_t)sites * sizeof *layout->late_sites);
    int ok = order && sorted && group_of && place_of && filled && site_sorted && ready &&
             layout->site_order && layout->core_count && layout->readiness && layout->late_sites;
    if (!ok) sched_fail(out, PAPCOLL_ERR_NO_MEMORY, "out of memory laying out pap_hierarchical");
    if (ok) ok = arrival_order(context, ranks, "pap_hierarchical", order, sorted, out);
    if (ok) {
        for (int32_t g = 0; g < sites; g++)
            for (int32_t i = 0; i < hierarchy_group_size(h, g); i++)
                group_of[hierarchy_member(h, g, i)] = g;
        /* the global arrival order, dealt out to the sites, is each site's arrival order */
        for (int32_t i = 0; i < ranks; i++) {
            int32_t g = group_of[order[i]];
            int32_t place = filled[g]++;
            layout->site_order[h->group_first[g] + place] = order[i];
            site_sorted[h->group_first[g] + place] = sorted[i];
            place_of[order[i]] = place;
        }
        layout->my_position = place_of[rank];
        for (int32_t g = 0; g < sites; g++) {
            int32_t n = hierarchy_group_size(h, g);
            const double *arrivals = &site_sorted[h->group_first[g]];
            /* tau is for one P-th of the vector; the site's rule wants one n-th */
            double site_tau = context->tau * (double)ranks / (double)n;
            int32_t core = n - late_rank_count(arrivals, n, site_tau);
            layout->core_count[g] = core;
            ready[g] = arrivals[core - 1];
        }
        layout->slices = leader_count(layout, site_sorted, ready);
        /* the sites by readiness, ties by group number (as ranks by arrival, ties by rank) */
        if (!time_order(ready, sites, layout->readiness, NULL)) {
            sched_fail(out, PAPCOLL_ERR_NO_MEMORY, "out of memory laying out pap_hierarchical");
            ok = 0;
        }
        for (int32_t i = 0; i < ranks; i++) { /* a site's last member, when it is late */
            int32_t g = group_of[order[i]];
            if (place_of[order[i]] == hierarchy_group_size(h, g) - 1 &&
                layout->core_count[g] < hierarchy_group_size(h, g))
                layout->late_sites[layout->late_site_count++] = g;
        }
        if (latency_bound_vector(count, elem_size, ranks)) layout->slices = 1;
        if (layout->slices > count) layout->slices = count > 0 ? (int32_t)count : 1;
        /* the leaders: each site's L earliest, in rank order around their ring, so that
         * ranks placed by blocks (consecutive ranks on one host) pass most of the ring's
         * messages through shared memory */
        const int32_t slices = layout->slices;
        layout->ring = malloc((size_t)sites * (size_t)slices * sizeof *layout->ring);
        layout->my_slice = -1;
        if (layout->ring == NULL) {
            sched_fail(out, PAPCOLL_ERR_NO_MEMORY, "out of memory laying out pap_hierarchical");
            ok = 0;
        } else {
            for (int32_t g = 0; g < sites; g++) {
                int32_t *ring = &layout->ring[(size_t)g * (size_t)slices];
                memcpy(ring, &layout->site_order[h->group_first[g]],
                       (size_t)slices * sizeof *ring);
                qsort(ring, (size_t)slices, sizeof *ring, by_rank);
                for (int32_t l = 0; l < slices; l++)
                    if (ring[l] == rank) layout->my_slice = l;
            }
        }
    }
    free(order);
    free(sorted);
    free(group_of);
    free(place_of);
    free(filled);
    free(site_sorted);
    free(ready);
    return ok;
}

static sched_region slice_of(int32_t buffer, int64_t count, int32_t slices, int32_t slice) {
    return sched_region_of(buffer, sched_block_start(count, slices, slice),
                           sched_block_length(count, slices, slice));
}

/* The rank at place `position` of site g's arrival order. */
static int32_t site_member(const site_layout *layout, int32_t g, int32_t position) {
    return layout->site_order[layout->h.group_first[g] + position];
}

/* Site g's leaders in ring order: leader l owns slice l. */
static const int32_t *site_leaders(const site_layout *layout, int32_t g) {
    return &layout->ring[(size_t)g * (size_t)layout->slices];
}

/* Leader `slice` of site g. */
static int32_t leader(const site_layout *layout, int32_t g, int32_t slice) {
    return site_leaders(layout, g)[slice];
}

/* Whether site g's member at arrival place `position` is one of its leaders. */
static int is_leader(const site_layout *layout, int32_t position) {
    return position < layout->slices;
}

/* Landing slots a leader receives slices into ahead of combining them: the receive into
 * a slot waits for the op that read the slot before, so scratch stays `count` slices however
 * many ranks send (one sending out of the predicted order only waits). The other sites'
 * partials and late partials get a slot each (up to 32 sites): a large message crosses only
 * once its receive is posted, so a shared slot would make one site's crossing wait for
 * another's. */
typedef struct landing {
    int32_t buffer;
    int64_t length;
    int32_t count, used;
    int32_t reader[MOST_SLOTS];
} landing;

static landing landing_open(papcoll_schedule *out, int64_t length, int32_t wanted) {
    landing slots = {SCHED_NONE, length, wanted < MOST_SLOTS ? wanted : MOST_SLOTS, 0, {0}};
    if (slots.count > 0) slots.buffer = sched_add_scratch(out, slots.count * length);
    for (int32_t s = 0; s < MOST_SLOTS; s++) slots.reader[s] = SCHED_NONE;
    return slots;
}

enum { COMBINE_COPY = -1 }; /* a land_and_combine order: the first operand, copied */

/* Receives one slice from `peer` and combines it into `target` after `previous`: target =
 * slice (op) target for SCHED_SOURCE_LEFT, target (op) slice for SCHED_TARGET_LEFT, the
 * slice itself for COMBINE_COPY. Returns the combining op. */
static int32_t land_and_combine(papcoll_schedule *out, landing *slots, int32_t peer,
                                int32_t tag, sched_region target, int order,
                                int32_t previous) {
    int32_t slot = slots->used++ % slots->count;
    sched_region place = sched_region_of(slots->buffer, slot * slots->length, slots->length);
    int32_t received = sched_recv(out, peer, tag, place, SCHED_AFTER(slots->reader[slot]));
    slots->reader[slot] =
        order == COMBINE_COPY
            ? sched_copy(out, place, target, SCHED_AFTER(received, previous))
            : sched_reduce(out, place, target, order, SCHED_AFTER(received, previous));
    return slots->reader[slot];
}

/* Leader `slice` of this rank's site: the ring, the exchange across, the late ranks, the
 * finals. */
static int build_leader(const site_layout *layout, int64_t count, papcoll_schedule *out) {
    const hierarchy *h = &layout->h;
    const int32_t g = h->my_group, n = hierarchy_group_size(h, g), sites = h->group_count;
    const int32_t q = layout->slices, slice = layout->my_slice;
    const int64_t length = sched_block_length(count, q, slice);
    const sched_region mine = slice_of(SCHED_RECV_BUFFER, count, q, slice);
    /* 1. the site's on-time partial of this slice: the leaders' ring reduce-scatter (ring
     * position l ends with the leaders' partial of slice l), on the whole vector copied into
     * the receive buffer first, then the on-time members outside it, in predicted arrival
     * order */
    int32_t copied = sched_copy_own_vector(out);
    ring_phases ring;
    if (!ring_phases_open(&ring, site_leaders(layout, g), q, slice, count, 0, copied, out))
        return sched_finish(out);
    int32_t have = ring_reduce_scatter(&ring, RING_SLOTS, RING_WINDOW, out);
    int32_t outside = layout->core_count[g] - q; /* on-time members outside the ring */
    landing members = landing_open(out, length, outside < MEMBER_SLOTS ? outside : MEMBER_SLOTS);
    for (int32_t position = q; position < layout->core_count[g]; position++)
        have = land_and_combine(out, &members, site_member(layout, g, position), TO_LEADER_TAG,
                                mine, SCHED_SOURCE_LEFT, have);
    /* 2. across: the partial (copied: the sends across read it while the result grows in
     * `mine`) to this slice's leader of every other site, theirs in; all sites' partials
     * combined in readiness order, the same operands in the same order on every site */
    int32_t result = have;
    if (sites > 1) {
        int32_t partial_buffer = sched_add_scratch(out, length);
        const sched_region partial = sched_region_of(partial_buffer, 0, length);
        const int32_t saved = sched_copy(out, mine, partial, SCHED_AFTER(have));
        result = saved; /* what writes `mine` from here on waits for the copy's read */
        /* received into slots, posted at once: a partial crosses while this site's own
         * leaders still work on theirs */
        landing partials = landing_open(out, length, sites - 1);
        /* sent staggered: the site k-th in readiness order sends first to the (k + 1)-th,
         * then the (k + 2)-th, ..., so the senders of a round reach different leaders; in
         * readiness order every leader's first partial went to the same one, whose link
         * took them one after another while the others idled (papcoll's simulator, P = 64,
         * groups of 4, 4 MiB on time: 231.6 ms, SMPI, which shares links, 176.7) */
        int32_t my_place = 0;
        while (layout->readiness[my_place] != g) my_place++;
        for (int32_t step = 1; step < sites; step++)
            sched_send(out, leader(layout, layout->readiness[(my_place + step) % sites], slice),
                       ACROSS_TAG, partial, SCHED_AFTER(saved));
        for (int32_t k = 0; k < sites; k++) {
            int32_t site = layout->readiness[k];
            if (site == g) {
                if (k > 0)
                    result = sched_reduce(out, partial, mine, SCHED_TARGET_LEFT,
                                          SCHED_AFTER(saved, result));
                continue;
            }
            result = land_and_combine(out, &partials, leader(layout, site, slice), ACROSS_TAG,
                                      mine, k == 0 ? COMBINE_COPY : SCHED_TARGET_LEFT, result);
        }
    }
    /* 3. the late ranks: this site's earlier ones summed, in predicted arrival order, for
     * its last one (who adds its own slice and sends the site's late partial to every
     * site's leaders); then every site's late partial added, in the order of their last
     * ranks' predicted arrivals */
    const int32_t last_position = n - 1, first_late = layout->core_count[g];
    if (last_position > first_late) {
        int32_t prefix_buffer = sched_add_scratch(out, length);
        const sched_region prefix = sched_region_of(prefix_buffer, 0, length);
        int32_t earlier_count = last_position - first_late;
        landing earlier = landing_open(
            out, length, earlier_count < MEMBER_SLOTS ? earlier_count : MEMBER_SLOTS);
        int32_t summed = SCHED_NONE;
        for (int32_t position = first_late; position < last_position; position++)
            summed = land_and_combine(out, &earlier, site_member(layout, g, position),
                                      LATE_TAG, prefix,
                                      position == first_late ? COMBINE_COPY : SCHED_TARGET_LEFT,
                                      summed);
        sched_send(out, site_member(layout, g, last_position), PREFIX_TAG, prefix,
                   SCHED_AFTER(summed));
    }
    landing late = landing_open(out, length, layout->late_site_count);
    for (int32_t k = 0; k < layout->late_site_count; k++) {
        int32_t site = layout->late_sites[k];
        int32_t last = site_member(layout, site, hierarchy_group_size(h, site) - 1);
        result = land_and_combine(out, &late, last, LATE_TAG, mine, SCHED_TARGET_LEFT, result);
    }
    /* 4. finals: the ring all-gather among the leaders (rank order again), and this slice
     * straight to each member outside the ring */
    for (int32_t position = q; position < n; position++)
        sched_send(out, site_member(layout, g, position), FINAL_TAG, mine, SCHED_AFTER(result));
    ring_phases_block_final(&ring, result);
    ring_all_gather(&ring, out);
    ring_phases_close(&ring);
    return PAPCOLL_OK;
}

/* A member outside the leaders' ring: its slices to its site's leaders, the finals back.
 * The last late member of a site instead sends the site's late partial (the leaders' sum
 * of the earlier late members, then its own slice) to the leaders of every site: one local
 * transfer for its own site, one crossing for each other, local ones first so that its own
 * site waits least. */
static int build_member(const site_layout *layout, int64_t count, papcoll_schedule *out) {
    const hierarchy *h = &layout->h;
    const int32_t g = h->my_group, n = hierarchy_group_size(h, g), q = layout->slices;
    const int32_t position = layout->my_position, first_late = layout->core_count[g];
    const int last = position == n - 1 && position >= first_late;
    const int has_prefix = last && position > first_late;
    /* reads[l]: the op after which slice l of the late partial is ready (and that last
     * reads the vector's slice l); local[l]: a send that reads it too, or none */
    int32_t *reads = malloc((size_t)q * sizeof *reads);
    int32_t *local = malloc((size_t)q * sizeof *local);
    int32_t *through = malloc((size_t)q * sizeof *through);
    if (reads == NULL || local == NULL || through == NULL) {
        free(reads);
        free(local);
        free(through);
        return sched_fail(out, PAPCOLL_ERR_NO_MEMORY, "out of memory building pap_hierarchical");
    }
    /* the late partial (or, alone late, the vector) in scratch: the finals (MPI_IN_PLACE:
     * where the sends read) need not wait for a send across the slow link to complete */
    int32_t partial_buffer = last ? sched_add_scratch(out, count) : SCHED_NONE;
    for (int32_t step = 0; step < q; step++) {
        /* start at a different leader than the members beside it */
        int32_t slice = (position + step) % q;
        sched_region mine = slice_of(SCHED_SEND_BUFFER, count, q, slice);
        local[slice] = SCHED_NONE;
        if (!last) {
            reads[slice] = sched_send(out, leader(layout, g, slice),
                                      position >= first_late ? LATE_TAG : TO_LEADER_TAG, mine,
                                      SCHED_FIRST);
            continue;
        }
        sched_region partial = slice_of(partial_buffer, count, q, slice);
        if (has_prefix) { /* prefix (op) own slice, in those roles: the same bits everywhere */
            int32_t prefix = sched_recv(out, leader(layout, g, slice), PREFIX_TAG, partial,
                                        SCHED_FIRST);
            reads[slice] = sched_reduce(out, mine, partial, SCHED_TARGET_LEFT,
                                        SCHED_AFTER(prefix));
            sched_send(out, leader(layout, g, slice), LATE_TAG, partial,
                       SCHED_AFTER(reads[slice]));
        } else { /* alone late: its vector is the late partial; the local send at once */
            local[slice] = sched_send(out, leader(layout, g, slice), LATE_TAG, mine,
                                      SCHED_FIRST);
            reads[slice] = sched_copy(out, mine, partial, SCHED_FIRST);
        }
    }
    /* one site at a time: q lanes, one per slice, each sending to the sites in turn, the
     * next once the last is through; so the q slices of one site travel together and the
     * next site's follow. All at once, links that share their bandwidth (SMPI, TCP)
     * delivered every site's late partial together at the end of the whole fan-out, and no
     * site could start its finals before (SMPI, 1 MiB, rank 1 10 ms late, groups of 4:
     * P = 16 51.6 -> 41.7 ms, P = 32 85.6 -> 63.6; papcoll's simulator, whose NIC sends in
     * order anyway: 39.1 and 58.2). through[step]: lane step's last send */
    for (int32_t step = 0; step < q; step++) through[step] = SCHED_NONE;
    for (int32_t k = 1; last && k < h->group_count; k++) {
        for (int32_t step = 0; step < q; step++) {
            int32_t slice = (position + step) % q;
            int32_t earlier = through[step];
            through[step] = sched_send(out, leader(layout, (g + k) % h->group_count, slice),
                                       LATE_TAG, slice_of(partial_buffer, count, q, slice),
                                       SCHED_AFTER(reads[slice], earlier));
        }
    }
    for (int32_t step = 0; step < q; step++) {
        int32_t slice = (position + step) % q;
        sched_recv(out, leader(layout, g, slice), FINAL_TAG,
                   slice_of(SCHED_RECV_BUFFER, count, q, slice),
                   SCHED_AFTER(reads[slice], local[slice]));
    }
    free(reads);
    free(local);
    free(through);
    return PAPCOLL_OK;
}

static int pap_hierarchical_build(int32_t ranks, int32_t rank, int64_t count,
                                  int32_t elem_size, const papcoll_context *context,
                                  papcoll_schedule *out) {
    site_layout layout;
    if (!lay_out(ranks, rank, count, elem_size, context, &layout, out)) {
        site_layout_release(&layout);
        return sched_finish(out);
    }
    int status = is_leader(&layout, layout.my_position) ? build_leader(&layout, count, out)
                                                         : build_member(&layout, count, out);
    site_layout_release(&layout);
    return status != PAPCOLL_OK ? status : sched_finish(out);
}

const algorithm_entry pap_hierarchical_algorithm = {
    .info = {
        .name = "pap_hierarchical",
        .description =
            "sites combine their on-time ranks early and across; a site's late ranks, "
            "summed, cross the slow link once",
        .source = "papcoll's own: the open problem of Proficz et al. (Section 6), hierarchy "
                  "(HR1/HR2) joined with arrival-awareness (straggler, Proficz 2018)",
        .limitations =
            "commutative ops only; needs the group (site) of every rank, one arrival "
            "estimate per rank and tau > 0, identical on all ranks; scratch: a leader up to "
            "11 + 2G slices (a slice: count / L, L leaders per site, G sites), a site's "
            "last late rank count elements",
        .commutative_only = 1,
        .needs_arrivals = 1,
        .needs_groups = 1,
    },
    .build = pap_hierarchical_build,
};
