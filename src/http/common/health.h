/*
 * /healthz and /readyz, the same on every listener (control, runtime): what they answer,
 * to which methods, with which headers. Each listener decides only what its checks are.
 *
 *   GET|HEAD /healthz  200 {"status":"ok"}: the process answers HTTP (liveness).
 *   GET|HEAD /readyz   200 {"status":"ready","checks":{…}…} when the process can serve,
 *                      else 503 {"status":"not_ready",…} with Retry-After: 1.
 *   other methods      405 method_not_allowed with Allow: GET, HEAD.
 * Both answer Cache-Control: no-store (a cached probe answer would hide an outage).
 * Nothing here allocates, so the runtime's request path may call it.
 */
#ifndef SG_HTTP_COMMON_HEALTH_H
#define SG_HTTP_COMMON_HEALTH_H

#include <stdbool.h>
#include <stddef.h>

#define SG_HEALTH_ALLOW "GET, HEAD"
#define SG_HEALTH_CACHE_CONTROL "no-store"
#define SG_HEALTH_RETRY_AFTER 1 /* seconds, on a 503 from /readyz */

typedef struct {
  const char *name;  /* JSON-safe constant */
  const char *value; /* "ok" or a JSON-safe word saying what is wrong */
} sg_health_check;

/* True for the methods the probes answer (GET, HEAD). */
bool sg_health_method_ok(const char *method);

/* The /healthz body. */
extern const char sg_health_live_body[];
extern const size_t sg_health_live_len;

/* Writes the /readyz body into out[cap]: status, the checks in order, then extra (a
 * JSON-safe run of members such as "\"revision\":3", or NULL). Returns the HTTP status (200
 * when ready, else 503) and sets *len; a body that does not fit is cut to the status alone. */
unsigned sg_health_ready_body(bool ready, const sg_health_check *checks, size_t n,
                              const char *extra, char *out, size_t cap, size_t *len);

#endif
