/* Pure decisions and text of `cwork work` (work_text.c), table-tested by
 * tests/cli/test_cli_work_text.c: what becomes of a failed job, its retry delay, the
 * environment names of its args, the stderr tail kept as its error, the listen
 * address of --metrics-listen, and how durations are printed. */
#ifndef CWORK_CLI_WORK_TEXT_H
#define CWORK_CLI_WORK_TEXT_H

#include "cwork.h"

#include <stddef.h>
#include <stdint.h>

/* The exit status of a command that means "failed, do not retry": the job goes to the
 * dead set at once (dropped under --skip-dead). Outside what shells use for themselves
 * (126, 127, 128 + signal) and sysexits.h (64-78). */
#define WORK_EXIT_NO_RETRY 100

typedef enum work_outcome { WORK_RETRY, WORK_DEAD, WORK_DROP } work_outcome;

/* Where a failure of a job that failed fails_before times goes, as the pool's commit
 * decides it (src/pool/commit.c): the fork's skip_dead drops at once; then no_retry, or no
 * retries left (max_fails runs in all), means dead, or dropped under skip_dead. */
work_outcome work_outcome_of(const cwork_job_options *opts, int64_t fails_before, int no_retry);

/* Seconds until the retry of a job whose failure number `fails` (this one counted) it
 * is: Go's fails^4 + 15 + R * (fails + 1), with R in [0, 29] taken from a hash of the
 * job's id and fails rather than at random, so that the delay can be printed before the
 * pool uses it (the job type's backoff). Job ids are random: the spread is Go's. */
int64_t work_backoff_s(const char *job_id, int64_t fails);

/* The environment name for arg key: CWORK_ARG_ and the key upper-cased, each character
 * that is not an ASCII letter or digit (a UTF-8 sequence counts once) as '_'. out needs
 * strlen(key) + 11 bytes; returns the length written. */
size_t work_arg_env_name(const char *key, char *out);

/* The failure text from the last bytes of a command's stderr (data, len; lost_front:
 * the bytes before data were dropped, so its first line is partial): its last
 * max_lines lines that are not blank, each without trailing spaces and CR, joined by
 * '\n', whole lines from the end as long as they fit max_bytes (the last line alone
 * is cut to max_bytes, on a character boundary). out holds max_bytes + 1; returns the
 * length, 0 when stderr had nothing but blanks. */
size_t work_stderr_tail(const char *data, size_t len, int lost_front, char *out, size_t max_bytes,
                        size_t max_lines);

/* The last line of text (text itself when it has one line), its length in *len. */
const char *work_last_line(const char *text, size_t *len);

/* "0.84 s", "12.3 s", "4m05s", "2h03m" for a duration in milliseconds. */
void work_duration_text(int64_t ms, char *out, size_t size);

/* Splits --metrics-listen's ADDR: "PORT", ":PORT" (loopback, 127.0.0.1), "HOST:PORT"
 * or "[V6]:PORT"; port 0-65535. 0, or -1 for anything else. */
int work_listen_split(const char *addr, char *host, size_t host_size, char *port, size_t port_size);

#endif
