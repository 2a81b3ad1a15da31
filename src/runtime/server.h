/*
 * Internals shared by the runtime's HTTP server (http/respond.c, http/route.c, http/loop.c)
 * and its loader.c and server.c; the handlers' interface is rt.h.
 */
#ifndef SG_RUNTIME_SERVER_H
#define SG_RUNTIME_SERVER_H

#include <stdint.h>

#include "runtime/http/http1.h"
#include "runtime/rt.h"

/* respond.c: the monotonic clock in microseconds (request durations). */
int64_t sg__rt_now_us(void);
/* respond.c: counts the answer r->status in the metrics and writes its access-log line. */
void sg__rt_access_log(const sg__rt_req *r);

/* route.c: the sg__h1_handler of every runtime connection (ctx: the sg_runtime). */
void sg__rt_on_request(void *ctx, sg__h1_conn *c, const sg__h1_req *req, sg_err err);
/* route.c: registers each route's metrics label in rt->route_ids. */
void sg__rt_routes_register(sg_runtime *rt);

/* loop.c: starts rt->cfg.threads workers on rt->listen_fd (rt->wake_fd and rt->workers
 * set up). Returns 0, or -1 with the workers started so far stopped again. */
int sg__rt_workers_start(sg_runtime *rt);
/* loop.c: sets rt->stopping, wakes every worker, which closes its connections and exits;
 * joins them. The loader is stopped separately (it also sees stopping). */
void sg__rt_workers_stop(sg_runtime *rt);
/* loop.c: the connections each worker serves, into out[0..max); returns how many workers
 * there are (a snapshot of hints, for the metrics). */
unsigned sg__rt_worker_connections(const sg_runtime *rt, unsigned *out, unsigned max);

/* loader.c: the loader thread's body (arg: the sg_runtime). */
void *sg__rt_loader_main(void *arg);

#endif
