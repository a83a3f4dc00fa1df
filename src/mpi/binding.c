/* binding.c - the entry points for language bindings (include/papcoll.h, last section).
 *
 * Python's papcoll.Communicator calls papcoll through cffi in ABI mode, which sees no
 * mpi.h: it cannot know whether MPI_Comm is an int (MPICH) or a pointer (Open MPI). mpi4py
 * gives the address where each handle is stored (MPI._addressof), so these functions read
 * the handle from that address, in the one place that is compiled against the right mpi.h,
 * and call the ordinary API. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* Reads a handle of type `type` stored at `address`, or returns MPI_ERR_ARG naming it. */
#define READ_HANDLE(type, variable, address, caller, what)                                  \
    if ((address) == NULL)                                                                  \
        return record_error(MPI_ERR_ARG, "%s: the address of the %s handle is NULL",       \
                            caller, what);                                                  \
    type variable;                                                                          \
    memcpy(&variable, (address), sizeof variable)

int papcoll_comm_create_from_handle(const void *comm_handle, const papcoll_config *config,
                                    papcoll_comm **out) {
    READ_HANDLE(MPI_Comm, comm, comm_handle, "papcoll_comm_create", "communicator");
    return papcoll_comm_create(comm, config, out);
}

int papcoll_allreduce_from_handles(papcoll_comm *pc, const void *sendbuf, void *recvbuf,
                                   int64_t count, const void *datatype_handle,
                                   const void *op_handle) {
    READ_HANDLE(MPI_Datatype, datatype, datatype_handle, "papcoll_allreduce", "datatype");
    READ_HANDLE(MPI_Op, op, op_handle, "papcoll_allreduce", "op");
    return papcoll_allreduce_c(pc, sendbuf, recvbuf, (MPI_Count)count, datatype, op);
}

int papcoll_resolve_algorithm_from_handles(papcoll_comm *pc, int64_t count,
                                           const void *datatype_handle, const void *op_handle,
                                           const char **name) {
    READ_HANDLE(MPI_Datatype, datatype, datatype_handle, "papcoll_resolve_algorithm",
                "datatype");
    READ_HANDLE(MPI_Op, op, op_handle, "papcoll_resolve_algorithm", "op");
    return papcoll_resolve_algorithm(pc, count, datatype, op, name);
}

int papcoll_iallreduce_from_handles(papcoll_comm *pc, const void *sendbuf, void *recvbuf,
                                    int64_t count, const void *datatype_handle,
                                    const void *op_handle, void *request_handle) {
    READ_HANDLE(MPI_Datatype, datatype, datatype_handle, "papcoll_iallreduce", "datatype");
    READ_HANDLE(MPI_Op, op, op_handle, "papcoll_iallreduce", "op");
    if (request_handle == NULL)
        return record_error(MPI_ERR_ARG, "papcoll_iallreduce: the address of the request "
                                         "handle is NULL");
    MPI_Request request;
    int code = papcoll_iallreduce_c(pc, sendbuf, recvbuf, (MPI_Count)count, datatype, op,
                                    &request);
    memcpy(request_handle, &request, sizeof request);
    return code;
}

int papcoll_allreduce_init_from_handles(papcoll_comm *pc, const void *sendbuf, void *recvbuf,
                                        int64_t count, const void *datatype_handle,
                                        const void *op_handle, papcoll_persistent **out) {
    READ_HANDLE(MPI_Datatype, datatype, datatype_handle, "papcoll_allreduce_init", "datatype");
    READ_HANDLE(MPI_Op, op, op_handle, "papcoll_allreduce_init", "op");
    return papcoll_allreduce_init(pc, sendbuf, recvbuf, (MPI_Count)count, datatype, op, out);
}

int papcoll_start_from_handle(papcoll_persistent *persistent, void *request_handle) {
    if (request_handle == NULL)
        return record_error(MPI_ERR_ARG, "papcoll_start: the address of the request handle "
                                         "is NULL");
    MPI_Request request;
    int code = papcoll_start(persistent, &request);
    memcpy(request_handle, &request, sizeof request);
    return code;
}

int papcoll_wait_from_handle(void *request_handle) {
    READ_HANDLE(MPI_Request, request, request_handle, "papcoll_wait", "request");
    int code = papcoll_wait(&request, MPI_STATUS_IGNORE);
    memcpy(request_handle, &request, sizeof request);
    return code;
}

int papcoll_test_from_handle(void *request_handle, int *flag) {
    READ_HANDLE(MPI_Request, request, request_handle, "papcoll_test", "request");
    int code = papcoll_test(&request, flag, MPI_STATUS_IGNORE);
    memcpy(request_handle, &request, sizeof request);
    return code;
}

const void *papcoll_in_place(void) { return MPI_IN_PLACE; }

int papcoll_mpi_library_version(char *text, int size) {
    if (text == NULL || size <= 0)
        return record_error(MPI_ERR_ARG, "papcoll_mpi_library_version: no room for the text");
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    int code = MPI_Get_library_version(version, &length);
    if (code != MPI_SUCCESS) return record_error(code, "MPI_Get_library_version failed");
    version[length < (int)sizeof version ? length : (int)sizeof version - 1] = '\0';
    snprintf(text, (size_t)size, "%s", version);
    return MPI_SUCCESS;
}
