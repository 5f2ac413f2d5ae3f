/* The commit's argument layout (the cycle script's ARGV[5] on, src/scripts/cycle.lua's
 * header; PROTOCOL §5.7 and §23), written once: commit.c builds the dispatcher's commit
 * with it and the script tests (tests/cycle_testutil.h) build theirs.
 *
 *   ARGV[5]      the groups: per type with finished jobs, CW_COMMIT_GROUP_BYTES bytes —
 *                type number (1-based), succeeded, failed — 16-bit big-endian each;
 *   then         the raw bytes of every succeeded job, group by group;
 *   then         per failed job, group by group, CW_COMMIT_FAIL_ARGS arguments: raw
 *                bytes, target (CW_COMMIT_TARGET_*), score, the re-encoded job;
 *   batch        (only when a job is in a tracked batch) <p>, now, TTL, the entries —
 *                CW_COMMIT_BATCH_ENTRY_BYTES each: position of the job's bytes (32-bit),
 *                type number (16-bit), kind (CW_COMMIT_BATCH_*) — then per entry its
 *                batch id and job id.
 *
 * The 16-bit fields hold because a pool has at most CW_MAX_CONCURRENCY jobs in flight
 * and CW_MAX_JOB_TYPES types (pool.h); the encoders assert it (CW_ASSERTS builds). */
#ifndef CWORK_COMMIT_LAYOUT_H
#define CWORK_COMMIT_LAYOUT_H

#include "invariant.h"

#include <stddef.h>
#include <stdint.h>

#define CW_COMMIT_GROUP_BYTES 6
#define CW_COMMIT_FAIL_ARGS 4
#define CW_COMMIT_BATCH_ENTRY_BYTES 7
#define CW_COMMIT_BATCH_FIXED_ARGS 4 /* <p>, now, TTL, the entries */
#define CW_COMMIT_BATCH_ENTRY_ARGS 2 /* batch id, job id */
#define CW_COMMIT_FIELD_MAX 0xffff

/* A failed job's target. */
#define CW_COMMIT_TARGET_RETRY "r"
#define CW_COMMIT_TARGET_DEAD "d"
#define CW_COMMIT_TARGET_CANCELLED "c" /* dead, as cancelled (PROTOCOL §21) */
#define CW_COMMIT_TARGET_DROP "-"

/* A batch entry's kind. */
#define CW_COMMIT_BATCH_SUCCEEDED 's'
#define CW_COMMIT_BATCH_RETRY 'r'
#define CW_COMMIT_BATCH_DEAD 'd' /* dead, or dropped (SkipDead) */

static inline void cw_commit_put16(unsigned char *at, size_t v)
{
    CW_ASSERT(v <= CW_COMMIT_FIELD_MAX);
    at[0] = (unsigned char)(v >> 8);
    at[1] = (unsigned char)(v & 0xff);
}

/* Writes one group at `at` (CW_COMMIT_GROUP_BYTES): type_number is 1-based. */
static inline void cw_commit_put_group(unsigned char *at, size_t type_number, size_t succeeded,
                                       size_t failed)
{
    CW_ASSERT(type_number >= 1);
    cw_commit_put16(at, type_number);
    cw_commit_put16(at + 2, succeeded);
    cw_commit_put16(at + 4, failed);
}

/* Writes one batch entry at `at` (CW_COMMIT_BATCH_ENTRY_BYTES): position is the job's
 * bytes' position in the commit's arguments (ARGV[5] is 0), type_number 1-based. */
static inline void cw_commit_put_batch_entry(unsigned char *at, size_t position, size_t type_number,
                                             int kind)
{
    CW_ASSERT(position <= UINT32_MAX && type_number >= 1);
    for (int b = 0; b < 4; b++)
        at[b] = (unsigned char)(position >> (24 - 8 * b));
    cw_commit_put16(at + 4, type_number);
    at[6] = (unsigned char)kind;
}

#endif
