/* Internal logging front-end: formats fields and calls the user's logger callback. */
#ifndef CWORK_LOG_H
#define CWORK_LOG_H

#include "cwork.h"

/* True when a record at this level would reach a logger (skip building fields). */
int cw_log_enabled(cwork_log_level level);

/* Logs message with key/value pairs given as alternating const char* arguments and
 * ended by NULL: cw_log(CWORK_LOG_ERROR, "worker.fetch", "error", msg, NULL). */
void cw_log(cwork_log_level level, const char *message, ...);

#endif
