/* message.h - the text of a refusal, written into a buffer the caller owns: every unit that
 * reports an error as a status code plus a message (the builders, the parsers, the checks,
 * the simulator, the MPI side's error record) formats it here, so the rule "NULL or size 0:
 * no text wanted; too long: cut, still terminated" lives in one place. Header-only (static
 * inline) so that the MPI side can use it while the shared libraries export nothing but
 * papcoll_* names. */
#ifndef PAPCOLL_MESSAGE_H
#define PAPCOLL_MESSAGE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* For recorders that are themselves printf-style: formats their argument list. */
static inline void message_vwrite(char *text, size_t size, const char *format,
                                  va_list arguments) {
    if (text != NULL && size > 0) vsnprintf(text, size, format, arguments);
}

/* Formats the message and returns `code`, so a refusal is one statement:
 * `return message_write(error, error_size, PAPCOLL_ERR_ARGUMENT, "...", ...);` */
static inline int message_write(char *text, size_t size, int code, const char *format, ...)
    __attribute__((format(printf, 4, 5)));
static inline int message_write(char *text, size_t size, int code, const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    message_vwrite(text, size, format, arguments);
    va_end(arguments);
    return code;
}

/* Copies a fixed message (a message of another unit, or a literal). */
static inline void copy_message(char *destination, size_t size, const char *message) {
    message_write(destination, size, 0, "%s", message);
}

#endif /* PAPCOLL_MESSAGE_H */
