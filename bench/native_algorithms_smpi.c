/* native_algorithms_smpi.c - native_algorithms.h under SimGrid's SMPI (cmake/smpi.cmake),
 * in place of native_algorithms.c. SMPI has no MPI_T, and its all-reduce algorithm is the
 * job's, chosen when smpirun starts (--cfg=smpi/allreduce:NAME, or a selector's choice:
 * --cfg=smpi/coll-selector:mpich|ompi), so "native" runs whatever the job was given and
 * "native:NAME" is refused, saying how to run SMPI's NAME instead. */
#include "native_algorithms.h"

#include <stdio.h>
#include <string.h>

void native_library_name(char *name, size_t size) {
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    MPI_Get_library_version(version, &length);
    snprintf(name, size, "%.*s", (int)strcspn(version, "\n"), version);
}

int native_algorithm_names(char *known, size_t known_size) {
    if (known_size > 0) known[0] = '\0';
    return 0;
}

void native_algorithm_names_done(void) {}

int native_algorithm_open(const char *name, MPI_Comm comm, native_algorithm *out,
                          char *message, size_t message_size) {
    out->comm = MPI_COMM_NULL;
    out->forced_value = -1;
    if (name[0] == '\0') return MPI_Comm_dup(comm, &out->comm) == MPI_SUCCESS;
    snprintf(message, message_size, "native:%s: under SMPI the MPI's all-reduce algorithm is "
             "the job's, not chosen call by call; run \"native\" in a job of its own started "
             "with --cfg=smpi/allreduce:%s (`papcoll bench --smpi` does so for native:%s)",
             name, name, name);
    return 0;
}

void native_algorithm_select(const native_algorithm *algorithm) { (void)algorithm; }

void native_algorithm_restore(const native_algorithm *algorithm) { (void)algorithm; }

void native_algorithm_close(native_algorithm *algorithm) {
    if (algorithm->comm != MPI_COMM_NULL) MPI_Comm_free(&algorithm->comm);
}
