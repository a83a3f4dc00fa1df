/* call_site.h - names the place in a program that called MPI_Allreduce (call_site.c), so the
 * report can say which all-reduce of the program it is about. */
#ifndef PAPCOLL_PMPI_CALL_SITE_H
#define PAPCOLL_PMPI_CALL_SITE_H

#include <stddef.h>

/* Writes "object+0xOFFSET (function)" for a return address: the file it lies in (base name)
 * and the offset from that file's load address, which is the same in every process running
 * the same binary whatever address-space randomisation did, so ranks' records of one site
 * merge; the function where the dynamic symbol table knows it. */
void call_site_name(const void *address, char *text, size_t size);

#endif /* PAPCOLL_PMPI_CALL_SITE_H */
