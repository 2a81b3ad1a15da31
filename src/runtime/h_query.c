/*
 * GET /v1/query?key=…&q=…[&locale=…][&limit=1..10][&within=ITEM_ID]
 *
 * Checks, in order: key (401 invalid_key), Origin (403 origin_not_allowed), access token
 * of a private list (401 invalid_token), q present and valid UTF-8 and limit absent or
 * an integer 1..10 and within absent or one well-formed item id (400 invalid_request, naming
 * the parameter), q at most 255 code points as sent (400 query_too_long),
 * list published (404 list_not_published), artifact open (503 artifact_unavailable), the normalised
 * q at least minQueryChars (200 query_too_short, not billed), the monthly quota (200
 * quota_exceeded). Then the artifact lookup with the list's typo budget (docs/DESIGN.md §3.1),
 * whose prebuilt JSON fragments are copied into a per-thread buffer, each followed by its highlight
 * (section 3.2): nothing is allocated here. A repeated query is answered from the
 * process's answer cache (answer_cache.h), which the first worker allocates.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/metrics.h"
#include "common/util.h"
#include "compiler/normalize.h"
#include "runtime/answer_cache.h"
#include "runtime/rt.h"

#define Q_MAX_CP 255

static _Thread_local char tl_norm[SG__RT_SCRATCH];

/* What the digest of reqid.c does not cover: the body's own text. BODY_FORMAT is bumped
 * when build_body's JSON framing changes; the typed codes and messages are hashed in. So
 * two builds that would answer differently never share an ETag (a rolling deploy behind
 * one cache). */
#define BODY_FORMAT "query-body/2"
static char salt[9];
static pthread_once_t salt_once = PTHREAD_ONCE_INIT;

static void make_salt(void) {
  static const sg_err typed[] = {SG_E_QUERY_TOO_SHORT, SG_E_QUOTA_EXCEEDED};
  crypto_generichash_state st;
  uint8_t d[4];
  crypto_generichash_init(&st, NULL, 0, sizeof d);
  crypto_generichash_update(&st, (const unsigned char *)BODY_FORMAT, sizeof BODY_FORMAT);
  for (size_t i = 0; i < sizeof typed / sizeof *typed; i++) {
    const char *code = sg_err_code(typed[i]), *msg = sg_err_message(typed[i]);
    crypto_generichash_update(&st, (const unsigned char *)code, strlen(code) + 1);
    crypto_generichash_update(&st, (const unsigned char *)msg, strlen(msg) + 1);
  }
  crypto_generichash_final(&st, d, sizeof d);
  sg_hex(d, sizeof d, salt);
}

/* "\"" + 32 hex of the body tag + a letter for the answer's code + the typo budget + 8
 * hex of the body format + "\"". The tag comes from the requestId's digest (reqid.c),
 * which covers everything else the body is made of; the code (query_too_short,
 * quota_exceeded) and the budget depend on list policy (changed without a republish) and
 * quota. */
#define ETAG_SIZE 45
static void body_etag(const uint8_t tag[16], sg_err code, unsigned k, char out[ETAG_SIZE]) {
  pthread_once(&salt_once, make_salt);
  out[0] = '"';
  sg_hex(tag, 16, out + 1);
  out[33] = code == SG_E_OK ? 'o' : code == SG_E_QUERY_TOO_SHORT ? 's' : 'q';
  out[34] = (char)('0' + k);
  memcpy(out + 35, salt, 8);
  out[43] = '"';
  out[44] = '\0';
}

/* The highlight of each returned item as JSON text ",\"highlight\":[[s,e],…]}" (the
 * fragment's closing brace moves after it). At most HL_PAIRS pairs: normalisation maps
 * a prefix to one contiguous run of characters in practice. */
#define HL_PAIRS 16
#define HL_PAIR_TEXT 24 /* ",[4294967295,4294967295]" is 24 bytes */
#define HL_TEXT (16 + HL_PAIRS * HL_PAIR_TEXT)
static _Thread_local char tl_hl[SG_BUCKET_ITEMS][HL_TEXT];
static _Thread_local size_t tl_hl_len[SG_BUCKET_ITEMS];
static _Thread_local char tl_dv[8192];

/* Renders item i's highlight, np pairs (at most HL_PAIRS), into tl_hl[i]. By hand:
 * snprintf per pair was a quarter of a cached answer's instructions. */
static void render_hl(size_t i, const uint32_t *pairs, long np) {
  char *p = tl_hl[i];
  memcpy(p, ",\"highlight\":[", 14);
  p += 14;
  for (long j = 0; j < np && j < HL_PAIRS; j++) {
    if (j) *p++ = ',';
    *p++ = '[';
    p += sg_udec(pairs[2 * j], p);
    *p++ = ',';
    p += sg_udec(pairs[2 * j + 1], p);
    *p++ = ']';
  }
  memcpy(p, "]}", 2);
  p += 2;
  tl_hl_len[i] = (size_t)(p - tl_hl[i]);
}

void sg__h_query_thread_init(void) { (void)sg__ac_init(); }

/* limit: absent (10) or the decimal digits of 1..10. Returns 0 when invalid. */
static unsigned parse_limit(const char *s, size_t n) {
  if (!s) return SG_BUCKET_ITEMS;
  if (n == 0 || n > 6) return 0;
  unsigned v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return 0;
    v = v * 10 + (unsigned)(s[i] - '0');
  }
  return v >= 1 && v <= SG_BUCKET_ITEMS ? v : 0;
}

/* within (docs/DESIGN.md §3.5): 0 when absent, 1 when given once as itm_ followed by 22
 * ASCII letters or digits (*id, *len set), -1 otherwise (given twice, without a value,
 * empty, or any other text: nothing of it is read past its 26th byte). */
#define WITHIN_LEN 26
static int parse_within(const sg__h1_req *req, const char **id, size_t *len) {
  int seen = 0;
  const sg__h1_arg *w = NULL;
  for (size_t i = 0; i < req->n_args; i++) {
    const sg__h1_arg *a = &req->args[i];
    if (a->name_len == 6 && memcmp(a->name, "within", 6) == 0) {
      seen++;
      w = a;
    }
  }
  if (seen == 0) return 0;
  if (seen > 1 || !w->value || w->value_len != WITHIN_LEN || memcmp(w->value, "itm_", 4) != 0)
    return -1;
  for (size_t i = 4; i < WITHIN_LEN; i++) {
    char c = w->value[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) return -1;
  }
  *id = w->value;
  *len = WITHIN_LEN;
  return 1;
}

/* Writes {"items":[…],"list":{"id":…},"requestId":"…"[,"code":…,"message":…]} into
 * out[0..cap). Returns the length, or the length needed when it exceeds cap. */
static size_t build_body(char *out, size_t cap, const sg_query_result *res, const char *id_json,
                         const char *rid, sg_err code) {
  size_t need = 10 + 1 + 17 + strlen(id_json) + 15 + SG__REQID_LEN + 2;
  char tail[160] = "";
  if (code != SG_E_OK)
    snprintf(tail, sizeof tail, ",\"code\":\"%s\",\"message\":\"%s\"", sg_err_code(code),
             sg_err_message(code));
  size_t tl = strlen(tail);
  need += tl;
  for (size_t i = 0; res && i < res->n; i++) need += res->items[i].len + tl_hl_len[i];
  if (need > cap) return need;
  char *p = out;
#define PUT(s, n)                                                                                  \
  do {                                                                                             \
    memcpy(p, (s), (n));                                                                           \
    p += (n);                                                                                      \
  } while (0)
  PUT("{\"items\":[", 10);
  for (size_t i = 0; res && i < res->n; i++) {
    if (i) *p++ = ',';
    PUT(res->items[i].json, res->items[i].len - 1); /* without its closing brace */
    PUT(tl_hl[i], tl_hl_len[i]);
  }
  PUT("],\"list\":{\"id\":", 15);
  PUT(id_json, strlen(id_json));
  PUT("},\"requestId\":\"", 15);
  PUT(rid, SG__REQID_LEN);
  *p++ = '"';
  PUT(tail, tl);
  *p++ = '}';
#undef PUT
  return (size_t)(p - out);
}

/* The highlight pairs of a returned item (HL_PAIRS at most, into pairs) for the normalised
 * query q[0..nlen): their count, 0 when its displayValue cannot be read. */
static long highlight(const sg_fragment *f, const char *q, size_t nlen, uint32_t *pairs) {
  long dl = sg_fragment_display_value(f, tl_dv, sizeof tl_dv);
  if (dl < 0) return 0;
  return sg_typo_highlight(tl_dv, (size_t)dl, q, nlen, f->edits, f->tier, pairs, HL_PAIRS);
}

/* Whether every item of e lies inside the artifact's alen bytes. */
static bool in_bytes(const sg__ac_answer *e, size_t alen) {
  for (size_t i = 0; i < e->n; i++)
    if (e->it[i].off > alen || e->it[i].len > alen - e->it[i].off) return false;
  return true;
}

/* The answer cache's side of a query (answer_cache.h): its key, and a hit's copy. */
typedef struct {
  bool keyed; /* the answer has a key (the cache may hold it) */
  bool held;  /* the cache holds it now */
  bool hit;   /* ... and held it before: ans is its copy */
  sg__ac_key key;
  sg__ac_answer ans;
} ac_ctx;

/* The first `limit` items of the relevance contract for tl_norm[0..nlen) with typo
 * budget k, with their highlights in tl_hl: from the answer cache when it holds them,
 * else from the artifact (and then kept). */
static void answer(const sg_artifact *a, uint64_t gen, int loc, unsigned k, unsigned limit,
                   size_t nlen, const char *within, size_t wlen, sg_query_result *res, ac_ctx *ac) {
  const char *q = tl_norm;
  ac->keyed = ac->held = ac->hit = false;
  if (within) { /* filtered (§3.5): not kept in the answer cache, whose key lacks it */
    sg_within w;
    res->n = 0;
    if (sg_artifact_within(a, within, wlen, &w) == 0)
      sg_artifact_query_within(a, loc, q, nlen, k, &w, res);
    if (res->n > limit) res->n = limit;
    for (size_t i = 0; i < res->n; i++) {
      uint32_t pairs[2 * HL_PAIRS];
      long np = highlight(&res->items[i], q, nlen, pairs);
      render_hl(i, pairs, np);
    }
    return;
  }
  size_t alen = 0;
  const char *base = sg_artifact_bytes(a, &alen);
  ac->keyed = alen <= UINT32_MAX && sg__ac_key_make(&ac->key, gen, loc, k, limit, q, nlen);
  sg__ac_answer *e = &ac->ans;
  /* A hit whose items would lie outside the artifact (never, for bytes its generation
   * stands for) is searched again. */
  if (ac->keyed && sg__ac_get(&ac->key, e) && in_bytes(e, alen)) {
    ac->held = ac->hit = true;
    res->n = e->n;
    for (size_t i = 0; i < e->n; i++) {
      const sg__ac_item *it = &e->it[i];
      res->items[i].json = base + it->off;
      res->items[i].len = it->len;
      res->items[i].edits = it->edits;
      res->items[i].tier = it->tier;
      uint32_t pairs[2 * SG__AC_PAIRS];
      for (unsigned j = 0; j < it->np; j++) {
        pairs[2 * j] = e->pairs[it->first + j][0];
        pairs[2 * j + 1] = e->pairs[it->first + j][1];
      }
      render_hl(i, pairs, it->np);
    }
    sg_metrics_query_cache_hit();
    return;
  }
  sg_artifact_query_k(a, loc, q, nlen, k, res);
  if (res->n > limit) res->n = limit;
  bool keep = ac->keyed;
  size_t nkept = 0;
  for (size_t i = 0; i < res->n; i++) {
    uint32_t pairs[2 * HL_PAIRS];
    long np = highlight(&res->items[i], q, nlen, pairs);
    render_hl(i, pairs, np);
    if (!keep) continue;
    sg__ac_item *it = &e->it[i];
    it->off = (uint32_t)(res->items[i].json - base);
    it->len = res->items[i].len;
    it->edits = res->items[i].edits;
    it->tier = res->items[i].tier;
    it->np = (uint8_t)(np > 0 ? np : 0);
    it->first = (uint8_t)(it->np ? nkept : 0);
    if (it->np > SG__AC_PAIRS - nkept) {
      keep = false;
      continue;
    }
    for (unsigned j = 0; j < it->np; j++) {
      if (pairs[2 * j] > UINT16_MAX || pairs[2 * j + 1] > UINT16_MAX) keep = false;
      e->pairs[nkept + j][0] = (uint16_t)pairs[2 * j];
      e->pairs[nkept + j][1] = (uint16_t)pairs[2 * j + 1];
    }
    nkept += it->np;
  }
  if (!keep) return;
  e->n = (uint8_t)res->n;
  ac->held = sg__ac_put(&ac->key, e);
}

void sg__h_query(sg__rt_req *r) {
  size_t klen, qlen, llen;
  const char *key = sg__h1_arg_get(r->req, "key", &klen);
  const char *q = sg__h1_arg_get(r->req, "q", &qlen);
  const char *locale = sg__h1_arg_get(r->req, "locale", &llen);
  size_t limlen = 0;
  const char *lim = sg__h1_arg_get(r->req, "limit", &limlen);
  unsigned limit = parse_limit(lim, limlen);
  const char *within = NULL;
  size_t wlen = 0;
  int wr = parse_within(r->req, &within, &wlen);
  if (locale && (llen == 0 || llen > 35 || memchr(locale, '\0', llen))) locale = NULL;

  const sg__rt_snapshot *s = sg__rcu_enter(&r->rt->rcu);
  const sg__rt_key *k = NULL;
  sg_err e = sg__rt_authorize(r, s, key, klen, &k);
  if (e == SG_E_OK && k->list->visibility == SG__VIS_PRIVATE) {
    e = sg__token_verify(s, r->req->authorization.p, k, sg_now_s());
    if (e == SG_E_INVALID_TOKEN) r->message = sg__rt_token_hint(r->req->authorization.p);
  }
  if (e == SG_E_OK && (!q || !sg_utf8_valid(q, qlen))) {
    e = SG_E_INVALID_REQUEST;
    r->message = q ? "The query parameter q must be valid UTF-8."
                   : "The query parameter q is required: the user's input, e.g. ?q=par.";
  }
  if (e == SG_E_OK && limit == 0) {
    e = SG_E_INVALID_REQUEST;
    r->message = "The query parameter limit must be an integer from 1 to 10.";
  }
  if (e == SG_E_OK && wr < 0) {
    e = SG_E_INVALID_REQUEST;
    r->field = "within";
    r->message = "The query parameter within must be given at most once, as an item id: itm_ "
                 "followed by 22 letters or digits.";
  }
  if (e == SG_E_OK && sg_utf8_count(q, qlen) > Q_MAX_CP) e = SG_E_QUERY_TOO_LONG;
  if (e == SG_E_OK && !k->list->published) e = SG_E_LIST_NOT_PUBLISHED;
  if (e == SG_E_OK && !k->list->art) e = SG_E_ARTIFACT_UNAVAILABLE;
  long nlen = 0;
  if (e == SG_E_OK) {
    nlen = sg_normalize_into(q, qlen, tl_norm, sizeof tl_norm);
    if (nlen == -2)
      e = SG_E_QUERY_TOO_LONG;
    else if (nlen < 0)
      e = SG_E_INVALID_REQUEST;
  }
  if (e != SG_E_OK) {
    sg__rcu_leave(&r->rt->rcu);
    sg__rt_error(r, e, NULL, NULL);
    return;
  }

  const sg__rt_list *l = k->list;
  const sg_artifact *a = l->art->a;
  const char *tag = NULL;
  int loc = sg_artifact_resolve_locale(a, locale, &tag);
  char rid[SG__REQID_LEN + 1];
  uint8_t body_tag[16];
  ac_ctx ac;
  ac.keyed = ac.held = ac.hit = ac.ans.has_rid = false;
  const char *cache = l->visibility == SG__VIS_PRIVATE ? "private, no-store" : "public, max-age=60";

  sg_query_result res;
  res.n = 0;
  sg_err code = SG_E_OK;
  size_t ncp = sg_utf8_count(tl_norm, (size_t)nlen);
  unsigned budget = sg_typo_budget(&l->typo, ncp);
  if ((long)ncp < l->min_query_chars) {
    code = SG_E_QUERY_TOO_SHORT; /* not billed */
  } else if (!sg__quota_take(k->app->slot, k->app->limited ? k->app->monthly_quota : UINT64_MAX)) {
    code = SG_E_QUOTA_EXCEEDED;
    cache = "private, no-store";
  } else {
    answer(a, l->art->cache_gen, loc, budget, limit, (size_t)nlen, within, wlen, &res, &ac);
    sg_metrics_query_served();
    /* Answered 200 or 304 from here on: a served query (docs/DESIGN.md §9). */
    sg_analytics_query(sg_rt_state_analytics(r->rt->state), l->id, sg_now_s(), tl_norm,
                       (size_t)nlen, res.n == 0);
  }

  /* The requestId hashes the key, the normalised q, the served locale, the content hash
   * and the limit; an answer from the cache has them all but the key in its entry. */
  if (ac.hit && ac.ans.has_rid && memcmp(ac.ans.key_digest, r->key_digest, 32) == 0) {
    memcpy(rid, "req_", 4);
    memcpy(rid + 4, ac.ans.rid_hex, 32);
    rid[SG__REQID_LEN] = '\0';
    memcpy(body_tag, ac.ans.body_tag, sizeof body_tag);
  } else {
    sg__reqid_derive_within(key, klen, tl_norm, (size_t)nlen, tag, l->content_hash, limit, within,
                            wlen, rid, body_tag);
    if (ac.held) sg__ac_set_rid(&ac.key, r->key_digest, rid + 4, body_tag);
  }

  char *body = sg__rt_scratch();
  size_t len = build_body(body, SG__RT_SCRATCH, &res, l->id_json, rid, code);
  char *big = NULL;
  if (len > SG__RT_SCRATCH) { /* rare: very long items; the only allocation on this path */
    big = malloc(len);
    if (big) build_body(big, len, &res, l->id_json, rid, code);
    body = big;
  }
  sg__rcu_leave(&r->rt->rcu);
  if (!body) {
    sg__rt_error(r, SG_E_INTERNAL, NULL, NULL);
    return;
  }

  char etag[ETAG_SIZE];
  body_etag(body_tag, code, code == SG_E_OK ? budget : 0, etag);
  sg__rt_hdrs h = {.etag = etag, .cache_control = cache};
  if (sg__rt_inm_matches(r, etag))
    sg__rt_respond(r, 304, "", 0, &h);
  else
    sg__rt_respond(r, 200, body, len, &h);
  free(big);
}
