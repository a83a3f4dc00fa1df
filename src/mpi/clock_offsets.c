/* clock_offsets.c - the clock sync of clock_offsets.h. The best of several exchanges
 * because a busy machine only ever makes a round trip longer, and the error of an offset is
 * at most half its exchange's round trip. */
#include "clock_offsets.h"

#include <math.h>

/* Rank 0's side of the exchanges with one peer. */
static int measure_peer(MPI_Comm comm, int tag, int peer, double *offset, double *round_trip) {
    double best_round_trip = INFINITY, best_offset = 0, remote;
    for (int round = 0; round < CLOCK_OFFSETS_ROUNDS; round++) {
        double sent = MPI_Wtime();
        int code = MPI_Send(&sent, 1, MPI_DOUBLE, peer, tag, comm);
        if (code == MPI_SUCCESS)
            code = MPI_Recv(&remote, 1, MPI_DOUBLE, peer, tag, comm, MPI_STATUS_IGNORE);
        if (code != MPI_SUCCESS) return code;
        double received = MPI_Wtime();
        /* MPICH's MPI_Wtime follows the wall clock (CLOCK_REALTIME): a step of it during an
         * exchange gives a round trip below zero, which would otherwise win as the best
         * and carry half the step into the offset */
        if (received - sent >= 0 && received - sent < best_round_trip) {
            best_round_trip = received - sent;
            best_offset = (sent + received) / 2 - remote;
        }
    }
    *offset = best_offset;
    *round_trip = best_round_trip;
    /* the peer learns its own offset */
    return MPI_Send(&best_offset, 1, MPI_DOUBLE, peer, tag, comm);
}

/* A peer's side: answer each exchange with the time it arrived, then receive the offset. */
static int answer(MPI_Comm comm, int tag, double *own) {
    for (int round = 0; round < CLOCK_OFFSETS_ROUNDS; round++) {
        double ignored;
        int code = MPI_Recv(&ignored, 1, MPI_DOUBLE, 0, tag, comm, MPI_STATUS_IGNORE);
        if (code != MPI_SUCCESS) return code;
        double now = MPI_Wtime();
        if ((code = MPI_Send(&now, 1, MPI_DOUBLE, 0, tag, comm)) != MPI_SUCCESS) return code;
    }
    return MPI_Recv(own, 1, MPI_DOUBLE, 0, tag, comm, MPI_STATUS_IGNORE);
}

int clock_offsets_measure(MPI_Comm comm, int tag, double *own, double *offsets,
                          double *round_trips) {
    int rank, ranks;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &ranks);
    *own = 0;
    if (rank != 0) return answer(comm, tag, own);
    if (offsets) offsets[0] = 0;
    if (round_trips) round_trips[0] = 0;
    for (int peer = 1; peer < ranks; peer++) {
        double offset, round_trip;
        int code = measure_peer(comm, tag, peer, &offset, &round_trip);
        if (code != MPI_SUCCESS) return code;
        if (offsets) offsets[peer] = offset;
        if (round_trips) round_trips[peer] = round_trip;
    }
    return MPI_SUCCESS;
}
