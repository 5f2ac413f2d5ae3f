/* Shared by the admin client tests: a client on a fresh namespace, and its cleanup. */
#ifndef CWORK_CLIENT_TESTUTIL_H
#define CWORK_CLIENT_TESTUTIL_H

#include "cwork.h"
#include "testlib.h"

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

#endif
