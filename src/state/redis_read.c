/*
 * The Redis backend's reader (state/state.h), on the keys the runtimes write
 * (state/keys.h; state/redis.c):
 *
 * - usage: one MGET of the applications' counters of the month;
 * - selections: the events are not counted here: they wait in the stream until a control
 *   process's drain (control/drain.c) moves them into the store, which answers the
 *   counts (SG_STATE_IN_STORE);
 * - analytics_next / analytics_ack: the runtimes' analytics shipments, a second stream
 *   read the same way as the events;
 * - events_next / events_ack: the stream, read as a consumer of the group "drain", so
 *   that several control processes share the work and none is required. An entry is
 *   acknowledged (XACK) and deleted (XDEL) only when the consumer says it is done with
 *   it; entries a dead consumer left pending are claimed (XAUTOCLAIM) once idle for
 *   CLAIM_IDLE_MS.
 *
 * The reader connects at its first operation (and reconnects, common/redisx.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/redisx.h"
#include "common/util.h"
#include "state/internal.h"
#include "state/keys.h"

#define CLAIM_EVERY_MS 5000
#define KEY_MAX 512

/* The consumer's place in one stream. */
typedef struct {
  char stream[120];
  const char *field; /* the entry's field handed out as its line */
  int max;           /* entries a read returns at most */
  bool fresh;        /* (re)connected: make sure the group exists */
  bool own_pending;  /* read our own unacknowledged entries first ("0") */
  bool failing;      /* the group could not be made (logged once) */
  int64_t last_claim;
  /* Where the claim scan (XAUTOCLAIM) goes on: a long pending list is walked to its end
   * across calls rather than its first entries over and over. */
  char claim_cursor[48];
  redisReply *last; /* the reply the last read handed out */
} cursor;

typedef struct {
  sg_state_reader base;
  sg_redisx_url url; /* kept for the first connect; wiped at close */
  int timeout_ms;
  sg_redisx *x;
  char prefix[80]; /* "<URL prefix>:" */
  cursor ev;       /* the selection event stream (field "e") */
  cursor an;       /* the analytics shipments (field "a") */
} redis_reader;

static sg_redisx *conn(redis_reader *r) {
  if (!r->x && sg_redisx_open(&r->url, r->timeout_ms, true, &r->x)) return NULL;
  return r->x;
}

static int redis_usage(sg_state_reader *base, int64_t now_s, const char *const *apps, size_t n,
                       int64_t *used) {
  redis_reader *r = (redis_reader *)base;
  for (size_t i = 0; i < n; i++) used[i] = 0;
  sg_redisx *x = conn(r);
  if (!x) return -1;
  if (n == 0) return 0;
  char month[40];
  sg__state_month_text(now_s, month);
  const char **argv = calloc(n + 1, sizeof *argv);
  char *keys = calloc(n, KEY_MAX);
  int rc = -1;
  if (argv && keys) {
    argv[0] = "MGET";
    for (size_t i = 0; i < n; i++) {
      snprintf(keys + i * KEY_MAX, KEY_MAX, "%s%s%s:%s", r->prefix, SG_STATE_KEY_QUOTA, month,
               apps[i] ? apps[i] : "");
      argv[i + 1] = keys + i * KEY_MAX;
    }
    redisReply *rep = sg_redisx_argv(x, (int)n + 1, argv, NULL);
    if (rep && rep->type == REDIS_REPLY_ARRAY && rep->elements == n) {
      for (size_t i = 0; i < n; i++)
        if (rep->element[i]->type == REDIS_REPLY_STRING)
          sg_parse_i64(rep->element[i]->str, 0, INT64_MAX, &used[i]);
      rc = 0;
    }
    if (!rep)
      rc = -1;
    else if (rc)
      errno = EIO;
    if (rep) freeReplyObject(rep);
  } else {
    errno = ENOMEM;
  }
  free(argv);
  free(keys);
  return rc;
}

static int redis_selections(sg_state_reader *base, const char *list_id, int64_t now_s, int days,
                            sg_state_selections *out) {
  memset(out, 0, sizeof *out);
  if (!list_id || !*list_id || days < 1 || days > SG_STATE_MAX_DAYS) {
    errno = EINVAL;
    return -1;
  }
  out->days = days;
  return SG_STATE_IN_STORE;
}

static void release(cursor *c) {
  if (c->last) freeReplyObject(c->last);
  c->last = NULL;
}

/* The entries of one reply ([id, [field, value, …]] each) into out. */
static size_t entries_of(const redisReply *entries, const cursor *c, sg_state_event *out) {
  size_t n = 0;
  if (entries->type != REDIS_REPLY_ARRAY) return 0;
  for (size_t i = 0; i < entries->elements && n < (size_t)c->max; i++) {
    const redisReply *e = entries->element[i];
    if (e->type != REDIS_REPLY_ARRAY || e->elements < 1 ||
        e->element[0]->type != REDIS_REPLY_STRING)
      continue;
    sg_state_event *ev = &out[n++];
    *ev = (sg_state_event){.id = e->element[0]->str};
    if (e->elements != 2 || e->element[1]->type != REDIS_REPLY_ARRAY) continue;
    const redisReply *fields = e->element[1], *line = NULL;
    for (size_t k = 0; k + 1 < fields->elements; k += 2)
      if (fields->element[k]->type == REDIS_REPLY_STRING &&
          strcmp(fields->element[k]->str, c->field) == 0)
        line = fields->element[k + 1];
    if (line && line->type == REDIS_REPLY_STRING) {
      ev->line = line->str;
      ev->len = line->len;
    }
  }
  return n;
}

static int cursor_next(redis_reader *r, cursor *cu, const char *consumer, int block_ms,
                       sg_state_event *out, size_t *n) {
  release(cu);
  *n = 0;
  sg_redisx *x = conn(r);
  redisReply *rep;
  if (cu->fresh || !x) {
    rep = x ? sg_redisx_cmd(x, "XGROUP CREATE %s %s 0 MKSTREAM", cu->stream, SG_STATE_STREAM_GROUP)
            : NULL;
    /* BUSYGROUP: another process (or an earlier run) made it. */
    bool ok = rep && (rep->type != REDIS_REPLY_ERROR || strncmp(rep->str, "BUSYGROUP", 9) == 0);
    if (rep) freeReplyObject(rep);
    if (!ok) {
      if (!cu->failing)
        fprintf(stderr, "{\"error\":\"drain of %s: Redis unreachable\"}\n", cu->stream);
      cu->failing = cu->fresh = true;
      return -1;
    }
    cu->failing = cu->fresh = false;
    cu->own_pending = true;
  }
  int64_t now = sg_mono_ms();
  const redisReply *entries = NULL;
  /* Looked for six times per idle time, at most every CLAIM_EVERY_MS, at least every 100 ms. */
  int idle = r->base.claim_idle_ms > 0 ? r->base.claim_idle_ms : SG_STATE_CLAIM_IDLE_MS;
  int64_t every = idle / 6 < CLAIM_EVERY_MS ? idle / 6 : CLAIM_EVERY_MS;
  if (every < 100) every = 100;
  if (!cu->claim_cursor[0]) snprintf(cu->claim_cursor, sizeof cu->claim_cursor, "0-0");
  if (now - cu->last_claim >= every) {
    cu->last_claim = now;
    rep = sg_redisx_cmd(x, "XAUTOCLAIM %s %s %s %d %s COUNT %d", cu->stream, SG_STATE_STREAM_GROUP,
                        consumer, idle, cu->claim_cursor, cu->max);
    /* [next cursor, [entries], [deleted ids]] */
    if (rep && rep->type == REDIS_REPLY_ARRAY && rep->elements >= 2) {
      entries = rep->element[1];
      const redisReply *next = rep->element[0];
      bool more = next->type == REDIS_REPLY_STRING && next->len < sizeof cu->claim_cursor &&
                  strcmp(next->str, "0-0") != 0;
      snprintf(cu->claim_cursor, sizeof cu->claim_cursor, "%s", more ? next->str : "0-0");
      if (more) cu->last_claim = now - every; /* the rest of the scan at once */
    }
  } else {
    rep = sg_redisx_cmd(x, "XREADGROUP GROUP %s %s COUNT %d BLOCK %d STREAMS %s %s",
                        SG_STATE_STREAM_GROUP, consumer, cu->max, block_ms, cu->stream,
                        cu->own_pending ? "0" : ">");
    /* [[stream, [entries]]], or nil when nothing came within block_ms. */
    if (rep && rep->type == REDIS_REPLY_ARRAY && rep->elements == 1 &&
        rep->element[0]->type == REDIS_REPLY_ARRAY && rep->element[0]->elements == 2)
      entries = rep->element[0]->element[1];
    if (cu->own_pending && rep && (!entries || entries->elements == 0)) cu->own_pending = false;
  }
  if (!rep || rep->type == REDIS_REPLY_ERROR) {
    if (rep) /* NOGROUP: Redis lost its data; make it again */
      fprintf(stderr, "{\"error\":\"drain of %s: %s\"}\n", cu->stream, rep->str);
    if (rep) freeReplyObject(rep);
    cu->fresh = true;
    return -2;
  }
  cu->last = rep;
  if (entries) *n = entries_of(entries, cu, out);
  return 0;
}

static int redis_events_next(sg_state_reader *base, const char *consumer, int block_ms,
                             sg_state_event *out, size_t *n) {
  redis_reader *r = (redis_reader *)base;
  return cursor_next(r, &r->ev, consumer, block_ms, out, n);
}

static int redis_analytics_next(sg_state_reader *base, const char *consumer, int block_ms,
                                sg_state_event *out, size_t *n) {
  redis_reader *r = (redis_reader *)base;
  return cursor_next(r, &r->an, consumer, block_ms, out, n);
}

static int cursor_ack(redis_reader *r, cursor *cu, const sg_state_event *ev, size_t n) {
  if (n == 0) return 0;
  if (n > SG_STATE_EVENTS_MAX || !r->x) {
    errno = EINVAL;
    return -1;
  }
  const char *argv[3 + SG_STATE_EVENTS_MAX];
  argv[0] = "XACK";
  argv[1] = cu->stream;
  argv[2] = SG_STATE_STREAM_GROUP;
  for (size_t i = 0; i < n; i++) argv[3 + i] = ev[i].id;
  redisReply *rep = sg_redisx_argv(r->x, (int)(3 + n), argv, NULL);
  if (!rep) {
    cu->fresh = true;
    return -1;
  }
  freeReplyObject(rep);
  /* Acknowledged and stored: the entry has no further use (the stream is never trimmed
   * otherwise). Left behind by a failure here, it is only memory. */
  argv[1] = "XDEL";
  argv[2] = cu->stream;
  rep = sg_redisx_argv(r->x, (int)(2 + n), argv + 1, NULL);
  if (rep) freeReplyObject(rep);
  return 0;
}

static int redis_events_ack(sg_state_reader *base, const sg_state_event *ev, size_t n) {
  redis_reader *r = (redis_reader *)base;
  return cursor_ack(r, &r->ev, ev, n);
}

static int redis_analytics_ack(sg_state_reader *base, const sg_state_event *ev, size_t n) {
  redis_reader *r = (redis_reader *)base;
  return cursor_ack(r, &r->an, ev, n);
}

static void redis_events_again(sg_state_reader *base) {
  ((redis_reader *)base)->ev.own_pending = true;
}

static void redis_close(sg_state_reader *base) {
  redis_reader *r = (redis_reader *)base;
  release(&r->ev);
  release(&r->an);
  sg_redisx_close(r->x);
  explicit_bzero(&r->url, sizeof r->url);
  free(r);
}

static const sg_state_reader_ops redis_reader_ops = {
    .usage = redis_usage,
    .selections = redis_selections,
    .events_next = redis_events_next,
    .events_ack = redis_events_ack,
    .events_again = redis_events_again,
    .analytics_next = redis_analytics_next,
    .analytics_ack = redis_analytics_ack,
    .close = redis_close,
};

int sg__state_redis_reader_open(const char *url, int timeout_ms, sg_state_reader **out) {
  redis_reader *r = calloc(1, sizeof *r);
  if (!r) return -1;
  char err[256];
  if (sg_redisx_parse(url, &r->url, err, sizeof err)) {
    explicit_bzero(&r->url, sizeof r->url);
    free(r);
    errno = EINVAL;
    return -1;
  }
  r->base.ops = &redis_reader_ops;
  r->timeout_ms = timeout_ms;
  r->ev = (cursor){.field = "e", .max = SG_STATE_EVENTS_MAX, .fresh = true, .own_pending = true};
  r->an = (cursor){.field = "a", .max = SG_STATE_SHIPMENTS_MAX, .fresh = true, .own_pending = true};
  snprintf(r->prefix, sizeof r->prefix, "%s:", r->url.prefix);
  snprintf(r->ev.stream, sizeof r->ev.stream, "%s:%s", r->url.prefix, SG_STATE_KEY_STREAM);
  snprintf(r->an.stream, sizeof r->an.stream, "%s:%s", r->url.prefix, SG_STATE_KEY_ANALYTICS);
  *out = &r->base;
  return 0;
}
