/*
 * Redis backend of the edge store (src/edge/redis), through hiredis (common/redisx).
 *
 * Keys, with P = "<prefix>:edge:" (prefix from the URL, default "sg"); the layout is
 * documented in docs/EDGE.md "Redis layout":
 *   P rev                    the store revision (INCR)
 *   P rec:<kind>             hash id -> record JSON
 *   P seq:<kind>             hash id -> sequence of the last conditional write or delete
 *   P changes                sorted set: score revision, member "<rev> <kind> <id>"
 *   P changes:base           highest revision trimmed from the change log (absent: 0)
 *   P lock                   the writer lock sg_edge_update holds while its build runs
 *   P art:<hex>              artifact manifest (hash: size, chunks, chunk, written)
 *   P art:<hex>:<i>          artifact bytes, chunk i (Redis strings stop at 512 MB)
 *   P artifacts              sorted set: hex -> last write time (garbage collection)
 *   P artw                   hash hex -> "<start> <chunks>" of artifact writes under way
 *   P stamp                  the guard stamp "<epoch> <heartbeat_ms> <revision>"
 *   P rt:<id>                a runtime's presence record, expiring (edge.h)
 *   P runtimes               set of the ids that may have one
 *
 * Every record write is one Lua script (atomic on the server): the sequence check, the
 * record, INCR of the revision and the change-log entry happen together, so a reader that
 * sees revision N sees every write that returned N or less, and a record never goes
 * backwards. An artifact's chunks are written first and its manifest last, by a script that
 * checks every chunk is there: a reader that finds the manifest finds the whole artifact.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/redisx.h"
#include "common/sha256.h"
#include "common/util.h"
#include "edge/edge_internal.h"
#include "search/artifact.h"

typedef struct {
  sg_edge base; /* first: the dispatcher holds a sg_edge * */
  sg_redisx *r;
  char p[96];         /* "<prefix>:edge:" */
  char *cache_dir;    /* where artifact_load keeps fetched artifacts; NULL: a temp file */
  uint64_t chunk;     /* bytes per artifact chunk written */
  uint64_t changelog; /* change-log entries kept */
} redis_edge;

static redis_edge *R(sg_edge *e) { return (redis_edge *)e; }

/* ---------------------------------------------------------------- keys ----------- */

/* P + a + b into out (a key). Keys are short: ids and hashes are bounded by the caller. */
static const char *key(const redis_edge *re, char *out, size_t cap, const char *a, const char *b) {
  snprintf(out, cap, "%s%s%s", re->p, a, b ? b : "");
  return out;
}

enum { KEY_MAX = 96 + 32 + SG_EDGE_MAX_ID + 8 };

/* Maps a failed command or an unexpected reply to -1 with errno. */
static int reply_fail(redisReply *rep) {
  if (!rep) {
    if (!errno) errno = EIO;
    return -1;
  }
  if (rep->type == REDIS_REPLY_ERROR)
    fprintf(stderr,
            "{\"level\":\"error\",\"msg\":\"redis edge command failed\",\"detail\":\"%.*s\"}\n",
            (int)(rep->len > 200 ? 200 : rep->len), rep->str);
  freeReplyObject(rep);
  errno = EIO;
  return -1;
}

/* A reply element that is a decimal integer (string or integer reply). */
static int elem_u64(const redisReply *el, uint64_t *out) {
  if (el->type == REDIS_REPLY_INTEGER) {
    if (el->integer < 0) return -1;
    *out = (uint64_t)el->integer;
    return 0;
  }
  if (el->type == REDIS_REPLY_NIL) {
    *out = 0;
    return 0;
  }
  if (el->type != REDIS_REPLY_STRING || el->len == 0 || el->len > 20) return -1;
  char buf[24];
  memcpy(buf, el->str, el->len);
  buf[el->len] = '\0';
  int64_t v;
  if (sg_parse_i64(buf, 0, INT64_MAX, &v)) return -1;
  *out = (uint64_t)v;
  return 0;
}

/* ---------------------------------------------------------------- records -------- */

/* KEYS: rev, changes, changes:base, rec:<kind>, seq:<kind>
 * ARGV: op ("put"|"del"), id, json, seq ("" = unconditional), kind, entries kept
 * Returns {status, revision}: 0 written, 1 stale (nothing written), 2 deleting an absent
 * record (its sequence remembered, no bump). Sequences are compared as decimal strings, so
 * every value up to INT64_MAX compares exactly (Lua numbers are doubles). */
static sg_redisx_script write_script = {
    .src = "local function newer(a, b)\n"
           "  if #a ~= #b then return #a > #b end\n"
           "  return a > b\n"
           "end\n"
           "local id, seq = ARGV[2], ARGV[4]\n"
           "if seq ~= '' then\n"
           "  local cur = redis.call('HGET', KEYS[5], id)\n"
           "  if cur and newer(cur, seq) then\n"
           "    return {1, redis.call('GET', KEYS[1]) or '0'}\n"
           "  end\n"
           "  redis.call('HSET', KEYS[5], id, seq)\n"
           "end\n"
           "if ARGV[1] == 'put' then\n"
           "  redis.call('HSET', KEYS[4], id, ARGV[3])\n"
           "elseif redis.call('HDEL', KEYS[4], id) == 0 then\n"
           "  return {2, redis.call('GET', KEYS[1]) or '0'}\n"
           "end\n"
           "local r = redis.call('INCR', KEYS[1])\n"
           "redis.call('ZADD', KEYS[2], r, r .. ' ' .. ARGV[5] .. ' ' .. id)\n"
           "local n, max = redis.call('ZCARD', KEYS[2]), tonumber(ARGV[6])\n"
           "if n > max then\n"
           "  local cut = redis.call('ZRANGE', KEYS[2], n - max - 1, n - max - 1)\n"
           "  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, n - max - 1)\n"
           "  redis.call('SET', KEYS[3], string.match(cut[1], '^%d+'))\n"
           "end\n"
           "return {0, tostring(r)}\n",
};

/* Runs write_script; returns 0, SG_EDGE_STALE, 2 (absent) or -1. */
static int write_record(redis_edge *re, const char *op, sg_edge_kind k, const char *id,
                        const char *json, size_t len, const char *seq, uint64_t *rev) {
  char k1[KEY_MAX], k2[KEY_MAX], k3[KEY_MAX], k4[KEY_MAX], k5[KEY_MAX], max[24];
  const char *kind = sg_edge_kind_name(k);
  snprintf(max, sizeof max, "%llu", (unsigned long long)re->changelog);
  const char *argv[] = {key(re, k1, sizeof k1, "rev", NULL),
                        key(re, k2, sizeof k2, "changes", NULL),
                        key(re, k3, sizeof k3, "changes:base", NULL),
                        key(re, k4, sizeof k4, "rec:", kind),
                        key(re, k5, sizeof k5, "seq:", kind),
                        op,
                        id,
                        json ? json : "",
                        seq,
                        kind,
                        max};
  size_t lens[11];
  for (int i = 0; i < 11; i++) lens[i] = strlen(argv[i]);
  lens[7] = json ? len : 0;
  redisReply *rep = sg_redisx_eval(re->r, &write_script, 5, 11, argv, lens);
  uint64_t st, rv;
  if (!rep || rep->type != REDIS_REPLY_ARRAY || rep->elements != 2 ||
      elem_u64(rep->element[0], &st) || elem_u64(rep->element[1], &rv) || st > 2)
    return reply_fail(rep);
  freeReplyObject(rep);
  if (rev) *rev = rv;
  return st == 1 ? SG_EDGE_STALE : (int)st;
}

static int redis_put(sg_edge *e, sg_edge_kind k, const char *id, const char *json, size_t len,
                     uint64_t *rev) {
  return write_record(R(e), "put", k, id, json, len, "", rev);
}

static int redis_del(sg_edge *e, sg_edge_kind k, const char *id, uint64_t *rev) {
  int rc = write_record(R(e), "del", k, id, NULL, 0, "", rev);
  if (rc == 2) {
    errno = ENOENT;
    return -1;
  }
  return rc;
}

static int redis_put_if_newer(sg_edge *e, sg_edge_kind k, const char *id, const char *json,
                              size_t len, uint64_t seq, uint64_t *rev) {
  char s[24];
  snprintf(s, sizeof s, "%llu", (unsigned long long)seq);
  return write_record(R(e), "put", k, id, json, len, s, rev);
}

static int redis_del_if_newer(sg_edge *e, sg_edge_kind k, const char *id, uint64_t seq,
                              uint64_t *rev) {
  char s[24];
  snprintf(s, sizeof s, "%llu", (unsigned long long)seq);
  int rc = write_record(R(e), "del", k, id, NULL, 0, s, rev);
  return rc == 2 ? 0 : rc; /* already absent: nothing to do */
}

/* The writer lock of sg_edge_update: SET NX with an expiry, so a writer that dies holding
 * it delays the others by LOCK_TTL_MS at most; the sequence keeps records from going
 * backwards even then. */
#define LOCK_TTL_MS 10000
#define LOCK_WAIT_MS 30000

static sg_redisx_script unlock_script = {
    .src = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end\n"
           "return 0\n",
};

static int lock_store(redis_edge *re, char token[33]) {
  uint8_t rnd[16];
  sg_random_bytes(rnd, sizeof rnd);
  sg_hex(rnd, sizeof rnd, token);
  char k[KEY_MAX];
  key(re, k, sizeof k, "lock", NULL);
  int64_t until = sg_mono_ms() + LOCK_WAIT_MS;
  for (unsigned wait_us = 500;; wait_us = wait_us < 50000 ? wait_us * 2 : 50000) {
    redisReply *rep = sg_redisx_cmd(re->r, "SET %s %s NX PX %d", k, token, LOCK_TTL_MS);
    if (!rep) return -1;
    bool got = rep->type == REDIS_REPLY_STATUS;
    bool err = rep->type == REDIS_REPLY_ERROR;
    freeReplyObject(rep);
    if (got) return 0;
    if (err || sg_mono_ms() > until) {
      errno = err ? EIO : ETIMEDOUT;
      return -1;
    }
    usleep(wait_us);
  }
}

static void unlock_store(redis_edge *re, const char *token) {
  int e2 = errno;
  char k[KEY_MAX];
  const char *argv[] = {key(re, k, sizeof k, "lock", NULL), token};
  redisReply *rep = sg_redisx_eval(re->r, &unlock_script, 1, 2, argv, NULL);
  if (rep) freeReplyObject(rep); /* a lock left behind expires by itself */
  errno = e2;
}

static int redis_revision(sg_edge *e, uint64_t *rev) {
  char k[KEY_MAX];
  redisReply *rep = sg_redisx_cmd(R(e)->r, "GET %s", key(R(e), k, sizeof k, "rev", NULL));
  if (!rep || (rep->type != REDIS_REPLY_STRING && rep->type != REDIS_REPLY_NIL) ||
      elem_u64(rep, rev))
    return reply_fail(rep);
  freeReplyObject(rep);
  return 0;
}

static int redis_update(sg_edge *e, sg_edge_kind k, const char *id, sg_edge_build_cb build,
                        void *ctx, uint64_t *rev) {
  redis_edge *re = R(e);
  char token[33];
  if (lock_store(re, token)) return -1;
  char *json = NULL;
  size_t len = 0;
  uint64_t seq = 0;
  int b = build(ctx, &json, &len, &seq);
  int rc = -1;
  char s[24] = "";
  if (seq > 0) snprintf(s, sizeof s, "%llu", (unsigned long long)seq);
  if (b == 0 && len > SG_EDGE_MAX_RECORD)
    errno = EFBIG;
  else if (b >= 0 && seq > INT64_MAX)
    errno = EINVAL;
  else if (b == 0)
    rc = write_record(re, "put", k, id, json, len, s, rev);
  else if (b == 1 && (rc = write_record(re, "del", k, id, NULL, 0, s, rev)) == 2)
    rc = 0; /* already absent: nothing to do */
  else if (b < 0)
    errno = EIO;
  free(json);
  unlock_store(re, token);
  return rc;
}

static int redis_get(sg_edge *e, sg_edge_kind k, const char *id, char **json, size_t *len) {
  char kk[KEY_MAX];
  redisReply *rep = sg_redisx_cmd(R(e)->r, "HGET %s %s",
                                  key(R(e), kk, sizeof kk, "rec:", sg_edge_kind_name(k)), id);
  if (!rep) return -1;
  if (rep->type == REDIS_REPLY_NIL) {
    freeReplyObject(rep);
    errno = ENOENT;
    return -1;
  }
  if (rep->type != REDIS_REPLY_STRING) return reply_fail(rep);
  if (rep->len > SG_EDGE_MAX_RECORD) {
    freeReplyObject(rep);
    errno = EFBIG;
    return -1;
  }
  char *out = malloc(rep->len + 1);
  if (!out) {
    freeReplyObject(rep);
    return -1;
  }
  memcpy(out, rep->str, rep->len);
  out[rep->len] = '\0';
  *json = out;
  if (len) *len = rep->len;
  freeReplyObject(rep);
  return 0;
}

typedef struct {
  char *id;
  char *json;
  size_t len;
} rec_entry;

static int cmp_entry(const void *a, const void *b) {
  return strcmp(((const rec_entry *)a)->id, ((const rec_entry *)b)->id);
}

static void free_entries(rec_entry *v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(v[i].id);
    free(v[i].json);
  }
  free(v);
}

static int redis_foreach(sg_edge *e, sg_edge_kind k, sg_edge_foreach_cb cb, void *ctx) {
  char kk[KEY_MAX];
  key(R(e), kk, sizeof kk, "rec:", sg_edge_kind_name(k));
  /* HSCAN in pages (HGETALL of a large hash would stall the server for everyone), then
   * sorted by id as the interface promises. HSCAN may repeat a field: duplicates are
   * dropped after sorting. */
  rec_entry *v = NULL;
  size_t n = 0, cap = 0;
  char cursor[32] = "0";
  do {
    redisReply *rep = sg_redisx_cmd(R(e)->r, "HSCAN %s %s COUNT 1000", kk, cursor);
    if (!rep || rep->type != REDIS_REPLY_ARRAY || rep->elements != 2 ||
        rep->element[0]->type != REDIS_REPLY_STRING || rep->element[0]->len >= sizeof cursor ||
        rep->element[1]->type != REDIS_REPLY_ARRAY) {
      free_entries(v, n);
      return reply_fail(rep);
    }
    memcpy(cursor, rep->element[0]->str, rep->element[0]->len);
    cursor[rep->element[0]->len] = '\0';
    redisReply *kv = rep->element[1];
    for (size_t i = 0; i + 1 < kv->elements; i += 2) {
      redisReply *f = kv->element[i], *j = kv->element[i + 1];
      if (f->type != REDIS_REPLY_STRING || j->type != REDIS_REPLY_STRING ||
          f->len > SG_EDGE_MAX_ID || j->len > SG_EDGE_MAX_RECORD || memchr(f->str, 0, f->len))
        continue;
      if (n == cap) {
        size_t nc = cap ? cap * 2 : 64;
        rec_entry *nv = realloc(v, nc * sizeof *nv);
        if (!nv) goto oom;
        v = nv;
        cap = nc;
      }
      v[n].id = strndup(f->str, f->len);
      v[n].json = malloc(j->len + 1);
      if (!v[n].id || !v[n].json) {
        free(v[n].id);
        free(v[n].json);
        goto oom;
      }
      memcpy(v[n].json, j->str, j->len);
      v[n].json[j->len] = '\0';
      v[n].len = j->len;
      if (sg_edge_id_valid(v[n].id))
        n++;
      else
        free(v[n].id), free(v[n].json);
      continue;
    oom:
      freeReplyObject(rep);
      free_entries(v, n);
      errno = ENOMEM;
      return -1;
    }
    freeReplyObject(rep);
  } while (strcmp(cursor, "0") != 0);
  if (n) qsort(v, n, sizeof *v, cmp_entry);
  int rc = 0;
  for (size_t i = 0; rc == 0 && i < n; i++)
    if (i == 0 || strcmp(v[i].id, v[i - 1].id) != 0) rc = cb(v[i].id, v[i].json, v[i].len, ctx);
  free_entries(v, n);
  return rc;
}

/* ---------------------------------------------------------------- change log ----- */

/* KEYS: rev, changes, changes:base; ARGV: since.
 * Returns {revision, base} and, when the log reaches back to since, the entries after it
 * up to the revision, read in one atomic step. */
static sg_redisx_script changes_script = {
    .src = "local rev = redis.call('GET', KEYS[1]) or '0'\n"
           "local base = redis.call('GET', KEYS[3]) or '0'\n"
           "local since = tonumber(ARGV[1])\n"
           "if since < tonumber(base) or since >= tonumber(rev) then return {rev, base} end\n"
           "return {rev, base, redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. ARGV[1], rev)}\n",
};

static int parse_entry(const redisReply *el, uint64_t *rev, sg_edge_kind *k, char *id) {
  char buf[SG_EDGE_MAX_ID + 64];
  if (el->type != REDIS_REPLY_STRING || el->len >= sizeof buf) return -1;
  memcpy(buf, el->str, el->len);
  buf[el->len] = '\0';
  char *sp1 = strchr(buf, ' '), *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
  if (!sp2) return -1;
  *sp1 = *sp2 = '\0';
  int64_t v;
  if (sg_parse_i64(buf, 1, INT64_MAX, &v) || !sg_edge_id_valid(sp2 + 1)) return -1;
  *rev = (uint64_t)v;
  for (int i = 0; i < SG_EDGE__KINDS; i++)
    if (strcmp(sg_edge_kind_name((sg_edge_kind)i), sp1 + 1) == 0) {
      *k = (sg_edge_kind)i;
      strcpy(id, sp2 + 1);
      return 0;
    }
  return -1;
}

static int redis_changes_since(sg_edge *e, uint64_t since, sg_edge_change_cb cb, void *ctx,
                               uint64_t *upto) {
  redis_edge *re = R(e);
  char k1[KEY_MAX], k2[KEY_MAX], k3[KEY_MAX], s[24];
  snprintf(s, sizeof s, "%llu", (unsigned long long)since);
  const char *argv[] = {key(re, k1, sizeof k1, "rev", NULL),
                        key(re, k2, sizeof k2, "changes", NULL),
                        key(re, k3, sizeof k3, "changes:base", NULL), s};
  redisReply *rep = sg_redisx_eval(re->r, &changes_script, 3, 4, argv, NULL);
  uint64_t base;
  if (!rep || rep->type != REDIS_REPLY_ARRAY || rep->elements < 2 ||
      elem_u64(rep->element[0], upto) || elem_u64(rep->element[1], &base))
    return reply_fail(rep);
  if (since == *upto) {
    freeReplyObject(rep);
    return 0;
  }
  if (rep->elements != 3 || rep->element[2]->type != REDIS_REPLY_ARRAY) {
    freeReplyObject(rep);
    return SG_EDGE_TOO_OLD; /* trimmed past since, or a revision this store never had */
  }
  /* Every revision in (since, upto] must have its entry, in order; a gap (a log edited or
   * trimmed by hand) means the log cannot be trusted: read everything. */
  const redisReply *list = rep->element[2];
  int rc = 0;
  uint64_t last = since;
  for (size_t i = 0; rc == 0 && i < list->elements; i++) {
    uint64_t r;
    sg_edge_kind kind;
    char id[SG_EDGE_MAX_ID + 1];
    if (parse_entry(list->element[i], &r, &kind, id) || (r != last && r != last + 1) || r > *upto) {
      rc = SG_EDGE_TOO_OLD;
      break;
    }
    last = r;
    rc = cb(kind, id, r, ctx);
  }
  freeReplyObject(rep);
  return rc == 0 && last != *upto ? SG_EDGE_TOO_OLD : rc;
}

/* ---------------------------------------------------------------- artifacts ------ */

/* KEYS: manifest, artifacts; ARGV: size, now, chunk key prefix ("P art:<hex>:").
 * 1 (and the write time refreshed) when the stored artifact has that size and every chunk
 * its length; otherwise 0, and a manifest that disagrees is removed first so no reader
 * uses chunks while they are rewritten. */
static sg_redisx_script art_keep_script = {
    .src = "local m = redis.call('HMGET', KEYS[1], 'size', 'chunks', 'chunk')\n"
           "if not m[1] then return 0 end\n"
           "local size, n, c = tonumber(m[1]), tonumber(m[2]), tonumber(m[3])\n"
           "local ok = size == tonumber(ARGV[1]) and n and c and c > 0\n"
           "for i = 0, (ok and n or 0) - 1 do\n"
           "  local want = math.min(c, size - i * c)\n"
           "  if redis.call('STRLEN', ARGV[3] .. i) ~= want then ok = false break end\n"
           "end\n"
           "if not ok then\n"
           "  redis.call('DEL', KEYS[1])\n"
           "  redis.call('ZREM', KEYS[2], string.match(KEYS[1], '(%x+)$'))\n"
           "  return 0\n"
           "end\n"
           "redis.call('HSET', KEYS[1], 'written', ARGV[2])\n"
           "redis.call('ZADD', KEYS[2], ARGV[2], string.match(KEYS[1], '(%x+)$'))\n"
           "return 1\n",
};

/* KEYS: manifest, artifacts, artw; ARGV: hex, size, chunks, chunk, now, chunk key prefix.
 * Publishes the manifest once every chunk is there with its length (1), else 0 (a
 * concurrent delete took some: the writer starts over). */
static sg_redisx_script art_commit_script = {
    .src =
        "local size, n, c = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])\n"
        "for i = 0, n - 1 do\n"
        "  if redis.call('STRLEN', ARGV[6] .. i) ~= math.min(c, size - i * c) then return 0 end\n"
        "end\n"
        "redis.call('HSET', KEYS[1], 'size', ARGV[2], 'chunks', ARGV[3], 'chunk', ARGV[4],\n"
        "           'written', ARGV[5])\n"
        "redis.call('ZADD', KEYS[2], ARGV[5], ARGV[1])\n"
        "redis.call('HDEL', KEYS[3], ARGV[1])\n"
        "return 1\n",
};

/* KEYS: manifest, artifacts; ARGV: hex, chunk key prefix. Removes the manifest first, then
 * the chunks (UNLINK: freed in the background), all in one step. 0 when absent. */
static sg_redisx_script art_del_script = {
    .src = "local n = tonumber(redis.call('HGET', KEYS[1], 'chunks'))\n"
           "redis.call('ZREM', KEYS[2], ARGV[1])\n"
           "if not n then return 0 end\n"
           "redis.call('DEL', KEYS[1])\n"
           "for i = 0, n - 1 do redis.call('UNLINK', ARGV[2] .. i) end\n"
           "return 1\n",
};

/* KEYS: manifest, artw; ARGV: hex, the artw value seen, chunk key prefix.
 * Removes the chunks of a write that never finished, unless a newer write of the same
 * artifact started since (the value changed) or it did finish (a manifest exists). */
static sg_redisx_script art_sweep_script = {
    .src = "if redis.call('HGET', KEYS[2], ARGV[1]) ~= ARGV[2] then return 0 end\n"
           "redis.call('HDEL', KEYS[2], ARGV[1])\n"
           "if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end\n"
           "local n = tonumber(string.match(ARGV[2], ' (%d+)$')) or 0\n"
           "for i = 0, n - 1 do redis.call('UNLINK', ARGV[3] .. i) end\n"
           "return 1\n",
};

static void chunk_prefix(const redis_edge *re, const char *hex, char *out, size_t cap) {
  snprintf(out, cap, "%sart:%s:", re->p, hex);
}

/* An integer reply, or -1. */
static long long int_reply(redisReply *rep) {
  if (!rep || rep->type != REDIS_REPLY_INTEGER) {
    reply_fail(rep);
    return -1;
  }
  long long v = rep->integer;
  freeReplyObject(rep);
  return v;
}

static int redis_put_artifact(sg_edge *e, const char *hex, const void *data, size_t len) {
  redis_edge *re = R(e);
  char km[KEY_MAX], ki[KEY_MAX], kw[KEY_MAX], cp[KEY_MAX], size[24], now[24], nch[24], csz[24];
  key(re, km, sizeof km, "art:", hex);
  key(re, ki, sizeof ki, "artifacts", NULL);
  key(re, kw, sizeof kw, "artw", NULL);
  chunk_prefix(re, hex, cp, sizeof cp);
  uint64_t chunks = len ? (len + re->chunk - 1) / re->chunk : 0;
  snprintf(size, sizeof size, "%zu", len);
  snprintf(nch, sizeof nch, "%llu", (unsigned long long)chunks);
  snprintf(csz, sizeof csz, "%llu", (unsigned long long)re->chunk);
  for (int attempt = 0; attempt < 3; attempt++) {
    snprintf(now, sizeof now, "%lld", (long long)sg_now_s());
    /* Content-addressed: an artifact already stored whole is kept (its write time
     * refreshed so garbage collection sees it as new). */
    const char *ka[] = {km, ki, size, now, cp};
    long long kept = int_reply(sg_redisx_eval(re->r, &art_keep_script, 2, 5, ka, NULL));
    if (kept < 0) return -1;
    if (kept == 1) return 0;
    /* Announce the write, so a writer killed between its chunks and its manifest leaves
     * chunks that sg_edge_sweep_temp can find. */
    char w[64];
    snprintf(w, sizeof w, "%s %s", now, nch);
    if (int_reply(sg_redisx_cmd(re->r, "HSET %s %s %s", kw, hex, w)) < 0) return -1;
    for (uint64_t i = 0; i < chunks; i++) {
      char kc[KEY_MAX + 24];
      snprintf(kc, sizeof kc, "%s%llu", cp, (unsigned long long)i);
      uint64_t off = i * re->chunk;
      size_t n = (size_t)(len - off < re->chunk ? len - off : re->chunk);
      redisReply *rep = sg_redisx_cmd(re->r, "SET %s %b", kc, (const char *)data + off, n);
      if (!rep || rep->type != REDIS_REPLY_STATUS) return reply_fail(rep);
      freeReplyObject(rep);
    }
    const char *kc[] = {km, ki, kw, hex, size, nch, csz, now, cp};
    long long ok = int_reply(sg_redisx_eval(re->r, &art_commit_script, 3, 9, kc, NULL));
    if (ok < 0) return -1;
    if (ok == 1) return 0;
  }
  errno = EAGAIN; /* deleted under us three times in a row */
  return -1;
}

/* The manifest of hex: 0 with size, chunk count and chunk size, or -1 (ENOENT absent). */
static int manifest(redis_edge *re, const char *hex, uint64_t *size, uint64_t *chunks,
                    uint64_t *chunk) {
  char km[KEY_MAX];
  redisReply *rep =
      sg_redisx_cmd(re->r, "HMGET %s size chunks chunk", key(re, km, sizeof km, "art:", hex));
  if (!rep || rep->type != REDIS_REPLY_ARRAY || rep->elements != 3) return reply_fail(rep);
  if (rep->element[0]->type == REDIS_REPLY_NIL) {
    freeReplyObject(rep);
    errno = ENOENT;
    return -1;
  }
  uint64_t s, n, c;
  int bad = elem_u64(rep->element[0], &s) || elem_u64(rep->element[1], &n) ||
            elem_u64(rep->element[2], &c) || (s > 0 && c == 0) || (c && n != (s + c - 1) / c);
  freeReplyObject(rep);
  if (bad) {
    errno = EBADMSG;
    return -1;
  }
  if (size) *size = s;
  if (chunks) *chunks = n;
  if (chunk) *chunk = c;
  return 0;
}

static int redis_artifact_stat(sg_edge *e, const char *hex, uint64_t *size) {
  return manifest(R(e), hex, size, NULL, NULL);
}

static int write_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* The artifact is read in pieces of FETCH_PIECE bytes (GETRANGE), FETCH_WINDOW of them on
 * the wire at once: hiredis grows its buffer slowly past 1 MiB, so small replies cost less
 * than one large one, and pipelining keeps Redis sending while this side copies and hashes
 * (docs/PERFORMANCE.md, "Activation and cold start"). */
#define FETCH_PIECE (1u << 20)
#define FETCH_WINDOW 16

typedef struct {
  const char *cp; /* chunk key prefix */
  uint64_t size, chunk;
  sg_artifact_sink *sink;
  sg_sha256_ctx *h;
  uint64_t at_build, at_take; /* artifact offsets of the next piece asked for / taken */
  char key[KEY_MAX + 24], a1[24], a2[24];
} fetch_ctx;

/* The piece at artifact offset at: its chunk, the offset in it and its length. */
static void piece_of(const fetch_ctx *f, uint64_t at, uint64_t *ci, uint64_t *off, uint64_t *n) {
  *ci = at / f->chunk;
  *off = at % f->chunk;
  uint64_t clen = f->size - *ci * f->chunk < f->chunk ? f->size - *ci * f->chunk : f->chunk;
  *n = clen - *off < FETCH_PIECE ? clen - *off : FETCH_PIECE;
}

static int fetch_build(size_t i, int *argc, const char **argv, size_t *lens, void *ctx) {
  (void)i;
  fetch_ctx *f = ctx;
  uint64_t ci, off, n;
  piece_of(f, f->at_build, &ci, &off, &n);
  snprintf(f->key, sizeof f->key, "%s%llu", f->cp, (unsigned long long)ci);
  snprintf(f->a1, sizeof f->a1, "%llu", (unsigned long long)off);
  snprintf(f->a2, sizeof f->a2, "%llu", (unsigned long long)(off + n - 1));
  argv[0] = "GETRANGE";
  argv[1] = f->key;
  argv[2] = f->a1;
  argv[3] = f->a2;
  for (int k = 0; k < 4; k++) lens[k] = strlen(argv[k]);
  *argc = 4;
  f->at_build += n;
  return 0;
}

static int fetch_take(size_t i, const redisReply *rep, void *ctx) {
  (void)i;
  fetch_ctx *f = ctx;
  uint64_t ci, off, n;
  piece_of(f, f->at_take, &ci, &off, &n);
  if (rep->type != REDIS_REPLY_STRING || rep->len != n) {
    errno = EBADMSG; /* deleted or rewritten while read: the caller tries again later */
    return -1;
  }
  /* Hashed from the reply, then written into the sink while still in the cache. */
  sg_sha256_add(f->h, rep->str, n);
  if (sg_artifact_sink_write(f->sink, rep->str, n)) return -1;
  f->at_take += n;
  return 0;
}

/* Fetches the artifact into a sink (sg_artifact_sink_new: the sealed memory it is served
 * from), hashing it as it arrives: 0 with *sink holding *len bytes whose SHA-256 is hex, or
 * -1 with errno (EBADMSG when the chunks do not add up to bytes that hash to hex: a chunk
 * missing or changed under us; EINVAL when the manifest names no artifact). */
static int fetch_mem(redis_edge *re, const char *hex, sg_artifact_sink **sink, size_t *len) {
  uint64_t size, chunks, chunk;
  if (manifest(re, hex, &size, &chunks, &chunk)) return -1;
  if (size > SIZE_MAX || (size && chunk == 0)) {
    errno = EBADMSG;
    return -1;
  }
  char cp[KEY_MAX];
  chunk_prefix(re, hex, cp, sizeof cp);
  fetch_ctx f = {.cp = cp, .size = size, .chunk = chunk};
  f.sink = sg_artifact_sink_new((size_t)size);
  if (!f.sink) return -1;
  f.h = sg_sha256_begin();
  if (!f.h) {
    sg_artifact_sink_free(f.sink);
    return -1;
  }
  size_t pieces = 0;
  for (uint64_t at = 0; at < size; pieces++) {
    uint64_t ci, off, n;
    piece_of(&f, at, &ci, &off, &n);
    at += n;
  }
  int rc = sg_redisx_pipeline(re->r, pieces, FETCH_WINDOW, fetch_build, fetch_take, &f);
  int e = errno;
  uint8_t d[32];
  char hx[65] = "";
  if (sg_sha256_end(f.h, d) == 0) sg_hex(d, sizeof d, hx);
  if (rc == 0 && (f.at_take != size || strcmp(hx, hex) != 0)) rc = -1, e = EBADMSG;
  if (rc) {
    sg_artifact_sink_free(f.sink);
    errno = e;
    return -1;
  }
  *sink = f.sink;
  *len = (size_t)size;
  return 0;
}

/* Keeps verified bytes as <cache>/<hex>.sga for the next load (a restart, a reload while
 * Redis is down): a temp file renamed into place. Not fsync'd: every load checks the
 * cached file's hash again, so one torn by a crash is only fetched again. Best effort: a
 * cache that cannot be written costs a fetch next time, never this load. */
static void keep_in_cache(const char *path, const unsigned char *buf, size_t len) {
  char tmp[PATH_MAX];
  if (sg_temp_path(path, tmp, sizeof tmp)) return;
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return;
  int rc = write_all(fd, (const char *)buf, len);
  if (close(fd)) rc = -1;
  if (rc || rename(tmp, path)) unlink(tmp);
}

static int redis_artifact_load(sg_edge *e, const char *hex, sg_artifact **out) {
  redis_edge *re = R(e);
  char path[PATH_MAX];
  *out = NULL;
  if (re->cache_dir) {
    if (snprintf(path, sizeof path, "%s/%s.sga", re->cache_dir, hex) >= (int)sizeof path) {
      errno = ENAMETOOLONG;
      return -1;
    }
    /* The local copy is used only when its bytes still hash to the name (sg_artifact_load_
     * file checks); one that does not (a crash, a damaged disk) is fetched again. */
    int rc = sg_artifact_load_file(path, hex, out);
    if (rc == 0) return 0;
    if (errno != ENOENT && errno != EBADMSG && errno != EINVAL) return -1;
    if (errno != ENOENT) unlink(path);
  }
  /* Fetched straight into the memory it is served from, hashed once on the way. */
  sg_artifact_sink *sink;
  size_t len;
  int64_t t0 = sg_mono_ms();
  if (fetch_mem(re, hex, &sink, &len)) return -1;
  int64_t ms = sg_mono_ms() - t0;
  fprintf(stderr,
          "{\"level\":\"info\",\"msg\":\"artifact fetched\",\"contentHash\":\"sha256:%s\","
          "\"bytes\":%zu,\"fetchMs\":%lld,\"mbPerSecond\":%.0f}\n",
          hex, len, (long long)ms, ms > 0 ? (double)len / 1e3 / (double)ms : 0.0);
  if (sg_artifact_sink_adopt(sink, out)) return -1;
  /* Only an artifact that opened is kept, written from the sealed copy being served. */
  if (re->cache_dir) {
    size_t n;
    const void *bytes = sg_artifact_bytes(*out, &n);
    keep_in_cache(path, bytes, n);
  }
  return 0;
}

/* A (hex, value) pair of a listing reply: true with both copied when h is 64 lower-case
 * hex digits and v a string shorter than cap. */
static bool hex_pair(const redisReply *h, const redisReply *v, char hex[65], char *val,
                     size_t cap) {
  if (h->type != REDIS_REPLY_STRING || h->len != 64 || v->type != REDIS_REPLY_STRING ||
      v->len >= cap)
    return false;
  memcpy(hex, h->str, 64);
  hex[64] = '\0';
  memcpy(val, v->str, v->len);
  val[v->len] = '\0';
  return strspn(hex, "0123456789abcdef") == 64;
}

static int redis_artifacts(sg_edge *e, sg_edge_artifact_cb cb, void *ctx) {
  char ki[KEY_MAX];
  redisReply *rep = sg_redisx_cmd(R(e)->r, "ZRANGE %s 0 -1 WITHSCORES",
                                  key(R(e), ki, sizeof ki, "artifacts", NULL));
  if (!rep || rep->type != REDIS_REPLY_ARRAY) return reply_fail(rep);
  int rc = 0;
  for (size_t i = 0; rc == 0 && i + 1 < rep->elements; i += 2) {
    char hex[65], sc[24];
    uint64_t t;
    if (hex_pair(rep->element[i], rep->element[i + 1], hex, sc, sizeof sc) &&
        elem_u64(rep->element[i + 1], &t) == 0 && t <= INT64_MAX)
      rc = cb(hex, (int64_t)t, ctx);
  }
  freeReplyObject(rep);
  return rc;
}

static int redis_del_artifact(sg_edge *e, const char *hex) {
  redis_edge *re = R(e);
  char km[KEY_MAX], ki[KEY_MAX], cp[KEY_MAX];
  chunk_prefix(re, hex, cp, sizeof cp);
  const char *argv[] = {key(re, km, sizeof km, "art:", hex),
                        key(re, ki, sizeof ki, "artifacts", NULL), hex, cp};
  long long n = int_reply(sg_redisx_eval(re->r, &art_del_script, 2, 4, argv, NULL));
  if (n < 0) return -1;
  if (n == 0) {
    errno = ENOENT;
    return -1;
  }
  return 0;
}

static int redis_sweep_temp(sg_edge *e, int64_t older_than_s, size_t *removed) {
  redis_edge *re = R(e);
  char kw[KEY_MAX];
  key(re, kw, sizeof kw, "artw", NULL);
  redisReply *rep = sg_redisx_cmd(re->r, "HGETALL %s", kw);
  if (!rep || rep->type != REDIS_REPLY_ARRAY) return reply_fail(rep);
  int64_t now = sg_now_s();
  int rc = 0;
  for (size_t i = 0; rc == 0 && i + 1 < rep->elements; i += 2) {
    char hex[65], val[64];
    long long start;
    if (!hex_pair(rep->element[i], rep->element[i + 1], hex, val, sizeof val) ||
        sscanf(val, "%lld", &start) != 1 || now - start < older_than_s)
      continue;
    char km[KEY_MAX], cp[KEY_MAX];
    chunk_prefix(re, hex, cp, sizeof cp);
    const char *argv[] = {key(re, km, sizeof km, "art:", hex), kw, hex, val, cp};
    long long n = int_reply(sg_redisx_eval(re->r, &art_sweep_script, 2, 5, argv, NULL));
    if (n < 0)
      rc = -1;
    else if (n == 1)
      (*removed)++;
  }
  freeReplyObject(rep);
  return rc;
}

/* ---------------------------------------------------------------- open/close ----- */

/* ---------------------------------------------------------------- guard stamp ---- */

static int redis_stamp_get(sg_edge *e, char out[72]) {
  char k[KEY_MAX];
  redisReply *rep = sg_redisx_cmd(R(e)->r, "GET %s", key(R(e), k, sizeof k, "stamp", NULL));
  if (!rep || (rep->type != REDIS_REPLY_STRING && rep->type != REDIS_REPLY_NIL))
    return reply_fail(rep);
  int rc = 0;
  if (rep->type == REDIS_REPLY_NIL) {
    errno = ENOENT;
    rc = -1;
  } else {
    /* A value too long for a stamp is handed on cut, and then does not parse. */
    size_t n = rep->len < 71 ? rep->len : 71;
    memcpy(out, rep->str, n);
    out[n] = '\0';
  }
  freeReplyObject(rep);
  return rc;
}

/* KEYS: stamp; ARGV: mode ("cas" | "above"), epoch, heartbeat (of the expected stamp for
 * "cas", of the new one for "above"), new text. Returns 0 written, 1 refused. A stored
 * value that does not parse counts as no stamp. Epochs and heartbeats (milliseconds) stay
 * far below 2^53, so Lua's doubles compare them exactly. */
static sg_redisx_script stamp_script = {
    .src = "local cur = redis.call('GET', KEYS[1])\n"
           "local ce, ch\n"
           "if cur then ce, ch = string.match(cur, '^(%d+) (%d+) %d+$') end\n"
           "ce, ch = tonumber(ce), tonumber(ch)\n"
           "local e, h = tonumber(ARGV[2]), tonumber(ARGV[3])\n"
           "if ARGV[1] == 'cas' then\n"
           "  if not ce or ce ~= e or ch ~= h then return 1 end\n"
           "elseif ce and (ce > e or (ce == e and ch >= h)) then\n"
           "  return 1\n"
           "end\n"
           "redis.call('SET', KEYS[1], ARGV[4])\n"
           "return 0\n",
};

static int redis_stamp_put(sg_edge *e, const sg_edge_stamp *expect, const sg_edge_stamp *s,
                           const char *text) {
  redis_edge *re = R(e);
  char k[KEY_MAX], ep[24], hb[24];
  const sg_edge_stamp *c = expect ? expect : s;
  snprintf(ep, sizeof ep, "%llu", (unsigned long long)c->epoch);
  snprintf(hb, sizeof hb, "%lld", (long long)c->heartbeat_ms);
  const char *argv[] = {key(re, k, sizeof k, "stamp", NULL), expect ? "cas" : "above", ep, hb,
                        text};
  redisReply *rep = sg_redisx_eval(re->r, &stamp_script, 1, 5, argv, NULL);
  if (!rep || rep->type != REDIS_REPLY_INTEGER || rep->integer < 0 || rep->integer > 1)
    return reply_fail(rep);
  int rc = rep->integer == 1 ? SG_EDGE_STALE : 0;
  freeReplyObject(rep);
  return rc;
}

/* KEYS: rev; ARGV: min. Returns the revision after. */
static sg_redisx_script raise_script = {
    .src = "local r = tonumber(redis.call('GET', KEYS[1]) or '0')\n"
           "if r < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]); return ARGV[1] end\n"
           "return tostring(r)\n",
};

static int redis_raise_revision(sg_edge *e, uint64_t min, uint64_t *rev) {
  redis_edge *re = R(e);
  char k[KEY_MAX], m[24];
  snprintf(m, sizeof m, "%llu", (unsigned long long)min);
  const char *argv[] = {key(re, k, sizeof k, "rev", NULL), m};
  redisReply *rep = sg_redisx_eval(re->r, &raise_script, 1, 2, argv, NULL);
  if (!rep || elem_u64(rep, rev)) return reply_fail(rep);
  freeReplyObject(rep);
  return 0;
}

static void redis_close(sg_edge *e) {
  redis_edge *re = R(e);
  sg_redisx_close(re->r);
  free(re->cache_dir);
  free(re);
}

static int redis_set_cache_dir(sg_edge *e, const char *dir);
static int redis_cache_prune(sg_edge *e, const char *const *keep, size_t n, int64_t older_than_s,
                             size_t *removed);

/* ---------------------------------------------------------------- runtimes ------- */

/* P rt:<id> holds a runtime's record with an expiry of its ttl (the server's clock decides
 * liveness, so the hosts' clocks need not agree), and P runtimes the set of ids that may
 * have one, so the walk never scans the keyspace; ids whose key expired leave the set on
 * the next walk. Neither touches the revision. */
static int redis_runtime_put(sg_edge *e, const char *id, const char *json, size_t len,
                             int64_t ttl_s) {
  char kk[KEY_MAX], ks[KEY_MAX];
  key(R(e), ks, sizeof ks, "runtimes", NULL);
  redisReply *rep = sg_redisx_cmd(R(e)->r, "SADD %s %s", ks, id);
  if (!rep || rep->type != REDIS_REPLY_INTEGER) return reply_fail(rep);
  freeReplyObject(rep);
  rep = sg_redisx_cmd(R(e)->r, "SET %s %b EX %lld", key(R(e), kk, sizeof kk, "rt:", id), json, len,
                      (long long)ttl_s);
  if (!rep || rep->type != REDIS_REPLY_STATUS) return reply_fail(rep);
  freeReplyObject(rep);
  return 0;
}

static int redis_runtime_del(sg_edge *e, const char *id) {
  char kk[KEY_MAX], ks[KEY_MAX];
  redisReply *rep = sg_redisx_cmd(R(e)->r, "DEL %s", key(R(e), kk, sizeof kk, "rt:", id));
  if (!rep || rep->type != REDIS_REPLY_INTEGER) return reply_fail(rep);
  freeReplyObject(rep);
  rep = sg_redisx_cmd(R(e)->r, "SREM %s %s", key(R(e), ks, sizeof ks, "runtimes", NULL), id);
  if (!rep || rep->type != REDIS_REPLY_INTEGER) return reply_fail(rep);
  freeReplyObject(rep);
  return 0;
}

/* Looks one id up: cb with its record when the key is still there, else drops the id. */
static int runtime_visit(sg_edge *e, const char *ks, const char *id, sg_edge_foreach_cb cb,
                         void *ctx) {
  char kk[KEY_MAX];
  redisReply *rep = sg_redisx_cmd(R(e)->r, "GET %s", key(R(e), kk, sizeof kk, "rt:", id));
  if (!rep) return -1;
  if (rep->type == REDIS_REPLY_NIL) {
    freeReplyObject(rep);
    rep = sg_redisx_cmd(R(e)->r, "SREM %s %s", ks, id);
    if (!rep || rep->type != REDIS_REPLY_INTEGER) return reply_fail(rep);
    freeReplyObject(rep);
    return 0;
  }
  if (rep->type != REDIS_REPLY_STRING) return reply_fail(rep);
  int rc = 0;
  if (rep->len <= SG_EDGE_RUNTIME_MAX) rc = cb(id, rep->str, rep->len, ctx);
  freeReplyObject(rep);
  return rc;
}

static int redis_runtimes(sg_edge *e, sg_edge_foreach_cb cb, void *ctx) {
  char ks[KEY_MAX], cursor[32] = "0";
  key(R(e), ks, sizeof ks, "runtimes", NULL);
  int rc = 0;
  do {
    redisReply *rep = sg_redisx_cmd(R(e)->r, "SSCAN %s %s COUNT 500", ks, cursor);
    if (!rep || rep->type != REDIS_REPLY_ARRAY || rep->elements != 2 ||
        rep->element[0]->type != REDIS_REPLY_STRING || rep->element[0]->len >= sizeof cursor ||
        rep->element[1]->type != REDIS_REPLY_ARRAY)
      return reply_fail(rep);
    memcpy(cursor, rep->element[0]->str, rep->element[0]->len);
    cursor[rep->element[0]->len] = '\0';
    redisReply *ids = rep->element[1];
    for (size_t i = 0; rc == 0 && i < ids->elements; i++) {
      redisReply *f = ids->element[i];
      char id[SG_EDGE_MAX_ID + 1];
      if (f->type != REDIS_REPLY_STRING || f->len > SG_EDGE_MAX_ID) continue;
      memcpy(id, f->str, f->len);
      id[f->len] = '\0';
      if (sg_edge_id_valid(id)) rc = runtime_visit(e, ks, id, cb, ctx);
    }
    freeReplyObject(rep);
  } while (rc == 0 && strcmp(cursor, "0") != 0);
  return rc;
}

static const sg__edge_ops redis_ops = {
    .put_artifact = redis_put_artifact,
    .artifact_stat = redis_artifact_stat,
    .artifact_load = redis_artifact_load,
    .artifacts = redis_artifacts,
    .del_artifact = redis_del_artifact,
    .sweep_temp = redis_sweep_temp,
    .put = redis_put,
    .del = redis_del,
    .update = redis_update,
    .put_if_newer = redis_put_if_newer,
    .del_if_newer = redis_del_if_newer,
    .changes_since = redis_changes_since,
    .get = redis_get,
    .revision = redis_revision,
    .foreach = redis_foreach,
    .stamp_get = redis_stamp_get,
    .stamp_put = redis_stamp_put,
    .raise_revision = redis_raise_revision,
    .set_cache_dir = redis_set_cache_dir,
    .cache_prune = redis_cache_prune,
    .runtime_put = redis_runtime_put,
    .runtime_del = redis_runtime_del,
    .runtimes = redis_runtimes,
    .close = redis_close,
};

int sg__edge_redis_open(const char *url, sg_edge **out) {
  sg_redisx_url u;
  char err[256];
  if (sg_redisx_parse(url, &u, err, sizeof err)) {
    fprintf(stderr, "{\"level\":\"error\",\"msg\":\"bad edge URL\",\"detail\":\"%s\"}\n", err);
    errno = strncmp(url, "rediss://", 9) == 0 ? ENOTSUP : EINVAL;
    return -1;
  }
  redis_edge *re = calloc(1, sizeof *re);
  if (!re) return -1;
  re->base.ops = &redis_ops;
  re->chunk = u.chunk_bytes;
  re->changelog = u.changelog;
  snprintf(re->p, sizeof re->p, "%s:edge:", u.prefix);
  /* Lazy: a runtime started while Redis is down comes up (not ready) and connects when
   * Redis does; a command answers ECONNREFUSED meanwhile. */
  if (sg_redisx_open(&u, 5000, true, &re->r)) {
    free(re);
    return -1;
  }
  explicit_bzero(&u, sizeof u);
  *out = &re->base;
  return 0;
}

static bool kept(const char *hex, const char *const *keep, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const char *k = strncmp(keep[i], "sha256:", 7) == 0 ? keep[i] + 7 : keep[i];
    if (strncmp(k, hex, 64) == 0 && k[64] == '\0') return true;
  }
  return false;
}

static int redis_cache_prune(sg_edge *e, const char *const *keep, size_t n, int64_t older_than_s,
                             size_t *removed) {
  redis_edge *re = R(e);
  if (!re->cache_dir) return 0;
  DIR *d = opendir(re->cache_dir);
  if (!d) return -1;
  int dfd = dirfd(d);
  time_t now = time(NULL);
  struct dirent *de;
  while ((de = readdir(d))) {
    /* "<64 hex>.sga" or "<64 hex>.sga.tmp-<random>"; anything else is left alone. */
    size_t len = strlen(de->d_name);
    bool art = len == 68 && strcmp(de->d_name + 64, ".sga") == 0;
    bool tmp = len > 72 && strncmp(de->d_name + 64, ".sga.tmp-", 9) == 0;
    if ((!art && !tmp) || strspn(de->d_name, "0123456789abcdef") != 64) continue;
    if (art && kept(de->d_name, keep, n)) continue;
    struct stat st;
    if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
        (int64_t)(now - st.st_mtime) < older_than_s)
      continue;
    if (unlinkat(dfd, de->d_name, 0) == 0) (*removed)++;
  }
  closedir(d);
  return 0;
}

static int redis_set_cache_dir(sg_edge *e, const char *dir) {
  redis_edge *re = R(e);
  if (sg_mkdirs(dir, 0755)) return -1;
  char *d = strdup(dir);
  if (!d) return -1;
  free(re->cache_dir);
  re->cache_dir = d;
  return 0;
}
