/*
 * The local backend of the runtime's shared state (state/state.h): this process only.
 *
 *   <state-dir>/quota.json   monthly quota counters (quota.c)
 *   <state-dir>/events/      selection event segments, which also rebuild the 24-hour
 *                            dedupe set at start (events.c)
 *   <state-dir>/analytics/   analytics shipments, one file each
 *                            (<ms, 13 digits>-<shipment id>.json), until the control
 *                            plane's drain stored and deleted them
 * Rate-limit buckets live in memory (common/ratelimit.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/ratelimit.h"
#include "common/util.h"
#include "state/internal.h"

typedef struct {
  sg_rt_state base;
  char *dir;
  sg__quota *quota;
  sg__events *events;
  sg_ratelimit *rl;
} local_state;

static sg__quota_slot *local_quota_slot(sg_rt_state *st, const char *app_id) {
  return sg__quota_slot_for(((local_state *)st)->quota, app_id);
}

static sg__ev_result local_selection_record(sg_rt_state *st, const sg__selection *s,
                                            const char *app_id, const char *key_id,
                                            const char *rate_key, int64_t now_ms,
                                            int *retry_after_s) {
  local_state *l = (local_state *)st;
  /* The bucket runs on the monotonic clock: a wall-clock step must not refill it. */
  if (!sg_ratelimit_take_retry(l->rl, rate_key, sg_mono_ms(), retry_after_s))
    return SG__EV_RATE_LIMITED;
  return sg__events_submit(l->events, s, app_id, key_id, now_ms);
}

static int local_flush(sg_rt_state *st, int64_t now_s) {
  return sg__quota_flush(((local_state *)st)->quota, sg__utc_month(now_s));
}

static void local_sync(sg_rt_state *st) { sg__events_sync(((local_state *)st)->events); }

static int local_check(sg_rt_state *st) {
  return access(((local_state *)st)->dir, R_OK | W_OK | X_OK);
}

static void local_stats(sg_rt_state *st, sg_rt_state_stats *out) {
  *out = (sg_rt_state_stats){.shared = false, .up = local_check(st) == 0};
}

static int local_analytics_ship(sg_rt_state *st, const char *id, const char *doc, size_t len) {
  local_state *l = (local_state *)st;
  char path[PATH_MAX];
  if (snprintf(path, sizeof path, "%s/analytics", l->dir) >= (int)sizeof path ||
      sg_mkdirs(path, 0755) ||
      snprintf(path, sizeof path, "%s/analytics/%013lld-%s.json", l->dir, (long long)sg_now_ms(),
               id) >= (int)sizeof path)
    return -1;
  return sg_write_file_atomic(path, doc, len);
}

static void local_close(sg_rt_state *st) {
  local_state *l = (local_state *)st;
  if (l->quota) sg__quota_flush(l->quota, sg__utc_month(sg_now_s()));
  sg__quota_close(l->quota);
  sg__events_close(l->events);
  sg_ratelimit_free(l->rl);
  free(l->dir);
  free(l);
}

static const sg_rt_state_ops local_ops = {
    .quota_slot = local_quota_slot,
    .selection_record = local_selection_record,
    .flush = local_flush,
    .sync = local_sync,
    .check = local_check,
    .stats = local_stats,
    .analytics_ship = local_analytics_ship,
    .close = local_close,
};

static int local_open(const char *dir, uint32_t selection_rate, sg_rt_state **out) {
  local_state *l = calloc(1, sizeof *l);
  if (!l) return -1;
  l->base.ops = &local_ops;
  char path[PATH_MAX];
  const char *what = NULL;
  if (!(l->dir = strdup(dir)) || sg_mkdirs(dir, 0755)) {
    what = "cannot create state directory";
  } else if (snprintf(path, sizeof path, "%s/quota.json", dir) >= (int)sizeof path ||
             sg__quota_open(path, sg__utc_month(sg_now_s()), &l->quota)) {
    what = "cannot open quota counters";
  } else if (snprintf(path, sizeof path, "%s/events", dir) >= (int)sizeof path ||
             sg__events_open(path, &l->events)) {
    what = "cannot open selection events";
  } else if (!(l->rl = sg_ratelimit_new(selection_rate))) {
    what = "out of memory";
  }
  if (what) {
    int e = errno;
    fprintf(stderr, "{\"error\":\"runtime: %s: %s\"}\n", what, strerror(e));
    local_close(&l->base);
    errno = e;
    return -1;
  }
  *out = &l->base;
  return 0;
}

int sg__rt_state_local_open(const char *dir, uint32_t selection_rate, sg_rt_state **out) {
  return local_open(dir, selection_rate, out);
}
