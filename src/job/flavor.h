/* The Go flavour setting (cwork.h, cwork_go_flavor) and the Go JSON spelling
 * (cwork_go_json): parsing, naming, validation, and
 * the one warning a process gives when a namespace turns out to be shared with the
 * other flavour (README "Go flavours"). */
#ifndef CWORK_FLAVOR_H
#define CWORK_FLAVOR_H

#include "util.h"

#include <stdatomic.h>

/* 0 for a known flavour, else CWORK_EINVAL naming `what` (e.g. "pool options"). */
int cw_go_flavor_check(cwork_go_flavor flavor, const char *what, cwork_error *err);

/* 0 for a known JSON spelling, else CWORK_EINVAL naming `what`. */
int cw_go_json_check(cwork_go_json spelling, const char *what, cwork_error *err);

/* Kinds of evidence that another flavour writes to the namespace, one bit each. */
enum {
    CW_MIXED_UNIQUE_KEY = 1, /* a fetched job with unique_key under the fork flavour */
    CW_MIXED_PERIODIC = 2    /* the other flavour's instance of a periodic fire time */
};

/* Logs "go_flavor.mixed_namespace" (warn) the first time `kind` is set in *warned (one
 * flag word per pool), naming the setting and what to do; later calls are silent.
 * detail says what was seen. Thread-safe. */
void cw_go_flavor_warn_mixed(atomic_int *warned, int kind, cwork_go_flavor flavor,
                             const char *detail);

#endif
