/* rules.h - a rules file: the user's choices of algorithm per call shape, consulted by auto
 * before its cost model (docs/rules.md), as MPICH's selection JSON
 * (MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE) and Open MPI's tuned rules file
 * (coll_tuned_dynamic_rules_filename) let a user overrule their libraries' choices.
 *
 *   {"papcoll_rules": 1, "rules": [
 *     {"ranks": [2, 64], "bytes": [0, 65536], "datatype": "MPI_FLOAT", "op": "MPI_SUM",
 *      "arrival": "one_late", "lateness_seconds": [0.001, null], "algorithm": "straggler"},
 *     {"bytes": [65536, null], "call": "blocking", "algorithm": "native:ring"}]}
 *
 * Every condition is optional; the first rule whose conditions all hold decides. A file is
 * read (rules_file.c), checked as a whole (rules_checks.c: no rule hidden by an earlier one,
 * every algorithm able to run every call its rule matches) and bound to the communicator's
 * native variants when the communicator is made; rules.c matches calls against it. */
#ifndef PAPCOLL_MPI_RULES_H
#define PAPCOLL_MPI_RULES_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "choose.h"
#include "native_variants.h"

/* The arrival classes a rule may name, from the call's arrival classes (arrival_class.h). */
typedef enum rules_arrival {
    RULES_ARRIVAL_ANY = 0,     /* the rule names none */
    RULES_ARRIVAL_UNPREDICTED, /* no usable prediction for some rank */
    RULES_ARRIVAL_BALANCED,    /* every rank in class 0 (on time) */
    RULES_ARRIVAL_ONE_LATE,    /* exactly one rank late */
    RULES_ARRIVAL_SEVERAL_LATE /* two or more ranks late */
} rules_arrival;

/* The call kinds a rule may name. */
typedef enum rules_kind {
    RULES_KIND_ANY = 0,        /* the rule names none */
    RULES_KIND_BLOCKING,       /* papcoll_allreduce, MPI_Allreduce */
    RULES_KIND_NONBLOCKING,    /* papcoll_iallreduce, MPI_Iallreduce */
    RULES_KIND_PERSISTENT      /* papcoll_start, MPI_Start of MPI_Allreduce_init's request */
} rules_kind;

/* The op condition: any op, a user-defined one, or a predefined one by its index
 * (operations.h). */
enum { RULES_OP_ANY = -2, RULES_OP_USER = -1 };
/* The commutative condition: any op, or only one that does (1) or does not (0) commute. */
enum { RULES_COMMUTATIVE_ANY = -1 };
/* What a rule names: auto (the model decides), native (MPI_Allreduce itself, or one of the
 * MPI library's algorithms) or one of papcoll's. */
typedef enum rules_target { RULES_TARGET_AUTO, RULES_TARGET_NATIVE, RULES_TARGET_PAPCOLL } rules_target;

/* [low, high): low included, high excluded; high INT64_MAX where the file says null. */
typedef struct rules_count_range {
    int64_t low, high;
} rules_count_range;

typedef struct rule {
    int line;                            /* the line of the rule's '{' in the file */
    int has_ranks, has_bytes, has_lateness;
    rules_count_range ranks, bytes;
    double lateness_low, lateness_high;  /* seconds; high INFINITY where null */
    char datatype[MPI_MAX_OBJECT_NAME];  /* as MPI_Type_get_name gives it; "" for any */
    int op;                              /* RULES_OP_ANY, RULES_OP_USER or an index */
    int commutative;                     /* RULES_COMMUTATIVE_ANY, 0 or 1 */
    rules_arrival arrival;
    rules_kind kind;
    char algorithm[64];                  /* as written: "straggler", "native:ring", ... */
    rules_target target;
    const algorithm_entry *entry;        /* RULES_TARGET_PAPCOLL: the registry's entry */
    int native_variant;                  /* RULES_TARGET_NATIVE: bound at rules_bind */
} rule;

typedef struct rules_set {
    char path[512];                      /* as given, for messages; "" where no file */
    int count;
    rule *rules;
    int64_t digest;                      /* of the file's bytes; 0 where no file */
} rules_set;

/* What a call adds to auto's input (choose.h: choice_input) for the rules: its datatype
 * and op by handle, and its kind (papcoll_resolve_algorithm asks as a blocking call). Only
 * a blocking call may run native as one of the MPI library's algorithms: non-blocking and
 * persistent ones run MPI_Iallreduce, which has no variants to set (native_variants.h). */
typedef struct rules_call {
    MPI_Datatype datatype;
    MPI_Op op;
    rules_kind kind;
} rules_call;

/* Reads and checks the file at path into rules (rules_file.c, rules_checks.c): MPI_SUCCESS,
 * or MPI_ERR_ARG (MPI_ERR_NO_MEM, MPI_ERR_FILE where it cannot be read) recorded with a
 * message naming the file, the line and the fault. caller starts the message. A NULL or
 * empty path gives an empty set, which decides nothing. */
int rules_load(rules_set *rules, const char *path, const char *caller);
/* Resolves each native rule to one of the communicator's native variants; a "native:NAME"
 * that is not one of them is refused (MPI_ERR_ARG, naming the rule and the variants). */
int rules_bind(rules_set *rules, const native_variants *natives, const char *caller);
void rules_release(rules_set *rules);

/* The first rule matching the call (input's shape; arrivals: P predicted arrivals in
 * seconds after the earliest, or NULL; unit: the arrival classes' unit, arrival_class.h)
 * into *out, with "FILE:LINE" in out->report.rule, and *decided = 1; *decided = 0 where
 * none matches or the one that does names auto. A matching rule whose algorithm cannot run
 * this call is an error naming the rule (MPI_ERR_ARG), never a silent fall-back. */
int rules_decide(const rules_set *rules, const rules_call *call, const choice_input *input,
                 const double *arrivals, double unit, auto_choice *out, int *decided);

/* Where a rule chose (choice->rule set) and its algorithm then refused the call (code, an
 * error recorded by its build: a parameter the call's shape does not allow), the error
 * again, naming the rule; code unchanged otherwise. A rule's choice is never swapped for
 * another silently. */
int rules_explain_refusal(const papcoll_choice *choice, int code);

/* The call's arrival as a rule names it, and its largest lateness (0 where unpredicted);
 * unit and jitter as arrival_class.h's. */
rules_arrival rules_arrival_of(const double *arrivals, int32_t ranks, double unit,
                               double jitter, double *lateness);
/* "unpredicted", "balanced", "one_late", "several_late" ("" for RULES_ARRIVAL_ANY). */
const char *rules_arrival_name(int arrival);
/* "blocking", "nonblocking", "persistent" ("" for RULES_KIND_ANY). */
const char *rules_kind_name(int kind);
/* 1 where name is a predefined MPI datatype's ("MPI_FLOAT", "MPI_LONG_LONG", ...), with the
 * name MPI_Type_get_name gives that type in canonical (an alias, such as MPI_LONG_LONG for
 * MPI_LONG_LONG_INT, may be named either way). */
int rules_datatype_canonical(const char *name, char canonical[MPI_MAX_OBJECT_NAME]);

/* Records "CALLER: rules file 'PATH', line LINE: MESSAGE"; returns MPI_ERR_ARG. */
int rules_fault(const rules_set *rules, int line, const char *caller, const char *format, ...)
    __attribute__((format(printf, 4, 5)));

/* rules_checks.c: the file as a whole: no rule that an earlier one hides (the same
 * conditions, or wholly covered), none that can never match, and every algorithm able to
 * run every call its rule matches. */
int rules_check(const rules_set *rules, const char *caller);

#endif /* PAPCOLL_MPI_RULES_H */
