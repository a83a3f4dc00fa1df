/* operations.c - see operations.h. */
#include "operations.h"

#include <stddef.h>

/* A function, not a static table: MPI_SUM and friends need not be compile-time constants
 * (in Open MPI they are addresses of library objects). */
int predefined_op_index(MPI_Op op) {
    const MPI_Op predefined[] = {MPI_MAX,  MPI_MIN,  MPI_SUM,  MPI_PROD,
                                 MPI_LAND, MPI_BAND, MPI_LOR,  MPI_BOR,
                                 MPI_LXOR, MPI_BXOR, MPI_MINLOC, MPI_MAXLOC};
    for (size_t i = 0; i < sizeof predefined / sizeof predefined[0]; i++)
        if (op == predefined[i]) return (int)i;
    return -1;
}

const char *predefined_op_name(int index) {
    static const char *const names[] = {"MPI_MAX",  "MPI_MIN",  "MPI_SUM",  "MPI_PROD",
                                        "MPI_LAND", "MPI_BAND", "MPI_LOR",  "MPI_BOR",
                                        "MPI_LXOR", "MPI_BXOR", "MPI_MINLOC", "MPI_MAXLOC"};
    if (index < 0 || index >= (int)(sizeof names / sizeof names[0])) return "a user-defined op";
    return names[index];
}
