/* Damaged keys in the answers (cwork_client_damage): what the request's client calls
 * met is added to a JSON object body as "damaged" and, for every answer (Go's bodies of
 * /queues, /worker_pools and /busy_worker are arrays, which keep their shape), to the
 * X-Cwork-Damaged header, which the UI reads to show its banner. */
#include "web.h"

#include "gojson.h"

#include <string.h>

/* The list as a JSON array, compact. */
static void damaged_json(cw_buf *b, const cwork_damaged_key *d, size_t n)
{
    cw_buf_putc(b, '[');
    for (size_t i = 0; i < n; i++) {
        const char *names[] = {"key", "type", "expected", "what"};
        const char *values[] = {d[i].key, d[i].type, d[i].expected, d[i].what};
        cw_buf_puts(b, i ? ",{" : "{");
        for (size_t f = 0; f < 4; f++) {
            cw_buf_printf(b, "%s\"%s\":", f ? "," : "", names[f]);
            cw_gj_encode_string(b, values[f], strlen(values[f]));
        }
        cw_buf_putc(b, '}');
    }
    cw_buf_putc(b, ']');
}

/* A header value is ASCII: the JSON percent-encoded (decodeURIComponent reads it). */
static char *percent_encoded(const cw_buf *json)
{
    static const char hex[] = "0123456789ABCDEF";
    cw_buf h;
    cw_buf_init(&h);
    for (size_t i = 0; i < json->len; i++) {
        unsigned char ch = (unsigned char)json->data[i];
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
            strchr("-_.~:,", ch)) {
            cw_buf_putc(&h, (char)ch);
        } else {
            cw_buf_putc(&h, '%');
            cw_buf_putc(&h, hex[ch >> 4]);
            cw_buf_putc(&h, hex[ch & 15]);
        }
    }
    char *out = NULL;
    size_t len = 0;
    if (cw_buf_give(&h, h.oom ? CWORK_ENOMEM : 0, &out, &len, NULL) != 0) return NULL;
    return out;
}

/* Inserts "damaged": json before the closing brace of res's object body. */
static void add_member(web_response *res, const cw_buf *json)
{
    size_t end = res->len;
    while (end > 0 && strchr(" \t\r\n", res->body[end - 1]))
        end--;
    if (end < 2 || res->body[0] != '{' || res->body[end - 1] != '}') return;
    size_t close = end - 1;
    while (close > 0 && strchr(" \t\r\n", res->body[close - 1]))
        close--;
    cw_buf b;
    cw_buf_init(&b);
    cw_buf_append(&b, res->body, close);
    /* indented as the body is (Go's MarshalIndent: a tab per level) */
    const char *sep = res->body[close] == '\n' ? "\n\t\"damaged\": " : "\"damaged\":";
    if (res->body[close - 1] != '{') cw_buf_putc(&b, ',');
    cw_buf_puts(&b, sep);
    cw_buf_append(&b, json->data, json->len);
    cw_buf_append(&b, res->body + close, res->len - close);
    char *body = NULL;
    size_t len = 0;
    if (cw_buf_give(&b, b.oom ? CWORK_ENOMEM : 0, &body, &len, NULL) != 0) return;
    cw_free(res->body);
    res->body = body;
    res->len = len;
}

void cw_web_add_damage(web_response *res)
{
    const cwork_damaged_key *d = NULL;
    size_t n = cwork_client_damage(&d);
    if (n == 0 || res->body_static) return;
    cw_buf json;
    cw_buf_init(&json);
    damaged_json(&json, d, n);
    if (!json.oom) {
        if (res->body && res->content_type && strcmp(res->content_type, WEB_JSON_TYPE) == 0)
            add_member(res, &json);
        res->damaged = percent_encoded(&json);
    }
    cw_buf_free(&json);
}
