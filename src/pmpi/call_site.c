/* call_site.c - see call_site.h. */
#define _GNU_SOURCE /* dladdr */
#include "call_site.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

void call_site_name(const void *address, char *text, size_t size) {
    Dl_info info;
    memset(&info, 0, sizeof info);
    if (dladdr(address, &info) == 0 || info.dli_fname == NULL) {
        snprintf(text, size, "unknown object+%p", address);
        return;
    }
    const char *slash = strrchr(info.dli_fname, '/');
    const char *object = slash ? slash + 1 : info.dli_fname;
    if (object[0] == '\0') object = "program";
    uintptr_t offset = (uintptr_t)address - (uintptr_t)info.dli_fbase;
    if (info.dli_sname != NULL)
        snprintf(text, size, "%s+0x%lx (%s)", object, (unsigned long)offset, info.dli_sname);
    else
        snprintf(text, size, "%s+0x%lx", object, (unsigned long)offset);
}
