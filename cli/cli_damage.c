/* Damaged keys in the output of the admin commands (cwork_client_damage): one warning
 * line per key on stderr, and a "damaged" array in JSON objects, so that a view shows
 * what it could read and says once what it could not. */
#include "cli.h"
#include "cmd_admin.h"

#include <string.h>

size_t cli_warn_damage(const char *label, const char *ns)
{
    const cwork_damaged_key *d = NULL;
    size_t n = cwork_client_damage(&d);
    for (size_t i = 0; i < n; i++)
        fprintf(stderr,
                "%s: warning: %s is a %s, expected a %s (%s); shown as damaged — cwork doctor "
                "--ns %s can repair it\n",
                label, d[i].key, d[i].type, d[i].expected, d[i].what, ns);
    return n;
}

static void json_field(const char *name, const char *value, int last)
{
    printf("\"%s\":", name);
    admin_json_string(value, strlen(value));
    if (!last) putchar(',');
}

void cli_json_damaged(void)
{
    const cwork_damaged_key *d = NULL;
    size_t n = cwork_client_damage(&d);
    putchar('[');
    for (size_t i = 0; i < n; i++) {
        printf("%s{", i ? "," : "");
        json_field("key", d[i].key, 0);
        json_field("type", d[i].type, 0);
        json_field("expected", d[i].expected, 0);
        json_field("what", d[i].what, 1);
        putchar('}');
    }
    putchar(']');
}

void cli_print_json_body(const char *body, size_t len)
{
    size_t end = len;
    while (end > 0 && strchr(" \t\r\n", body[end - 1]))
        end--;
    /* Arrays (Go's bodies for queues, pools, workers) keep their shape: the warnings on
     * stderr name the keys. */
    if (cwork_client_damage(NULL) == 0 || end < 2 || body[0] != '{' || body[end - 1] != '}') {
        fwrite(body, 1, len, stdout);
        return;
    }
    size_t close = end - 1;
    while (close > 0 && strchr(" \t\r\n", body[close - 1]))
        close--;
    fwrite(body, 1, close, stdout);
    /* indented as the body is (Go's MarshalIndent: a tab per level) */
    const char *sep = body[close] == '\n' ? "\n\t\"damaged\": " : "\"damaged\":";
    if (body[close - 1] != '{') putchar(',');
    fputs(sep, stdout);
    cli_json_damaged();
    fwrite(body + close, 1, len - close, stdout);
}
