/* cwork queues, pools, busy, retry, scheduled, dead, pause, unpause, job, queue and cancel:
 * looking into a namespace and repairing it (PROTOCOL §11). This file parses their command lines;
 * cmd_admin_show.c and cmd_admin_change.c do the work, cmd_admin_help.c has the texts. */
#include "cmd_admin.h"
#include "opt.h"
#include "table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const cmd_names[] = {"queues", "pools",   "busy", "retry", "scheduled", "dead",
                                        "pause",  "unpause", "job",  "queue", "cancel"};

/* ---------------------------------------------------------------- helpers */

cwork_job_set admin_set(admin_cmd cmd)
{
    return cmd == ADM_RETRY       ? CWORK_SET_RETRY
           : cmd == ADM_SCHEDULED ? CWORK_SET_SCHEDULED
                                  : CWORK_SET_DEAD;
}

const char *admin_set_title(cwork_job_set set)
{
    return set == CWORK_SET_RETRY ? "retry" : set == CWORK_SET_SCHEDULED ? "scheduled" : "dead";
}

int admin_run(const admin_opts *o, int (*fn)(const admin_opts *o, cwork_client *client))
{
    int status;
    cwork_redis *redis = cli_connect(&o->conn, &status);
    if (!redis) return status;
    cwork_error err = {0};
    cwork_client *client = cwork_client_new(redis, o->conn.ns, &err);
    if (client) cwork_client_set_go_flavor(client, o->flavor);
    /* --shard N: the view of that shard alone (a client the namespace's client owns) */
    cwork_client *view =
        client && (o->seen & OPT_SHARD) ? cwork_client_shard(client, o->shard, &err) : client;
    if (view) {
        cwork_client_damage_clear();
        status = fn(o, view);
        /* a failure already named its damaged key; a view that worked warns of each */
        if (status == CLI_OK) cli_warn_damage(o->label, o->conn.ns);
    } else {
        status = admin_fail(o, err.code ? err.code : CWORK_ENOMEM, &err);
    }
    cwork_client_free(client);
    cwork_redis_free(redis);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "%s: cannot write the output: %s\n", o->label, strerror(errno));
        return CLI_FAILURE;
    }
    return status;
}

int admin_fail(const admin_opts *o, int rc, const cwork_error *err)
{
    const char *msg = err && err->message[0] ? err->message : cwork_strerror(rc);
    char *clean = text_clean(msg, strlen(msg), 0, NULL);
    if (rc == CWORK_ETYPE) /* a damaged key */
        fprintf(stderr, "%s: %s — cwork doctor --ns %s can repair it\n", o->label,
                clean ? clean : cwork_strerror(rc), o->conn.ns);
    else
        fprintf(stderr, "%s: %s\n", o->label, clean ? clean : cwork_strerror(rc));
    free(clean);
    if (rc == CWORK_ENOTFOUND) return CLI_NOT_FOUND;
    return rc == CWORK_EINVAL ? CLI_USAGE : CLI_FAILURE;
}

void admin_json_string(const char *s, size_t len)
{
    putchar('"');
    for (size_t i = 0; i < len;) {
        unsigned char ch = (unsigned char)s[i];
        uint32_t cp;
        size_t n = ch < 0x80 ? 1 : text_utf8_decode(s + i, len - i, &cp);
        if (ch == '"' || ch == '\\') {
            printf("\\%c", ch);
        } else if (ch < 0x20 || ch == 0x7F) {
            printf("\\u%04x", ch);
        } else if (n == 0) {
            fputs("\\ufffd", stdout);
            n = 1;
        } else {
            fwrite(s + i, 1, n, stdout);
        }
        i += n;
    }
    putchar('"');
}

/* ---------------------------------------------------------------- values */

static int parse_int(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || (*s != '-' && (*s < '0' || *s > '9'))) return -1;
    *out = v;
    return 0;
}

/* Unix seconds, or "YYYY-MM-DDTHH:MM:SSZ" as fmt_iso_time writes it. */
static int parse_time(const char *s, int64_t *out)
{
    if (parse_int(s, out) == 0) return 0; /* negative too: a member's odd score */
    static const char shape[] = "dddd-dd-ddTdd:dd:ddZ";
    for (size_t i = 0; i < sizeof shape; i++)
        if (shape[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != shape[i]) return -1;
    struct tm tm = {0}, back;
    int n = 0;
    /* NOLINTNEXTLINE(cert-err34-c): the shape check above leaves only bounded digits */
    if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
               &tm.tm_min, &tm.tm_sec, &n) != 6 ||
        n != 20 || s[n] != '\0')
        return -1;
    int year = tm.tm_year, mon = tm.tm_mon, mday = tm.tm_mday;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    time_t t = timegm(&tm);
    /* timegm normalises 2023-02-31 into March: refuse what does not come back */
    if (t == (time_t)-1 || !gmtime_r(&t, &back) || back.tm_year + 1900 != year ||
        back.tm_mon + 1 != mon || back.tm_mday != mday)
        return -1;
    *out = (int64_t)t;
    return 0;
}

/* ---------------------------------------------------------------- options */

/* The options a command (and its action) takes besides --shard. */
static unsigned allowed_here(const admin_opts *o)
{
    switch (o->action) {
    case ACT_LIST:
        if (o->cmd == ADM_RETRY || o->cmd == ADM_SCHEDULED || o->cmd == ADM_DEAD)
            return OPT_JSON | OPT_PAGE | OPT_NAME | OPT_GREP | OPT_ORDER | OPT_NO_PERIODIC;
        return OPT_JSON;
    case ACT_RETRY:
    case ACT_DELETE:
        if (o->cmd == ADM_QUEUE) return OPT_JSON;
        return OPT_JSON | OPT_AT | (o->cmd == ADM_DEAD ? OPT_ALL | OPT_NAME : 0u);
    case ACT_RUN:
    case ACT_KILL:
        return OPT_JSON | OPT_AT | OPT_ALL | OPT_NAME;
    case ACT_TRIM:
        return OPT_JSON | OPT_OLDER | OPT_KEEP;
    case ACT_CLEAR:
        return OPT_JSON;
    }
    return 0;
}

/* Every admin command's options: its own and --shard. */
static unsigned allowed_options(const admin_opts *o)
{
    return OPT_SHARD | allowed_here(o);
}

static const char *option_name(unsigned bit)
{
    switch (bit) {
    case OPT_JSON:
        return "--json";
    case OPT_PAGE:
        return "--page";
    case OPT_NAME:
        return "--name";
    case OPT_ALL:
        return "--all";
    case OPT_AT:
        return "--at";
    case OPT_OLDER:
        return "--older-than";
    case OPT_GREP:
        return "--grep";
    case OPT_ORDER:
        return "--order";
    case OPT_NO_PERIODIC:
        return "--no-periodic";
    case OPT_SHARD:
        return "--shard";
    default:
        return "--keep";
    }
}

int admin_set_option(void *opts, const char *s, const cli_opt_ctx *ctx)
{
    admin_opts *o = opts;
    unsigned bit = ctx->opt->bit;
    int64_t v;
    if (ctx->opt->arg == CLI_ARG_NONE) return 0; /* a flag: its bit in o->seen says it all */
    switch (bit) {
    case OPT_ORDER:
        if (strcmp(s, "newest") != 0 && strcmp(s, "oldest") != 0) {
            fprintf(stderr, "%s: --order takes newest or oldest, not \"%s\"\n", o->label, s);
            return -1;
        }
        o->newest_first = strcmp(s, "newest") == 0;
        return 0;
    case OPT_PAGE:
        if (parse_int(s, &v) < 0 || v < 1 || v > 100000000) {
            fprintf(stderr,
                    "%s: --page needs a page number counted from 1 (1, 2, ...), not \"%s\"\n",
                    o->label, s);
            return -1;
        }
        o->page = (unsigned)v;
        return 0;
    case OPT_NAME:
        if (!*s) {
            fprintf(stderr, "%s: --name needs a job name\n", o->label);
            return -1;
        }
        o->name = s;
        return 0;
    case OPT_AT:
        if (parse_time(s, &o->at) < 0) {
            fprintf(stderr, "%s: --%s needs Unix seconds or a time like 2023-11-14T22:13:20Z\n",
                    o->label, ctx->spelled);
            return -1;
        }
        return 0;
    case OPT_GREP:
        if (!*s || strlen(s) > 256) {
            fprintf(stderr, "%s: --grep needs a text of 1 to 256 bytes\n", o->label);
            return -1;
        }
        o->grep = s;
        return 0;
    case OPT_SHARD:
        if (parse_int(s, &v) < 0 || v < 0 || v > 1023) {
            fprintf(stderr, "%s: --shard needs a shard number from 0 to 1023, not \"%s\"\n",
                    o->label, s);
            return -1;
        }
        o->shard = (unsigned)v;
        return 0;
    case OPT_OLDER:
        if (cli_duration_s(s, &o->older_than) < 0) {
            fprintf(stderr,
                    "%s: --older-than needs seconds or a duration like 7d or 12h (not negative), "
                    "not \"%s\"\n",
                    o->label, s);
            return -1;
        }
        return 0;
    default:
        if (parse_int(s, &o->keep) < 0 || o->keep < 0) {
            fprintf(stderr, "%s: --keep needs a number of jobs (0 or more), not \"%s\"\n", o->label,
                    s);
            return -1;
        }
        return 0;
    }
}

/* The actions a command takes as its first argument, ending with a NULL word. */
typedef struct action_word {
    const char *word;
    admin_action action;
} action_word;

static const action_word *actions_of(admin_cmd cmd)
{
    static const action_word dead[] = {
        {"retry", ACT_RETRY}, {"delete", ACT_DELETE}, {"trim", ACT_TRIM}, {NULL, ACT_LIST}};
    static const action_word sets[] = {
        {"run", ACT_RUN}, {"delete", ACT_DELETE}, {"kill", ACT_KILL}, {NULL, ACT_LIST}};
    static const action_word queue[] = {
        {"clear", ACT_CLEAR}, {"delete", ACT_DELETE}, {NULL, ACT_LIST}};
    static const action_word none[] = {{NULL, ACT_LIST}};
    return cmd == ADM_DEAD                            ? dead
           : cmd == ADM_RETRY || cmd == ADM_SCHEDULED ? sets
           : cmd == ADM_QUEUE                         ? queue
                                                      : none;
}

static int take_positional(admin_opts *o, const char *s)
{
    const action_word *actions = actions_of(o->cmd);
    if (actions[0].word && o->action == ACT_LIST) {
        const char *words[4] = {NULL};
        for (size_t i = 0; actions[i].word; i++) {
            if (!strcmp(s, actions[i].word)) {
                o->action = actions[i].action;
                snprintf(o->label, sizeof o->label, "cwork %s %s", cmd_names[o->cmd], s);
                return 0;
            }
            words[i] = actions[i].word;
        }
        /* A typo of an action, or queue without its only one. */
        const char *near = cli_suggest(s, words);
        if (near || o->cmd == ADM_QUEUE) {
            fprintf(stderr, "%s: unexpected argument \"%s\"; did you mean %s? (see %s --help)\n",
                    o->label, s, near ? near : words[0], o->label);
            return -1;
        }
    }
    int wants_arg = o->cmd == ADM_PAUSE || o->cmd == ADM_UNPAUSE || o->cmd == ADM_JOB ||
                    o->cmd == ADM_CANCEL || o->action == ACT_RETRY || o->action == ACT_DELETE ||
                    o->action == ACT_RUN || o->action == ACT_CLEAR || o->action == ACT_KILL;
    if (o->cmd == ADM_QUEUE && o->action == ACT_DELETE && o->arg && !o->id) {
        o->id = s; /* cwork queue delete NAME ID */
        return 0;
    }
    if (!wants_arg || o->arg) {
        fprintf(stderr, "%s: unexpected argument \"%s\" (see %s --help)\n", o->label, s, o->label);
        return -1;
    }
    o->arg = s;
    return 0;
}

/* Checks what only the whole command line shows. */
static int check_options(const admin_opts *o)
{
    unsigned extra = o->seen & ~allowed_options(o);
    if (extra) {
        fprintf(stderr, "%s: %s does not apply here (see %s --help)\n", o->label,
                option_name(extra & (0u - extra)), o->label);
        return -1;
    }
    const char *what = NULL;
    if (o->cmd == ADM_QUEUE && o->action == ACT_DELETE) {
        if (!o->arg || !*o->arg)
            what = "no job name given (cwork queue delete NAME ID)";
        else if (!o->id)
            what = "no job ID given (cwork queue delete NAME ID)";
    } else if (o->action == ACT_RETRY || o->action == ACT_DELETE || o->action == ACT_RUN ||
               o->action == ACT_KILL) {
        int all = (o->seen & OPT_ALL) != 0;
        if (all && o->arg)
            what = "give a job ID or --all, not both";
        else if (!all && !o->arg)
            what = allowed_options(o) & OPT_ALL ? "no job ID given (or --all)" : "no job ID given";
        else if (all && (o->seen & OPT_AT))
            what = "a time addresses one job: --at does not go with --all";
        else if (!all && (o->seen & OPT_NAME))
            what = "--name goes with --all";
    } else if (o->action == ACT_LIST && (o->seen & OPT_GREP) && (o->seen & OPT_NAME)) {
        what = "--grep searches every job of the set: it does not go with --name";
    } else if (o->action == ACT_LIST && (o->seen & OPT_GREP) &&
               (o->seen & (OPT_ORDER | OPT_NO_PERIODIC))) {
        what = o->seen & OPT_ORDER
                   ? "--grep lists the newest first: it does not go with --order"
                   : "--grep searches every job of the set: it does not go with --no-periodic";
    } else if (o->action == ACT_TRIM && !(o->seen & (OPT_OLDER | OPT_KEEP))) {
        what = "give --older-than, --keep or both";
    } else if ((o->cmd == ADM_PAUSE || o->cmd == ADM_UNPAUSE || o->action == ACT_CLEAR) &&
               (!o->arg || !*o->arg)) {
        what = "no job name given";
    } else if ((o->cmd == ADM_JOB || o->cmd == ADM_CANCEL) && !o->arg) {
        what = "no job ID given";
    } else if (o->cmd == ADM_QUEUE && o->action == ACT_LIST) {
        what = "what should happen to the queue? (cwork queue clear NAME, cwork queue delete "
               "NAME ID)";
    }
    /* An empty ID is an ID: Go, and older cwork versions, wrote dead records with "id":"". */
    if (what) {
        fprintf(stderr, "%s: %s (see %s --help)\n", o->label, what, o->label);
        return -1;
    }
    return 0;
}

static int take_positional_arg(void *opts, const char *s)
{
    return take_positional(opts, s);
}

/* 0 to go on, 1 when --help was printed, -1 on a bad command line (reported). */
static int parse_options(int argc, char **argv, admin_opts *o)
{
    int p = cli_parse(admin_command(o->cmd), o->label, argc, argv, 2, o, take_positional_arg);
    if (p != 0) return p;
    if (cli_go_flavor(&o->conn, &o->flavor) < 0) return -1;
    return check_options(o);
}

static int admin_main(int argc, char **argv, admin_cmd cmd)
{
    admin_opts o;
    memset(&o, 0, sizeof o);
    o.conn.ns = "work";
    o.cmd = cmd;
    o.keep = -1;
    /* The web UI's order of each set: the latest retry, the soonest run, the newest death */
    o.newest_first = cmd == ADM_RETRY || cmd == ADM_DEAD;
    snprintf(o.label, sizeof o.label, "cwork %s", cmd_names[cmd]);
    int p = parse_options(argc, argv, &o);
    if (p != 0) return p > 0 ? CLI_OK : CLI_USAGE;
    switch (o.action) {
    case ACT_RETRY:
        return admin_retry_dead(&o);
    case ACT_DELETE:
        return cmd == ADM_QUEUE ? admin_delete_waiting(&o) : admin_delete(&o);
    case ACT_TRIM:
        return admin_trim(&o);
    case ACT_RUN:
        return admin_run_now(&o);
    case ACT_CLEAR:
        return admin_clear_queue(&o);
    case ACT_KILL:
        return admin_kill(&o);
    case ACT_LIST:
        break;
    }
    switch (cmd) {
    case ADM_QUEUES:
        return admin_queues(&o);
    case ADM_POOLS:
        return admin_pools(&o);
    case ADM_BUSY:
        return admin_busy(&o);
    case ADM_PAUSE:
    case ADM_UNPAUSE:
        return admin_pause(&o);
    case ADM_JOB:
        return admin_job(&o);
    case ADM_CANCEL:
        return admin_cancel(&o);
    default:
        return admin_list(&o);
    }
}

int cmd_queues(int argc, char **argv)
{
    return admin_main(argc, argv, ADM_QUEUES);
}

int cmd_pools(int argc, char **argv)
{
    return admin_main(argc, argv, ADM_POOLS);
}

int cmd_busy(int argc, char **argv)
{
    return admin_main(argc, argv, ADM_BUSY);
}

int cmd_retry(int argc, char **argv)
{
    return admin_main(argc, argv, ADM_RETRY);
}

int cmd_scheduled(int argc, char **argv)
{
    return admin_main(argc, argv, ADM_SCHEDULED);
}

int cmd_dead(int argc, char **argv)
{
    return admin_main(argc, argv, ADM_DEAD);
}

int cmd_pause(int argc, char **argv)
{
    return admin_main(argc, argv, ADM_PAUSE);
}

int cmd_unpause(int argc, char **argv)
{
    return admin_main(argc, argv, ADM_UNPAUSE);
}

int cmd_job(int argc, char **argv)
{
    return admin_main(argc, argv, ADM_JOB);
}

int cmd_queue(int argc, char **argv)
{
    return admin_main(argc, argv, ADM_QUEUE);
}

int cmd_cancel(int argc, char **argv)
{
    return admin_main(argc, argv, ADM_CANCEL);
}
