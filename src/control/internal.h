/*
 * Internals shared by the control plane's handler files.
 */
#ifndef SG_CONTROL_INTERNAL_H
#define SG_CONTROL_INTERNAL_H

#include "control/control.h"
#include "control/ratelimit.h"

struct sg_control {
  sg_control_config cfg;
  sg_http_server *http;
  sg_ratelimit *rl_key;
  sg_ratelimit *rl_ip;
  uint8_t cursor_secret[32];
};

/* Every handler: the request is authenticated (req->auth is an sg_principal) and the
 * rate limits and Idempotency-Key are already handled. */
typedef void (*sg__handler)(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp);

/* Parses the request body as a JSON object. On failure fills resp with a 400 (or 413)
 * and returns NULL. */
json_t *sg__body_object(sg_req *req, sg_resp *resp);
/* Adds an "unknown_field" error for each member of obj not named in allowed (NULL-ended). */
void sg__reject_unknown(const json_t *obj, const char *const *allowed, const char *prefix,
                        json_t **fields);
/* Reads limit (1..100, default 50) and cursor from the query string; on error fills resp
 * and returns -1. *after is the decoded sort key or NULL for the first page. */
int sg__page_params(sg_control *c, sg_req *req, sg_resp *resp, const char *scope, size_t *limit,
                    json_t **after);
/* Sends {data, nextCursor, requestId}; next_key (stolen, may be NULL) is encoded. */
void sg__page_respond(sg_control *c, sg_req *req, sg_resp *resp, const char *scope, json_t *data,
                      json_t *next_key);
/* Maps a store error to the response (invalid_list, internal_error, ...). */
void sg__store_error(sg_req *req, sg_resp *resp, sg_err e);
/* Sends a list with its ETag header. Steals list. */
void sg__send_list(sg_req *req, sg_resp *resp, int status, json_t *list);
/* Length of a UTF-8 string in code points. */
size_t sg__cp_len(const char *s);

/* Writes the list's edge record (what the runtime serves from) and returns the edgeSync
 * member {revision, state}: "synced" when the edge store took the write, "pending" when it
 * failed (the next publish or PATCH retries it). */
json_t *sg__edge_sync_list(sg_control *c, const sg_principal *who, const json_t *list);

/* Handlers, one per file. */
void sg__h_lists_index(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp);
void sg__h_lists_create(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp);
void sg__h_list_get(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp);
void sg__h_token(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp);
void sg__h_list_patch(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp);

#endif
