/* json.c - the JSON strings of json.h. */
#include "json.h"

void json_write_string(FILE *out, const char *text) {
    fputc('"', out);
    for (; *text; text++) {
        if (*text == '"' || *text == '\\') fputc('\\', out);
        if (*text == '\n') fputs("\\n", out);
        else if ((unsigned char)*text >= 0x20) fputc(*text, out);
    }
    fputc('"', out);
}
