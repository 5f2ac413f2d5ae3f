/* The public cwork_args object: a GJ_OBJECT of job arguments built by the caller. */
#ifndef CWORK_ARGS_H
#define CWORK_ARGS_H

#include "gojson.h"

struct cwork_args {
    gj_value *obj; /* always a GJ_OBJECT */
};

/* The object inside a (borrowed; NULL when a is NULL), for encoding a job's args. */
const gj_value *cw_args_object(const cwork_args *a);

#endif
