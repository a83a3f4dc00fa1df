/* tag_counts_alike.c (test) - posts whose schedules use more tags on some ranks than on
 * others (priority_rabenseifner at P = 5: 5 tags on rank 0, 6 on the others; slt and
 * pap_hierarchical alike) take the same tag range on every rank, since a post takes the
 * most any rank's schedule uses (src/mpi/call_plan.c, widest_tag_count). Several posts
 * outstanding together, alternating that algorithm with ring, completed in reverse order;
 * every result must equal MPI_Allreduce's. With each rank's own count the ranks' counters
 * drifted apart from the second post on: messages of one post met another's (a hang or a
 * wrong result). Prints "N passed, M failed". */
#include <stdlib.h>
#include <string.h>

#include "common/checks.h"
#include "papcoll.h"

enum { POSTS = 6, COUNT = 1031 };

static int rank, ranks;

int main(int argc, char **argv) {
    checks_start(&argc, &argv, &rank, &ranks);
    papcoll_comm *pc = NULL;
    int code = papcoll_comm_create(MPI_COMM_WORLD, NULL, &pc);
    check_everywhere(code == MPI_SUCCESS, "papcoll_comm_create", papcoll_error_string(code));
    static long input[POSTS][COUNT], output[POSTS][COUNT], expected[POSTS][COUNT];
    MPI_Request requests[POSTS];
    for (int k = 0; code == MPI_SUCCESS && k < POSTS; k++) {
        for (int i = 0; i < COUNT; i++) input[k][i] = (long)(rank + 1) * (i + 1) + 100L * k;
        MPI_Allreduce(input[k], expected[k], COUNT, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        papcoll_set_algorithm(pc, k % 2 == 0 ? "priority_rabenseifner" : "ring");
        code = papcoll_iallreduce(pc, input[k], output[k], COUNT, MPI_LONG, MPI_SUM,
                                  &requests[k]);
        check_everywhere(code == MPI_SUCCESS, "post", papcoll_error_string(code));
    }
    for (int k = POSTS - 1; code == MPI_SUCCESS && k >= 0; k--) {
        int waited = papcoll_wait(&requests[k], MPI_STATUS_IGNORE);
        char detail[160];
        snprintf(detail, sizeof detail, "post %d: %s", k, papcoll_error_string(waited));
        check_everywhere(waited == MPI_SUCCESS &&
                             memcmp(output[k], expected[k], sizeof output[k]) == 0,
                         "result equals MPI_Allreduce's", detail);
    }
    if (pc != NULL) papcoll_comm_free(&pc);
    int status = checks_report();
    MPI_Finalize();
    return status;
}
