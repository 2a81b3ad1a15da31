/*
 * The runtime's shared state behind one seam: selection rate limits, monthly quota
 * counters, selection dedupe and the selection event sink.
 *
 * Two backends. local (state/local.c): everything in this process, persisted under
 * --state-dir. redis (state/redis.c): the state every runtime of a fleet shares, in the
 * Redis named by --edge redis://…, so that several runtimes share limits, counters and
 * the 24-hour dedupe window. The query path stays as cheap as
 * before whatever the backend: counting a query is one atomic increment on a slot the
 * backend hands out (sg__quota_take), and the backend reconciles the slots with its
 * store in flush, on the loader thread (every second for local, every 500 ms for Redis).
 */
#ifndef SG_RUNTIME_STATE_H
#define SG_RUNTIME_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/rt.h"

typedef struct sg_rt_state sg_rt_state;

/* What the runtime's /readyz and metrics report of its state backend. */
typedef struct {
  bool shared; /* a fleet backend (Redis), false for local */
  bool up;                /* reachable, as the last operations found it */
  uint64_t quota_pending; /* queries counted here, not yet in the shared counters */
} sg_rt_state_stats;

typedef struct {
  /* The quota slot of an application (created at 0). Loader thread only; the slot lives
   * until close, so snapshots hold plain pointers to it. */
  sg__quota_slot *(*quota_slot)(sg_rt_state *st, const char *app_id);
  /* One selection report, as one step (one Redis round trip): takes a token from the
   * bucket of rate_key (`selection_rate` a minute; none left: RATE_LIMITED with
   * *retry_after_s the whole seconds until the next one), then checks and sets the
   * selection id (24-hour window) and appends the event. A duplicate appends nothing, and
   * an event that cannot be recorded now (BUSY: queue full, Redis unreachable) leaves its
   * id unset so the client's retry is accepted. */
  sg__ev_result (*selection_record)(sg_rt_state *st, const sg__selection *s, const char *app_id,
                                    const char *key_id, const char *rate_key, int64_t now_ms,
                                    int *retry_after_s);
  /* Persists (local) or reconciles with the fleet (Redis) the quota counters, rolling
   * them over on a new UTC month. Loader thread, every 1 s (local) or 500 ms (shared),
   * and at shutdown. */
  int (*flush)(sg_rt_state *st, int64_t now_s);
  /* Blocks until every event accepted so far is durable (tests, shutdown). */
  void (*sync)(sg_rt_state *st);
  /* Whether the state can be used now (0, or -1 with errno). Answers from what the last
   * operations saw, without a round trip, so /readyz and metrics may call it freely. */
  int (*check)(sg_rt_state *st);
  void (*stats)(sg_rt_state *st, sg_rt_state_stats *out);
  void (*close)(sg_rt_state *st);
} sg_rt_state_ops;

struct sg_rt_state {
  const sg_rt_state_ops *ops;
};

/* Opens the state named by spec: a directory (the local backend; created when missing)
 * or a redis:// URL (the Redis backend). selection_rate is the per-key selection reports
 * allowed a minute. */
int sg_rt_state_open(const char *spec, uint32_t selection_rate, sg_rt_state **out);

/* The local backend (state/local.c): dir is created when missing. */
int sg__rt_state_local_open(const char *dir, uint32_t selection_rate, sg_rt_state **out);
/* The Redis backend (state/redis.c). Opening does not need Redis to be up: the backend
 * connects (and reconnects) when it needs to. Fails only on a bad URL or no memory. */
int sg__rt_state_redis_open(const char *url, uint32_t selection_rate, sg_rt_state **out);

static inline sg__quota_slot *sg_rt_state_quota_slot(sg_rt_state *st, const char *app_id) {
  return st->ops->quota_slot(st, app_id);
}
static inline sg__ev_result sg_rt_state_selection_record(sg_rt_state *st, const sg__selection *s,
                                                         const char *app_id, const char *key_id,
                                                         const char *rate_key, int64_t now_ms,
                                                         int *retry_after_s) {
  return st->ops->selection_record(st, s, app_id, key_id, rate_key, now_ms, retry_after_s);
}
static inline int sg_rt_state_flush(sg_rt_state *st, int64_t now_s) {
  return st->ops->flush(st, now_s);
}
static inline void sg_rt_state_sync(sg_rt_state *st) { st->ops->sync(st); }
static inline int sg_rt_state_check(sg_rt_state *st) { return st->ops->check(st); }
static inline void sg_rt_state_stats_get(sg_rt_state *st, sg_rt_state_stats *out) {
  st->ops->stats(st, out);
}
static inline void sg_rt_state_close(sg_rt_state *st) {
  if (st) st->ops->close(st);
}

#endif
