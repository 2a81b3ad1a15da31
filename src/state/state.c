/*
 * The shared state's entry points (state/state.h): the one place a spec is routed to a
 * backend, and the opens of its writer and reader.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "common/metrics.h"
#include "common/util.h"
#include "state/internal.h"

int sg_state_backend_of(const char *spec, sg_state_backend *out) {
  if (!spec || !*spec) {
    errno = EINVAL;
    return -1;
  }
  if (strncmp(spec, "rediss://", 9) == 0) {
    errno = ENOTSUP; /* hiredis 0.14 as built here has no TLS */
    return -1;
  }
  if (out) *out = strncmp(spec, "redis://", 8) == 0 ? SG_STATE_REDIS : SG_STATE_LOCAL;
  return 0;
}

/* A Redis URL's options (?prefix=…, ?chunk=…) are the edge store's: the state always
 * lives under the default prefix (docs/RUNTIME.md), for writers and readers alike. */
static const char *server_part(const char *spec, char *buf, size_t n) {
  const char *q = strchr(spec, '?');
  if (!q) return spec;
  if ((size_t)(q - spec) >= n) return NULL;
  snprintf(buf, n, "%.*s", (int)(q - spec), spec);
  return buf;
}

int sg_rt_state_open(const char *spec, uint32_t selection_rate, sg_rt_state **out) {
  sg_state_backend b;
  char buf[2048];
  if (!out || sg_state_backend_of(spec, &b)) {
    if (!out) errno = EINVAL;
    return -1;
  }
  if (b == SG_STATE_REDIS && !(spec = server_part(spec, buf, sizeof buf))) {
    errno = EINVAL;
    return -1;
  }
  return b == SG_STATE_REDIS ? sg__rt_state_redis_open(spec, selection_rate, out)
                             : sg__rt_state_local_open(spec, selection_rate, out);
}

int sg_state_reader_open(const char *spec, int timeout_ms, sg_state_reader **out) {
  sg_state_backend b;
  char buf[2048];
  if (!out || timeout_ms <= 0 || sg_state_backend_of(spec, &b)) {
    if (!out || timeout_ms <= 0) errno = EINVAL;
    return -1;
  }
  if (b == SG_STATE_REDIS && !(spec = server_part(spec, buf, sizeof buf))) {
    errno = EINVAL;
    return -1;
  }
  int rc = b == SG_STATE_REDIS ? sg__state_redis_reader_open(spec, timeout_ms, out)
                               : sg__state_local_reader_open(spec, out);
  if (rc == 0) (*out)->claim_idle_ms = SG_STATE_CLAIM_IDLE_MS;
  return rc;
}

void sg__state_month_text(int64_t unix_s, char out[40]) {
  time_t t = (time_t)unix_s;
  struct tm tm;
  gmtime_r(&t, &tm);
  snprintf(out, 40, "%04d-%02d", tm.tm_year + 1900, tm.tm_mon + 1);
}

void sg__state_day_text(int64_t unix_s, char out[40]) {
  time_t t = (time_t)unix_s;
  struct tm tm;
  gmtime_r(&t, &tm);
  snprintf(out, 40, "%04d-%02d-%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
}

/* ---------------------------------------------------------------- analytics ------ */

int sg_rt_state_analytics_on(sg_rt_state *st) {
  if (!st) {
    errno = EINVAL;
    return -1;
  }
  if (st->analytics) return 0;
  st->analytics_last_ship = sg_now_s();
  return sg_analytics_new(&st->analytics);
}

/* Sends the pending shipments, oldest first, while the backend takes them. */
static int send_pending(sg_rt_state *st) {
  size_t done = 0;
  while (done < st->n_pending &&
         st->ops->analytics_ship(st, st->pending[done].id, st->pending[done].doc,
                                 st->pending[done].len) == 0) {
    atomic_fetch_add(&st->an_shipped, 1);
    atomic_fetch_add(&st->an_rows, st->pending[done].rows);
    free(st->pending[done].doc);
    done++;
  }
  memmove(st->pending, st->pending + done, (st->n_pending - done) * sizeof st->pending[0]);
  st->n_pending -= done;
  atomic_store(&st->an_pending, st->n_pending);
  return st->n_pending ? -1 : 0;
}

int sg_rt_state_analytics_ship(sg_rt_state *st) {
  if (!st || !st->analytics) return 0;
  st->analytics_last_ship = sg_now_s();
  sg_buf b;
  sg_buf_init(&b, SG_ANALYTICS_SHIPMENT_MAX);
  size_t rows = 0;
  if (sg_analytics_collect(st->analytics, &b, &rows) == 0 && rows > 0) {
    if (st->n_pending == SG_ANALYTICS_PENDING) {
      /* The backend has been away for a long time: the oldest interval is lost. */
      fprintf(stderr, "{\"error\":\"analytics: backend unavailable; oldest shipment dropped\"}\n");
      free(st->pending[0].doc);
      atomic_fetch_add(&st->an_lost, 1);
      memmove(st->pending, st->pending + 1, (st->n_pending - 1) * sizeof st->pending[0]);
      st->n_pending--;
    }
    /* {"id":"shp_…", */
    const char *id = b.data + 7;
    const char *q = strchr(id, '"');
    size_t n = st->n_pending;
    snprintf(st->pending[n].id, sizeof st->pending[n].id, "%.*s", (int)(q ? q - id : 0), id);
    st->pending[n].len = b.len;
    st->pending[n].rows = rows;
    st->pending[n].doc = sg_buf_steal(&b, NULL);
    st->n_pending++;
  }
  sg_buf_free(&b);
  return send_pending(st);
}

void sg_rt_state_analytics_stats(sg_rt_state *st, sg_rt_analytics_stats *out) {
  *out = (sg_rt_analytics_stats){0};
  if (!st || !st->analytics) return;
  out->on = true;
  sg_analytics_totals(st->analytics, &out->queries, &out->selections);
  out->dropped_keys = sg_analytics_dropped(st->analytics);
  out->shipments = atomic_load(&st->an_shipped);
  out->rows = atomic_load(&st->an_rows);
  out->shipments_lost = atomic_load(&st->an_lost);
  out->pending = atomic_load(&st->an_pending);
}

int sg_rt_state_flush(sg_rt_state *st, int64_t now_s) {
  if (st->analytics &&
      (now_s - st->analytics_last_ship >= SG_ANALYTICS_SHIP_S || now_s < st->analytics_last_ship))
    sg_rt_state_analytics_ship(st);
  return st->ops->flush(st, now_s);
}

void sg_rt_state_close(sg_rt_state *st) {
  if (!st) return;
  if (st->analytics) {
    sg_rt_state_analytics_ship(st);
    for (size_t i = 0; i < st->n_pending; i++) free(st->pending[i].doc);
    sg_analytics_free(st->analytics);
    st->analytics = NULL;
  }
  st->ops->close(st);
}

void sg_state_consumer_name(char *out, size_t n) {
  char host[64] = "host";
  gethostname(host, sizeof host - 1);
  char rnd[24];
  sg_random_id("", rnd, sizeof rnd);
  snprintf(out, n, "%.40s-%ld-%s", host, (long)getpid(), rnd);
}
