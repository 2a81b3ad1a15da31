/*
 * The dashboard's server side (docs/DESIGN.md §7, docs/DASHBOARD.md): its JSON API under
 * /dashboard/api/ on the control listener, authenticated by a session cookie and a CSRF
 * token, with every action checked against the member's role in one table.
 */
#ifndef SG_DASHBOARD_DASHBOARD_H
#define SG_DASHBOARD_DASHBOARD_H

#include "control/control.h"

#include "control/internal.h"

/* The control listener's worker pools (sg_http_config.pools, req->pool): handlers that
 * block run there, never on a connection thread (docs/DASHBOARD.md "Worker pools").
 * Argon2id (sign-in, member creation, password change): two threads, as each hash takes
 * 64 MiB. Preview artifact loads: two threads. Each pool takes --worker-queue more. */
#define SG__POOL_PASSWORD 1
#define SG__POOL_ARTIFACT 2
#define SG__POOL_PASSWORD_THREADS 2
#define SG__POOL_ARTIFACT_THREADS 2

/* The dashboard as the control plane mounts it (control/control.h: sg_control_mount):
 * everything under /dashboard, with its sign-in limiters and CSRF secret started and
 * stopped with the control plane. */
extern const sg_control_mount sg_dashboard_mount;

#endif
