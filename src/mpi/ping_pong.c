/* ping_pong.c - the round trips of ping_pong.h. */
#include "ping_pong.h"

int ping_pong(MPI_Comm comm, void *buffer, int count, MPI_Datatype datatype, int tag,
              int trips) {
    int rank, code = MPI_SUCCESS;
    MPI_Comm_rank(comm, &rank);
    for (int trip = 0; trip < trips && rank <= 1 && code == MPI_SUCCESS; trip++) {
        if (rank == 0) {
            code = MPI_Send(buffer, count, datatype, 1, tag, comm);
            if (code == MPI_SUCCESS)
                code = MPI_Recv(buffer, count, datatype, 1, tag, comm, MPI_STATUS_IGNORE);
        } else {
            code = MPI_Recv(buffer, count, datatype, 0, tag, comm, MPI_STATUS_IGNORE);
            if (code == MPI_SUCCESS) code = MPI_Send(buffer, count, datatype, 0, tag, comm);
        }
    }
    return code;
}
