/*
 * The dashboard's server side (DESIGN §7, docs/DASHBOARD.md): its JSON API under
 * /dashboard/api/ on the control listener, authenticated by a session cookie and a CSRF
 * token, with every action checked against the member's role in one table.
 */
#ifndef SG_DASHBOARD_DASHBOARD_H
#define SG_DASHBOARD_DASHBOARD_H

#include "control/control.h"

/* The dashboard as the control plane mounts it (control/control.h: sg_control_mount):
 * everything under /dashboard, with its sign-in limiters and CSRF secret started and
 * stopped with the control plane. */
extern const sg_control_mount sg_dashboard_mount;

#endif
