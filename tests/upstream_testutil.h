/* What upstream gocraft/work v0.5 (github.com/gocraft/work: job.go, enqueue.go,
 * worker.go, periodic_enqueuer.go, redis.go) writes, byte for byte, as fixtures for the
 * Go-flavour tests. Upstream's Job has the fork's fields up to failed_at, no d and no
 * trace, and `unique_key` (string, omitempty) between unique and fails; every unique
 * enqueue (EnqueueUnique is EnqueueUniqueByKey with the args as key) sets it to the
 * guard key, which redisKeyUniqueJob builds as <ns>:unique:<name>: + json.Encoder's
 * encoding of the key map (with its trailing newline). The guard holds "1", or for
 * ByKey the job's JSON, re-set with a 24 h TTL on every duplicate. Periodic instances
 * are {name, id "periodic:<name>:<spec>:<epoch>", t epoch, args null}.
 *
 * Templates take the namespace (%s) where upstream's bytes contain it; with "work" they
 * are checked against Go's own encoder in test_upstream_oracle.c. Ids and times are
 * fixed stand-ins for random ones. */
#ifndef CWORK_UPSTREAM_TESTUTIL_H
#define CWORK_UPSTREAM_TESTUTIL_H

#include <stdio.h>

#define UP_ID "0123456789abcdef01234567"
#define UP_ID2 "89abcdef0123456789abcdef"

/* Enqueue("send_email", {address, subject, customer_id: 4}): the same bytes as the fork. */
#define UP_ENQUEUE                                                                                 \
    "{\"name\":\"send_email\",\"id\":\"" UP_ID "\",\"t\":1700000000,\"args\":{\"address\":"        \
    "\"test@example.com\",\"customer_id\":4,\"subject\":\"hello world\"}}"

/* EnqueueUnique("clear_cache", {object_id_: "123"}): the job and its guard ("1"). */
#define UP_UNIQUE                                                                                  \
    "{\"name\":\"clear_cache\",\"id\":\"" UP_ID "\",\"t\":1700000000,\"args\":{\"object_id_\":"    \
    "\"123\"},\"unique\":true,\"unique_key\":\"%s:unique:clear_cache:{\\\"object_id_\\\":"         \
    "\\\"123\\\"}\\n\"}"
#define UP_UNIQUE_GUARD "%s:unique:clear_cache:{\"object_id_\":\"123\"}\n"

/* EnqueueUniqueByKey("sync", {v: "first"}, {acct: 7}) at 1700000000, then the same key
 * with {v: "second"} at 1700000005: the first job waits in the queue as a placeholder,
 * the guard holds the second, which is the one upstream's worker runs. */
#define UP_BYKEY_PLACEHOLDER                                                                       \
    "{\"name\":\"sync\",\"id\":\"" UP_ID "\",\"t\":1700000000,\"args\":{\"v\":\"first\"},"         \
    "\"unique\":true,\"unique_key\":\"%s:unique:sync:{\\\"acct\\\":7}\\n\"}"
#define UP_BYKEY_GUARD_JOB                                                                         \
    "{\"name\":\"sync\",\"id\":\"" UP_ID2 "\",\"t\":1700000005,\"args\":{\"v\":\"second\"},"       \
    "\"unique\":true,\"unique_key\":\"%s:unique:sync:{\\\"acct\\\":7}\\n\"}"
#define UP_BYKEY_GUARD "%s:unique:sync:{\"acct\":7}\n"

/* The periodic instance of spec "0 * * * * *", job calc, fire time 1700000040. */
#define UP_PERIODIC                                                                                \
    "{\"name\":\"calc\",\"id\":\"periodic:calc:0 * * * * *:1700000040\",\"t\":1700000040,"         \
    "\"args\":null}"
/* The fork's instance of the same fire time (PROTOCOL §17.5). */
#define FORK_PERIODIC                                                                              \
    "{\"name\":\"calc\",\"id\":\"periodic:calc:0 * * * * *:1700000040\",\"t\":1700000040,"         \
    "\"args\":null,\"d\":1700000100}"

/* The unique job of UP_UNIQUE after upstream's worker failed it once (retry set) and after
 * its fourth failure (dead set): re-encoded with unique_key kept. */
#define UP_RETRY                                                                                   \
    "{\"name\":\"clear_cache\",\"id\":\"" UP_ID "\",\"t\":1700000000,\"args\":{\"object_id_\":"    \
    "\"123\"},\"unique\":true,\"unique_key\":\"%s:unique:clear_cache:{\\\"object_id_\\\":"         \
    "\\\"123\\\"}\\n\",\"fails\":1,\"err\":\"boom\",\"failed_at\":1700000010}"
#define UP_DEAD                                                                                    \
    "{\"name\":\"clear_cache\",\"id\":\"" UP_ID "\",\"t\":1700000000,\"args\":{\"object_id_\":"    \
    "\"123\"},\"unique\":true,\"unique_key\":\"%s:unique:clear_cache:{\\\"object_id_\\\":"         \
    "\\\"123\\\"}\\n\",\"fails\":4,\"err\":\"boom\",\"failed_at\":1700000100}"

/* EnqueueUnique("big", {n: int64(9007199254740993)}): Go writes the in-process int64 as
 * is, but a worker decodes it as float64 9007199254740992, so a key recomputed from the
 * decoded args names another guard (PROTOCOL §4.3); unique_key names the right one. */
#define UP_BIG                                                                                     \
    "{\"name\":\"big\",\"id\":\"" UP_ID "\",\"t\":1700000000,\"args\":{\"n\":9007199254740993},"   \
    "\"unique\":true,\"unique_key\":\"%s:unique:big:{\\\"n\\\":9007199254740993}\\n\"}"
#define UP_BIG_GUARD "%s:unique:big:{\"n\":9007199254740993}\n"

/* The fork's EnqueueUnique("ctl", {s: "a<U+0008>b"}) by a Go built before 1.22 (no
 * unique_key; \u0008 in the args and the guard), and the guard as Go 1.22 and cwork
 * spell it. */
#define OLDGO_CTL                                                                                  \
    "{\"name\":\"ctl\",\"id\":\"" UP_ID "\",\"t\":1700000000,\"args\":{\"s\":\"a\\u0008b\"},"      \
    "\"unique\":true}"
#define OLDGO_CTL_GUARD "%s:unique:ctl:{\"s\":\"a\\u0008b\"}\n"
#define NEWGO_CTL_GUARD "%s:unique:ctl:{\"s\":\"a\\bb\"}\n"
/* Upstream's EnqueueUnique("ctl", {s: "a<U+0008>b"}) by a Go built before 1.22: the job
 * (its guard is OLDGO_CTL_GUARD, holding "1"); unique_key names the \u0008 guard. */
#define OLDGO_UP_CTL                                                                               \
    "{\"name\":\"ctl\",\"id\":\"" UP_ID "\",\"t\":1700000000,\"args\":{\"s\":\"a\\u0008b\"},"      \
    "\"unique\":true,\"unique_key\":\"%s:unique:ctl:{\\\"s\\\":\\\"a\\\\u0008b\\\"}\\n\"}"

/* snprintf of a template with the namespace; a static buffer per call site is the
 * caller's. */
#define UP_FMT(buf, tmpl, ns) snprintf((buf), sizeof(buf), (tmpl), (ns))

#endif
