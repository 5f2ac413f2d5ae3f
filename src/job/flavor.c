/* The Go flavour setting: which Go library (the Kuper-Tech fork or upstream
 * gocraft/work v0.5) shares the namespace, and so which bytes cwork writes where the
 * two differ. Reading never depends on it. */
#include "flavor.h"

#include "log.h"

#include <stdio.h>
#include <string.h>

int cwork_go_flavor_parse(const char *text, cwork_go_flavor *out, cwork_error *err)
{
    if (text && strcmp(text, "fork") == 0) {
        if (out) *out = CWORK_GO_FORK;
        return 0;
    }
    if (text && strcmp(text, "upstream") == 0) {
        if (out) *out = CWORK_GO_UPSTREAM;
        return 0;
    }
    return cw_error(err, CWORK_EINVAL, "unknown Go flavour \"%.40s\" (want fork or upstream)",
                    text ? text : "(null)");
}

const char *cwork_go_flavor_name(cwork_go_flavor flavor)
{
    switch (flavor) {
    case CWORK_GO_FORK:
        return "fork";
    case CWORK_GO_UPSTREAM:
        return "upstream";
    }
    return "unknown";
}

int cwork_go_json_parse(const char *text, cwork_go_json *out, cwork_error *err)
{
    if (text && strcmp(text, "go1.22") == 0) {
        if (out) *out = CWORK_GO_JSON_122;
        return 0;
    }
    if (text && strcmp(text, "go1.21") == 0) {
        if (out) *out = CWORK_GO_JSON_121;
        return 0;
    }
    return cw_error(err, CWORK_EINVAL, "unknown Go JSON spelling \"%.40s\" (want go1.22 or go1.21)",
                    text ? text : "(null)");
}

const char *cwork_go_json_name(cwork_go_json spelling)
{
    switch (spelling) {
    case CWORK_GO_JSON_122:
        return "go1.22";
    case CWORK_GO_JSON_121:
        return "go1.21";
    }
    return "unknown";
}

int cw_go_json_check(cwork_go_json spelling, const char *what, cwork_error *err)
{
    if (spelling == CWORK_GO_JSON_122 || spelling == CWORK_GO_JSON_121) return 0;
    return cw_error(err, CWORK_EINVAL,
                    "%s: unknown go_json %d (want CWORK_GO_JSON_122 or CWORK_GO_JSON_121)", what,
                    (int)spelling);
}

int cw_go_flavor_check(cwork_go_flavor flavor, const char *what, cwork_error *err)
{
    if (flavor == CWORK_GO_FORK || flavor == CWORK_GO_UPSTREAM) return 0;
    return cw_error(err, CWORK_EINVAL,
                    "%s: unknown go_flavor %d (want CWORK_GO_FORK or "
                    "CWORK_GO_UPSTREAM)",
                    what, (int)flavor);
}

void cw_go_flavor_warn_mixed(atomic_int *warned, int kind, cwork_go_flavor flavor,
                             const char *detail)
{
    if (atomic_fetch_or(warned, kind) & kind) return;
    const char *other = flavor == CWORK_GO_UPSTREAM ? "fork" : "upstream";
    char hint[300];
    snprintf(hint, sizeof hint,
             "the namespace is shared with Go processes of the %s flavour; if that is "
             "meant, set go_flavor=%s (cwork --go-flavor %s, CWORK_GO_FLAVOR=%s) on every "
             "cwork process of the namespace (README \"Go flavours\")",
             other, other, other, other);
    cw_log(CWORK_LOG_WARN, "go_flavor.mixed_namespace", "go_flavor", cwork_go_flavor_name(flavor),
           "seen", detail, "hint", hint, NULL);
}
