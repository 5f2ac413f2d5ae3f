/* Shared by the admin client tests: a client on a fresh namespace, and its cleanup. */
#ifndef CWORK_CLIENT_TESTUTIL_H
#define CWORK_CLIENT_TESTUTIL_H

#include "cwork.h"
#include "testlib.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static redisContext *rc_;
static cwork_redis *redis_;
static char ns_[64];

__attribute__((unused)) static cwork_client *fresh(const char *tag)
{
    tl_unique_ns(tag, ns_, sizeof ns_);
    cwork_error err = {0};
    cwork_client *cl = cwork_client_new(redis_, ns_, &err);
    CHECK(cl != NULL);
    return cl;
}

__attribute__((unused)) static void done(cwork_client *cl)
{
    tl_ns_delete(rc_, ns_);
    cwork_client_free(cl);
}

/* ---------------------------------------------------------------- checking a namespace
 * In the expected dumps "NS" stands for the case's namespace and \x5c for a backslash. */

__attribute__((unused)) static char want_[16384];

#define cmd(...) tl_do(rc_, __VA_ARGS__)

__attribute__((unused)) static long long now_(void)
{
    return (long long)time(NULL);
}

/* Compares the namespace's dump with want, where "NS" stands for the namespace. */
__attribute__((unused)) static void check_dump_at(int line, const char *want)
{
    char *expanded = malloc(strlen(want) * 4 + 1), *o = expanded;
    for (const char *p = want; *p;) {
        if (p[0] == 'N' && p[1] == 'S') {
            o += sprintf(o, "%s", ns_);
            p += 2;
        } else {
            *o++ = *p++;
        }
    }
    *o = '\0';
    char *got = tl_ns_dump(rc_, ns_);
    if (strcmp(got, expanded) != 0)
        tl_fail(__FILE__, line, "namespace dump\n   got:\n%s  want:\n%s", got, expanded);
    free(got);
    free(expanded);
}
#define CHECK_DUMP(want) check_dump_at(__LINE__, want)

__attribute__((unused)) static char *dump_now(void)
{
    return tl_ns_dump(rc_, ns_);
}

/* The single member of a list, for building expected dumps around cjson's bytes. */
__attribute__((unused)) static char *list_member(const char *key_suffix)
{
    redisReply *r = tl_cmd(rc_, "LRANGE %s:%s 0 -1", ns_, key_suffix);
    char *s = r->elements == 1 ? strdup(r->element[0]->str) : strdup("");
    CHECK_INT(r->elements, 1);
    freeReplyObject(r);
    return s;
}

#endif
