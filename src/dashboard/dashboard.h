/*
 * The dashboard's server side (DESIGN §7, docs/DASHBOARD.md): its JSON API under
 * /dashboard/api/ on the control listener, authenticated by a session cookie and a CSRF
 * token, with every action checked against the member's role in one table.
 */
#ifndef SG_DASHBOARD_DASHBOARD_H
#define SG_DASHBOARD_DASHBOARD_H

#include <stdbool.h>

#include "control/internal.h"

/* The control listener's worker pools (sg_http_config.pools, req->pool): handlers that
 * block run there, never on a connection thread (docs/DASHBOARD.md "Worker pools").
 * Argon2id (sign-in, member creation, password change): two threads, as each hash takes
 * 64 MiB. Preview artifact loads: two threads. Each pool takes --worker-queue more. */
#define SG__POOL_PASSWORD 1
#define SG__POOL_ARTIFACT 2
#define SG__POOL_PASSWORD_THREADS 2
#define SG__POOL_ARTIFACT_THREADS 2

/* Sets up c->dash (sign-in limiters, the CSRF secret). Returns 0 or -1. */
int sg__dashboard_start(sg_control *c);
/* Frees c->dash; safe when never started. */
void sg__dashboard_stop(sg_control *c);

/* True for /dashboard and everything under it. */
bool sg__dashboard_path(const char *path);
/* The control plane's hooks hand every /dashboard request to these. */
sg_http_begin sg__dashboard_begin(sg_control *c, sg_req *req, sg_resp *resp,
                                  sg_http_stream *stream);
void sg__dashboard_dispatch(sg_control *c, sg_req *req, sg_resp *resp);

#endif
