/*
 * Selection events: dedupe on selectionId and a background NDJSON writer.
 *
 * A request thread checks the selectionId against a 24-hour dedupe set and queues one
 * serialised line; it never touches a file. The writer thread appends queued lines to
 * <dir>/selections-YYYY-MM-DD.ndjson (UTC date of the event) and fsyncs at most once a
 * second (and on sync/close), so an accepted report can be lost only by a machine crash
 * within that second. The segments are the durable dedupe memory: at start the ids of
 * the last 24 hours are reloaded from today's and yesterday's segments. Counts come from
 * the analytics (state/analytics.c), not from these files, so the writer deletes
 * segments older than yesterday (UTC) at start and every hour: they stay bounded.
 *
 * Line format (one JSON object per line):
 *   {"tsMs":…,"ts":"RFC 3339","selectionId":"…","queryRequestId":"…","listId":"…",
 *    "itemId":"…","position":n,"query":"…"|null,"applicationId":"…","keyId":"pk_…"}
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/metrics.h"
#include "common/util.h"
#include "state/internal.h"

#define DAY_MS (24LL * 3600 * 1000)
#define QUEUE_CAP 65536
#define DEDUPE_MIN (1u << 12)
#define DEDUPE_MAX (1u << 22)

typedef struct {
  uint8_t id[16];
  int64_t ts_ms; /* 0 = empty */
} seen;

typedef struct {
  char *line;
  size_t len;
  int64_t ts_ms;
} queued;

struct sg__events {
  char *dir;
  pthread_mutex_t mu;
  pthread_cond_t cv, idle;
  /* dedupe set (open addressing, linear probing; expired entries stay until a rehash) */
  seen *set;
  size_t set_cap, set_used;
  /* queue */
  queued q[QUEUE_CAP];
  size_t head, n;
  uint64_t enq, written, synced; /* sequence numbers, for sync */
  bool stop, sync_req;
  pthread_t thread;
};

/* ---------------------------------------------------------------- dedupe --------- */

static void uuid_bytes(const char *u, uint8_t out[16]) {
  size_t k = 0;
  for (size_t i = 0; i < 36 && k < 32; i++) {
    char c = u[i];
    if (c == '-') continue;
    unsigned v = (c >= '0' && c <= '9') ? (unsigned)(c - '0') : (unsigned)((c | 32) - 'a' + 10);
    if (k % 2 == 0)
      out[k / 2] = (uint8_t)(v << 4);
    else
      out[k / 2] |= (uint8_t)v;
    k++;
  }
}

static size_t slot_of(const uint8_t id[16], size_t cap) {
  uint64_t h;
  memcpy(&h, id + 8, sizeof h);
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 32;
  return (size_t)h & (cap - 1);
}

/* 1 when id was seen after `horizon`, 0 otherwise (then *free_slot is where to put it). */
static int set_find(struct sg__events *ev, const uint8_t id[16], int64_t horizon,
                    size_t *free_slot) {
  size_t i = slot_of(id, ev->set_cap), reuse = SIZE_MAX;
  for (;;) {
    seen *s = &ev->set[i];
    if (s->ts_ms == 0) break;
    if (memcmp(s->id, id, 16) == 0) {
      if (s->ts_ms > horizon) return 1;
      reuse = i; /* the same id, expired: overwrite in place */
      break;
    }
    if (s->ts_ms <= horizon && reuse == SIZE_MAX) reuse = i;
    i = (i + 1) & (ev->set_cap - 1);
  }
  *free_slot = reuse != SIZE_MAX ? reuse : i;
  return 0;
}

static int set_rehash(struct sg__events *ev, int64_t horizon) {
  size_t live = 0;
  for (size_t i = 0; i < ev->set_cap; i++)
    if (ev->set[i].ts_ms > horizon) live++;
  size_t cap = DEDUPE_MIN;
  while (cap < live * 4 && cap < DEDUPE_MAX) cap *= 2;
  if (live * 2 >= cap) return -1; /* full of live ids */
  seen *ns = calloc(cap, sizeof *ns);
  if (!ns) return -1;
  for (size_t i = 0; i < ev->set_cap; i++) {
    seen *s = &ev->set[i];
    if (s->ts_ms <= horizon) continue;
    size_t j = slot_of(s->id, cap);
    while (ns[j].ts_ms) j = (j + 1) & (cap - 1);
    ns[j] = *s;
  }
  free(ev->set);
  ev->set = ns;
  ev->set_cap = cap;
  ev->set_used = live;
  return 0;
}

/* Records id at ts. Returns 1 when it was already there (duplicate), 0 when inserted,
 * -1 when the set is full. Caller holds mu. */
static int set_insert(struct sg__events *ev, const uint8_t id[16], int64_t ts_ms, int64_t now_ms) {
  int64_t horizon = now_ms - DAY_MS;
  size_t at;
  if (set_find(ev, id, horizon, &at)) return 1;
  if (ev->set[at].ts_ms == 0 && (ev->set_used + 1) * 2 > ev->set_cap) {
    if (set_rehash(ev, horizon)) return -1;
    set_find(ev, id, horizon, &at);
  }
  if (ev->set[at].ts_ms == 0) ev->set_used++;
  memcpy(ev->set[at].id, id, 16);
  ev->set[at].ts_ms = ts_ms > 0 ? ts_ms : 1;
  return 0;
}

/* ---------------------------------------------------------------- segments ------- */

static void segment_path(const struct sg__events *ev, int64_t ts_ms, char *out, size_t outsz) {
  time_t t = (time_t)(ts_ms / 1000);
  struct tm tm;
  gmtime_r(&t, &tm);
  snprintf(out, outsz, "%s/selections-%04d-%02d-%02d.ndjson", ev->dir, tm.tm_year + 1900,
           tm.tm_mon + 1, tm.tm_mday);
}

static void reload_segment(struct sg__events *ev, const char *path, int64_t now_ms) {
  FILE *f = fopen(path, "r");
  if (!f) return;
  char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  while ((n = getline(&line, &cap, f)) > 0) {
    json_t *o = json_loadb(line, (size_t)n, 0, NULL);
    json_t *sid = json_object_get(o, "selectionId"), *ts = json_object_get(o, "tsMs");
    if (json_is_string(sid) && json_string_length(sid) == 36 && json_is_integer(ts)) {
      uint8_t id[16];
      uuid_bytes(json_string_value(sid), id);
      if (json_integer_value(ts) > now_ms - DAY_MS)
        set_insert(ev, id, json_integer_value(ts), now_ms);
    }
    json_decref(o);
  }
  free(line);
  fclose(f);
}

static int append_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Deletes the segments of UTC days before yesterday. */
static void segments_gc(struct sg__events *ev) {
  char keep[PATH_MAX];
  segment_path(ev, sg_now_ms() - DAY_MS, keep, sizeof keep);
  const char *keep_name = strrchr(keep, '/') + 1;
  DIR *d = opendir(ev->dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    /* selections-YYYY-MM-DD.ndjson: names of the same length sort by date. */
    if (strncmp(e->d_name, "selections-", 11) != 0 || strlen(e->d_name) != strlen(keep_name) ||
        strcmp(e->d_name, keep_name) >= 0)
      continue;
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/%s", ev->dir, e->d_name) < (int)sizeof path) unlink(path);
  }
  closedir(d);
}

static void *writer_main(void *arg) {
  struct sg__events *ev = arg;
  int64_t last_gc = sg_mono_ms();
  segments_gc(ev);
  int fd = -1;
  char cur[PATH_MAX] = "";
  bool unsynced = false;
  int64_t last_sync = sg_mono_ms();
  enum { BATCH = 256 };
  queued batch[BATCH];
  pthread_mutex_lock(&ev->mu);
  for (;;) {
    while (ev->n == 0 && !ev->stop && !ev->sync_req &&
           !(unsynced && sg_mono_ms() - last_sync >= 1000)) {
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      ts.tv_nsec += 200 * 1000000L;
      if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
      }
      pthread_cond_timedwait(&ev->cv, &ev->mu, &ts);
    }
    if (sg_mono_ms() - last_gc >= 3600 * 1000) {
      last_gc = sg_mono_ms();
      pthread_mutex_unlock(&ev->mu);
      segments_gc(ev);
      pthread_mutex_lock(&ev->mu);
    }
    size_t nb = 0;
    while (ev->n && nb < BATCH) {
      batch[nb++] = ev->q[ev->head];
      ev->head = (ev->head + 1) % QUEUE_CAP;
      ev->n--;
    }
    bool drained = ev->n == 0;
    bool stop = ev->stop && drained;
    bool sync_now = drained && ev->sync_req;
    if (sync_now) ev->sync_req = false;
    pthread_mutex_unlock(&ev->mu);

    for (size_t i = 0; i < nb; i++) {
      char path[PATH_MAX];
      segment_path(ev, batch[i].ts_ms, path, sizeof path);
      if (strcmp(path, cur) != 0) {
        if (fd >= 0) {
          fsync(fd);
          close(fd);
        }
        fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        snprintf(cur, sizeof cur, "%s", fd >= 0 ? path : "");
      }
      if (fd < 0 || append_all(fd, batch[i].line, batch[i].len)) {
        fprintf(stderr, "{\"error\":\"selection event not written: %s\"}\n", strerror(errno));
        sg_metrics_selection_dropped(1);
      } else {
        sg_metrics_selection_written(1);
      }
      free(batch[i].line);
      unsynced = true;
    }
    bool synced = false;
    if (unsynced && (stop || sync_now || sg_mono_ms() - last_sync >= 1000)) {
      if (fd >= 0) fsync(fd);
      unsynced = false;
      last_sync = sg_mono_ms();
      synced = true;
    }

    pthread_mutex_lock(&ev->mu);
    ev->written += nb;
    if (synced || !unsynced) ev->synced = ev->written;
    pthread_cond_broadcast(&ev->idle);
    if (stop) break;
  }
  pthread_mutex_unlock(&ev->mu);
  if (fd >= 0) close(fd);
  return NULL;
}

/* ---------------------------------------------------------------- public --------- */

int sg__events_open(const char *dir, sg__events **out) {
  struct sg__events *ev = calloc(1, sizeof *ev);
  if (!ev) return -1;
  if (!(ev->dir = strdup(dir)) || sg_mkdirs(dir, 0755)) goto fail;
  ev->set_cap = DEDUPE_MIN;
  if (!(ev->set = calloc(ev->set_cap, sizeof *ev->set))) goto fail;
  pthread_mutex_init(&ev->mu, NULL);
  pthread_cond_init(&ev->cv, NULL);
  pthread_cond_init(&ev->idle, NULL);
  int64_t now = sg_now_ms();
  char p[PATH_MAX];
  segment_path(ev, now - DAY_MS, p, sizeof p);
  reload_segment(ev, p, now);
  segment_path(ev, now, p, sizeof p);
  reload_segment(ev, p, now);
  if (pthread_create(&ev->thread, NULL, writer_main, ev)) goto fail;
  *out = ev;
  return 0;
fail:
  free(ev->set);
  free(ev->dir);
  free(ev);
  return -1;
}

int sg__event_line(sg_buf *b, const sg__selection *s, const char *app_id, const char *key_id,
                   int64_t now_ms) {
  char ts[32];
  sg_rfc3339(now_ms / 1000, ts);
  int rc =
      sg_buf_printf(b, "{\"tsMs\":%lld,\"ts\":\"%s\",\"selectionId\":\"%s\",\"queryRequestId\":",
                    (long long)now_ms, ts, s->selection_id);
  rc = rc || sg_buf_json_str(b, s->query_request_id, strlen(s->query_request_id));
  rc = rc || sg_buf_puts(b, ",\"listId\":");
  rc = rc || sg_buf_json_str(b, s->list_id, strlen(s->list_id));
  rc = rc || sg_buf_puts(b, ",\"itemId\":");
  rc = rc || sg_buf_json_str(b, s->item_id, strlen(s->item_id));
  rc = rc || sg_buf_printf(b, ",\"position\":%lld,\"query\":", (long long)s->position);
  rc = rc || (s->query ? sg_buf_json_str(b, s->query, strlen(s->query)) : sg_buf_puts(b, "null"));
  rc = rc || sg_buf_puts(b, ",\"applicationId\":");
  rc = rc || sg_buf_json_str(b, app_id, strlen(app_id));
  rc = rc || sg_buf_puts(b, ",\"keyId\":");
  rc = rc || sg_buf_json_str(b, key_id, strlen(key_id));
  rc = rc || sg_buf_puts(b, "}\n");
  return rc ? -1 : 0;
}

sg__ev_result sg__events_submit(sg__events *ev, const sg__selection *s, const char *app_id,
                                const char *key_id, int64_t now_ms) {
  sg_buf b;
  sg_buf_init(&b, 16384);
  if (sg__event_line(&b, s, app_id, key_id, now_ms)) {
    sg_buf_free(&b);
    sg_metrics_selection_dropped(1);
    return SG__EV_BUSY;
  }
  uint8_t id[16];
  uuid_bytes(s->selection_id, id);
  sg__ev_result res;
  pthread_mutex_lock(&ev->mu);
  int64_t horizon = now_ms - DAY_MS;
  size_t at;
  if (set_find(ev, id, horizon, &at)) {
    res = SG__EV_DUPLICATE;
  } else if (ev->n == QUEUE_CAP || ev->stop) {
    res = SG__EV_BUSY;
  } else {
    int ins = set_insert(ev, id, now_ms, now_ms);
    if (ins == 0) {
      queued *qi = &ev->q[(ev->head + ev->n) % QUEUE_CAP];
      qi->len = b.len;
      qi->line = sg_buf_steal(&b, NULL);
      qi->ts_ms = now_ms;
      ev->n++;
      ev->enq++;
      pthread_cond_signal(&ev->cv);
      res = SG__EV_ACCEPTED;
    } else {
      res = ins > 0 ? SG__EV_DUPLICATE : SG__EV_BUSY;
    }
  }
  pthread_mutex_unlock(&ev->mu);
  sg_buf_free(&b);
  if (res == SG__EV_BUSY) sg_metrics_selection_dropped(1);
  return res;
}

void sg__events_sync(sg__events *ev) {
  pthread_mutex_lock(&ev->mu);
  uint64_t target = ev->enq;
  while (ev->synced < target) {
    ev->sync_req = true;
    pthread_cond_signal(&ev->cv);
    pthread_cond_wait(&ev->idle, &ev->mu);
  }
  pthread_mutex_unlock(&ev->mu);
}

void sg__events_close(sg__events *ev) {
  if (!ev) return;
  pthread_mutex_lock(&ev->mu);
  ev->stop = true;
  pthread_cond_signal(&ev->cv);
  pthread_mutex_unlock(&ev->mu);
  pthread_join(ev->thread, NULL);
  while (ev->n) {
    free(ev->q[ev->head].line);
    ev->head = (ev->head + 1) % QUEUE_CAP;
    ev->n--;
  }
  pthread_mutex_destroy(&ev->mu);
  pthread_cond_destroy(&ev->cv);
  pthread_cond_destroy(&ev->idle);
  free(ev->set);
  free(ev->dir);
  free(ev);
}
