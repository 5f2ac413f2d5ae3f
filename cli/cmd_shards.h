/* cwork shards' grow and finish (cmd_shards_grow.c), used by cmd_shards.c. */
#ifndef CWORK_CLI_CMD_SHARDS_H
#define CWORK_CLI_CMD_SHARDS_H

#include "cmd_admin.h"

/* Takes "grow" then S, or "finish", into o->arg and o->id (o: an admin_opts). */
int shards_take_positional(void *opts, const char *arg);
/* Runs the action o->arg names. */
int shards_action(const admin_opts *o, cwork_client *client);
/* The grow's progress: JSON members (",\"homes\":…") or lines of text. */
void shards_print_growth(const cwork_shards_growth *g, int json);

#endif
