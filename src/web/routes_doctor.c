/* The web UI's Doctor page (PROTOCOL §25, cwork_client_doctor):
 *
 *   GET  /doctor                              {"read_only", "findings": [{"kind", "key", "member",
 *                                             "problem", "action", "repaired",
 *                                             "repair_error"}]}: a check, no writes
 *   POST /doctor_repair?kind=K&key=KEY[&member=M]
 *                                             checks again and repairs the finding with
 *                                             that kind, key and member: {"repaired": 0|1,
 *                                             "findings": what a check finds afterwards};
 *                                             404 when no such finding is found any more,
 *                                             409 when a key the repair writes has another
 *                                             type (nothing written)
 *   POST /doctor_repair?all=1                 repairs every finding: {"repaired": N,
 *                                             "failed": N, "findings": those of the run}
 *
 * Both POSTs follow the server's rules for changes (same origin, 403 when read-only). */
#include "web.h"

#include "gojson.h"

#include <string.h>

static void put_str(cw_buf *b, const char *key, const char *v, size_t len)
{
    cw_buf_printf(b, "\"%s\":", key);
    if (v)
        cw_gj_encode_string(b, v, len);
    else
        cw_buf_puts(b, "null");
}

static void put_findings(cw_buf *b, const cwork_doctor_finding *f, size_t n)
{
    cw_buf_puts(b, "\"findings\":[");
    for (size_t i = 0; i < n; i++) {
        cw_buf_puts(b, i ? ",{" : "{");
        put_str(b, "kind", cwork_doctor_kind_name(f[i].kind),
                strlen(cwork_doctor_kind_name(f[i].kind)));
        cw_buf_putc(b, ',');
        put_str(b, "key", f[i].key, strlen(f[i].key));
        cw_buf_putc(b, ',');
        put_str(b, "member", f[i].member, f[i].member_len);
        cw_buf_putc(b, ',');
        put_str(b, "problem", f[i].problem, strlen(f[i].problem));
        cw_buf_putc(b, ',');
        put_str(b, "action", f[i].action, f[i].action ? strlen(f[i].action) : 0);
        cw_buf_printf(b, ",\"repaired\":%s,", f[i].repaired ? "true" : "false");
        put_str(b, "repair_error", f[i].repair_error,
                f[i].repair_error ? strlen(f[i].repair_error) : 0);
        cw_buf_putc(b, '}');
    }
    cw_buf_putc(b, ']');
}

/* One check (flags 0) or a repairing run, ended with {…prefix, "findings": […]}. */
static int run(const web_request *req, web_response *res, unsigned flags, cwork_doctor_finding **f,
               size_t *n)
{
    cwork_error err = {0};
    int rc = cwork_client_doctor(req->web->client, flags, f, n, &err);
    if (rc) cw_web_client_error(res, rc, &err);
    return rc;
}

void cw_web_route_doctor(const web_request *req, web_response *res)
{
    cwork_doctor_finding *f = NULL;
    size_t n = 0;
    if (run(req, res, 0, &f, &n) != 0) return;
    cw_buf b;
    cw_buf_init(&b);
    /* the page may have no summary to learn it from (a damaged namespace can fail it) */
    cw_buf_printf(&b, "{\"read_only\":%s,", req->web->read_only ? "true" : "false");
    put_findings(&b, f, n);
    cw_buf_putc(&b, '}');
    cwork_doctor_findings_free(f, n);
    cw_web_ok_indented(res, &b);
}

static void repair_all(const web_request *req, web_response *res)
{
    cwork_doctor_finding *f = NULL;
    size_t n = 0, repaired = 0, failed = 0;
    if (run(req, res, CWORK_DOCTOR_REPAIR, &f, &n) != 0) return;
    for (size_t i = 0; i < n; i++)
        repaired += f[i].repaired, failed += f[i].repair_error != NULL;
    cw_buf b;
    cw_buf_init(&b);
    cw_buf_printf(&b, "{\"repaired\":%zu,\"failed\":%zu,", repaired, failed);
    put_findings(&b, f, n);
    cw_buf_putc(&b, '}');
    cwork_doctor_findings_free(f, n);
    cw_web_ok_indented(res, &b);
}

void cw_web_route_doctor_repair(const web_request *req, web_response *res)
{
    char *all = NULL, *kind = NULL, *key = NULL, *member = NULL;
    if (cw_web_query(req, "all", &all) || cw_web_query(req, "kind", &kind) ||
        cw_web_query(req, "key", &key) || cw_web_query(req, "member", &member)) {
        cw_web_error(res, 400, "the query is not validly percent-encoded");
        goto out;
    }
    if (all && !strcmp(all, "1")) {
        repair_all(req, res);
        goto out;
    }
    if (!kind || !key) {
        cw_web_error(res, 400, "give all=1, or kind and key (and member) of a finding");
        goto out;
    }
    cwork_doctor_finding *f = NULL;
    size_t n = 0;
    if (run(req, res, 0, &f, &n) != 0) goto out;
    cwork_doctor_finding *hit = NULL;
    for (size_t i = 0; !hit && i < n; i++)
        if (!strcmp(cwork_doctor_kind_name(f[i].kind), kind) && !strcmp(f[i].key, key) &&
            (member ? f[i].member && f[i].member_len == strlen(member) &&
                          !memcmp(f[i].member, member, f[i].member_len)
                    : !f[i].member))
            hit = &f[i];
    if (!hit) {
        cwork_doctor_findings_free(f, n);
        cw_web_error(res, 404, "no such finding any more: %s %s", kind, key);
        goto out;
    }
    cwork_error err = {0};
    int rc = cwork_client_doctor_repair(req->web->client, hit, &err);
    cwork_doctor_findings_free(f, n);
    if (rc == CWORK_ETYPE) { /* a key in the way of the repair: nothing was written */
        cw_web_error(res, 409, "%s", err.message);
        goto out;
    }
    if (rc < 0) {
        cw_web_client_error(res, rc, &err);
        goto out;
    }
    f = NULL;
    n = 0;
    if (run(req, res, 0, &f, &n) != 0) goto out;
    cw_buf b;
    cw_buf_init(&b);
    cw_buf_printf(&b, "{\"repaired\":%d,", rc);
    put_findings(&b, f, n);
    cw_buf_putc(&b, '}');
    cwork_doctor_findings_free(f, n);
    cw_web_ok_indented(res, &b);
out:
    cw_free(all), cw_free(kind), cw_free(key), cw_free(member);
}
