/* The fault suite's world (faults.h): Redis, pools, the generator. */
#include "faults.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

long long fw_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---------------------------------------------------------------- Redis */

int fw_init_external(world *w)
{
    memset(w, 0, sizeof *w);
    pthread_mutex_init(&w->mu, NULL);
    w->cli = getenv("CWORK_CLI");
    w->job = getenv("FAULT_JOB");
    if (!w->cli || !w->job) {
        fprintf(stderr, "CWORK_CLI and FAULT_JOB must be set (ctest sets them)\n");
        return -1;
    }
    snprintf(w->dir, sizeof w->dir, "/tmp/cwork-faults-XXXXXX");
    if (!mkdtemp(w->dir)) return -1;
    snprintf(w->log_path, sizeof w->log_path, "%s/history.log", w->dir);
    tl_unique_ns("faults", w->ns, sizeof w->ns);
    return 0;
}

int fw_init(world *w)
{
    if (fw_init_external(w) != 0) return -1;
    if (tl_server_start(&w->redis, 1) != 0) {
        fprintf(stderr, "cannot start redis-server\n");
        return -1;
    }
    /* What the README asks of production: no eviction, so that memory running out
     * refuses writes instead of dropping queues. */
    redisReply *r = fw_cmd(w, "CONFIG SET maxmemory-policy noeviction");
    if (r) freeReplyObject(r);
    return r ? 0 : -1;
}

void fw_destroy(world *w, int keep)
{
    fw_gen_stop(w);
    for (size_t i = 0; i < w->npools; i++) {
        if (!w->pools[i].alive) continue;
        kill(w->pools[i].pid, SIGKILL);
        waitpid(w->pools[i].pid, NULL, 0);
        w->pools[i].alive = 0;
    }
    if (w->stamper) {
        tl_sleep_ms(200); /* the last lines */
        atomic_store(&w->stamper_stop, 1);
        pthread_join(w->stamper, NULL);
        for (size_t i = 0; i < w->npools; i++)
            if (w->pools[i].out_fd >= 0) {
                close(w->pools[i].out_fd);
                close(w->pools[i].file_fd);
            }
        pthread_mutex_destroy(&w->pools_mu);
    }
    if (w->ctl) redisFree(w->ctl);
    w->ctl = NULL;
    tl_server_destroy(&w->redis);
    if (!keep && w->dir[0]) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", w->dir);
        if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", w->dir);
    }
    free(w->enq);
    pthread_mutex_destroy(&w->mu);
}

redisContext *fw_ctl(world *w)
{
    if (w->ctl && !w->ctl->err) return w->ctl;
    if (w->ctl) redisFree(w->ctl);
    w->ctl = NULL;
    for (int i = 0; i < 100 && !w->ctl; i++) {
        struct timeval tv = {2, 0};
        int port = w->ctl_port ? w->ctl_port(w) : w->redis.port;
        redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
        if (c && !c->err) {
            redisSetTimeout(c, (struct timeval){15, 0});
            w->ctl = c;
        } else {
            if (c) redisFree(c);
            tl_sleep_ms(100);
        }
    }
    return w->ctl;
}

redisReply *fw_cmd(world *w, const char *fmt, ...)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        redisContext *c = fw_ctl(w);
        if (!c) return NULL;
        va_list ap;
        va_start(ap, fmt);
        redisReply *r = redisvCommand(c, fmt, ap);
        va_end(ap);
        if (r) return r;
    }
    return NULL;
}

long long fw_int(world *w, const char *fmt, ...)
{
    redisContext *c = fw_ctl(w);
    if (!c) return -1;
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(c, fmt, ap);
    va_end(ap);
    long long v = r && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
    if (r) freeReplyObject(r);
    return v;
}

void fw_locks(world *w, const char *name, long long *lock, long long *info_sum)
{
    static const char sum[] =
        "local s = 0 for _, v in ipairs(redis.call('HVALS', KEYS[2])) do s = s + tonumber(v) end "
        "return {tonumber(redis.call('GET', KEYS[1]) or '0') or -999999, s}";
    redisReply *r =
        fw_cmd(w, "EVAL %s 2 %s:jobs:%s:lock %s:jobs:%s:lock_info", sum, w->ns, name, w->ns, name);
    *lock = *info_sum = -999999;
    if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 2) {
        *lock = r->element[0]->integer;
        *info_sum = r->element[1]->integer;
    }
    if (r) freeReplyObject(r);
}

/* ---------------------------------------------------------------- pools */

/* Copies each pool's output lines to its file, each prefixed with the time (ms): the
 * logger's lines have none, and the history needs them side by side. */
static void stamp(fw_pool *p, const char *buf, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p->npartial < sizeof p->partial - 1) p->partial[p->npartial++] = buf[i];
        if (buf[i] != '\n') continue;
        char head[32];
        int h = snprintf(head, sizeof head, "%lld ", fw_now_ms());
        if (write(p->file_fd, head, (size_t)h) < 0 ||
            write(p->file_fd, p->partial, p->npartial) < 0) {
        }
        p->npartial = 0;
    }
}

static void *stamper(void *arg)
{
    world *w = arg;
    while (!atomic_load(&w->stamper_stop)) {
        struct pollfd fds[FW_MAX_POOLS];
        size_t idx[FW_MAX_POOLS], n = 0;
        pthread_mutex_lock(&w->pools_mu);
        for (size_t i = 0; i < w->npools; i++)
            if (w->pools[i].out_fd >= 0) {
                fds[n].fd = w->pools[i].out_fd;
                fds[n].events = POLLIN;
                idx[n++] = i;
            }
        pthread_mutex_unlock(&w->pools_mu);
        if (poll(fds, n, 100) <= 0) continue;
        for (size_t k = 0; k < n; k++) {
            if (!(fds[k].revents & (POLLIN | POLLHUP))) continue;
            char buf[4096];
            ssize_t got = read(fds[k].fd, buf, sizeof buf);
            fw_pool *p = &w->pools[idx[k]];
            if (got > 0) {
                stamp(p, buf, (size_t)got);
            } else {
                pthread_mutex_lock(&w->pools_mu);
                close(p->out_fd);
                close(p->file_fd);
                p->out_fd = -1;
                pthread_mutex_unlock(&w->pools_mu);
            }
        }
    }
    return NULL;
}

int fw_pool_start(world *w)
{
    if (w->npools == FW_MAX_POOLS) return -1;
    if (!w->stamper) {
        pthread_mutex_init(&w->pools_mu, NULL);
        if (pthread_create(&w->stamper, NULL, stamper, w) != 0) return -1;
    }
    fw_pool *p = &w->pools[w->npools];
    memset(p, 0, sizeof *p);
    p->out_fd = -1;
    snprintf(p->tag, sizeof p->tag, "p%zu", w->npools + 1);
    char out[320];
    snprintf(out, sizeof out, "%s/%s.out", w->dir, p->tag);
    int pipefd[2];
    if (pipe(pipefd) != 0) return -1;
    fcntl(pipefd[0], F_SETFD, FD_CLOEXEC); /* later pools must not hold this one's pipe */
    fcntl(pipefd[1], F_SETFD, FD_CLOEXEC);
    p->file_fd = open(out, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    char fast[512], limited[512], sched[512];
    snprintf(fast, sizeof fast, "fast=exec '%s'", w->job);
    snprintf(limited, sizeof limited, "limited=exec '%s'", w->job);
    snprintf(sched, sizeof sched, "sched=exec '%s'", w->job);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY);
        dup2(pipefd[1], 1), dup2(pipefd[1], 2);
        if (in >= 0) dup2(in, 0);
        setenv("FAULT_LOG", w->log_path, 1);
        setenv("FAULT_POOL", p->tag, 1);
        const char *level = getenv("FAULT_LOG_LEVEL");
        setenv("CWORK_LOG_LEVEL", level ? level : "warn", 1);
        setpgid(0, 0); /* a signal to the suite's group does not reach it */
        const char *url = w->netns ? w->netns_url : w->url ? w->url : w->redis.url;
        const char *limit = w->limited_max ? w->limited_max : "2";
        if (w->netns)
            execlp("ip", "ip", "netns", "exec", w->netns, w->cli, "work", "--redis", url, "--ns",
                   w->ns, "--concurrency", FW_CONCURRENCY, "--no-progress", "--grace", "20",
                   "--job", fast, "--job", limited, "--max-concurrency", limit, "--job", sched,
                   (char *)NULL);
        execl(w->cli, w->cli, "work", "--redis", url, "--ns", w->ns, "--concurrency",
              FW_CONCURRENCY, "--no-progress", "--grace", "20", "--job", fast, "--job", limited,
              "--max-concurrency", limit, "--job", sched, (char *)NULL);
        _exit(127);
    }
    close(pipefd[1]);
    p->pid = pid;
    p->alive = 1;
    pthread_mutex_lock(&w->pools_mu);
    p->out_fd = pipefd[0];
    int i = (int)w->npools++;
    pthread_mutex_unlock(&w->pools_mu);
    return i;
}

static void add_fault(world *w, char kind, const char *pool, long long at, long long until)
{
    if (w->nfaults == FW_MAX_FAULTS) return;
    fh_fault *f = &w->faults[w->nfaults++];
    f->kind = kind;
    size_t n = strnlen(pool, sizeof f->pool - 1); /* (pool is another member of *w) */
    memmove(f->pool, pool, n);
    f->pool[n] = '\0';
    f->at_ms = at;
    f->until_ms = until;
}

void fw_pool_kill(world *w, size_t i, long long at_ms)
{
    fw_pool *p = &w->pools[i];
    if (!p->alive) return;
    kill(p->pid, SIGKILL);
    waitpid(p->pid, NULL, 0);
    long long now = fw_now_ms(); /* (after: no start of this pool comes later) */
    p->alive = 0;
    if (p->stopped) { /* a stop that ends in a kill: dead from the stop on */
        w->faults[p->stop_fault].kind = 'K';
        w->faults[p->stop_fault].until_ms = now;
        p->stopped = 0;
        return;
    }
    add_fault(w, 'K', p->tag, at_ms ? at_ms : now, now);
}

void fw_pool_stop(world *w, size_t i)
{
    fw_pool *p = &w->pools[i];
    if (!p->alive || p->stopped) return;
    kill(p->pid, SIGSTOP);
    long long now = fw_now_ms();
    p->stopped = 1;
    p->stopped_at = now;
    p->stop_fault = w->nfaults;
    add_fault(w, 'S', p->tag, now, 0);
}

void fw_pool_cont(world *w, size_t i)
{
    fw_pool *p = &w->pools[i];
    if (!p->alive || !p->stopped) return;
    kill(p->pid, SIGCONT);
    p->stopped = 0;
    w->faults[p->stop_fault].until_ms = fw_now_ms();
}

/* The parent of pid from /proc/<pid>/stat, or -1. */
static pid_t parent_of(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *close_paren = strrchr(buf, ')'); /* the name may hold spaces */
    int ppid = -1;
    if (!close_paren || sscanf(close_paren + 1, " %*c %d", &ppid) != 1) return -1;
    return (pid_t)ppid;
}

/* Adds to p->frozen every process under p->pid not in it yet, SIGSTOPped. */
static void stop_descendants(fw_pool *p)
{
    DIR *d = opendir("/proc");
    if (!d) return;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        pid_t pid = (pid_t)atoi(e->d_name);
        if (pid <= 0 || pid == p->pid) continue;
        int under = 0;
        for (pid_t q = parent_of(pid), hops = 0; q > 1 && hops < 16; q = parent_of(q), hops++)
            if (q == p->pid) {
                under = 1;
                break;
            }
        int known = 0;
        for (size_t k = 0; k < p->nfrozen; k++)
            known |= p->frozen[k] == pid;
        if (under && !known && p->nfrozen < sizeof p->frozen / sizeof p->frozen[0]) {
            kill(pid, SIGSTOP);
            p->frozen[p->nfrozen++] = pid;
        }
    }
    closedir(d);
}

size_t fw_pool_freeze_tree(world *w, size_t i)
{
    fw_pool *p = &w->pools[i];
    p->nfrozen = 0;
    fw_pool_stop(w, i); /* first: it forks nothing more */
    for (int round = 0; round < 3; round++)
        stop_descendants(p); /* (again: a fork under way when the scan passed) */
    return p->nfrozen;
}

void fw_pool_thaw_tree(world *w, size_t i)
{
    fw_pool *p = &w->pools[i];
    for (size_t k = 0; k < p->nfrozen; k++)
        kill(p->frozen[k], SIGCONT);
    p->nfrozen = 0;
    fw_pool_cont(w, i);
}

void fw_add_lease_faults(world *w)
{
    for (size_t i = 0; i < w->npools; i++) {
        char path[320];
        snprintf(path, sizeof path, "%s/%s.out", w->dir, w->pools[i].tag);
        size_t len = 0;
        char *text = tl_read_file(path, &len);
        for (char *line = text; line && *line;) {
            char *nl = strchr(line, '\n');
            if (nl) *nl = '\0';
            long long at = atoll(line);
            if (strstr(line, " msg=pool.lease_lost ")) {
                char tag[FH_POOL];
                memcpy(tag, w->pools[i].tag, sizeof tag); /* (both inside w) */
                add_fault(w, 'L', tag, at, at);
            }
            line = nl ? nl + 1 : line + strlen(line);
        }
        free(text);
    }
}

size_t fw_alive(const world *w)
{
    size_t n = 0;
    for (size_t i = 0; i < w->npools; i++)
        n += w->pools[i].alive;
    return n;
}

int fw_pools_shutdown(world *w)
{
    int rc = 0;
    for (size_t i = 0; i < w->npools; i++)
        if (w->pools[i].alive) {
            if (w->pools[i].stopped) fw_pool_cont(w, i);
            kill(w->pools[i].pid, SIGTERM);
        }
    for (size_t i = 0; i < w->npools; i++) {
        if (!w->pools[i].alive) continue;
        int status = 0;
        waitpid(w->pools[i].pid, &status, 0);
        w->pools[i].alive = 0;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "pool %s ended with status %d\n", w->pools[i].tag, status);
            rc = -1;
        }
    }
    return rc;
}

/* ---------------------------------------------------------------- the generator */

static void record(world *w, const char *id, const char *name, fh_enqueue_status status)
{
    pthread_mutex_lock(&w->mu);
    if (w->nenq == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 4096;
        fh_enqueue *e = realloc(w->enq, cap * sizeof *e);
        if (!e) abort();
        w->enq = e;
        w->cap = cap;
    }
    fh_enqueue *e = &w->enq[w->nenq++];
    memset(e, 0, sizeof *e);
    snprintf(e->id, sizeof e->id, "%s", id);
    snprintf(e->name, sizeof e->name, "%s", name);
    e->status = status;
    e->at_ms = fw_now_ms();
    pthread_mutex_unlock(&w->mu);
}

/* An error reply ("redis: OOM …", "redis: WRONGTYPE …") means nothing was written; an
 * I/O error or a timeout ("redis 127.0.0.1:…: …", "no connection …") leaves it open. */
static fh_enqueue_status failure_kind(const cwork_error *err)
{
    return strncmp(err->message, "redis: ", 7) == 0 ? FH_ENQ_FAILED : FH_ENQ_UNKNOWN;
}

static unsigned rnd(unsigned *seed, unsigned n)
{
    *seed = *seed * 1103515245u + 12345u;
    return (*seed >> 16) % n;
}

/* Args of one job: how long it works, and the key the history knows it by (the job id
 * is only known for enqueues that succeeded; the key also for those that failed). */
static cwork_args *job_args(const char *key, long ms)
{
    cwork_args *a = cwork_args_new();
    cwork_args_set_string(a, "key", key);
    cwork_args_set_int64(a, "ms", ms);
    return a;
}

static void *generate(void *arg)
{
    world *w = arg;
    cwork_redis_options o;
    cwork_redis_options_init(&o);
    o.connect_timeout_ms = 500;
    o.command_timeout_ms = 2000;
    o.checkout_timeout_ms = 500;
    cwork_redis *redis = cwork_redis_new(w->url ? w->url : w->redis.url, &o, NULL);
    cwork_enqueuer *enq = NULL;
    unsigned seed = (unsigned)fw_now_ms();
    for (unsigned i = 0; !atomic_load(&w->gen_stop); i++) {
        if (atomic_load(&w->gen_pause)) {
            tl_sleep_ms(20);
            continue;
        }
        if (i % 50 == 0) { /* a fresh enqueuer: its first enqueue of each name registers it */
            cwork_enqueuer_free(enq);
            enq = cwork_enqueuer_new(redis, w->ns, NULL);
        }
        char key[40];
        cwork_error err = {0};
        if (i % 25 == 24) { /* a batch of every kind, written whole or not at all */
            static const char *const names[] = {"fast", "sched", "fast", "limited"};
            static const int flags[] = {0, CWORK_BATCH_IN, CWORK_BATCH_UNIQUE, 0};
            cwork_batch *b = cwork_batch_new(enq);
            for (int k = 0; k < 4; k++) {
                snprintf(key, sizeof key, "g%u.%d", i, k);
                cwork_args *a = job_args(key, k == 3 ? 150 : 30);
                cwork_batch_add(b, names[k], a, 1 + rnd(&seed, 3), flags[k], NULL);
                cwork_args_free(a);
            }
            int rc = cwork_enqueue_batch(b, &err);
            for (size_t k = 0; k < cwork_batch_count(b); k++) {
                int s = cwork_batch_status(b, k, NULL);
                snprintf(key, sizeof key, "g%u.%zu", i, k);
                record(w, key, names[k],
                       rc == 0 ? (s == CWORK_OK ? FH_ENQ_OK : FH_ENQ_FAILED) : failure_kind(&err));
            }
            cwork_batch_free(b);
        } else {
            unsigned kind = rnd(&seed, 20);
            const char *name = kind < 16 ? "fast" : kind < 17 ? "limited" : "sched";
            snprintf(key, sizeof key, "g%u", i);
            cwork_args *a = job_args(key, kind < 16   ? 20 + (long)rnd(&seed, 60)
                                          : kind < 17 ? 100 + (long)rnd(&seed, 100)
                                                      : 20);
            int rc;
            if (name[0] == 's')
                rc = cwork_enqueue_in(enq, name, 1 + rnd(&seed, 3), a, NULL, &err);
            else if (i % 7 == 3)
                rc = cwork_enqueue_unique(enq, name, a, NULL, &err);
            else
                rc = cwork_enqueue(enq, name, a, NULL, &err);
            record(w, key, name, rc == 0 ? FH_ENQ_OK : failure_kind(&err));
            cwork_args_free(a);
        }
        tl_sleep_ms(8);
    }
    cwork_enqueuer_free(enq);
    cwork_redis_free(redis);
    return NULL;
}

int fw_gen_start(world *w)
{
    atomic_store(&w->gen_stop, 0);
    return pthread_create(&w->gen, NULL, generate, w) == 0 ? 0 : -1;
}

void fw_gen_stop(world *w)
{
    if (atomic_exchange(&w->gen_stop, 1) == 0 && w->gen) pthread_join(w->gen, NULL);
    w->gen = 0;
}

/* ---------------------------------------------------------------- recovery */

int fw_pool_id(world *w, size_t i, char id[32])
{
    redisReply *m = fw_cmd(w, "SMEMBERS %s:worker_pools", w->ns);
    int rc = -1;
    for (size_t k = 0; rc && m && m->type == REDIS_REPLY_ARRAY && k < m->elements; k++) {
        redisReply *pid = fw_cmd(w, "HGET %s:worker_pools:%s pid", w->ns, m->element[k]->str);
        if (pid && pid->type == REDIS_REPLY_STRING &&
            atoll(pid->str) == (long long)w->pools[i].pid) {
            snprintf(id, 32, "%s", m->element[k]->str);
            rc = 0;
        }
        if (pid) freeReplyObject(pid);
    }
    if (m) freeReplyObject(m);
    return rc;
}

long long fw_inprogress(world *w, const char *id)
{
    static const char *const names[] = {"fast", "limited", "sched"};
    long long sum = 0;
    for (int k = 0; k < 3; k++) {
        long long v = fw_int(w, "LLEN %s:jobs:%s:%s:inprogress", w->ns, names[k], id);
        sum += v > 0 ? v : 0;
    }
    return sum;
}

long long fw_wait_recovered(world *w, const char *id, long long since_ms, long ms, const char *what)
{
    long long took = -1;
    while (fw_now_ms() - since_ms <= ms) {
        if (fw_inprogress(w, id) == 0) {
            took = fw_now_ms() - since_ms;
            break;
        }
        tl_sleep_ms(100);
    }
    if (w->nrecovery < sizeof w->recovery / sizeof w->recovery[0]) {
        snprintf(w->recovery[w->nrecovery].what, sizeof w->recovery[0].what, "%s", what);
        w->recovery[w->nrecovery++].ms = took;
    }
    return took;
}

/* ---------------------------------------------------------------- quiet */

int fw_wait_quiet(world *w, long ms)
{
    static const char probe[] =
        "local n = redis.call('ZCARD', KEYS[1]) + redis.call('ZCARD', KEYS[2]) "
        "for _, q in ipairs({'fast', 'limited', 'sched'}) do "
        "  n = n + redis.call('LLEN', ARGV[1] .. 'jobs:' .. q) end "
        "local cursor = '0' "
        "repeat "
        "  local r = redis.call('SCAN', cursor, 'MATCH', ARGV[1] .. 'jobs:*:inprogress', "
        "                       'COUNT', 1000) "
        "  cursor = r[1] "
        "  for _, k in ipairs(r[2]) do n = n + redis.call('LLEN', k) end "
        "until cursor == '0' "
        "return n";
    char prefix[80];
    snprintf(prefix, sizeof prefix, "%s:", w->ns);
    long long t0 = fw_now_ms();
    for (;;) {
        redisReply *r =
            fw_cmd(w, "EVAL %s 2 %s:scheduled %s:retry %s", probe, w->ns, w->ns, prefix);
        long long n = r && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
        if (r) freeReplyObject(r);
        if (n == 0) return 0;
        if (fw_now_ms() - t0 > ms) return -1;
        tl_sleep_ms(200);
    }
}
