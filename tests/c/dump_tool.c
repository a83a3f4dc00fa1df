/* dump_tool ALGORITHM P RANK COUNT [ELEM_SIZE]: prints one rank's schedule as text. */
#include <stdio.h>
#include <stdlib.h>

#include "papcoll_core.h"

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: %s ALGORITHM P RANK COUNT [ELEM_SIZE]\n", argv[0]);
        return 2;
    }
    papcoll_schedule *schedule;
    char error[256];
    int status = papcoll_schedule_build(argv[1], atoi(argv[2]), atoi(argv[3]),
                                        strtoll(argv[4], NULL, 10), argc > 5 ? atoi(argv[5]) : 4,
                                        NULL, &schedule, error, sizeof error);
    if (status != PAPCOLL_OK) {
        fprintf(stderr, "error: %s\n", error);
        return 2;
    }
    size_t length = papcoll_schedule_dump(schedule, NULL, 0);
    char *text = malloc(length + 1);
    papcoll_schedule_dump(schedule, text, length + 1);
    fputs(text, stdout);
    free(text);
    papcoll_schedule_free(schedule);
    return 0;
}
