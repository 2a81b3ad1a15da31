/*
 * The Redis backend of the runtime's shared state (state/state.h): what every runtime
 * of a fleet must share, in the Redis of --edge redis://… (keys: state/keys.h).
 *
 * - A selection report is one Lua script, one round trip: it takes a token from the
 *   key's bucket (Redis's clock, so every runtime refills alike), sets the selectionId
 *   with SET NX EX 86400 and appends the event to the stream with XADD. A refused token
 *   or a duplicate id appends nothing. Redis unreachable: BUSY (503 with retry-after), as
 *   an event accepted now could be lost.
 * - Quotas: the query path counts on a local slot exactly as the local backend does (one
 *   atomic increment, no round trip). flush (loader thread, every 500 ms) sends each
 *   slot's delta since the last flush with INCRBY on the month's counter and sets the
 *   slot to the fleet total it reads back plus what was counted meanwhile, so a quota
 *   holds across runtimes with an overshoot of at most one flush interval. When Redis is
 *   down the deltas stay in the slots (queries go on being counted and limited locally)
 *   and are sent, summed, once it returns.
 * Connections are common/redisx handles: request threads share a small pool of them,
 * the loader thread has its own, and while Redis is down a handle tries to reconnect at
 * most once per back-off (100 ms growing to 5 s), so an outage costs a selection no wait.
 * Keys live under the URL's prefix (state/keys.h).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/redisx.h"
#include "state/keys.h"
#include "common/util.h"
#include "state/internal.h"

#define POOL 4
/* A selection runs on a worker thread that also serves queries: a Redis that hangs may
 * hold it this long at most (then 503, and reconnects back off). */
#define SELECTION_TIMEOUT_MS 250
#define TIMEOUT_MS 1000
/* Slots reconciled by one script call (sg_redisx_eval takes at most 29 arguments). */
#define QUOTA_BATCH 14

/* KEYS: bucket, seen id, stream. ARGV: per-minute rate, event line, stream cap.
 * Returns {0, seconds to wait} (no token), {1} recorded, {2} duplicate, {3} stream full. */
static const char SELECTION_LUA[] =
    "local per = tonumber(ARGV[1])\n"
    "local t = redis.call('TIME')\n"
    "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
    "local b = redis.call('HMGET', KEYS[1], 't', 'ts')\n"
    "local tokens = tonumber(b[1]) or per\n"
    "local ts = tonumber(b[2]) or now\n"
    "if now > ts then tokens = math.min(per, tokens + (now - ts) * per / 60000) end\n"
    "if now < ts then now = ts end\n"
    "if tokens < 1 then\n"
    "  local wait = math.ceil((1 - tokens) * 60 / per)\n"
    "  if wait < 1 then wait = 1 end\n"
    "  return {0, wait}\n"
    "end\n"
    "redis.call('HSET', KEYS[1], 't', tostring(tokens - 1), 'ts', tostring(now))\n"
    "redis.call('PEXPIRE', KEYS[1], 61000)\n"
    "if redis.call('XLEN', KEYS[3]) >= tonumber(ARGV[3]) then return {3} end\n"
    "if not redis.call('SET', KEYS[2], '1', 'NX', 'EX', 86400) then return {2} end\n"
    "redis.call('XADD', KEYS[3], '*', 'e', ARGV[2])\n"
    "return {1}\n";

/* KEYS: monthly counters. ARGV: their deltas, then the expiry in seconds. Returns the
 * totals, in order. */
static const char QUOTA_LUA[] = "local ttl = ARGV[#KEYS + 1]\n"
                                "local out = {}\n"
                                "for i, k in ipairs(KEYS) do\n"
                                "  out[i] = redis.call('INCRBY', k, ARGV[i])\n"
                                "  redis.call('EXPIRE', k, ttl)\n"
                                "end\n"
                                "return out\n";

typedef struct {
  sg_redisx *x;
  sg_redisx_script script; /* per handle: its SHA-1 is guarded by the handle's mutex */
} conn;

typedef struct {
  sg_rt_state base;
  char prefix[80]; /* "<URL prefix>:" */
  uint32_t rate;
  conn pool[POOL];
  atomic_uint next;
  /* loader thread only */
  sg_redisx *loader;
  sg_redisx_script quota_script;
  sg_redisx_script ship_script;
  sg__quota *quota; /* slots in memory; flush reconciles them with Redis */
  int month;
  atomic_bool up;           /* what the last flush or selection found */
  _Atomic uint64_t pending; /* counted here, not yet in Redis (metrics) */
} redis_state;

/* ---------------------------------------------------------------- selections ----- */

static sg__ev_result redis_selection_record(sg_rt_state *st, const sg__selection *s,
                                            const char *app_id, const char *key_id,
                                            const char *rate_key, int64_t now_ms,
                                            int *retry_after_s) {
  redis_state *r = (redis_state *)st;
  char kb[160], ks[160], rate[16], cap[16];
  snprintf(kb, sizeof kb, "%s%s%.64s", r->prefix, SG_STATE_KEY_RATE, rate_key);
  snprintf(ks, sizeof ks, "%s%s%s", r->prefix, SG_STATE_KEY_SEEN, s->selection_id);
  char stream[120];
  snprintf(stream, sizeof stream, "%s%s", r->prefix, SG_STATE_KEY_STREAM);
  snprintf(rate, sizeof rate, "%u", r->rate);
  snprintf(cap, sizeof cap, "%d", SG_STATE_STREAM_MAX);
  sg_buf line;
  sg_buf_init(&line, 2048);
  if (sg__event_line(&line, s, app_id, key_id, now_ms)) {
    sg_buf_free(&line);
    return SG__EV_BUSY;
  }
  /* The stream entry is the object, without the newline of a file line. */
  const char *argv[] = {kb, ks, stream, rate, line.data, cap};
  size_t lens[] = {strlen(kb), strlen(ks), strlen(stream), strlen(rate), line.len - 1, strlen(cap)};
  conn *k = &r->pool[atomic_fetch_add(&r->next, 1) % POOL];
  redisReply *rep = sg_redisx_eval(k->x, &k->script, 3, 6, argv, lens);
  sg_buf_free(&line);
  if (!rep) {
    atomic_store(&r->up, false);
    return SG__EV_BUSY; /* unreachable: the client retries after a second */
  }
  sg__ev_result res = SG__EV_BUSY;
  if (rep->type == REDIS_REPLY_ARRAY && rep->elements >= 1 &&
      rep->element[0]->type == REDIS_REPLY_INTEGER) {
    atomic_store(&r->up, true);
    switch (rep->element[0]->integer) {
    case 0:
      res = SG__EV_RATE_LIMITED;
      *retry_after_s = 1;
      if (rep->elements >= 2 && rep->element[1]->type == REDIS_REPLY_INTEGER &&
          rep->element[1]->integer > 0 && rep->element[1]->integer < 3600)
        *retry_after_s = (int)rep->element[1]->integer;
      break;
    case 1: res = SG__EV_ACCEPTED; break;
    case 2: res = SG__EV_DUPLICATE; break;
    default: /* the stream is full: the drain is far behind */ break;
    }
  } else {
    fprintf(stderr, "{\"error\":\"selection script failed: %s\"}\n",
            rep->type == REDIS_REPLY_ERROR ? rep->str : "unexpected reply");
  }
  freeReplyObject(rep);
  return res;
}

/* ---------------------------------------------------------------- quotas --------- */

static sg__quota_slot *redis_quota_slot(sg_rt_state *st, const char *app_id) {
  return sg__quota_slot_for(((redis_state *)st)->quota, app_id);
}

/* Sends the deltas of slots [from, to) for `month` in one script call and rebases each
 * slot on the fleet total read back. -1 (the deltas kept) when Redis did not answer. */
static int send_batch(redis_state *r, int month, size_t from, size_t to) {
  char keys[QUOTA_BATCH][sizeof SG_STATE_KEY_QUOTA + 100 + SG_EDGE_MAX_ID];
  char deltas[QUOTA_BATCH][24], ttl[16];
  const char *argv[2 * QUOTA_BATCH + 1];
  uint64_t cur[QUOTA_BATCH];
  size_t n = to - from;
  for (size_t i = 0; i < n; i++) {
    sg__quota_slot *s = sg__quota_at(r->quota, from + i);
    cur[i] = atomic_load_explicit(&s->used, memory_order_relaxed);
    /* A refused query adds and takes back one unit; a value read between the two can
     * sit below the base: nothing to send then. */
    uint64_t delta = cur[i] > s->flushed ? cur[i] - s->flushed : 0;
    if (delta > INT64_MAX / 2) delta = INT64_MAX / 2;
    snprintf(keys[i], sizeof keys[i], "%s%s%04d-%02d:%s", r->prefix, SG_STATE_KEY_QUOTA, month / 12,
             month % 12 + 1, s->app_id);
    snprintf(deltas[i], sizeof deltas[i], "%llu", (unsigned long long)delta);
    argv[i] = keys[i];
    argv[n + i] = deltas[i];
  }
  snprintf(ttl, sizeof ttl, "%d", SG_STATE_QUOTA_TTL_S);
  argv[2 * n] = ttl;
  redisReply *rep =
      sg_redisx_eval(r->loader, &r->quota_script, (int)n, (int)(2 * n + 1), argv, NULL);
  if (!rep) return -1;
  int rc = 0;
  if (rep->type == REDIS_REPLY_ARRAY && rep->elements == n) {
    for (size_t i = 0; i < n; i++) {
      sg__quota_slot *s = sg__quota_at(r->quota, from + i);
      const redisReply *t = rep->element[i];
      if (t->type != REDIS_REPLY_INTEGER || t->integer < 0) continue;
      /* used = total + whatever was counted since cur[i] was read (wrapping arithmetic,
       * so a total below cur[i] subtracts). */
      atomic_fetch_add_explicit(&s->used, (uint64_t)t->integer - cur[i], memory_order_relaxed);
      s->flushed = (uint64_t)t->integer;
    }
  } else {
    fprintf(stderr, "{\"error\":\"quota script failed: %s\"}\n",
            rep->type == REDIS_REPLY_ERROR ? rep->str : "unexpected reply");
    rc = -1; /* say, a key holding something else: retried next time */
  }
  freeReplyObject(rep);
  return rc;
}

static int send_deltas(redis_state *r, int month) {
  size_t n = sg__quota_count(r->quota);
  int rc = 0;
  if (n == 0) { /* nothing to send: still learn whether Redis is there */
    redisReply *p = sg_redisx_cmd(r->loader, "PING");
    if (p) freeReplyObject(p);
    rc = p ? 0 : -1;
  }
  for (size_t from = 0; from < n && rc == 0; from += QUOTA_BATCH)
    rc = send_batch(r, month, from, from + QUOTA_BATCH < n ? from + QUOTA_BATCH : n);
  uint64_t pending = 0;
  for (size_t i = 0; i < n; i++) {
    sg__quota_slot *s = sg__quota_at(r->quota, i);
    uint64_t used = atomic_load_explicit(&s->used, memory_order_relaxed);
    pending += used > s->flushed ? used - s->flushed : 0;
  }
  atomic_store(&r->pending, pending);
  atomic_store(&r->up, sg_redisx_up(r->loader));
  if (rc) errno = errno ? errno : EIO;
  return rc;
}

static int redis_flush(sg_rt_state *st, int64_t now_s) {
  redis_state *r = (redis_state *)st;
  int month = sg__utc_month(now_s);
  if (month != r->month) {
    /* Last month's deltas go to last month's counter, once; the new month starts at 0
     * here and at whatever the fleet counted already in Redis. */
    send_deltas(r, r->month);
    for (size_t i = 0; i < sg__quota_count(r->quota); i++) {
      sg__quota_slot *s = sg__quota_at(r->quota, i);
      atomic_store(&s->used, 0);
      s->flushed = 0;
    }
    r->month = month;
  }
  return send_deltas(r, month);
}

/* ---------------------------------------------------------------- the rest ------- */

static void redis_sync(sg_rt_state *st) {
  (void)st; /* an accepted event is in Redis already (appendfsync decides the rest) */
}

static int redis_check(sg_rt_state *st) {
  if (atomic_load(&((redis_state *)st)->up)) return 0;
  errno = ECONNREFUSED;
  return -1;
}

static void redis_stats(sg_rt_state *st, sg_rt_state_stats *out) {
  redis_state *r = (redis_state *)st;
  *out = (sg_rt_state_stats){
      .shared = true, .up = atomic_load(&r->up), .quota_pending = atomic_load(&r->pending)};
}

/* KEYS: the analytics stream. ARGV: the shipment, the stream cap. 1 added, 0 full. */
static const char SHIP_LUA[] =
    "if redis.call('XLEN', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end\n"
    "redis.call('XADD', KEYS[1], '*', 'a', ARGV[1])\n"
    "return 1\n";

static int redis_analytics_ship(sg_rt_state *st, const char *id, const char *doc, size_t len) {
  (void)id; /* inside the document: the drain stores each id once */
  redis_state *r = (redis_state *)st;
  char stream[120], cap[16];
  snprintf(stream, sizeof stream, "%s%s", r->prefix, SG_STATE_KEY_ANALYTICS);
  snprintf(cap, sizeof cap, "%d", SG_STATE_ANALYTICS_MAX);
  const char *argv[] = {stream, doc, cap};
  size_t lens[] = {strlen(stream), len, strlen(cap)};
  redisReply *rep = sg_redisx_eval(r->loader, &r->ship_script, 1, 3, argv, lens);
  if (!rep) return -1;
  int rc = rep->type == REDIS_REPLY_INTEGER && rep->integer == 1 ? 0 : -1;
  freeReplyObject(rep);
  return rc;
}

static void redis_close(sg_rt_state *st) {
  redis_state *r = (redis_state *)st;
  if (r->quota && r->loader) redis_flush(st, sg_now_s()); /* what this runtime counted last */
  for (int i = 0; i < POOL; i++) sg_redisx_close(r->pool[i].x);
  sg_redisx_close(r->loader);
  sg__quota_close(r->quota);
  free(r);
}

static const sg_rt_state_ops redis_ops = {
    .quota_slot = redis_quota_slot,
    .selection_record = redis_selection_record,
    .flush = redis_flush,
    .sync = redis_sync,
    .check = redis_check,
    .stats = redis_stats,
    .analytics_ship = redis_analytics_ship,
    .close = redis_close,
};

int sg__rt_state_redis_open(const char *url, uint32_t selection_rate, sg_rt_state **out) {
  redis_state *r = calloc(1, sizeof *r);
  if (!r) return -1;
  r->base.ops = &redis_ops;
  r->rate = selection_rate ? selection_rate : 600;
  r->month = sg__utc_month(sg_now_s());
  r->quota_script.src = QUOTA_LUA;
  r->ship_script.src = SHIP_LUA;
  sg_redisx_url u;
  char err[256];
  bool ok = sg_redisx_parse(url, &u, err, sizeof err) == 0;
  if (!ok) {
    fprintf(stderr, "{\"error\":\"runtime: shared state: %s\"}\n", err);
    errno = EINVAL;
  }
  snprintf(r->prefix, sizeof r->prefix, "%s:", u.prefix);
  /* Lazy: the state works (queries counted here) until Redis is there. */
  for (int i = 0; ok && i < POOL; i++) {
    r->pool[i].script.src = SELECTION_LUA;
    ok = sg_redisx_open(&u, SELECTION_TIMEOUT_MS, true, &r->pool[i].x) == 0;
  }
  ok = ok && sg_redisx_open(&u, TIMEOUT_MS, true, &r->loader) == 0 &&
       sg__quota_open(NULL, r->month, &r->quota) == 0;
  explicit_bzero(&u, sizeof u);
  if (!ok) {
    int e = errno;
    redis_close(&r->base);
    errno = e;
    return -1;
  }
  atomic_store(&r->up, sg_redisx_up(r->loader));
  *out = &r->base;
  return 0;
}
