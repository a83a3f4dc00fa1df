/* rules_file.c - reads a rules file (rules.h; the format in docs/rules.md) with a small
 * strict JSON parser of its own: papcoll links no JSON library, and the format is a few
 * keys deep. Strict, because a file that says something papcoll would not do is worse than
 * none: an unknown key (a typo such as "byte") is an error, not a condition left out, and
 * every fault names the line it is on. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agreement.h"
#include "errors.h"
#include "operations.h"
#include "rules.h"

/* A rules file is a few rules per shape a program uses; anything near these is a mistake. */
enum { RULES_FILE_MOST_BYTES = 1 << 20, RULES_MOST = 4096 };
/* ranks and bytes as exact whole numbers in a double (JSON's numbers) */
#define RULES_LARGEST_COUNT 4503599627370496.0 /* 2^52 */

typedef struct parser {
    const char *text;
    size_t length, at;
    int line;
    const rules_set *rules;
    const char *caller;
} parser;

/* Records the fault at the parser's line; returns MPI_ERR_ARG. */
__attribute__((format(printf, 2, 3))) static int fault(const parser *p, const char *format, ...) {
    char message[400];
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(message, sizeof message, format, arguments);
    va_end(arguments);
    return rules_fault(p->rules, p->line, p->caller, "%s", message);
}

static void skip_space(parser *p) {
    for (; p->at < p->length; p->at++) {
        char c = p->text[p->at];
        if (c == '\n') p->line++;
        else if (c != ' ' && c != '\t' && c != '\r') return;
    }
}

/* The next character after white space, without taking it; '\0' at the end. */
static char peek(parser *p) {
    skip_space(p);
    return p->at < p->length ? p->text[p->at] : '\0';
}

static int expect(parser *p, char wanted, const char *where) {
    char found = peek(p);
    if (found == wanted) {
        p->at++;
        return MPI_SUCCESS;
    }
    if (found == '\0') return fault(p, "the file ends where '%c' %s was expected", wanted, where);
    return fault(p, "'%c' found where '%c' %s was expected", found, wanted, where);
}

static int parse_string(parser *p, char *out, size_t size, const char *what) {
    int code = expect(p, '"', what);
    if (code != MPI_SUCCESS) return code;
    size_t used = 0;
    while (p->at < p->length && p->text[p->at] != '"') {
        char c = p->text[p->at++];
        if ((unsigned char)c < 0x20) return fault(p, "%s: a control character in a string", what);
        if (c == '\\') {
            char escaped = p->at < p->length ? p->text[p->at++] : '\0';
            const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
            const char *found = escaped ? strchr(from, escaped) : NULL;
            if (found == NULL)
                return fault(p, "%s: the escape '\\%c' is not accepted (\\u escapes neither: "
                             "write the character)", what, escaped ? escaped : ' ');
            c = to[found - from];
        }
        if (used + 1 >= size)
            return fault(p, "%s: a string longer than %zu characters", what, size - 1);
        out[used++] = c;
    }
    if (p->at >= p->length) return fault(p, "%s: a string is not closed", what);
    p->at++;
    out[used] = '\0';
    return MPI_SUCCESS;
}

/* A JSON number (strict grammar: no '+', no leading zeros, no hexadecimal). */
static int parse_number(parser *p, double *value, const char *what) {
    skip_space(p);
    size_t start = p->at, at = p->at;
    const char *t = p->text;
    if (at < p->length && t[at] == '-') at++;
    size_t digits = at;
    while (at < p->length && t[at] >= '0' && t[at] <= '9') at++;
    int valid = at > digits && !(t[digits] == '0' && at - digits > 1);
    if (valid && at < p->length && t[at] == '.') {
        size_t fraction = ++at;
        while (at < p->length && t[at] >= '0' && t[at] <= '9') at++;
        valid = at > fraction;
    }
    if (valid && at < p->length && (t[at] == 'e' || t[at] == 'E')) {
        at++;
        if (at < p->length && (t[at] == '+' || t[at] == '-')) at++;
        size_t exponent = at;
        while (at < p->length && t[at] >= '0' && t[at] <= '9') at++;
        valid = at > exponent;
    }
    if (!valid) return fault(p, "%s must be a number", what);
    char copy[64];
    if (at - start >= sizeof copy) return fault(p, "%s: a number too long to read", what);
    memcpy(copy, t + start, at - start);
    copy[at - start] = '\0';
    errno = 0;
    *value = strtod(copy, NULL);
    if (errno == ERANGE || !isfinite(*value)) return fault(p, "%s: %s is out of range", what, copy);
    p->at = at;
    return MPI_SUCCESS;
}

/* Takes the literal word (true, false, null) if it is next; 1 where it was. */
static int take_word(parser *p, const char *word) {
    size_t length = strlen(word);
    if (peek(p) != word[0] || p->length - p->at < length ||
        memcmp(p->text + p->at, word, length) != 0)
        return 0;
    p->at += length;
    return 1;
}

/* A whole number of at least least (ranks, bytes). */
static int parse_count(parser *p, int64_t least, int64_t *value, const char *what) {
    double number;
    int code = parse_number(p, &number, what);
    if (code != MPI_SUCCESS) return code;
    if (number != floor(number) || number < (double)least || number > RULES_LARGEST_COUNT)
        return fault(p, "%s: %g is not a whole number from %lld to 2^52", what, number,
                     (long long)least);
    *value = (int64_t)number;
    return MPI_SUCCESS;
}

/* "ranks" and "bytes": N (exactly N), or [LOW, HIGH] (LOW included, HIGH excluded; null:
 * no upper bound). */
static int parse_count_range(parser *p, int64_t least, rules_count_range *range,
                             const char *what) {
    int code;
    if (peek(p) != '[') {
        if ((code = parse_count(p, least, &range->low, what)) != MPI_SUCCESS) return code;
        range->high = range->low + 1;
        return MPI_SUCCESS;
    }
    p->at++;
    if ((code = parse_count(p, least, &range->low, what)) != MPI_SUCCESS ||
        (code = expect(p, ',', "between a range's bounds")) != MPI_SUCCESS)
        return code;
    range->high = INT64_MAX;
    if (!take_word(p, "null") &&
        (code = parse_count(p, least, &range->high, what)) != MPI_SUCCESS)
        return code;
    if ((code = expect(p, ']', "closing a range")) != MPI_SUCCESS) return code;
    if (range->high <= range->low)
        return fault(p, "%s: the range [%lld, %lld] is empty (the lower bound is included, "
                     "the upper excluded: it must exceed the lower)", what,
                     (long long)range->low, (long long)range->high);
    return MPI_SUCCESS;
}

/* "lateness_seconds": [LOW, HIGH] in seconds, HIGH excluded or null. */
static int parse_lateness(parser *p, rule *r) {
    const char *what = "\"lateness_seconds\"";
    int code = expect(p, '[', "opening \"lateness_seconds\" ([low, high])");
    if (code == MPI_SUCCESS) code = parse_number(p, &r->lateness_low, what);
    if (code == MPI_SUCCESS) code = expect(p, ',', "between a range's bounds");
    if (code != MPI_SUCCESS) return code;
    r->lateness_high = INFINITY;
    if (!take_word(p, "null") &&
        (code = parse_number(p, &r->lateness_high, what)) != MPI_SUCCESS)
        return code;
    if ((code = expect(p, ']', "closing a range")) != MPI_SUCCESS) return code;
    if (r->lateness_low < 0)
        return fault(p, "%s: the lower bound %g is negative (a lateness is >= 0)", what,
                     r->lateness_low);
    if (r->lateness_high <= r->lateness_low)
        return fault(p, "%s: the range [%g, %g] is empty (the lower bound is included, the "
                     "upper excluded: it must exceed the lower)", what, r->lateness_low,
                     r->lateness_high);
    return MPI_SUCCESS;
}

/* "algorithm": auto, native, native:NAME (bound to the communicator's variants later) or a
 * registered all-reduce. */
static int parse_algorithm(parser *p, rule *r) {
    int code = parse_string(p, r->algorithm, sizeof r->algorithm, "\"algorithm\"");
    if (code != MPI_SUCCESS) return code;
    if (strcmp(r->algorithm, "auto") == 0) r->target = RULES_TARGET_AUTO;
    else if (strcmp(r->algorithm, "native") == 0 || strncmp(r->algorithm, "native:", 7) == 0)
        r->target = RULES_TARGET_NATIVE;
    else if ((r->entry = registry_find(r->algorithm)) != NULL) r->target = RULES_TARGET_PAPCOLL;
    else
        return fault(p, "unknown algorithm '%s' (use auto, native, native:NAME or a name "
                     "from `papcoll algorithms`)", r->algorithm);
    if (r->entry != NULL && r->entry->info.reduce_scatter)
        return fault(p, "algorithm '%s' is a reduce-scatter, not an all-reduce", r->algorithm);
    return MPI_SUCCESS;
}

static int parse_op(parser *p, rule *r) {
    char name[32];
    int code = parse_string(p, name, sizeof name, "\"op\"");
    if (code != MPI_SUCCESS) return code;
    if (strcmp(name, "user") == 0) {
        r->op = RULES_OP_USER;
        return MPI_SUCCESS;
    }
    for (int index = 0;; index++) {
        const char *known = predefined_op_name(index);
        if (strncmp(known, "MPI_", 4) != 0) break; /* past the predefined ops */
        if (strcmp(known, name) == 0) {
            r->op = index;
            return MPI_SUCCESS;
        }
    }
    return fault(p, "\"op\": '%s' is neither a predefined op (MPI_SUM, MPI_MAX, ...) nor "
                 "\"user\"", name);
}

/* One of the names name(first) .. name(last) (the arrival classes, the call kinds) into
 * *chosen. */
static int parse_name(parser *p, const char *key, const char *(*name)(int), int first,
                      int last, int *chosen) {
    char text[32], known[160] = "";
    int code = parse_string(p, text, sizeof text, key);
    if (code != MPI_SUCCESS) return code;
    size_t used = 0;
    for (int k = first; k <= last; k++) {
        if (strcmp(name(k), text) == 0) {
            *chosen = k;
            return MPI_SUCCESS;
        }
        used += (size_t)snprintf(known + used, sizeof known - used, "%s%s",
                                 k > first ? ", " : "", name(k));
    }
    return fault(p, "%s: '%s' is not one of %s", key, text, known);
}

static int parse_rule(parser *p, rule *r) {
    memset(r, 0, sizeof *r);
    r->op = RULES_OP_ANY;
    r->commutative = RULES_COMMUTATIVE_ANY;
    r->native_variant = -1;
    int code = expect(p, '{', "opening a rule");
    if (code != MPI_SUCCESS) return code;
    r->line = p->line;
    unsigned seen = 0;
    static const char *const keys[] = {"ranks", "bytes", "datatype", "op", "commutative",
                                       "arrival", "lateness_seconds", "algorithm", "call", "comment"};
    enum { KEY_COUNT = sizeof keys / sizeof keys[0] };
    for (int first = 1; peek(p) != '}'; first = 0) {
        if (!first && (code = expect(p, ',', "between a rule's keys")) != MPI_SUCCESS)
            return code;
        char key[32];
        if ((code = parse_string(p, key, sizeof key, "a rule's key")) != MPI_SUCCESS ||
            (code = expect(p, ':', "after a key")) != MPI_SUCCESS)
            return code;
        int k = 0;
        while (k < KEY_COUNT && strcmp(keys[k], key) != 0) k++;
        if (k == KEY_COUNT)
            return fault(p, "unknown key \"%s\" in a rule (known: ranks, bytes, datatype, op, "
                         "commutative, arrival, lateness_seconds, algorithm, call, comment)", key);
        if (seen & (1u << k)) return fault(p, "the key \"%s\" appears twice in a rule", key);
        seen |= 1u << k;
        char comment[256], spelled[MPI_MAX_OBJECT_NAME];
        int chosen = 0;
        switch (k) {
        case 0: r->has_ranks = 1; code = parse_count_range(p, 1, &r->ranks, "\"ranks\""); break;
        case 1: r->has_bytes = 1; code = parse_count_range(p, 0, &r->bytes, "\"bytes\""); break;
        case 2:
            code = parse_string(p, spelled, sizeof spelled, "\"datatype\"");
            if (code == MPI_SUCCESS && !rules_datatype_canonical(spelled, r->datatype))
                code = fault(p, "\"datatype\": '%s' is not a predefined MPI datatype's name "
                             "(MPI_FLOAT, MPI_DOUBLE, MPI_INT, ...)", spelled);
            break;
        case 3: code = parse_op(p, r); break;
        case 4:
            if (take_word(p, "true")) r->commutative = 1;
            else if (take_word(p, "false")) r->commutative = 0;
            else code = fault(p, "\"commutative\" must be true or false");
            break;
        case 5:
            code = parse_name(p, "\"arrival\"", rules_arrival_name, RULES_ARRIVAL_UNPREDICTED,
                              RULES_ARRIVAL_SEVERAL_LATE, &chosen);
            r->arrival = (rules_arrival)chosen;
            break;
        case 6: r->has_lateness = 1; code = parse_lateness(p, r); break;
        case 7: code = parse_algorithm(p, r); break;
        case 8:
            code = parse_name(p, "\"call\"", rules_kind_name, RULES_KIND_BLOCKING,
                              RULES_KIND_PERSISTENT, &chosen);
            r->kind = (rules_kind)chosen;
            break;
        default: code = parse_string(p, comment, sizeof comment, "\"comment\""); break;
        }
        if (code != MPI_SUCCESS) return code;
    }
    p->at++; /* the '}' */
    if (!(seen & (1u << 7))) {
        int closing = p->line;
        p->line = r->line;
        code = fault(p, "the rule has no \"algorithm\" (its closing brace is on line %d)",
                     closing);
        return code;
    }
    return MPI_SUCCESS;
}

static int parse_rules(parser *p, rules_set *rules) {
    int code = expect(p, '[', "opening \"rules\" (a list of rules)");
    int capacity = 0;
    for (int first = 1; code == MPI_SUCCESS && peek(p) != ']'; first = 0) {
        if (!first && (code = expect(p, ',', "between rules")) != MPI_SUCCESS) return code;
        if (rules->count == RULES_MOST) return fault(p, "more than %d rules", RULES_MOST);
        if (rules->count == capacity) {
            capacity = capacity ? 2 * capacity : 16;
            rule *grown = realloc(rules->rules, (size_t)capacity * sizeof *grown);
            if (grown == NULL) return record_error(MPI_ERR_NO_MEM, "%s: out of memory", p->caller);
            rules->rules = grown;
        }
        code = parse_rule(p, &rules->rules[rules->count]);
        if (code == MPI_SUCCESS) rules->count++;
    }
    if (code == MPI_SUCCESS) p->at++; /* the ']' */
    return code;
}

/* {"papcoll_rules": 1, "rules": [...]}: both keys, nothing else, nothing after. */
static int parse_file(parser *p, rules_set *rules) {
    int code = expect(p, '{', "opening the file (an object with \"papcoll_rules\": 1 and "
                              "\"rules\")");
    int version_seen = 0, rules_seen = 0;
    for (int first = 1; code == MPI_SUCCESS && peek(p) != '}'; first = 0) {
        char key[32];
        if ((!first && (code = expect(p, ',', "between keys")) != MPI_SUCCESS) ||
            (code = parse_string(p, key, sizeof key, "a key")) != MPI_SUCCESS ||
            (code = expect(p, ':', "after a key")) != MPI_SUCCESS)
            return code;
        if (strcmp(key, "papcoll_rules") == 0 && !version_seen) {
            double version;
            version_seen = 1;
            if ((code = parse_number(p, &version, "\"papcoll_rules\"")) == MPI_SUCCESS &&
                version != 1)
                code = fault(p, "\"papcoll_rules\" is %g; this papcoll reads version 1", version);
        } else if (strcmp(key, "rules") == 0 && !rules_seen) {
            rules_seen = 1;
            code = parse_rules(p, rules);
        } else {
            code = fault(p, "the key \"%s\" is %s at the top (which has \"papcoll_rules\": 1 "
                         "and \"rules\")", key,
                         strcmp(key, "rules") && strcmp(key, "papcoll_rules") ? "unknown"
                                                                              : "repeated");
        }
    }
    if (code != MPI_SUCCESS) return code;
    p->at++;
    if (!version_seen || !rules_seen)
        return fault(p, "the file has no \"%s\"", version_seen ? "rules" : "papcoll_rules");
    if (peek(p) != '\0') return fault(p, "text after the file's closing brace");
    return MPI_SUCCESS;
}

/* The file's bytes, at most RULES_FILE_MOST_BYTES, into a new buffer (*text, freed by the
 * caller). */
static int read_whole(const rules_set *rules, const char *caller, char **text, size_t *length) {
    FILE *file = fopen(rules->path, "rb");
    if (file == NULL)
        return record_error(MPI_ERR_FILE, "%s: rules file '%s' cannot be read: %s", caller,
                            rules->path, strerror(errno));
    *text = malloc(RULES_FILE_MOST_BYTES + 1);
    if (*text == NULL) {
        fclose(file);
        return record_error(MPI_ERR_NO_MEM, "%s: out of memory", caller);
    }
    *length = fread(*text, 1, RULES_FILE_MOST_BYTES + 1, file);
    int failed = ferror(file);
    fclose(file);
    if (failed)
        return record_error(MPI_ERR_FILE, "%s: rules file '%s' cannot be read", caller,
                            rules->path);
    if (*length > RULES_FILE_MOST_BYTES)
        return record_error(MPI_ERR_ARG, "%s: rules file '%s' is larger than %d bytes; a "
                            "rules file holds a few rules per call shape", caller, rules->path,
                            RULES_FILE_MOST_BYTES);
    return MPI_SUCCESS;
}

int rules_load(rules_set *rules, const char *path, const char *caller) {
    memset(rules, 0, sizeof *rules);
    if (path == NULL || path[0] == '\0') return MPI_SUCCESS;
    if (strlen(path) >= sizeof rules->path)
        return record_error(MPI_ERR_ARG, "%s: the rules file's path has %zu characters; at "
                            "most %zu are accepted", caller, strlen(path),
                            sizeof rules->path - 1);
    snprintf(rules->path, sizeof rules->path, "%s", path);
    char *text = NULL;
    size_t length = 0;
    int code = read_whole(rules, caller, &text, &length);
    if (code == MPI_SUCCESS) {
        parser p = {text, length, 0, 1, rules, caller};
        rules->digest = agreement_bytes_digest(text, length);
        code = parse_file(&p, rules);
    }
    free(text);
    if (code == MPI_SUCCESS) code = rules_check(rules, caller);
    if (code != MPI_SUCCESS) rules_release(rules);
    return code;
}

void rules_release(rules_set *rules) {
    free(rules->rules);
    rules->rules = NULL;
    rules->count = 0;
}
