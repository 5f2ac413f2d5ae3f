/* cwork doctor: the namespace doctor (PROTOCOL §25, cwork_client_doctor). */
#include "cli.h"
#include "cmd_admin.h"
#include "opt.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Exit statuses of cwork doctor: 1 is "findings" here, as for fsck, so a failure has a
 * code of its own. */
enum { DOCTOR_CLEAN = 0, DOCTOR_FINDINGS = 1, DOCTOR_FAILED = 6 };

static const char intro[] =
    "Usage: cwork doctor [--redis URL] [--ns NS] [--repair] [--json] [--shard N]\n"
    "\n"
    "Checks every key of the namespace against PROTOCOL, like fsck: the type of each\n"
    "key; lock counters against lock_info against the pools' in-progress lists;\n"
    "in-progress lists of pools with no heartbeat (jobs no reaper gives back);\n"
    "unique guards whose job is gone; queues missing from known_jobs; scheduled\n"
    "periodic instances of specs no pool schedules any more; heartbeats from the\n"
    "future; dead, retry and scheduled members that are no job JSON; rate limits that\n"
    "do not parse; tracked batches whose counts do not add up. Each finding is printed\n"
    "with its key and what --repair does about it. A sharded namespace (cwork shards) is\n"
    "checked shard by shard, each shard's findings under its name; --shard N checks one.\n";

static const char outro[] =
    "Exit status: 0 clean, 1 findings (with --repair: every finding repaired or gone),\n"
    "2 bad command line, 6 Redis failed or a repair failed.\n";

typedef struct doctor_opts {
    cli_conn_opts conn;
    int repair, json;
    long shard; /* --shard N; -1: every shard */
} doctor_opts;

static const cli_opt doctor_options[] = {
    {"repair", NULL, CLI_ARG_NONE, NULL,
     "repair each finding, one script call each that checks again first;\n"
     "no job is deleted: jobs go back to their queue or to a\n"
     "<ns>:cwork:quarantine:... key (README \"cwork doctor\")",
     cli_set_flag, offsetof(doctor_opts, repair), 0, NULL, 0},
    {"json", NULL, CLI_ARG_NONE, NULL,
     "print {\"clean\":B,\"findings\":[{\"kind\":K,\"key\":K,\"member\":M,\n"
     "\"problem\":P,\"action\":A,\"repaired\":B,\"repair_error\":E}]}",
     cli_set_flag, offsetof(doctor_opts, json), 0, NULL, 0},
    CLI_SHARD_OPT(doctor_opts, shard),
    CLI_CONN_OPTS(doctor_opts, conn),
    CLI_HELP_OPT,
    CLI_OPT_END};

const cli_command cli_doctor_command = {
    .name = "doctor",
    .intro = intro,
    .outro = outro,
    .opts = doctor_options,
    .seen_field = CLI_NO_SEEN,
};

/* 0 to go on, 1 when --help was printed, -1 on a bad command line (reported). */
static int parse(int argc, char **argv, doctor_opts *o)
{
    memset(o, 0, sizeof *o);
    o->conn.ns = "work";
    o->shard = -1;
    int p = cli_parse(&cli_doctor_command, "cwork doctor", argc, argv, 2, o, NULL);
    if (p != 0) return p;
    cwork_go_flavor flavor;
    return cli_go_flavor(&o->conn, &flavor);
}

static void json_or_null(const char *s, size_t len)
{
    if (s)
        admin_json_string(s, len);
    else
        fputs("null", stdout);
}

/* The findings of each shard checked (one part when the namespace is not sharded or
 * --shard chose one; sharded then false). */
typedef struct part {
    cwork_doctor_finding *f;
    size_t n;
} part;

typedef struct findings {
    part *parts;
    unsigned count;
    bool sharded;
} findings;

static size_t total_of(const findings *all)
{
    size_t n = 0;
    for (unsigned s = 0; s < all->count; s++)
        n += all->parts[s].n;
    return n;
}

static void print_json(const findings *all)
{
    printf("{\"clean\":%s,\"findings\":[", total_of(all) ? "false" : "true");
    const char *sep = "";
    for (unsigned s = 0; s < all->count; s++)
        for (size_t i = 0; i < all->parts[s].n; i++) {
            const cwork_doctor_finding *f = &all->parts[s].f[i];
            printf("%s{", sep);
            sep = ",";
            if (all->sharded) printf("\"shard\":%u,", s);
            printf("\"kind\":\"%s\",\"key\":", cwork_doctor_kind_name(f->kind));
            admin_json_string(f->key, strlen(f->key));
            fputs(",\"member\":", stdout);
            json_or_null(f->member, f->member_len);
            fputs(",\"problem\":", stdout);
            admin_json_string(f->problem, strlen(f->problem));
            fputs(",\"action\":", stdout);
            json_or_null(f->action, f->action ? strlen(f->action) : 0);
            printf(",\"repaired\":%s,\"repair_error\":", f->repaired ? "true" : "false");
            json_or_null(f->repair_error, f->repair_error ? strlen(f->repair_error) : 0);
            fputs("}", stdout);
        }
    fputs("]}\n", stdout);
}

/* A key as text: bytes outside printable ASCII as \xNN (a guard key ends in a newline). */
static void print_key(const char *key)
{
    for (const unsigned char *p = (const unsigned char *)key; *p; p++)
        if (*p >= 0x20 && *p < 0x7f && *p != '\\')
            putchar(*p);
        else
            printf("\\x%02x", *p);
}

static void print_finding(const cwork_doctor_finding *f, int repair)
{
    printf("%s  ", cwork_doctor_kind_name(f->kind));
    print_key(f->key);
    printf("\n  problem: %s\n", f->problem);
    if (!f->action)
        printf("  no repair\n");
    else if (f->repair_error)
        printf("  repair FAILED (%s): %s\n", f->action, f->repair_error);
    else if (f->repaired)
        printf("  repaired: %s\n", f->action);
    else if (repair)
        printf("  nothing to do any more (it changed since): %s\n", f->action);
    else
        printf("  --repair would %s\n", f->action);
}

static void print_text(const findings *all, const char *ns, int repair)
{
    size_t n = total_of(all);
    for (unsigned s = 0; all->sharded && s < all->count; s++) { /* shard by shard */
        char name[160];
        cli_shard_ns(ns, s, name, sizeof name);
        if (all->parts[s].n == 0) {
            printf("Shard %u (%s): clean.\n", s, name);
            continue;
        }
        printf("Shard %u (%s): %zu finding(s)\n", s, name, all->parts[s].n);
        for (size_t i = 0; i < all->parts[s].n; i++)
            print_finding(&all->parts[s].f[i], repair);
    }
    if (n == 0) {
        printf("Clean: every key of the namespace%s is as PROTOCOL describes it.\n",
               all->sharded ? "'s shards" : "");
        return;
    }
    for (size_t i = 0; !all->sharded && i < all->parts[0].n; i++)
        print_finding(&all->parts[0].f[i], repair);
    printf("%zu finding(s)%s.\n", n, repair ? "" : "; cwork doctor --repair repairs them");
}

/* Runs the doctor on each shard in turn (its own view), each reported apart. */
static int run(cwork_client *client, const doctor_opts *o, findings *all, cwork_error *err)
{
    unsigned flags = o->repair ? CWORK_DOCTOR_REPAIR : 0, count = 1;
    /* a record that cannot be read (damaged): the namespace as given, where the doctor
     * names it */
    if (o->shard < 0 && cwork_client_shards(client, &count, NULL) != 0) count = 1;
    all->sharded = o->shard < 0 && count > 1;
    all->parts = calloc(count, sizeof *all->parts);
    if (!all->parts) {
        snprintf(err->message, sizeof err->message, "out of memory");
        return CWORK_ENOMEM;
    }
    all->count = count;
    int rc = 0;
    for (unsigned s = 0; s < count && rc == 0; s++) {
        cwork_client *view = all->sharded ? cwork_client_shard(client, s, err)
                                          : cli_shard_view(client, o->shard, err);
        rc = view ? cwork_client_doctor(view, flags, &all->parts[s].f, &all->parts[s].n, err)
                  : err->code;
    }
    return rc;
}

int cmd_doctor(int argc, char **argv)
{
    doctor_opts o;
    int p = parse(argc, argv, &o);
    if (p != 0) return p > 0 ? CLI_OK : CLI_USAGE;
    int status = 0;
    cwork_redis *redis = cli_connect(&o.conn, &status);
    if (!redis) return status == CLI_USAGE ? CLI_USAGE : DOCTOR_FAILED;
    cwork_error err = {0};
    cwork_client *client = cwork_client_new(redis, o.conn.ns, &err);
    findings all = {NULL, 0, false};
    int rc = client ? run(client, &o, &all, &err) : err.code;
    if (rc) {
        fprintf(stderr, "cwork doctor: %s\n", err.message[0] ? err.message : cwork_strerror(rc));
        status = rc == CWORK_EINVAL ? CLI_USAGE : DOCTOR_FAILED;
    } else {
        if (o.json)
            print_json(&all);
        else
            print_text(&all, o.conn.ns, o.repair);
        status = total_of(&all) ? DOCTOR_FINDINGS : DOCTOR_CLEAN;
        for (unsigned s = 0; s < all.count; s++)
            for (size_t i = 0; i < all.parts[s].n; i++)
                if (o.repair && all.parts[s].f[i].repair_error) status = DOCTOR_FAILED;
    }
    for (unsigned s = 0; s < all.count; s++)
        cwork_doctor_findings_free(all.parts[s].f, all.parts[s].n);
    free(all.parts);
    cwork_client_free(client);
    cwork_redis_free(redis);
    if (fflush(stdout) != 0) return DOCTOR_FAILED;
    return status;
}
