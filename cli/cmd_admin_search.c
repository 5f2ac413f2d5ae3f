/* cwork retry|scheduled|dead --grep TEXT: the jobs of a set whose args or error hold a
 * text, newest first, from a bounded scan (cwork_client_search: the newest 10,000
 * members); the output says when the bound cut the search short. */
#include "cmd_admin.h"
#include "table.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static void print_json(const admin_opts *o, cwork_job_set set, const cwork_listed_job *jobs,
                       size_t n, const cwork_search_info *info, int *failed)
{
    const char *at_key = set == CWORK_SET_RETRY       ? "retry_at"
                         : set == CWORK_SET_SCHEDULED ? "run_at"
                                                      : "died_at";
    printf("{\"bounded\":%s,\"count\":%" PRId64 ",\"jobs\":[", info->bounded ? "true" : "false",
           info->matches);
    for (size_t i = 0; i < n && !*failed; i++) {
        cwork_error err = {0};
        char *enc = NULL;
        size_t len = 0;
        if (cwork_job_encode_flavor(jobs[i].job, o->flavor, &enc, &len, &err) != 0) {
            *failed = admin_fail(o, err.code ? err.code : CWORK_ENOMEM, &err);
            break;
        }
        printf("%s{\"%s\":%" PRId64 ",\"job\":", i ? "," : "", at_key, jobs[i].at);
        fwrite(enc, 1, len, stdout);
        putchar('}');
        cwork_free(enc);
    }
    printf("],\"scanned\":%" PRId64 ",\"total\":%" PRId64 "}\n", info->scanned, info->total);
}

/* "Dead jobs matching "boom": 3 in the newest 10000 of 25000 (page 1 of 1)". */
static void print_title(const admin_opts *o, cwork_job_set set, const cwork_search_info *info,
                        unsigned page)
{
    static const char *const titles[] = {[CWORK_SET_RETRY] = "Jobs to retry",
                                         [CWORK_SET_SCHEDULED] = "Scheduled jobs",
                                         [CWORK_SET_DEAD] = "Dead jobs"};
    char *text = text_clean(o->grep, strlen(o->grep), 0, NULL);
    int64_t pages = (info->matches + CWORK_PAGE_SIZE - 1) / CWORK_PAGE_SIZE;
    printf("%s matching \"%s\": %" PRId64, titles[set], text ? text : "?", info->matches);
    if (info->bounded)
        printf(" in the newest %" PRId64 " of %" PRId64 " (the search reads at most %d)",
               info->scanned, info->total, CWORK_SEARCH_MAX_SCAN);
    else
        printf(" of %" PRId64, info->total);
    if (info->matches > 0 && page <= pages)
        printf(" (page %u of %" PRId64 ")", page, pages);
    else if (info->matches > 0)
        printf("; page %u is past the end", page);
    printf("\n");
    free(text);
}

int admin_search(const admin_opts *o, cwork_client *client)
{
    cwork_job_set set = admin_set(o->cmd);
    unsigned page = o->page ? o->page : 1;
    cwork_search_query q = {o->grep, page, CWORK_PAGE_SIZE, 0};
    cwork_listed_job *jobs = NULL;
    size_t n = 0;
    cwork_search_info info;
    cwork_error err = {0};
    int rc = cwork_client_search(client, set, &q, &jobs, &n, &info, &err);
    if (rc != 0) return admin_fail(o, rc, &err);
    int status = CLI_OK;
    if (o->seen & OPT_JSON) {
        print_json(o, set, jobs, n, &info, &status);
    } else {
        print_title(o, set, &info, page);
        if (n) status = admin_print_jobs(o, set, jobs, n);
        if (status == CLI_OK && (int64_t)page * CWORK_PAGE_SIZE < info.matches)
            printf("Next page: --page %u\n", page + 1);
    }
    cwork_listed_jobs_free(jobs, n);
    return status;
}
