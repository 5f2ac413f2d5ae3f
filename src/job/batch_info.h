/* A tracked batch's id and the fields of its hash (PROTOCOL §23.1), shared by the
 * enqueuer (cwork_batch_read) and the admin client (cwork_client_batch), which both read
 * the hash. */
#ifndef CWORK_BATCH_INFO_H
#define CWORK_BATCH_INFO_H

#include "cwork.h"

#include <stddef.h>

/* 0 when id is a batch id (24 lower-case hex digits), else CWORK_EINVAL saying so. */
int cw_batch_check_id(const char *id, cwork_error *err);

/* Reads field f (f_len bytes) of the batch hash key into out, value v (v_len bytes);
 * fields cwork does not show are skipped. CWORK_EPROTO naming key and field when a count
 * or a time is not an integer. */
int cw_batch_info_field(const char *key, const char *f, size_t f_len, const char *v, size_t v_len,
                        cwork_batch_info *out, cwork_error *err);

/* After the last field: what is derived from the counts (pending). */
void cw_batch_info_finish(cwork_batch_info *out);

#endif
