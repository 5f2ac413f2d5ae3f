/* cwork doctor: the namespace doctor (PROTOCOL §25, cwork_client_doctor). */
#include "cli.h"
#include "cmd_admin.h"
#include "opt.h"

#include <string.h>

/* Exit statuses of cwork doctor: 1 is "findings" here, as for fsck, so a failure has a
 * code of its own. */
enum { DOCTOR_CLEAN = 0, DOCTOR_FINDINGS = 1, DOCTOR_FAILED = 6 };

static const char intro[] =
    "Usage: cwork doctor [--redis URL] [--ns NS] [--repair] [--json]\n"
    "\n"
    "Checks every key of the namespace against PROTOCOL, like fsck: the type of each\n"
    "key; lock counters against lock_info against the pools' in-progress lists;\n"
    "in-progress lists of pools with no heartbeat (jobs no reaper gives back);\n"
    "unique guards whose job is gone; queues missing from known_jobs; scheduled\n"
    "periodic instances of specs no pool schedules any more; heartbeats from the\n"
    "future; dead, retry and scheduled members that are no job JSON; rate limits that\n"
    "do not parse; tracked batches whose counts do not add up. Each finding is printed\n"
    "with its key and what --repair does about it.\n";

static const char outro[] =
    "Exit status: 0 clean, 1 findings (with --repair: every finding repaired or gone),\n"
    "2 bad command line, 6 Redis failed or a repair failed.\n";

typedef struct doctor_opts {
    cli_conn_opts conn;
    int repair, json;
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

static void print_json(const cwork_doctor_finding *f, size_t n)
{
    printf("{\"clean\":%s,\"findings\":[", n ? "false" : "true");
    for (size_t i = 0; i < n; i++) {
        printf("%s{\"kind\":\"%s\",\"key\":", i ? "," : "", cwork_doctor_kind_name(f[i].kind));
        admin_json_string(f[i].key, strlen(f[i].key));
        fputs(",\"member\":", stdout);
        json_or_null(f[i].member, f[i].member_len);
        fputs(",\"problem\":", stdout);
        admin_json_string(f[i].problem, strlen(f[i].problem));
        fputs(",\"action\":", stdout);
        json_or_null(f[i].action, f[i].action ? strlen(f[i].action) : 0);
        printf(",\"repaired\":%s,\"repair_error\":", f[i].repaired ? "true" : "false");
        json_or_null(f[i].repair_error, f[i].repair_error ? strlen(f[i].repair_error) : 0);
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

static void print_text(const cwork_doctor_finding *f, size_t n, int repair)
{
    if (n == 0) {
        printf("Clean: every key of the namespace is as PROTOCOL describes it.\n");
        return;
    }
    for (size_t i = 0; i < n; i++) {
        printf("%s  ", cwork_doctor_kind_name(f[i].kind));
        print_key(f[i].key);
        printf("\n  problem: %s\n", f[i].problem);
        if (!f[i].action)
            printf("  no repair\n");
        else if (f[i].repair_error)
            printf("  repair FAILED (%s): %s\n", f[i].action, f[i].repair_error);
        else if (f[i].repaired)
            printf("  repaired: %s\n", f[i].action);
        else if (repair)
            printf("  nothing to do any more (it changed since): %s\n", f[i].action);
        else
            printf("  --repair would %s\n", f[i].action);
    }
    printf("%zu finding(s)%s.\n", n, repair ? "" : "; cwork doctor --repair repairs them");
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
    cwork_doctor_finding *f = NULL;
    size_t n = 0;
    int rc = client ? cwork_client_doctor(client, o.repair ? CWORK_DOCTOR_REPAIR : 0, &f, &n, &err)
                    : err.code;
    if (rc) {
        fprintf(stderr, "cwork doctor: %s\n", err.message);
        status = rc == CWORK_EINVAL ? CLI_USAGE : DOCTOR_FAILED;
    } else {
        if (o.json)
            print_json(f, n);
        else
            print_text(f, n, o.repair);
        status = n ? DOCTOR_FINDINGS : DOCTOR_CLEAN;
        for (size_t i = 0; i < n; i++)
            if (o.repair && f[i].repair_error) status = DOCTOR_FAILED;
    }
    cwork_doctor_findings_free(f, n);
    cwork_client_free(client);
    cwork_redis_free(redis);
    if (fflush(stdout) != 0) return DOCTOR_FAILED;
    return status;
}
