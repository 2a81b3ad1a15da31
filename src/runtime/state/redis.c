/*
 * The Redis backend of the runtime's shared state (runtime/state.h): what every runtime
 * of a fleet must share, in the Redis of --edge redis://… (keys: common/statekeys.h).
 *
 * - A selection report is one Lua script, one round trip: it takes a token from the
 *   key's bucket (Redis's clock, so every runtime refills alike), sets the selectionId
 *   with SET NX EX 86400 and appends the event to the stream with XADD. A refused token
 *   or a duplicate id appends nothing. Redis unreachable: BUSY (503 with retry-after), as
 *   an event accepted now could be lost.
 * - Quotas: the query path counts on a local slot exactly as the local backend does (one
 *   atomic increment, no round trip). flush (loader thread, once a second) sends each
 *   slot's delta since the last flush with INCRBY on the month's counter and sets the
 *   slot to the fleet total it reads back plus what was counted meanwhile, so a quota
 *   holds across runtimes with an overshoot of at most one flush interval. When Redis is
 *   down the deltas stay in the slots (queries go on being counted and limited locally)
 *   and are sent, summed, once it returns.
 * Request threads share a small pool of connections (a mutex each); the loader thread
 * has its own. After a failure, request threads do not try again for RETRY_MS, so a
 * Redis outage costs a selection one failed connect at most that often.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/redisurl.h"
#include "common/statekeys.h"
#include "common/util.h"
#include "runtime/state.h"

#define POOL 4
#define CONNECT_MS 300
#define IO_MS 1000
#define RETRY_MS 250

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

typedef struct {
  pthread_mutex_t mu;
  redisContext *c;
  char sha[41]; /* of SELECTION_LUA on this connection's server, "" until loaded */
} conn;

typedef struct {
  sg_rt_state base;
  sg_redis_url url;
  uint32_t rate;
  conn pool[POOL];
  atomic_uint next;
  _Atomic int64_t failed_ms; /* monotonic ms of the last failure, 0 = none */
  atomic_bool up;
  /* loader thread only */
  redisContext *loader;
  sg__quota *quota; /* slots in memory; flush reconciles them with Redis */
  int month;
  _Atomic uint64_t pending; /* counted here, not yet in Redis (metrics) */
} redis_state;

static void mark(redis_state *r, bool ok) {
  atomic_store(&r->up, ok);
  if (!ok) atomic_store(&r->failed_ms, sg_mono_ms());
}

/* ---------------------------------------------------------------- selections ----- */

/* Runs the selection script on c (loading it first on a new connection). The reply, or
 * NULL when the connection failed. */
static redisReply *run_script(conn *k, const char *keys[3], const char *rate, const char *line,
                              size_t line_len, const char *cap) {
  if (!k->sha[0]) {
    redisReply *l = redisCommand(k->c, "SCRIPT LOAD %s", SELECTION_LUA);
    if (!l) return NULL;
    if (l->type == REDIS_REPLY_STRING && l->len == 40) memcpy(k->sha, l->str, 41);
    freeReplyObject(l);
    if (!k->sha[0]) return NULL;
  }
  const char *argv[] = {"EVALSHA", k->sha, "3", keys[0], keys[1], keys[2], rate, line, cap};
  size_t lens[9];
  for (int i = 0; i < 9; i++) lens[i] = strlen(argv[i]);
  lens[7] = line_len;
  redisReply *rep = redisCommandArgv(k->c, 9, argv, lens);
  if (rep && rep->type == REDIS_REPLY_ERROR && strncmp(rep->str, "NOSCRIPT", 8) == 0) {
    /* Redis restarted and forgot the script: load it again, once. */
    freeReplyObject(rep);
    k->sha[0] = '\0';
    redisReply *l = redisCommand(k->c, "SCRIPT LOAD %s", SELECTION_LUA);
    if (!l) return NULL;
    if (l->type == REDIS_REPLY_STRING && l->len == 40) memcpy(k->sha, l->str, 41);
    freeReplyObject(l);
    if (!k->sha[0]) return NULL;
    argv[1] = k->sha;
    rep = redisCommandArgv(k->c, 9, argv, lens);
  }
  return rep;
}

static sg__ev_result redis_selection_record(sg_rt_state *st, const sg__selection *s,
                                            const char *app_id, const char *key_id,
                                            const char *rate_key, int64_t now_ms,
                                            int *retry_after_s) {
  redis_state *r = (redis_state *)st;
  char kb[sizeof SG_STATE_KEY_RATE + 64], ks[sizeof SG_STATE_KEY_SEEN + 40], rate[16], cap[16];
  snprintf(kb, sizeof kb, "%s%.64s", SG_STATE_KEY_RATE, rate_key);
  snprintf(ks, sizeof ks, "%s%s", SG_STATE_KEY_SEEN, s->selection_id);
  snprintf(rate, sizeof rate, "%u", r->rate);
  snprintf(cap, sizeof cap, "%d", SG_STATE_STREAM_MAX);
  const char *keys[3] = {kb, ks, SG_STATE_KEY_STREAM};
  sg_buf line;
  sg_buf_init(&line, 2048);
  if (sg__event_line(&line, s, app_id, key_id, now_ms)) {
    sg_buf_free(&line);
    return SG__EV_BUSY;
  }
  line.len--; /* the stream entry is the object, without the newline of a file line */

  conn *k = &r->pool[atomic_fetch_add(&r->next, 1) % POOL];
  sg__ev_result res = SG__EV_BUSY;
  pthread_mutex_lock(&k->mu);
  if (!k->c) {
    int64_t failed = atomic_load(&r->failed_ms);
    if (failed == 0 || sg_mono_ms() - failed >= RETRY_MS) {
      k->c = sg_redis_connect(&r->url, CONNECT_MS, IO_MS);
      k->sha[0] = '\0';
      if (!k->c) mark(r, false);
    }
  }
  redisReply *rep = k->c ? run_script(k, keys, rate, line.data, line.len, cap) : NULL;
  if (k->c && !rep) { /* the connection broke: a new one next time */
    redisFree(k->c);
    k->c = NULL;
    mark(r, false);
  }
  pthread_mutex_unlock(&k->mu);
  sg_buf_free(&line);
  if (!rep) return SG__EV_BUSY;
  if (rep->type == REDIS_REPLY_ARRAY && rep->elements >= 1 &&
      rep->element[0]->type == REDIS_REPLY_INTEGER) {
    mark(r, true);
    switch (rep->element[0]->integer) {
    case 0:
      res = SG__EV_RATE_LIMITED;
      if (rep->elements >= 2 && rep->element[1]->type == REDIS_REPLY_INTEGER)
        *retry_after_s = rep->element[1]->integer > 0 && rep->element[1]->integer < 3600
                             ? (int)rep->element[1]->integer
                             : 1;
      break;
    case 1:
      res = SG__EV_ACCEPTED;
      break;
    case 2:
      res = SG__EV_DUPLICATE;
      break;
    default: /* the stream is full: the drain is far behind */
      res = SG__EV_BUSY;
      break;
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

static void quota_key(char *out, size_t cap, int month, const char *app_id) {
  snprintf(out, cap, "%s%04d-%02d:%s", SG_STATE_KEY_QUOTA, month / 12, month % 12 + 1, app_id);
}

static bool loader_conn(redis_state *r) {
  if (!r->loader && !(r->loader = sg_redis_connect(&r->url, CONNECT_MS, IO_MS))) mark(r, false);
  return r->loader != NULL;
}

static void loader_broke(redis_state *r) {
  redisFree(r->loader);
  r->loader = NULL;
  mark(r, false);
}

/* Sends every slot's delta for `month` (one pipelined round trip) and rebases the slots
 * on the fleet totals read back. Slots whose reply did not arrive keep their delta. */
static int send_deltas(redis_state *r, int month) {
  size_t n = sg__quota_count(r->quota);
  if (!loader_conn(r)) return -1;
  if (n == 0) { /* nothing to send: still learn whether Redis is there */
    redisReply *p = redisCommand(r->loader, "PING");
    if (!p) {
      loader_broke(r);
      return -1;
    }
    freeReplyObject(p);
    mark(r, true);
    return 0;
  }
  uint64_t *cur = malloc(n * sizeof *cur);
  if (!cur) return -1;
  char key[sizeof SG_STATE_KEY_QUOTA + 16 + SG_EDGE_MAX_ID];
  for (size_t i = 0; i < n; i++) {
    sg__quota_slot *s = sg__quota_at(r->quota, i);
    cur[i] = atomic_load_explicit(&s->used, memory_order_relaxed);
    /* Refused queries add and take back one unit; a snapshot taken between the two can
     * sit below the base: nothing to send then. */
    uint64_t delta = cur[i] > s->flushed ? cur[i] - s->flushed : 0;
    if (delta > INT64_MAX) delta = INT64_MAX;
    quota_key(key, sizeof key, month, s->app_id);
    redisAppendCommand(r->loader, "INCRBY %s %lld", key, (long long)delta);
    redisAppendCommand(r->loader, "EXPIRE %s %d", key, SG_STATE_QUOTA_TTL_S);
  }
  int rc = 0;
  uint64_t pending = 0;
  for (size_t i = 0; i < n; i++) {
    sg__quota_slot *s = sg__quota_at(r->quota, i);
    redisReply *inc = NULL, *exp = NULL;
    if (rc == 0 && (redisGetReply(r->loader, (void **)&inc) != REDIS_OK ||
                    redisGetReply(r->loader, (void **)&exp) != REDIS_OK)) {
      loader_broke(r);
      rc = -1;
    }
    if (inc && inc->type == REDIS_REPLY_INTEGER && inc->integer >= 0) {
      uint64_t total = (uint64_t)inc->integer;
      /* used = total + whatever was counted since cur[i] was read (wrapping arithmetic,
       * so a total below cur[i] subtracts). */
      atomic_fetch_add_explicit(&s->used, total - cur[i], memory_order_relaxed);
      s->flushed = total;
    } else if (rc == 0) {
      rc = -1; /* an error reply (say, the key holds something else): retried next time */
    }
    uint64_t now = atomic_load_explicit(&s->used, memory_order_relaxed);
    pending += now > s->flushed ? now - s->flushed : 0;
    if (inc) freeReplyObject(inc);
    if (exp) freeReplyObject(exp);
  }
  free(cur);
  atomic_store(&r->pending, pending);
  if (rc == 0) mark(r, true);
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

static void redis_close(sg_rt_state *st) {
  redis_state *r = (redis_state *)st;
  if (r->quota) redis_flush(st, sg_now_s()); /* what this runtime counted last */
  for (int i = 0; i < POOL; i++) {
    if (r->pool[i].c) redisFree(r->pool[i].c);
    pthread_mutex_destroy(&r->pool[i].mu);
  }
  if (r->loader) redisFree(r->loader);
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
    .close = redis_close,
};

int sg__rt_state_redis_open(const char *url, uint32_t selection_rate, sg_rt_state **out) {
  redis_state *r = calloc(1, sizeof *r);
  if (!r) return -1;
  r->base.ops = &redis_ops;
  r->rate = selection_rate ? selection_rate : 600;
  for (int i = 0; i < POOL; i++) pthread_mutex_init(&r->pool[i].mu, NULL);
  r->month = sg__utc_month(sg_now_s());
  if (sg_redis_url_parse(url, &r->url) || sg__quota_open(NULL, r->month, &r->quota)) {
    int e = errno;
    fprintf(stderr, "{\"error\":\"runtime: bad shared state URL or out of memory\"}\n");
    r->quota = NULL;
    redis_close(&r->base);
    errno = e ? e : EINVAL;
    return -1;
  }
  /* Not required: the state works (queries counted locally) until Redis is there. */
  if (loader_conn(r)) mark(r, true);
  *out = &r->base;
  return 0;
}
