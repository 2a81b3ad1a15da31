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
 * (section 3.2): nothing is allocated here but each worker thread's answer cache, once
 * (below; a repeated query is answered from it).
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

/* ---- the answer cache -------------------------------------------------------------
 * Per worker thread (no lock, nothing shared), bounded: AC_SETS sets of AC_WAYS entries,
 * each the answer of one (artifact content hash, served locale, normalised q, typo
 * budget, limit), i.e. everything sg_artifact_query_k and the highlights read. The items
 * are kept as offsets into the artifact's bytes, which the content hash fixes: an
 * artifact with the same hash has the same bytes, so the offsets stay right across a
 * reload, and an artifact with another hash never matches (its entries carry another
 * generation, below). The list's policy enters through the budget it gives this q,
 * which is all the lookup reads of it. Only what is cheap to keep is kept: queries up
 * to AC_Q - 1 bytes and answers whose highlights fit AC_PAIRS pairs in all (two per item
 * for a full answer: multi-word queries have one per matched word); anything else is
 * answered as before. The body's list id comes from the key per request; requestId and
 * ETag are derived as before and kept in the entry with the digest of the key they were
 * derived with, reused only for that key; so a hit changes no byte of any answer.
 *
 * Sets of 16 ways, each set's tags and use stamps in one block checked before any entry
 * is read, the least recently used way replaced: a working set of a few thousand queries
 * stays whole (two ways per set let ~5% of a 3,000-query cycle evict each other on every
 * pass, each miss a full search). */
#define AC_SETS 512u /* a power of two */
#define AC_WAYS 16
/* Admission (TinyLFU, Einziger et al.): a count-min sketch of how often each key was
 * asked lately, AC_ROWS rows of AC_WIDTH 8-bit counters, every counter halved after
 * AC_SAMPLE lookups so that "lately" stays recent. A miss that finds its set full
 * replaces the least recently used way only when its key was asked more often than that
 * way's: a run of queries asked once each (a scan, a crawler, a tenant sending random
 * text, a mix larger than the cache cycled in order) then passes through without
 * flushing the answers asked again and again, where plain LRU kept none of either. */
#define AC_ROWS 4
#define AC_WIDTH 8192u /* a power of two */
#define AC_SAMPLE (10u * AC_SETS * AC_WAYS)
#define AC_Q 48
#define AC_PAIRS 20    /* highlight pairs per entry, shared by its items */
#define AC_HASHES 4    /* content hashes this thread remembers */
#define AC_HASH_LEN 80 /* "sha256:" + 64 hex fits */

typedef struct {
  uint32_t off, len;              /* the fragment: artifact bytes [off, off + len) */
  uint8_t edits, tier, np, first; /* its highlight: np pairs from pairs[first] of the entry */
} ac_item;

typedef struct {
  uint32_t gen; /* the generation of its content hash */
  int32_t loc;
  uint8_t qlen, k, limit, n;
  char q[AC_Q];
  ac_item it[SG_BUCKET_ITEMS];
  uint32_t pairs[AC_PAIRS][2];
  /* The requestId and body tag (reqid.c) last derived for this answer, and the SHA-256
   * of the publishable key they were derived with (the digest the snapshot knows keys
   * by): everything else they hash is in the entry's key. */
  bool has_rid;
  uint8_t key_digest[32];
  char rid[SG__REQID_LEN];
  uint8_t body_tag[16];
} ac_entry;

typedef struct {
  uint32_t tag[AC_WAYS];  /* of each way's entry (ac_hash, never 0); 0: empty */
  uint32_t used[AC_WAYS]; /* the cache's clock at the way's last use */
  ac_entry e[AC_WAYS];
} ac_set_t;

typedef struct {
  ac_set_t set[AC_SETS];
  uint8_t freq[AC_ROWS][AC_WIDTH]; /* the admission sketch */
  uint32_t samples;                /* lookups counted since the last halving */
  uint32_t clock;
  char hash[AC_HASHES][AC_HASH_LEN];
  uint32_t hgen[AC_HASHES];
  uint32_t next_gen;
  unsigned next_hash;
} ac_cache;

static _Thread_local ac_cache *tl_ac;
static _Thread_local bool tl_ac_failed;
static pthread_key_t ac_key;
static pthread_once_t ac_once = PTHREAD_ONCE_INIT;
static bool ac_key_ok;

static void ac_free(void *p) { free(p); }
static void ac_init(void) { ac_key_ok = pthread_key_create(&ac_key, ac_free) == 0; }

/* This thread's cache (allocated by sg__h_query_thread_init or on its first query,
 * freed when it exits), or NULL. */
static ac_cache *ac_get(void) {
  if (tl_ac || tl_ac_failed) return tl_ac;
  pthread_once(&ac_once, ac_init);
  ac_cache *c = ac_key_ok ? calloc(1, sizeof *c) : NULL;
  if (c && pthread_setspecific(ac_key, c) != 0) {
    free(c);
    c = NULL;
  }
  if (!c) tl_ac_failed = true;
  /* Make the whole cache resident now: calloc maps zero pages lazily, so RSS would
   * otherwise grow by up to sizeof *c per thread as new queries reach untouched sets,
   * which reads like a leak under a long run of distinct queries. */
  for (size_t i = 0; c && i < sizeof *c; i += 4096) ((volatile char *)c)[i] = 0;
  tl_ac = c;
  return c;
}

void sg__h_query_thread_init(void) { (void)ac_get(); }

/* The generation standing for content hash h in cache c (a new one when h is not among
 * the last AC_HASHES seen: the entries of the hash it replaces can never match again). */
static uint32_t ac_gen(ac_cache *c, const char *h, size_t hl) {
  for (unsigned i = 0; i < AC_HASHES; i++)
    if (c->hgen[i] && memcmp(c->hash[i], h, hl + 1) == 0) return c->hgen[i];
  unsigned i = c->next_hash++ % AC_HASHES;
  memcpy(c->hash[i], h, hl + 1);
  if (++c->next_gen == 0) { /* after 2^32 list swaps on one thread: start over */
    memset(c->set, 0, sizeof c->set);
    memset(c->hgen, 0, sizeof c->hgen);
    c->next_gen = 1;
  }
  c->hgen[i] = c->next_gen;
  return c->next_gen;
}

/* The hash of an entry's key: its low bits pick the set, its high half is the tag. */
static uint64_t ac_hash(uint32_t gen, int loc, unsigned k, unsigned limit, const char *q,
                        size_t ql) {
  uint64_t h = 1469598103934665603ull ^ gen;
  h = (h ^ (uint32_t)loc) * 1099511628211ull;
  h = (h ^ (k << 8 | limit)) * 1099511628211ull;
  for (size_t i = 0; i < ql; i++) h = (h ^ (unsigned char)q[i]) * 1099511628211ull;
  return h ^ h >> 29;
}

static inline uint32_t ac_tag(uint64_t h) { return (uint32_t)(h >> 32) | 1u; }

/* The sketch's counter of row r for a key known by its set and tag (all an entry keeps of
 * its hash, so a candidate and a resident way are counted alike). */
static inline uint8_t *ac_counter(ac_cache *c, unsigned r, uint32_t set, uint32_t tag) {
  uint64_t x = ((uint64_t)tag << 32 | set) * 0x9E3779B97F4A7C15ull;
  x ^= x >> (29 + 2 * r);
  x *= 0xBF58476D1CE4E5B9ull;
  return &c->freq[r][(x >> 32) & (AC_WIDTH - 1)];
}

/* How often the key was asked lately: the least of its counters. */
static unsigned ac_freq(ac_cache *c, uint32_t set, uint32_t tag) {
  unsigned f = 255;
  for (unsigned r = 0; r < AC_ROWS; r++) {
    unsigned v = *ac_counter(c, r, set, tag);
    if (v < f) f = v;
  }
  return f;
}

/* Counts one lookup of the key (saturating), and halves every counter after AC_SAMPLE. */
static void ac_count(ac_cache *c, uint32_t set, uint32_t tag) {
  for (unsigned r = 0; r < AC_ROWS; r++) {
    uint8_t *v = ac_counter(c, r, set, tag);
    if (*v < 255) (*v)++;
  }
  if (++c->samples >= AC_SAMPLE) {
    c->samples = 0;
    for (unsigned r = 0; r < AC_ROWS; r++)
      for (unsigned i = 0; i < AC_WIDTH; i++) c->freq[r][i] >>= 1;
  }
}

static inline bool ac_match(const ac_entry *e, uint32_t gen, int loc, unsigned k, unsigned limit,
                            const char *q, size_t ql) {
  return e->gen == gen && e->loc == loc && e->k == k && e->limit == limit && e->qlen == ql &&
         memcmp(e->q, q, ql) == 0;
}
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

/* The first `limit` items of the relevance contract for tl_norm[0..nlen) with typo
 * budget k, with their highlights in tl_hl: from this thread's answer cache when it
 * holds them, else from the artifact (and then kept). Returns the cache entry that holds
 * the answer now, or NULL. */
static ac_entry *answer(const sg_artifact *a, int loc, const char *content_hash, unsigned k,
                        unsigned limit, size_t nlen, const char *within, size_t wlen,
                        sg_query_result *res) {
  const char *q = tl_norm;
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
    return NULL;
  }
  size_t alen = 0;
  const char *base = sg_artifact_bytes(a, &alen);
  size_t hl = content_hash ? strnlen(content_hash, AC_HASH_LEN) : AC_HASH_LEN;
  ac_cache *c = nlen < AC_Q && hl < AC_HASH_LEN && alen <= UINT32_MAX ? ac_get() : NULL;
  uint32_t gen = 0, tag = 0, set_i = 0;
  ac_set_t *set = NULL;
  if (c) {
    gen = ac_gen(c, content_hash, hl);
    uint64_t h = ac_hash(gen, loc, k, limit, q, nlen);
    set_i = (uint32_t)(h & (AC_SETS - 1));
    set = &c->set[set_i];
    tag = ac_tag(h);
    ac_count(c, set_i, tag);
    for (unsigned w = 0; w < AC_WAYS; w++) {
      if (set->tag[w] != tag) continue;
      const ac_entry *e = &set->e[w];
      if (!ac_match(e, gen, loc, k, limit, q, nlen)) continue;
      set->used[w] = ++c->clock;
      res->n = e->n;
      for (size_t i = 0; i < e->n; i++) {
        const ac_item *it = &e->it[i];
        res->items[i].json = base + it->off;
        res->items[i].len = it->len;
        res->items[i].edits = it->edits;
        res->items[i].tier = it->tier;
        render_hl(i, e->pairs[it->first], it->np);
      }
      sg_metrics_query_cache_hit();
      return &set->e[w];
    }
  }
  sg_artifact_query_k(a, loc, q, nlen, k, res);
  if (res->n > limit) res->n = limit;
  bool keep = c != NULL;
  ac_item items[SG_BUCKET_ITEMS];
  uint32_t kept[AC_PAIRS][2];
  size_t nkept = 0;
  for (size_t i = 0; i < res->n; i++) {
    uint32_t pairs[2 * HL_PAIRS];
    long np = highlight(&res->items[i], q, nlen, pairs);
    render_hl(i, pairs, np);
    if (!keep) continue;
    ac_item *it = &items[i];
    it->off = (uint32_t)(res->items[i].json - base);
    it->len = res->items[i].len;
    it->edits = res->items[i].edits;
    it->tier = res->items[i].tier;
    it->np = (uint8_t)(np > 0 ? np : 0);
    it->first = (uint8_t)(it->np ? nkept : 0);
    if (it->np > AC_PAIRS - nkept) {
      keep = false;
      continue;
    }
    memcpy(kept[nkept], pairs, it->np * sizeof kept[0]);
    nkept += it->np;
  }
  if (!keep) return NULL;
  unsigned w = 0; /* an empty way, else the least recently used */
  bool empty = false;
  for (unsigned i = 0; i < AC_WAYS; i++) {
    if (!set->tag[i]) {
      w = i;
      empty = true;
      break;
    }
    if (set->used[i] < set->used[w]) w = i;
  }
  /* Full: admitted only over a way asked less often lately (above, "Admission"). */
  if (!empty && ac_freq(c, set_i, tag) <= ac_freq(c, set_i, set->tag[w])) return NULL;
  ac_entry *e = &set->e[w];
  e->gen = gen;
  e->loc = loc;
  e->k = (uint8_t)k;
  e->limit = (uint8_t)limit;
  e->qlen = (uint8_t)nlen;
  memcpy(e->q, q, nlen);
  e->n = (uint8_t)res->n;
  memcpy(e->it, items, res->n * sizeof *items);
  memcpy(e->pairs, kept, nkept * sizeof kept[0]);
  e->has_rid = false;
  set->tag[w] = tag;
  set->used[w] = ++c->clock;
  return e;
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
  ac_entry *entry = NULL;
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
    entry = answer(a, loc, l->content_hash, budget, limit, (size_t)nlen, within, wlen, &res);
    sg_metrics_query_served();
    /* Answered 200 or 304 from here on: a served query (docs/DESIGN.md §9). */
    sg_analytics_query(sg_rt_state_analytics(r->rt->state), l->id, sg_now_s(), tl_norm,
                       (size_t)nlen, res.n == 0);
  }

  /* The requestId hashes the key, the normalised q, the served locale, the content hash
   * and the limit; an answer from the cache has them all but the key in its entry. */
  if (entry && entry->has_rid && memcmp(entry->key_digest, r->key_digest, 32) == 0) {
    memcpy(rid, entry->rid, SG__REQID_LEN);
    rid[SG__REQID_LEN] = '\0';
    memcpy(body_tag, entry->body_tag, sizeof body_tag);
  } else {
    sg__reqid_derive_within(key, klen, tl_norm, (size_t)nlen, tag, l->content_hash, limit, within,
                            wlen, rid, body_tag);
    if (entry) {
      memcpy(entry->key_digest, r->key_digest, 32);
      memcpy(entry->rid, rid, SG__REQID_LEN);
      memcpy(entry->body_tag, body_tag, sizeof body_tag);
      entry->has_rid = true;
    }
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
