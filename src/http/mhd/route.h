/*
 * Route tables of the control listener, below every router that uses them (the control
 * plane's /api/v1 routes and the dashboard's /dashboard/api routes): a path matched
 * against a pattern, and a request's row found in a table.
 */
#ifndef SG_HTTP_MHD_ROUTE_H
#define SG_HTTP_MHD_ROUTE_H

#include <stdbool.h>
#include <stddef.h>

#include "http/mhd/http.h"

/* Matches path against a route pattern ("{}" captures one segment), capturing
 * parameters into req->params (pointers into scratch, a copy of the path). */
bool sg__route_match(const char *pattern, const char *path, char *scratch, size_t scratchsz,
                     sg_req *req);

/* Finds req's route in a table whose rows begin with `const char *method, *pattern` and
 * end with a NULL method; stride is the row size. Returns the row (params captured), or
 * NULL with resp holding the 404, or the 405 with its Allow header. Sets req->route. */
const void *sg__route_find(sg_req *req, sg_resp *resp, const void *table, size_t stride);

#endif
