/*
 * Process-wide metrics in the Prometheus text format (docs/OBSERVABILITY.md lists every
 * series).
 *
 * Request counters and latency histograms are kept per thread: each thread that answers
 * HTTP requests owns a shard (a block of counters only it writes, with relaxed atomic
 * stores, so no lock and no shared cache line on the request path), and sg_metrics_render
 * sums the shards. A shard outlives its thread: when the thread exits the shard is handed
 * to the next new thread, so totals never go backwards and the shard count stays bounded.
 * Rare events (publishes, selection events written) use global atomics. Components with
 * state to report (the runtime's snapshot, the control plane's store) register a
 * collector that writes its own families at scrape time.
 *
 * Routes are labels from a small registry (route templates, never raw paths), so label
 * cardinality is bounded by the code, not by clients.
 */
#ifndef SG_COMMON_METRICS_H
#define SG_COMMON_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "common/buf.h"

typedef enum {
  SG_LISTENER_CONTROL,
  SG_LISTENER_RUNTIME,
  SG_LISTENER_METRICS,
  SG_LISTENER__N
} sg_listener;

/* At most this many (listener, route) pairs; later registrations get "other". */
#define SG_METRICS_MAX_ROUTES 64

/* The listener named by an access-log name ("control", "runtime", "metrics"); control
 * for anything else. */
sg_listener sg_metrics_listener(const char *name);
const char *sg_metrics_listener_name(sg_listener l);

/* The id of route `key` on listener l, registering it on first use. A key with "{}"
 * segments (a router pattern) is shown with named parameters ("/lists/{}" ->
 * "/lists/{listId}"). NULL, or a full registry, gives the listener's "other" route.
 * Takes a mutex: call it at start-up and keep the id for a hot path. */
int sg_metrics_route(sg_listener l, const char *key);

/* The label of a route id ("other" for an unknown id). */
const char *sg_metrics_route_label(int route);

/* Counts one answered request of route id `route` with `status` that took `us`
 * microseconds (a 429 also counts as rate limited on the route's listener). Lock-free
 * and allocation-free after the calling thread's first call. */
void sg_metrics_http(int route, unsigned status, int64_t us);
/* One query answered from an artifact (billed: not query_too_short, not quota_exceeded). */
void sg_metrics_query_served(void);
/* One query answered from the runtime's answer cache (src/runtime/answer_cache.c). */
void sg_metrics_query_cache_hit(void);

/* One publish pipeline run that took `us` microseconds and ended in `state` ("active",
 * "draft", "failed", …: any other value counts as "other"). */
void sg_metrics_publish(const char *state, int64_t us);
/* Selection events appended to the event log, and events lost (queue full, write error). */
void sg_metrics_selection_written(uint64_t n);
void sg_metrics_selection_dropped(uint64_t n);

/* A collector appends whole metric families (# HELP, # TYPE and samples) to out. It runs
 * on the scraping thread while the registry's collector lock is held, so removing it
 * waits for a scrape in progress. */
typedef void (*sg_metrics_collector)(sg_buf *out, void *ctx);
int sg_metrics_add_collector(sg_metrics_collector fn, void *ctx);
void sg_metrics_remove_collector(sg_metrics_collector fn, void *ctx);

/* Appends the whole exposition (every family, then each collector's) to out. Returns 0,
 * or -1 when memory is short. */
int sg_metrics_render(sg_buf *out);

/* Helpers for collectors: "# HELP name help\n# TYPE name type\n". */
void sg_metrics_family(sg_buf *out, const char *name, const char *type, const char *help);

/* The Content-Type of the exposition. */
#define SG_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

#endif
