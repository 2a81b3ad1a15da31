/*
 * The compiler: valid items -> artifact bytes (layout in format.h, docs/ARTIFACT.md).
 *
 * Per locale it builds
 *   - the item ordinal: items sorted by (rank desc, normalised displayValue, id), so a
 *     smaller ordinal always ranks first within a tier;
 *   - the keys: every normalised displayValue (tier 0), alias (tier 1) and word suffix of
 *     either (tier 2), sorted by bytes. The keys having the query as a prefix are one
 *     contiguous range;
 *   - the buckets: for every such range holding more than T keys, its top 10 distinct
 *     items, computed bottom-up over the LCP intervals of the sorted keys with an
 *     explicit stack (no recursion, O(keys * 10) after the sort);
 *   - the fragment index: per ordinal, the item's pre-serialised JSON object.
 * A query range of at most T keys is scanned at lookup time, so every query is answered
 * exactly as the brute-force definition of docs/DESIGN.md §3 would.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "compiler/compiler.h"
#include "compiler/format.h"
#include "compiler/normalize.h"
#include "compiler/synonyms.h"
#include "compiler/typo.h"
#include "compiler/words.h"

/* Ranges of more keys than this get a precomputed bucket; smaller ones are scanned. */
#define BUCKET_THRESHOLD 32u
/* The displayValue and the aliases an item may have (the API allows 32): the candidate
 * texts of the synonym rule. An item with more (only `suggestd compile` input could have
 * them) gets no synonym aliases. */
#define SG__MAX_CANDIDATES 1024

/* ---- growable vectors ------------------------------------------------------------ */

typedef struct {
  uint64_t pfx; /* first 8 key bytes, big-endian, zero padded: a fast first compare */
  uint32_t off; /* into the locale's text pool */
  uint32_t lt;  /* len << 2 | tier */
  uint32_t ord; /* item index while building, then item ordinal */
} key_rec;

typedef struct {
  key_rec *v;
  size_t n, cap;
} key_vec;

/* Room for element n of a growable array v of *cap elements of size bytes: v itself, or
 * v grown (doubling from first) with *cap updated, or NULL (v untouched) without memory. */
static void *grow(void *v, size_t n, size_t *cap, size_t size, size_t first) {
  if (n < *cap) return v;
  size_t nc = *cap ? *cap * 2 : first;
  void *p = realloc(v, nc * size);
  if (p) *cap = nc;
  return p;
}

static int key_push(key_vec *kv, key_rec k) {
  key_rec *p = grow(kv->v, kv->n, &kv->cap, sizeof *p, 1024);
  if (!p) return -1;
  kv->v = p;
  kv->v[kv->n++] = k;
  return 0;
}

typedef struct {
  uint32_t lo, hi;
  sg__top10 top;
} bucket_rec;

typedef struct {
  bucket_rec *v;
  size_t n, cap;
} bucket_vec;

static int bucket_push(bucket_vec *bv, const bucket_rec *b) {
  bucket_rec *p = grow(bv->v, bv->n, &bv->cap, sizeof *p, 256);
  if (!p) return -1;
  bv->v = p;
  bv->v[bv->n++] = *b;
  return 0;
}

/* ---- items and locales ------------------------------------------------------------ */

typedef struct {
  const sg_compile_item **item; /* sorted by id */
  size_t n;
  uint32_t *parent; /* index or UINT32_MAX */
} item_set;

static int cmp_item_id(const void *a, const void *b) {
  const sg_compile_item *x = *(const sg_compile_item *const *)a;
  const sg_compile_item *y = *(const sg_compile_item *const *)b;
  return strcmp(x->id, y->id);
}

static uint32_t find_id(const item_set *s, const char *id) {
  size_t lo = 0, hi = s->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = strcmp(s->item[mid]->id, id);
    if (c == 0) return (uint32_t)mid;
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return UINT32_MAX;
}

/* The item's display value and aliases in locale tag: locales[tag] field by field,
 * falling back to the base ones. */
static void effective(const sg_compile_item *it, const char *tag, const char **dv,
                      const char *const **aliases, size_t *n_aliases) {
  *dv = it->display_value ? it->display_value : it->value;
  *aliases = it->aliases;
  *n_aliases = it->n_aliases;
  for (size_t i = 0; i < it->n_locales; i++) {
    const sg_item_locale *l = &it->locales[i];
    if (!l->locale || strcasecmp(l->locale, tag) != 0) continue;
    if (l->display_value) *dv = l->display_value;
    if (l->aliases) {
      *aliases = l->aliases;
      *n_aliases = l->n_aliases;
    }
    return;
  }
}

/* ---- keys ------------------------------------------------------------------------- */

static uint64_t prefix8(const char *s, size_t len) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8; i++) v = (v << 8) | (i < len ? (unsigned char)s[i] : 0u);
  return v;
}

/* Normalised text contains no NUL byte, so equal zero-padded 8-byte prefixes with a
 * length below 8 mean equal strings, and the prefix compare is exact on its own. */
static int cmp_key_text(const key_rec *a, const key_rec *b, const char *pool) {
  if (a->pfx != b->pfx) return a->pfx < b->pfx ? -1 : 1;
  uint32_t la = a->lt >> 2, lb = b->lt >> 2;
  if (la > 8 && lb > 8) {
    uint32_t m = (la < lb ? la : lb) - 8;
    int c = memcmp(pool + a->off + 8, pool + b->off + 8, m);
    if (c) return c;
  }
  return la < lb ? -1 : la > lb;
}

static int cmp_key_full(const void *pa, const void *pb, void *ctx) {
  const key_rec *a = pa, *b = pb;
  int c = cmp_key_text(a, b, ctx);
  if (c) return c;
  uint32_t ta = a->lt & 3, tb = b->lt & 3;
  if (ta != tb) return ta < tb ? -1 : 1;
  return a->ord < b->ord ? -1 : a->ord > b->ord;
}

/* Appends text and its terminating NUL to the pool (a key's text runs to the next NUL,
 * so the artifact stores no key lengths) and returns its offset, or -1 when the pool
 * would pass the 32-bit offsets of the format. */
static int64_t pool_add(sg_buf *pool, const char *s, size_t n) {
  if (pool->len + n + 1 > UINT32_MAX) return -1;
  size_t off = pool->len;
  if (sg_buf_append(pool, s, n) || sg_buf_putc(pool, '\0')) return -1;
  return (int64_t)off;
}

/* Normalises s and appends it to the pool; *len is its normalised length. */
static int64_t pool_add_normalized(sg_buf *pool, const char *s, uint32_t *len) {
  char stack[4096];
  size_t sl = strlen(s);
  long r = sg_normalize_into(s, sl, stack, sizeof stack);
  if (r >= 0) {
    *len = (uint32_t)r;
    return pool_add(pool, stack, (size_t)r);
  }
  if (r != -2) return -1;
  char *heap;
  size_t hl;
  if (sg_normalize(s, sl, &heap, &hl)) return -1;
  int64_t off = hl > SG__MAX_KEY_LEN ? -1 : pool_add(pool, heap, hl);
  free(heap);
  *len = (uint32_t)hl;
  return off;
}

/* Adds the keys of one text (whole text at tier, each later word suffix at tier 2) to
 * the item's scratch list. */
static int add_text_keys(key_vec *scratch, const sg_buf *pool, uint32_t off, uint32_t len,
                         uint32_t tier, uint32_t item) {
  const char *t = pool->data + off;
  key_rec k = {prefix8(t, len), off, len << 2 | tier, item};
  if (key_push(scratch, k)) return -1;
  for (uint32_t p = 1; p < len; p++)
    if (t[p - 1] == ' ') {
      key_rec s = {prefix8(t + p, len - p), off + p, (len - p) << 2 | 2u, item};
      if (key_push(scratch, s)) return -1;
    }
  return 0;
}

/* ---- ordinals ---------------------------------------------------------------------- */

typedef struct {
  const item_set *s;
  const char *pool;
  const uint32_t *dv_off, *dv_len;
} ord_ctx;

static int cmp_ordinal(const void *pa, const void *pb, void *vctx) {
  const ord_ctx *c = vctx;
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  int64_t ra = c->s->item[a]->rank, rb = c->s->item[b]->rank;
  if (ra != rb) return ra > rb ? -1 : 1;
  uint32_t la = c->dv_len[a], lb = c->dv_len[b];
  int m = memcmp(c->pool + c->dv_off[a], c->pool + c->dv_off[b], la < lb ? la : lb);
  if (m) return m;
  if (la != lb) return la < lb ? -1 : 1;
  return a < b ? -1 : a > b; /* index order is id order */
}

/* ---- buckets: bottom-up traversal of the LCP intervals ----------------------------- */

typedef struct {
  uint32_t lcp, lb;
  sg__top10 top;
} frame;

static uint32_t lcp_of(const key_rec *a, const key_rec *b, const char *pool) {
  uint32_t la = a->lt >> 2, lb = b->lt >> 2, m = la < lb ? la : lb, i = 0;
  const char *x = pool + a->off, *y = pool + b->off;
  /* Eight bytes at a time: the first differing byte is the lowest set byte of the XOR
   * of the little-endian words. */
  for (; i + 8 <= m; i += 8) {
    uint64_t u, w;
    memcpy(&u, x + i, 8);
    memcpy(&w, y + i, 8);
    if (u != w) return i + (uint32_t)__builtin_ctzll(le64toh(u) ^ le64toh(w)) / 8;
  }
  while (i < m && x[i] == y[i]) i++;
  return i;
}

static void merge_top(sg__top10 *into, const sg__top10 *from) {
  for (uint32_t i = 0; i < from->n; i++) sg__top10_add(into, from->v[i]);
}

/* Reports every LCP interval [lb, rb) of the sorted keys (the key ranges that some
 * query prefix selects) with more than T keys, together with its top 10. Children are
 * merged into their parent as they are popped, so each key is touched once. */
static int build_buckets(const key_rec *k, size_t m, const uint32_t *lcp, bucket_vec *out) {
  if (m == 0) return 0;
  /* The stack depth is bounded by the longest key plus one. */
  size_t cap = 64, sp = 0;
  frame *st = malloc(cap * sizeof *st);
  if (!st) return -1;
  st[sp++] = (frame){0, 0, {{0}, 0}};
  uint32_t last_lo = UINT32_MAX, last_hi = UINT32_MAX;
  int rc = 0;
  for (size_t i = 1; i <= m && sp > 0; i++) {
    sg__top10 child = {{0}, 0};
    sg__top10_add(&child, (uint64_t)(k[i - 1].lt & 3) << 32 | k[i - 1].ord);
    uint32_t lb = (uint32_t)(i - 1);
    int64_t l = i < m ? (int64_t)lcp[i] : -1;
    while (sp > 0 && l < (int64_t)st[sp - 1].lcp) {
      frame *f = &st[--sp];
      merge_top(&f->top, &child);
      if (i - f->lb > BUCKET_THRESHOLD && !(f->lb == last_lo && i == last_hi)) {
        bucket_rec b = {f->lb, (uint32_t)i, f->top};
        if (bucket_push(out, &b)) {
          rc = -1;
          goto done;
        }
        last_lo = f->lb;
        last_hi = (uint32_t)i;
      }
      child = f->top;
      lb = f->lb;
    }
    if (sp == 0) break; /* the root was popped after the last key */
    if (l > (int64_t)st[sp - 1].lcp) {
      if (sp == cap) {
        frame *p = realloc(st, cap * 2 * sizeof *st);
        if (!p) {
          rc = -1;
          goto done;
        }
        st = p;
        cap *= 2;
      }
      st[sp++] = (frame){(uint32_t)l, lb, child};
    } else {
      merge_top(&st[sp - 1].top, &child);
    }
  }
  /* A root whose keys all share a prefix is popped by the loop above; the final pass
   * with l = -1 empties the stack, so nothing is left here. */
done:
  free(st);
  return rc;
}

static int cmp_bucket(const void *pa, const void *pb) {
  const bucket_rec *a = pa, *b = pb;
  if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
  if (a->hi != b->hi) return a->hi > b->hi ? -1 : 1;
  return 0;
}

/* ---- the code-point trie (the typo search's index, docs/ARTIFACT.md) ----------------- */

typedef struct {
  uint32_t lo, hi, cp, first, n, best;
  uint64_t sig, next;
  uint32_t depth; /* bytes of the node's prefix (build time only) */
} trie_node;

typedef struct {
  trie_node *v;
  size_t n, cap;
} trie_vec;

static int trie_push(trie_vec *t, trie_node x) {
  trie_node *p = grow(t->v, t->n, &t->cap, sizeof *p, 1024);
  if (!p) return -1;
  t->v = p;
  t->v[t->n++] = x;
  return 0;
}

/* Breadth-first: each node's children (the runs of its keys that share the next code
 * point, when a run has more than SG__TRIE_MIN keys) are appended together, so they are
 * contiguous and come after their parent. Keys in a node's range share its prefix bytes,
 * sorted UTF-8 keeps each run contiguous, and lcp[j] (the bytes key j shares with key
 * j - 1) finds a run's end without reading text. */
static int build_trie(const key_rec *k, size_t m, const uint32_t *lcp, const char *pool,
                      trie_vec *t) {
  uint64_t ascii_bit[0x80];
  for (uint32_t c = 0; c < 0x80; c++) ascii_bit[c] = sg__cp_bit(c);
  if (trie_push(t, (trie_node){0, (uint32_t)m, 0, 0, 0, 0, 0, 0, 0})) return -1;
  for (size_t x = 0; x < t->n; x++) {
    trie_node node = t->v[x];
    uint32_t first = (uint32_t)t->n, count = 0;
    uint64_t next = 0;
    for (uint32_t i = node.lo; i < node.hi;) {
      if ((k[i].lt >> 2) <= node.depth) { /* the key ends here */
        i++;
        continue;
      }
      uint32_t cp;
      uint32_t end = node.depth + (uint32_t)sg__utf8_next(pool + k[i].off + node.depth, &cp);
      uint32_t j = i + 1;
      while (j < node.hi && lcp[j] >= end) j++;
      next |= sg__cp_bit(cp);
      if (j - i > SG__TRIE_MIN) {
        if (trie_push(t, (trie_node){i, j, cp, 0, 0, 0, 0, 0, end})) return -1;
        count++;
      }
      i = j;
    }
    t->v[x].first = count ? first : 0;
    t->v[x].n = count;
    t->v[x].next = next;
    if (t->n > UINT32_MAX / 2) return -1;
  }
  /* Best entries and signatures bottom up (children come after their parents): the
   * children's, their own code points, and those of the keys between them. */
  for (size_t x = t->n; x-- > 0;) {
    trie_node *node = &t->v[x];
    uint64_t sig = 0;
    uint32_t best = UINT32_MAX, pos = node->lo;
    for (uint32_t c = 0; c <= node->n; c++) {
      uint32_t end = c < node->n ? t->v[node->first + c].lo : node->hi;
      for (; pos < end; pos++) {
        uint32_t w = (k[pos].lt & 3) << SG__KEY_TIER_SHIFT | k[pos].ord;
        if (w < best) best = w;
        uint32_t len = k[pos].lt >> 2;
        const unsigned char *s = (const unsigned char *)pool + k[pos].off;
        for (uint32_t b = node->depth; b < len;) {
          if (s[b] < 0x80) { /* most text is ASCII: one table lookup per byte */
            sig |= ascii_bit[s[b++]];
            continue;
          }
          uint32_t cp;
          b += (uint32_t)sg__utf8_next((const char *)s + b, &cp);
          sig |= sg__cp_bit(cp);
        }
      }
      if (c < node->n) {
        const trie_node *ch = &t->v[node->first + c];
        sig |= ch->sig | sg__cp_bit(ch->cp);
        if (ch->best < best) best = ch->best;
        pos = ch->hi;
      }
    }
    node->sig = sig;
    node->best = best;
  }
  return 0;
}

/* ---- the skip records (two edits near the start, docs/ARTIFACT.md) ------------------- */

typedef struct {
  uint64_t key;
  uint32_t run; /* the record's u32 (format.h) */
  unsigned char head[SG__SKIP_PFX];
} skip_rec;

typedef struct {
  skip_rec *v;
  size_t n, cap;
} skip_vec;

/* Sorts the records by (key, lo): they are built in lo order, so a stable least
 * significant digit radix sort on the key (four 14-bit digits) is enough. */
static int sort_skip(skip_vec *v) {
  skip_rec *tmp = malloc((v->n ? v->n : 1) * sizeof *tmp);
  uint32_t *count = calloc(1u << 14, sizeof *count);
  if (!tmp || !count) {
    free(tmp);
    free(count);
    return -1;
  }
  skip_rec *from = v->v, *to = tmp;
  for (unsigned shift = 0; shift < 56; shift += 14) {
    memset(count, 0, (1u << 14) * sizeof *count);
    for (size_t i = 0; i < v->n; i++) count[from[i].key >> shift & 0x3FFF]++;
    uint32_t sum = 0;
    for (size_t d = 0; d < (1u << 14); d++) {
      uint32_t c = count[d];
      count[d] = sum;
      sum += c;
    }
    for (size_t i = 0; i < v->n; i++) to[count[from[i].key >> shift & 0x3FFF]++] = from[i];
    skip_rec *x = from;
    from = to;
    to = x;
  }
  /* Four passes: the sorted records are back in v->v. */
  free(tmp);
  free(count);
  return 0;
}

/* The trie node whose prefix is the code points cps[0 .. d), or UINT32_MAX when none is
 * materialised. Children are in code point order. */
static uint32_t trie_node_of(const trie_vec *t, const uint32_t *cps, size_t d) {
  uint32_t x = 0;
  for (size_t c = 0; c < d; c++) {
    uint32_t b = t->v[x].first, e = b + t->v[x].n;
    while (b < e) {
      uint32_t mid = b + (e - b) / 2;
      if (t->v[mid].cp < cps[c])
        b = mid + 1;
      else
        e = mid;
    }
    if (b == t->v[x].first + t->v[x].n || t->v[b].cp != cps[c]) return UINT32_MAX;
    x = b;
  }
  return x;
}

#define SKIP_AHEAD 32u

/* Skip table t's record for the run of keys [i, ..) sharing their first D code points
 * cps[0 .. D), b bytes of key i: returns the run's end, or 0 on failure. */
static size_t skip_run(const key_rec *k, size_t m, const uint32_t *lcp, const char *s,
                       const trie_vec *trie, unsigned t, const uint32_t *cps, size_t b, size_t i,
                       skip_vec *out, bool *fits) {
  const unsigned L = sg__skip_l[t], G = sg__skip_g[t], D = L + G;
  size_t j = i + 1;
  while (j < m && lcp[j] >= b) j++;
  uint32_t run;
  if (j - i > SG__TRIE_MIN) {
    uint32_t x = trie_node_of(trie, cps, D);
    /* build_trie materialises every run of more than SG__TRIE_MIN keys. */
    if (x == UINT32_MAX || trie->v[x].lo != i || trie->v[x].hi != j) return 0;
    run = SG__SKIP_NODE | x;
  } else if (i > SG__SKIP_LO_MASK) {
    fits[t] = false;
    run = 0;
  } else {
    run = (uint32_t)(j - i - 1) << SG__SKIP_LO_BITS | (uint32_t)i;
  }
  skip_rec *p = grow(out->v, out->n, &out->cap, sizeof *p, 1024);
  if (!p) return 0;
  out->v = p;
  skip_rec *r = &out->v[out->n++];
  *r = (skip_rec){sg__skip_key(cps[0], cps + L, G), run, {0}};
  if (b <= SG__SKIP_PFX) {
    memcpy(r->head, s, b);
  } else {
    r->head[0] = SG__SKIP_KEYED;
    for (unsigned x = 0; x < 7; x++) r->head[1 + x] = (unsigned char)(r->key >> 8 * x);
  }
  return j;
}

/* One record per run of keys sharing their first L + G code points, for every skip
 * table: sorted keys keep such a run contiguous, and lcp[j] (bytes key j shares with key
 * j - 1) finds its end without decoding the keys after the first. One pass serves every
 * table: the pass stops at the least key where some table's next run starts, so a key
 * starting a run of any table is decoded once (key texts are in item order, keys in text
 * order, so each first read waits for memory). A
 * run of more than SG__TRIE_MIN keys is named by its trie node, a shorter one by its
 * first key and count (format.h). fits[t] is cleared when a short run of table t starts
 * past what a record can hold. */
static int build_skip(const key_rec *k, size_t m, const uint32_t *lcp, const char *pool,
                      const trie_vec *trie, skip_vec out[SG__SKIP_TABLES],
                      bool fits[SG__SKIP_TABLES]) {
  size_t next[SG__SKIP_TABLES]; /* where table t's next run starts */
  unsigned dmax = 0;
  for (unsigned t = 0; t < SG__SKIP_TABLES; t++) {
    unsigned D = sg__skip_l[t] + sg__skip_g[t];
    if (D > SG__SKIP_MAX_D || sg__skip_g[t] > SG__SKIP_MAX_G) return -1;
    if (D > dmax) dmax = D;
    next[t] = 0;
    fits[t] = true;
  }
  size_t pf = 0, hint = dmax; /* prefetched up to key pf; hint, the last run's bytes */
  for (size_t i = 0; i < m;) {
    /* Texts SKIP_AHEAD keys ahead are asked for early, those likely to start a run
     * (sharing fewer bytes with the key before than the last run's code points: exact
     * for ASCII; a hint only, as any prefetch). */
    for (pf = pf > i ? pf : i + 1; pf < m && pf <= i + SKIP_AHEAD; pf++)
      if (lcp[pf] < hint) __builtin_prefetch(pool + k[pf].off);
    const char *s = pool + k[i].off;
    uint32_t len = k[i].lt >> 2, cps[SG__SKIP_MAX_D];
    size_t bytes[SG__SKIP_MAX_D + 1] = {0}, b = 0, c = 0;
    while (c < dmax && b < len) {
      b += sg__utf8_next(s + b, &cps[c++]);
      bytes[c] = b;
    }
    hint = b;
    size_t after = m;
    for (unsigned t = 0; t < SG__SKIP_TABLES; t++) {
      if (next[t] == i) {
        unsigned D = sg__skip_l[t] + sg__skip_g[t];
        if (c < D) {
          next[t] = i + 1; /* too short for a record */
        } else {
          next[t] = skip_run(k, m, lcp, s, trie, t, cps, bytes[D], i, &out[t], fits);
          if (!next[t]) return -1;
        }
      }
      if (next[t] < after) after = next[t];
    }
    i = after;
  }
  for (unsigned t = 0; t < SG__SKIP_TABLES; t++)
    if (sort_skip(&out[t])) return -1;
  return 0;
}

/* ---- fragments --------------------------------------------------------------------- */

static int json_field(sg_buf *b, const char *name, const char *val) {
  if (sg_buf_putc(b, '"') || sg_buf_puts(b, name) || sg_buf_puts(b, "\":")) return -1;
  return sg_buf_json_str(b, val, strlen(val));
}

/* The item's description in locale tag (the locale's own, else the base one; NULL for
 * none). Display only: it never reaches the keys or the normaliser. */
static const char *effective_description(const sg_compile_item *it, const char *tag) {
  for (size_t i = 0; i < it->n_locales; i++) {
    const sg_item_locale *l = &it->locales[i];
    if (!l->locale || strcasecmp(l->locale, tag) != 0) continue;
    return l->description ? l->description : it->description;
  }
  return it->description;
}

static int write_fragment(sg_buf *b, const item_set *s, uint32_t idx, const char *tag) {
  const sg_compile_item *it = s->item[idx];
  const char *dv;
  const char *const *al;
  size_t nal;
  effective(it, tag, &dv, &al, &nal);
  if (sg_buf_putc(b, '{') || json_field(b, "itemId", it->id) || sg_buf_putc(b, ',') ||
      json_field(b, "value", it->value) || sg_buf_putc(b, ',') || json_field(b, "displayValue", dv))
    return -1;
  /* After displayValue, so the runtime's scan for the first ,"displayValue":" still finds
   * that field (every quote inside a string is escaped). Absent rather than empty. */
  const char *desc = effective_description(it, tag);
  if (desc && *desc && (sg_buf_putc(b, ',') || json_field(b, "description", desc))) return -1;
  if (s->parent[idx] != UINT32_MAX) {
    uint32_t chain[SG_MAX_HIERARCHY_DEPTH];
    size_t nc = 0;
    for (uint32_t p = s->parent[idx]; p != UINT32_MAX; p = s->parent[p]) {
      if (nc == SG_MAX_HIERARCHY_DEPTH) return -1; /* validation would have refused */
      chain[nc++] = p;
    }
    if (sg_buf_puts(b, ",\"ancestors\":[")) return -1;
    for (size_t j = nc; j-- > 0;) {
      const sg_compile_item *a = s->item[chain[j]];
      const char *adv;
      const char *const *aal;
      size_t naal;
      effective(a, tag, &adv, &aal, &naal);
      if (sg_buf_putc(b, '{') || json_field(b, "itemId", a->id) || sg_buf_putc(b, ',') ||
          json_field(b, "value", a->value) || sg_buf_putc(b, ',') ||
          json_field(b, "displayValue", adv) || sg_buf_putc(b, '}') ||
          (j > 0 && sg_buf_putc(b, ',')))
        return -1;
    }
    if (sg_buf_putc(b, ']')) return -1;
  }
  return sg_buf_putc(b, '}');
}

/* ---- output helpers ---------------------------------------------------------------- */

static int pad8(sg_buf *out, size_t base) {
  static const char zeros[8] = {0};
  size_t rel = out->len - base;
  return sg_buf_append(out, zeros, (8 - rel % 8) % 8);
}

static int put32(sg_buf *out, uint32_t v) {
  unsigned char b[4];
  sg__wr32(b, v);
  return sg_buf_append(out, b, 4);
}

/* ---- extension sections (format.h, SG__EXT_*) --------------------------------------- */

typedef struct {
  uint32_t kind, loc;
  uint64_t off, len;
} ext_rec;

typedef struct {
  ext_rec *v;
  size_t n, cap;
} ext_list;

/* Appends bytes as an extension section of (kind, loc), 8-byte aligned, and records it
 * for the directory. 0 or -1 (out of memory). */
static int ext_append(ext_list *x, sg_buf *out, size_t base, uint32_t kind, uint32_t loc,
                      const void *data, size_t len) {
  ext_rec *v = grow(x->v, x->n, &x->cap, sizeof *x->v, 4);
  if (!v) return -1;
  x->v = v;
  if (pad8(out, base)) return -1;
  size_t off = out->len - base;
  if (len && sg_buf_append(out, data, len)) return -1;
  if (pad8(out, base)) return -1;
  x->v[x->n++] = (ext_rec){kind, loc, off, len};
  return 0;
}

static int cmp_ext(const void *pa, const void *pb) {
  const ext_rec *a = pa, *b = pb;
  if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
  return (a->loc > b->loc) - (a->loc < b->loc);
}

/* Writes the extension directory (sorted by kind, locale) and returns its offset. */
static int ext_write_dir(ext_list *x, sg_buf *out, size_t base, uint64_t *dir_off) {
  if (x->n) qsort(x->v, x->n, sizeof *x->v, cmp_ext);
  if (pad8(out, base)) return -1;
  *dir_off = out->len - base;
  for (size_t i = 0; i < x->n; i++) {
    unsigned char r[SG__EXT_SIZE];
    sg__wr32(r, x->v[i].kind);
    sg__wr32(r + 4, x->v[i].loc);
    sg__wr64(r + 8, x->v[i].off);
    sg__wr64(r + 16, x->v[i].len);
    if (sg_buf_append(out, r, sizeof r)) return -1;
  }
  return 0;
}

typedef struct {
  const item_set *s;
  const char *tag;
  bool is_default;
  sg_buf *frags;          /* shared fragment pool */
  uint32_t *def_frag_off; /* per item index: its default-locale fragment */
  uint32_t *def_frag_len;
  const sg__synonyms *syn;    /* NULL: the list has no synonym sets */
  uint32_t loc;               /* the locale's index (its record's position) */
  ext_list *exts;             /* extension sections of the artifact (ext_append) */
  const uint32_t *pre_of;     /* per item index, its preorder (NULL: no item has a parent) */
  const uint32_t *idx_of_pre; /* per preorder, the item index */
  bool without_words;         /* SG_LEAVE_OUT_WORDS: no tier 3/4 sections */
  const uint32_t *tree_end;   /* per preorder, the preorder after its subtree */
  bool without_skip;          /* SG_LEAVE_OUT_SKIP: empty skip tables (speed only) */
} locale_job;

uint32_t sg__wsub_min_refs = SG__WSUB_MIN_REFS;

typedef struct {
  uint32_t p, refs;
} wsub_pick;

static int cmp_wsub_refs(const void *pa, const void *pb) {
  const wsub_pick *a = pa, *b = pb;
  if (a->refs != b->refs) return a->refs > b->refs ? -1 : 1;
  return (a->p > b->p) - (a->p < b->p);
}

static int cmp_wsub_p(const void *pa, const void *pb) {
  const wsub_pick *a = pa, *b = pb;
  return (a->p > b->p) - (a->p < b->p);
}

/* The SG__EXT_WSUB section of one locale (format.h): for the subtrees holding at least
 * sg__wsub_min_refs keys (kstart by preorder, as in SG__EXT_WITHIN), the largest first
 * while the total stays within kstart[n], every key of the subtree in the keys' sorted
 * order. Each key is written once per indexed subtree containing it: found by walking,
 * from the innermost indexed subtree containing its item, to the enclosing ones, so the
 * work is the section's size. */
static int wsub_section(const locale_job *job, const key_vec *keys, const char *pool,
                        const uint32_t *order, const uint32_t *kstart, sg_buf *out, size_t base) {
  size_t n = job->s->n;
  uint64_t total = kstart[n], used = 0;
  wsub_pick *pk = malloc((n ? n : 1) * sizeof *pk);
  uint32_t *sel_of = malloc((n ? n : 1) * sizeof *sel_of); /* per preorder: pick index or MAX */
  uint32_t *inner = malloc((n ? n : 1) * sizeof *inner);   /* per preorder: innermost pick */
  uint32_t *stack = malloc((n ? n : 1) * sizeof *stack);
  uint32_t *up = NULL, *fill = NULL;
  const key_rec **lastk = NULL;
  sg_buf sec;
  sg_buf_init(&sec, 0);
  int rc = -1;
  if (!pk || !sel_of || !inner || !stack) goto done;
  size_t m = 0;
  for (size_t p = 0; p < n; p++) {
    uint32_t refs = kstart[job->tree_end[p]] - kstart[p + 1];
    if (refs >= sg__wsub_min_refs && refs > 0) pk[m++] = (wsub_pick){(uint32_t)p, refs};
  }
  qsort(pk, m, sizeof *pk, cmp_wsub_refs);
  size_t keep = 0;
  for (size_t i = 0; i < m; i++)
    if (used + pk[i].refs <= total) {
      used += pk[i].refs;
      pk[keep++] = pk[i];
    }
  m = keep;
  if (m == 0) {
    rc = 0;
    goto done;
  }
  qsort(pk, m, sizeof *pk, cmp_wsub_p);
  up = malloc(m * sizeof *up);
  fill = malloc(m * sizeof *fill);
  lastk = calloc(m, sizeof *lastk);
  if (!up || !fill || !lastk) goto done;
  for (size_t p = 0; p < n; p++) sel_of[p] = UINT32_MAX;
  for (size_t i = 0; i < m; i++) sel_of[pk[i].p] = (uint32_t)i;
  /* innermost pick whose descendants contain each preorder (a stack of open picks) */
  size_t sp = 0;
  for (size_t p = 0; p < n; p++) {
    while (sp && job->tree_end[pk[stack[sp - 1]].p] <= p) sp--;
    inner[p] = sp ? stack[sp - 1] : UINT32_MAX;
    if (sel_of[p] != UINT32_MAX) {
      up[sel_of[p]] = inner[p];
      stack[sp++] = sel_of[p];
    }
  }
  size_t bytes = 16 + m * SG__WSUB_REC + used * (SG__KEY_SIZE + 1);
  if (sg_buf_reserve(&sec, bytes)) goto done;
  unsigned char *d = (unsigned char *)sec.data;
  memset(d, 0, bytes);
  sg__wr64(d, m);
  sg__wr64(d + 8, used);
  uint32_t at = 0;
  for (size_t i = 0; i < m; i++) {
    unsigned char *r = d + 16 + i * SG__WSUB_REC;
    sg__wr32(r, pk[i].p);
    sg__wr32(r + 4, at);
    fill[i] = at;
    at += pk[i].refs;
    sg__wr32(r + 8, at);
  }
  unsigned char *kd = d + 16 + m * SG__WSUB_REC, *ld = kd + used * SG__KEY_SIZE;
  for (size_t j = 0; j < keys->n; j++) {
    const key_rec *k = &keys->v[j];
    uint32_t idx = order[k->ord];
    if (job->s->parent[idx] == UINT32_MAX) continue;
    for (uint32_t x = inner[job->pre_of[idx]]; x != UINT32_MAX; x = up[x]) {
      size_t slot = fill[x]++;
      unsigned char *r = kd + slot * SG__KEY_SIZE;
      sg__wr32(r, k->off);
      sg__wr32(r + 4, (k->lt & 3) << SG__KEY_TIER_SHIFT | k->ord);
      uint32_t l = lastk[x] ? lcp_of(lastk[x], k, pool) : 0;
      ld[slot] = (unsigned char)(l < 255 ? l : 255);
      lastk[x] = k;
    }
  }
  sec.len = bytes;
  rc = ext_append(job->exts, out, base, SG__EXT_WSUB, job->loc, sec.data, bytes);
done:
  free(pk);
  free(sel_of);
  free(inner);
  free(stack);
  free(up);
  free(fill);
  free(lastk);
  sg_buf_free(&sec);
  return rc;
}

/* The SG__EXT_WITHIN section of one locale (format.h): ord2pre, pre2ord, kstart by
 * preorder, and the key references of every item with a parent, grouped by preorder. */
static int within_section(const locale_job *job, const key_vec *keys, const char *pool,
                          const uint32_t *order, const uint32_t *ord_of, sg_buf *out, size_t base) {
  const item_set *s = job->s;
  size_t n = s->n;
  uint32_t *kstart = calloc(n + 1, sizeof *kstart);
  uint32_t *fill = malloc((n ? n : 1) * sizeof *fill);
  sg_buf sec;
  sg_buf_init(&sec, 0);
  int rc = -1;
  if (!kstart || !fill) goto done;
  for (size_t j = 0; j < keys->n; j++) {
    uint32_t idx = order[keys->v[j].ord];
    if (s->parent[idx] != UINT32_MAX) kstart[job->pre_of[idx] + 1]++;
  }
  for (size_t p = 0; p < n; p++) kstart[p + 1] += kstart[p];
  size_t bytes = 4 * (3 * n + 1) + (size_t)kstart[n] * SG__WREF_SIZE;
  if (sg_buf_reserve(&sec, bytes)) goto done;
  unsigned char *d = (unsigned char *)sec.data;
  memset(d, 0, bytes);
  for (size_t o = 0; o < n; o++) sg__wr32(d + 4 * o, job->pre_of[order[o]]);
  for (size_t p = 0; p < n; p++) sg__wr32(d + 4 * (n + p), ord_of[job->idx_of_pre[p]]);
  for (size_t p = 0; p <= n; p++) sg__wr32(d + 4 * (2 * n + p), kstart[p]);
  unsigned char *refs = d + 4 * (3 * n + 1);
  memcpy(fill, kstart, n * sizeof *fill);
  for (size_t j = 0; j < keys->n; j++) {
    const key_rec *k = &keys->v[j];
    uint32_t idx = order[k->ord];
    if (s->parent[idx] == UINT32_MAX) continue;
    unsigned char *r = refs + (size_t)fill[job->pre_of[idx]]++ * SG__WREF_SIZE;
    sg__wr32(r, k->off);
    r[4] = (unsigned char)(k->lt & 3);
    uint32_t len = k->lt >> 2;
    for (uint32_t b = 0; b < 3 && b < len; b++) r[5 + b] = (unsigned char)pool[k->off + b];
  }
  sec.len = bytes;
  rc = ext_append(job->exts, out, base, SG__EXT_WITHIN, job->loc, sec.data, bytes);
  if (rc == 0) rc = wsub_section(job, keys, pool, order, kstart, out, base);
done:
  free(kstart);
  free(fill);
  sg_buf_free(&sec);
  return rc;
}

/* ---- tiers 3 and 4: candidate texts and the run-together index (docs/DESIGN.md §3.3) --------- */

typedef struct {
  uint32_t *v;
  size_t n, cap;
} u32_vec;

static int u32_push(u32_vec *x, uint32_t v) {
  uint32_t *p = grow(x->v, x->n, &x->cap, sizeof *p, 1024);
  if (!p) return -1;
  x->v = p;
  x->v[x->n++] = v;
  return 0;
}

/* Room for an extension section of len bytes written in place at the end of out, 8-byte
 * aligned: its first byte or NULL without memory. The caller writes every byte, then
 * ext_close records the section; between the two, out must not grow. The bytes are those
 * ext_append would have written, without a copy of the section through a buffer. */
static unsigned char *ext_open(sg_buf *out, size_t base, size_t len) {
  if (pad8(out, base) || sg_buf_reserve(out, len + 8)) return NULL;
  return (unsigned char *)out->data + out->len;
}

static int ext_close(ext_list *x, sg_buf *out, size_t base, uint32_t kind, uint32_t loc,
                     size_t len) {
  ext_rec *v = grow(x->v, x->n, &x->cap, sizeof *x->v, 4);
  if (!v) return -1;
  x->v = v;
  size_t off = out->len - base;
  out->len += len;
  out->data[out->len] = '\0';
  if (pad8(out, base)) return -1;
  x->v[x->n++] = (ext_rec){kind, loc, off, len};
  return 0;
}

/* Bytes of a and b (spaces skipped) compared: the order of the run-together index. */
static int runon_text_cmp(const char *a, const char *b) {
  for (;;) {
    while (*a == ' ') a++;
    while (*b == ' ') b++;
    if (*a != *b || !*a) return (unsigned char)*a < (unsigned char)*b ? -1 : *a != *b;
    a++;
    b++;
  }
}

/* Bytes a and b (spaces skipped) share from their start. */
static uint32_t runon_lcp(const char *a, const char *b) {
  uint32_t n = 0;
  for (;;) {
    while (*a == ' ') a++;
    while (*b == ' ') b++;
    if (!*a || *a != *b) return n;
    a++;
    b++;
    n++;
  }
}

/* A run-together record while sorting: its first 8 spaceless bytes (runon_prefix8_rest),
 * the text's pool offset, where its bytes after those 8 start (rest), the item ordinal,
 * and its position in the unsorted list, the last tie-break: the order is the one the stable
 * sort by (prefix, spaceless text, ordinal) gave, so the bytes written do not change. A
 * record whose prefix another shares also has the next 8 spaceless bytes in pfx2, and
 * rest moved past them; pfx2 is 0 in the others. */
typedef struct {
  uint64_t pfx, pfx2;
  uint32_t off, rest, ord, pos;
} runon_rec;

/* The first 8 bytes of the NUL-terminated text at pool + off with its spaces skipped,
 * big-endian, zero padded (normalised text has no NUL, so equal values of shorter texts
 * mean equal texts), and in *rest the offset just past the bytes it took (a space run
 * there is skipped by the comparisons that start from it). */
static uint64_t runon_prefix8_rest(const char *pool, uint32_t off, uint32_t *rest) {
  const char *s = pool + off;
  uint64_t v = 0;
  unsigned i = 0;
  for (; i < 8 && *s; s++)
    if (*s != ' ') {
      v = v << 8 | (unsigned char)*s;
      i++;
    }
  *rest = off + (uint32_t)(s - (pool + off));
  return i ? v << (8 * (8 - i)) : 0;
}

static int cmp_runon_rest(const void *pa, const void *pb, void *ctx) {
  const runon_rec *a = pa, *b = pb;
  const char *pool = ctx;
  if (a->pfx2 != b->pfx2) return a->pfx2 < b->pfx2 ? -1 : 1;
  int c = runon_text_cmp(pool + a->rest, pool + b->rest);
  if (c) return c;
  if (a->ord != b->ord) return a->ord < b->ord ? -1 : 1;
  return (a->pos > b->pos) - (a->pos < b->pos);
}

/* Sorts v (n records) by (pfx, spaceless text, ordinal, position): a stable LSD radix
 * sort on pfx (byte passes where every record has the same byte are skipped), then each
 * run of equal prefixes longer than one by its next 8 bytes (pfx2) and its text after
 * those. tmp holds n records. Texts shorter than 8 bytes are whole in pfx (zero padded),
 * so a run of equal prefixes compares only bytes past the eighth. */
static int runon_sort(runon_rec *v, runon_rec *tmp, size_t n, const char *pool) {
  enum { passes = 8 };
  if (n < 2) return 0;
  size_t(*cnt)[256] = calloc(passes, sizeof *cnt);
  if (!cnt) return -1;
  runon_rec *src = v, *dst = tmp;
  for (size_t j = 0; j < n; j++)
    for (unsigned b = 0; b < passes; b++) cnt[b][(v[j].pfx >> (8 * b)) & 0xFF]++;
  for (unsigned b = 0; b < passes; b++) {
    if (cnt[b][(v[0].pfx >> (8 * b)) & 0xFF] == n) continue; /* one value: no move */
    size_t sum = 0;
    for (unsigned x = 0; x < 256; x++) {
      size_t c = cnt[b][x];
      cnt[b][x] = sum;
      sum += c;
    }
    for (size_t j = 0; j < n; j++) dst[cnt[b][(src[j].pfx >> (8 * b)) & 0xFF]++] = src[j];
    runon_rec *t = src;
    src = dst;
    dst = t;
  }
  free(cnt);
  if (src != v) memcpy(v, src, n * sizeof *v);
  for (size_t lo = 0; lo < n;) {
    size_t hi = lo + 1;
    while (hi < n && v[hi].pfx == v[lo].pfx) hi++;
    if (hi - lo > 1) {
      for (size_t j = lo; j < hi; j++) v[j].pfx2 = runon_prefix8_rest(pool, v[j].rest, &v[j].rest);
      qsort_r(v + lo, hi - lo, sizeof *v, cmp_runon_rest, (void *)pool);
    }
    lo = hi;
  }
  return 0;
}

/* Appends the SG__EXT_CANDS and SG__EXT_RUNON sections of one locale: cands holds every
 * item's candidate texts (pool offsets) by item index, cstart[i] .. cstart[i + 1]. */
static int write_words(const locale_job *job, sg_buf *out, size_t base, const char *pool,
                       const u32_vec *cands, const uint32_t *cstart, const uint32_t *order,
                       const uint32_t *ord_of, size_t n) {
  size_t nc = cands->n;
  runon_rec *rv = malloc((nc ? nc : 1) * sizeof *rv);
  runon_rec *tmp = malloc((nc ? nc : 1) * sizeof *tmp);
  key_rec *kv = NULL;
  bucket_vec bv = {0};
  uint32_t *lcp = NULL;
  int rc = -1;
  if (!rv || !tmp || nc >= UINT32_MAX) goto done;
  /* Candidates by ordinal. */
  size_t bytes = 4 * (n + 1 + nc);
  unsigned char *d = ext_open(out, base, bytes);
  if (!d) goto done;
  uint32_t at = 0;
  for (size_t o = 0; o <= n; o++) {
    sg__wr32(d + 4 * o, at);
    if (o < n) at += cstart[order[o] + 1] - cstart[order[o]];
  }
  d += 4 * (n + 1);
  for (size_t o = 0; o < n; o++)
    for (uint32_t c = cstart[order[o]]; c < cstart[order[o] + 1]; c++, d += 4)
      sg__wr32(d, cands->v[c]);
  if (ext_close(job->exts, out, base, SG__EXT_CANDS, job->loc, bytes)) goto done;

  /* The run-together records: one per distinct spaceless text of an item. */
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    for (uint32_t c = cstart[i]; c < cstart[i + 1]; c++, m++) {
      runon_rec *r = &rv[m];
      r->off = cands->v[c];
      r->pfx = runon_prefix8_rest(pool, r->off, &r->rest);
      r->pfx2 = 0;
      r->ord = ord_of[i];
      r->pos = (uint32_t)m;
    }
  if (runon_sort(rv, tmp, m, pool)) goto done;
  size_t k = 0;
  for (size_t j = 0; j < m; j++) {
    const runon_rec *a = &rv[k - (k > 0)], *b = &rv[j];
    if (k && a->ord == b->ord && a->pfx == b->pfx && a->pfx2 == b->pfx2 &&
        runon_text_cmp(pool + a->rest, pool + b->rest) == 0)
      continue;
    rv[k++] = rv[j];
  }
  m = k;
  kv = malloc((m ? m : 1) * sizeof *kv);
  lcp = malloc((m ? m : 1) * sizeof *lcp);
  if (!kv || !lcp) goto done;
  /* The bytes shared with the record before, from the prefixes where they differ there
   * (a zero byte of a prefix is the text's end, and both ends at the same byte mean equal
   * texts, so the first differing byte is where one differs or ends). Neighbours with
   * equal pfx were in one run of runon_sort, so both have pfx2. */
  for (size_t j = 0; j < m; j++) {
    const runon_rec *a = &rv[j - (j > 0)], *b = &rv[j];
    kv[j] = (key_rec){b->pfx, b->off, 0, b->ord};
    if (j == 0)
      lcp[j] = 0;
    else if (a->pfx != b->pfx)
      lcp[j] = (uint32_t)__builtin_clzll(a->pfx ^ b->pfx) / 8;
    else if (!(b->pfx & 0xFF))
      lcp[j] = b->pfx ? 8 - (uint32_t)__builtin_ctzll(b->pfx) / 8 : 0;
    else if (a->pfx2 != b->pfx2)
      lcp[j] = 8 + (uint32_t)__builtin_clzll(a->pfx2 ^ b->pfx2) / 8;
    else if (b->pfx2 & 0xFF)
      lcp[j] = 16 + runon_lcp(pool + a->rest, pool + b->rest);
    else
      lcp[j] = 8 + (b->pfx2 ? 8 - (uint32_t)__builtin_ctzll(b->pfx2) / 8 : 0);
  }
  if (build_buckets(kv, m, lcp, &bv)) goto done;
  if (bv.n > 1) qsort(bv.v, bv.n, sizeof *bv.v, cmp_bucket);
  bytes = 16 + 8 * m + (size_t)SG__BUCKET_SIZE * bv.n;
  if (!(d = ext_open(out, base, bytes))) goto done;
  sg__wr64(d, m);
  sg__wr64(d + 8, bv.n);
  d += 16;
  for (size_t j = 0; j < m; j++, d += 8) {
    sg__wr32(d, rv[j].off);
    sg__wr32(d + 4, rv[j].ord);
  }
  for (size_t j = 0; j < bv.n; j++, d += SG__BUCKET_SIZE) {
    const bucket_rec *b = &bv.v[j];
    sg__wr32(d, b->lo);
    sg__wr32(d + 4, b->hi);
    sg__wr32(d + 8, b->top.n);
    for (uint32_t t = 0; t < 10; t++)
      sg__wr32(d + 12 + 4 * t, t < b->top.n ? (uint32_t)b->top.v[t] : 0);
  }
  rc = ext_close(job->exts, out, base, SG__EXT_RUNON, job->loc, bytes);
done:
  free(rv);
  free(tmp);
  free(kv);
  free(bv.v);
  free(lcp);
  return rc;
}

/* The SG__EXT_WORDS section of one locale (format.h): keys sorted (by text, tier,
 * ordinal) are grouped by their first word, which is contiguous (a space sorts below
 * every other byte of normalised text), and each group's items become the word's
 * postings in ordinal order. Counting sorts, no comparison sort: the keys are bucketed
 * by ordinal and visited in that order, so every posting list fills ascending. lcp[j]:
 * the bytes key j shares with key j - 1. The same visit ORs each item's words' bits
 * (sg__word_sig: every word of a candidate text starts some key, so is some group's
 * word) into its signature, written beside each of its postings. */
static int words_section(const locale_job *job, const key_vec *keys, const uint32_t *lcp,
                         const char *pool, size_t n, sg_buf *out, size_t base) {
  size_t nk = keys->n;
  uint32_t *gid = malloc((nk ? nk : 1) * sizeof *gid);
  uint32_t *ostart = calloc(n + 2, sizeof *ostart);
  uint32_t *byord = malloc((nk ? nk : 1) * sizeof *byord);
  u32_vec klo = {0}, gsig = {0};
  uint32_t *pstart = NULL, *last = NULL;
  int rc = -1;
  if (!gid || !ostart || !byord) goto done;
  /* Groups: a key starts a new one when its first word differs from the group's. A key
   * sharing more than the group word's bytes with the key before it (lcp) has that word
   * and its space: the same group, found without reading its text. */
  const char *gw = NULL;
  uint32_t gl = 0;
  for (size_t j = 0; j < nk; j++) {
    if (gw && j > 0 && gid[j - 1] != UINT32_MAX && lcp[j] > gl) {
      gid[j] = gid[j - 1];
      continue;
    }
    const char *t = pool + keys->v[j].off;
    uint32_t len = keys->v[j].lt >> 2;
    const char *sp = memchr(t, ' ', len);
    uint32_t wl = sp ? (uint32_t)(sp - t) : len;
    if (wl == 0) { /* an empty text: no word */
      gid[j] = UINT32_MAX;
      continue;
    }
    if (!gw || wl != gl || memcmp(t, gw, wl) != 0) {
      if (klo.n >= UINT32_MAX - 1 || u32_push(&klo, (uint32_t)j) ||
          u32_push(&gsig, sg__word_sig(t, wl)))
        goto done;
      gw = t;
      gl = wl;
    }
    gid[j] = (uint32_t)klo.n - 1;
  }
  size_t nw = klo.n;
  pstart = calloc(nw + 1, sizeof *pstart);
  last = malloc((nw ? nw : 1) * sizeof *last);
  if (!pstart || !last) goto done;
  /* Keys by ordinal (counting sort), then each group's distinct ordinals counted... */
  for (size_t j = 0; j < nk; j++) ostart[keys->v[j].ord + 2]++;
  for (size_t o = 0; o < n; o++) ostart[o + 2] += ostart[o + 1];
  for (size_t j = 0; j < nk; j++) byord[ostart[keys->v[j].ord + 1]++] = gid[j];
  memset(last, 0xFF, (nw ? nw : 1) * sizeof *last);
  for (size_t o = 0; o < n; o++)
    for (uint32_t x = ostart[o]; x < ostart[o + 1]; x++) {
      uint32_t g = byord[x];
      if (g == UINT32_MAX || last[g] == o) continue;
      last[g] = (uint32_t)o;
      pstart[g + 1]++;
    }
  for (size_t g = 0; g < nw; g++) pstart[g + 1] += pstart[g];
  size_t np = nw ? pstart[nw] : 0;
  /* ... and written, ascending, in the second visit. */
  size_t head = 16 + 4 * nw + 4 * (nw + 1);
  size_t bytes = head + 6 * np;
  unsigned char *d = ext_open(out, base, bytes);
  if (!d) goto done;
  sg__wr64(d, nw);
  sg__wr64(d + 8, np);
  for (size_t g = 0; g < nw; g++) sg__wr32(d + 16 + 4 * g, klo.v[g]);
  for (size_t g = 0; g <= nw; g++) sg__wr32(d + 16 + 4 * nw + 4 * g, pstart[g]);
  unsigned char *post = d + head, *sig = post + 4 * np;
  memset(last, 0xFF, (nw ? nw : 1) * sizeof *last);
  for (size_t o = 0; o < n; o++) {
    uint32_t bits = 0;
    for (uint32_t x = ostart[o]; x < ostart[o + 1]; x++)
      if (byord[x] != UINT32_MAX) bits |= gsig.v[byord[x]];
    for (uint32_t x = ostart[o]; x < ostart[o + 1]; x++) {
      uint32_t g = byord[x];
      if (g == UINT32_MAX || last[g] == o) continue;
      last[g] = (uint32_t)o;
      sg__wr16(sig + 2 * (size_t)pstart[g], (uint16_t)bits);
      sg__wr32(post + 4 * (size_t)pstart[g]++, (uint32_t)o);
    }
  }
  rc = ext_close(job->exts, out, base, SG__EXT_WORDS, job->loc, bytes);
done:
  free(gid);
  free(ostart);
  free(byord);
  free(klo.v);
  free(gsig.v);
  free(pstart);
  free(last);
  return rc;
}

/* ---- one locale --------------------------------------------------------------------- */

/* Builds and appends the text, key, bucket and fragment index sections of one locale,
 * writing their positions into the locale record rec. */
static int compile_locale(const locale_job *job, sg_buf *out, size_t base,
                          unsigned char rec[SG__LOC_SIZE]) {
  const item_set *s = job->s;
  size_t n = s->n;
  sg_buf pool;
  sg_buf_init(&pool, 0);
  key_vec keys = {0}, scratch = {0};
  bucket_vec buckets = {0};
  trie_vec trie = {0};
  skip_vec skip[SG__SKIP_TABLES] = {{0}};
  uint32_t *lcp = NULL;
  uint32_t *dv_off = malloc((n ? n : 1) * sizeof *dv_off);
  uint32_t *dv_len = malloc((n ? n : 1) * sizeof *dv_len);
  uint32_t *order = malloc((n ? n : 1) * sizeof *order);
  uint32_t *ord_of = malloc((n ? n : 1) * sizeof *ord_of);
  /* An item's candidate texts for the synonym rule: its displayValue and own aliases. */
  sg__span cand[SG__MAX_CANDIDATES];
  uint32_t cand_off[SG__MAX_CANDIDATES];
  sg__synonym_out syn_out = {.n = 0};
  sg_buf_init(&syn_out.text, 0);
  /* Every item's candidate texts of tiers 3 and 4, by item index (cstart). */
  u32_vec cands = {0};
  uint32_t *cstart = malloc((n + 1) * sizeof *cstart);
  int rc = -1;
  if (!dv_off || !dv_len || !order || !ord_of || !cstart) goto done;
  if (sg_buf_reserve(&pool, 0)) goto done;

  /* Normalise every text and collect the keys, deduplicated per item (one key text keeps
   * its lowest tier), so duplicate aliases cost nothing. */
  for (uint32_t i = 0; i < n; i++) {
    const char *dv;
    const char *const *al;
    size_t nal;
    effective(s->item[i], job->tag, &dv, &al, &nal);
    uint32_t len;
    int64_t off = pool_add_normalized(&pool, dv, &len);
    if (off < 0) goto done;
    dv_off[i] = (uint32_t)off;
    dv_len[i] = len;
    cstart[i] = (uint32_t)cands.n;
    if (cands.n >= UINT32_MAX - 1 || u32_push(&cands, (uint32_t)off)) goto done;
    scratch.n = 0;
    if (add_text_keys(&scratch, &pool, (uint32_t)off, len, 0, i)) goto done;
    for (size_t a = 0; a < nal; a++) {
      int64_t ao = pool_add_normalized(&pool, al[a], &len);
      if (ao < 0) goto done;
      if (cands.n >= UINT32_MAX - 1 || u32_push(&cands, (uint32_t)ao)) goto done;
      if (nal <= SG__MAX_CANDIDATES - 1) {
        cand_off[1 + a] = (uint32_t)ao;
        cand[1 + a].len = len;
      }
      if (add_text_keys(&scratch, &pool, (uint32_t)ao, len, 1, i)) goto done;
    }
    /* Synonym aliases (docs/DESIGN.md §3.4): keys of tier 1 like the item's own aliases. The
     * candidates point into the pool, which the results are added to afterwards. */
    if (job->syn && nal <= SG__MAX_CANDIDATES - 1) {
      cand_off[0] = dv_off[i];
      cand[0].len = dv_len[i];
      for (size_t x = 0; x <= nal; x++) cand[x].t = pool.data + cand_off[x];
      if (sg__synonyms_expand(job->syn, cand, nal + 1, &syn_out)) goto done;
      for (size_t x = 0; x < syn_out.n; x++) {
        int64_t so = pool_add(&pool, syn_out.text.data + syn_out.off[x], syn_out.len[x]);
        if (so < 0) goto done;
        if (cands.n >= UINT32_MAX - 1 || u32_push(&cands, (uint32_t)so)) goto done;
        if (add_text_keys(&scratch, &pool, (uint32_t)so, syn_out.len[x], 1, i)) goto done;
      }
    }
    if (scratch.n > 1) qsort_r(scratch.v, scratch.n, sizeof *scratch.v, cmp_key_full, pool.data);
    for (size_t j = 0; j < scratch.n; j++) {
      if (j > 0 && cmp_key_text(&scratch.v[j - 1], &scratch.v[j], pool.data) == 0) continue;
      if (key_push(&keys, scratch.v[j])) goto done;
    }
  }
  cstart[n] = (uint32_t)cands.n;
  if (keys.n > UINT32_MAX - 1) goto done;

  /* Ordinals: rank desc, normalised displayValue asc, id asc. */
  for (uint32_t i = 0; i < n; i++) order[i] = i;
  ord_ctx oc = {s, pool.data, dv_off, dv_len};
  if (n > 1) qsort_r(order, n, sizeof *order, cmp_ordinal, &oc);
  for (uint32_t o = 0; o < n; o++) ord_of[order[o]] = o;
  for (size_t j = 0; j < keys.n; j++) keys.v[j].ord = ord_of[keys.v[j].ord];
  if (keys.n > 1) qsort_r(keys.v, keys.n, sizeof *keys.v, cmp_key_full, pool.data);

  lcp = malloc((keys.n ? keys.n : 1) * sizeof *lcp);
  if (!lcp) goto done;
  for (size_t j = 0; j < keys.n; j++)
    lcp[j] = j ? lcp_of(&keys.v[j - 1], &keys.v[j], pool.data) : 0;
  if (build_buckets(keys.v, keys.n, lcp, &buckets)) goto done;
  if (build_trie(keys.v, keys.n, lcp, pool.data, &trie)) goto done;
  if (!job->without_skip) {
    bool fits[SG__SKIP_TABLES];
    if (build_skip(keys.v, keys.n, lcp, pool.data, &trie, skip, fits)) goto done;
    for (unsigned t = 0; t < SG__SKIP_TABLES; t++)
      if (!fits[t]) skip[t].n = 0; /* written empty: the plain walk serves its queries */
  }
  if (buckets.n > 1) qsort(buckets.v, buckets.n, sizeof *buckets.v, cmp_bucket);

  /* Sections, each 8-byte aligned. */
  if (pad8(out, base)) goto done;
  sg__wr64(rec + SG__LOC_TEXT_OFF, out->len - base);
  sg__wr64(rec + SG__LOC_TEXT_LEN, pool.len);
  if (sg_buf_append(out, pool.data, pool.len) || pad8(out, base)) goto done;

  sg__wr64(rec + SG__LOC_KEYS_OFF, out->len - base);
  sg__wr64(rec + SG__LOC_KEYS_N, keys.n);
  if (sg_buf_reserve(out, keys.n * SG__KEY_SIZE)) goto done;
  for (size_t j = 0; j < keys.n; j++)
    if (put32(out, keys.v[j].off) ||
        put32(out, (keys.v[j].lt & 3) << SG__KEY_TIER_SHIFT | keys.v[j].ord))
      goto done;
  if (pad8(out, base)) goto done;

  sg__wr64(rec + SG__LOC_BUCKETS_OFF, out->len - base);
  sg__wr64(rec + SG__LOC_BUCKETS_N, buckets.n);
  if (sg_buf_reserve(out, buckets.n * SG__BUCKET_SIZE)) goto done;
  for (size_t j = 0; j < buckets.n; j++) {
    const bucket_rec *b = &buckets.v[j];
    if (put32(out, b->lo) || put32(out, b->hi) || put32(out, b->top.n)) goto done;
    for (uint32_t t = 0; t < 10; t++)
      if (put32(out, t < b->top.n ? (uint32_t)(b->top.v[t] >> 32) << SG__KEY_TIER_SHIFT |
                                        (uint32_t)b->top.v[t]
                                  : 0))
        goto done;
  }
  if (pad8(out, base)) goto done;

  sg__wr64(rec + SG__LOC_TRIE_OFF, out->len - base);
  sg__wr64(rec + SG__LOC_TRIE_N, trie.n);
  if (sg_buf_reserve(out, trie.n * SG__TRIE_SIZE)) goto done;
  for (size_t j = 0; j < trie.n; j++) {
    const trie_node *x = &trie.v[j];
    if (put32(out, x->lo) || put32(out, x->hi) || put32(out, x->cp) || put32(out, x->first) ||
        put32(out, x->n) || put32(out, x->best) || put32(out, (uint32_t)x->sig) ||
        put32(out, (uint32_t)(x->sig >> 32)) || put32(out, (uint32_t)x->next) ||
        put32(out, (uint32_t)(x->next >> 32)))
      goto done;
  }
  if (pad8(out, base)) goto done;

  /* Per key, the bytes it shares with the key before it (capped): the typo search skips
   * runs of keys and reuses DP rows from these without reading key text. */
  sg__wr64(rec + SG__LOC_LCP_OFF, out->len - base);
  if (sg_buf_reserve(out, keys.n)) goto done;
  for (size_t j = 0; j < keys.n; j++)
    out->data[out->len++] = (char)(lcp[j] < SG__LCP_CAP ? lcp[j] : SG__LCP_CAP);
  out->data[out->len] = '\0';
  if (pad8(out, base)) goto done;

  /* Per key, its two bytes where it leaves the key before (format.h): the typo search's
   * lookups below a prefix read these instead of key text. */
  sg__wr64(rec + SG__LOC_BRANCH_OFF, out->len - base);
  if (sg_buf_reserve(out, 2 * keys.n)) goto done;
  for (size_t j = 0; j < keys.n; j++) {
    const char *t = pool.data + keys.v[j].off + lcp[j];
    bool known = lcp[j] < SG__LCP_CAP;
    out->data[out->len++] = known ? t[0] : '\0';
    out->data[out->len++] = known && t[0] ? t[1] : '\0';
  }
  out->data[out->len] = '\0';
  if (pad8(out, base)) goto done;

  for (unsigned t = 0; t < SG__SKIP_TABLES; t++) {
    const skip_vec *sv = &skip[t];
    sg__wr64(rec + (t ? SG__LOC_SKIP1_OFF : SG__LOC_SKIP_OFF), out->len - base);
    sg__wr64(rec + (t ? SG__LOC_SKIP1_N : SG__LOC_SKIP_N), sv->n);
    if (sg_buf_reserve(out, sv->n * SG__SKIP_SIZE)) goto done;
    for (size_t j = 0; j < sv->n; j++)
      if (sg_buf_append(out, (const char *)sv->v[j].head, SG__SKIP_PFX) || put32(out, sv->v[j].run))
        goto done;
    if (pad8(out, base)) goto done;
  }

  if (!job->without_words &&
      (write_words(job, out, base, pool.data, &cands, cstart, order, ord_of, n) ||
       words_section(job, &keys, lcp, pool.data, n, out, base)))
    goto done;

  /* Fragments by ordinal. A fragment byte-identical to the item's default-locale one
   * reuses it, so a locale that only translates a few items costs only those. */
  sg__wr64(rec + SG__LOC_FRAGIDX_OFF, out->len - base);
  sg__wr64(rec + SG__LOC_FRAGIDX_N, n);
  if (sg_buf_reserve(out, n * SG__FRAGIDX_SIZE)) goto done;
  for (uint32_t o = 0; o < n; o++) {
    uint32_t idx = order[o];
    size_t start = job->frags->len;
    if (write_fragment(job->frags, s, idx, job->tag)) goto done;
    size_t flen = job->frags->len - start;
    if (job->frags->len > UINT32_MAX) goto done;
    uint32_t foff = (uint32_t)start;
    if (job->is_default) {
      job->def_frag_off[idx] = foff;
      job->def_frag_len[idx] = (uint32_t)flen;
    } else if (job->def_frag_len[idx] == flen && memcmp(job->frags->data + job->def_frag_off[idx],
                                                        job->frags->data + start, flen) == 0) {
      job->frags->len = start; /* drop the copy */
      job->frags->data[start] = '\0';
      foff = job->def_frag_off[idx];
    }
    if (put32(out, foff) || put32(out, (uint32_t)flen)) goto done;
  }
  if (pad8(out, base)) goto done;
  if (job->pre_of && within_section(job, &keys, pool.data, order, ord_of, out, base)) goto done;
  rc = 0;
done:
  sg_buf_free(&pool);
  sg_buf_free(&syn_out.text);
  free(keys.v);
  free(scratch.v);
  free(buckets.v);
  free(trie.v);
  for (unsigned t = 0; t < SG__SKIP_TABLES; t++) free(skip[t].v);
  free(lcp);
  free(dv_off);
  free(dv_len);
  free(order);
  free(ord_of);
  free(cands.v);
  free(cstart);
  return rc;
}

/* ---- the artifact --------------------------------------------------------------------- */

/* Numbers the items of s in depth-first preorder of the parent forest: pre_of[i] for item
 * index i, idx_of_pre[p] back, and end[p] the preorder after p's subtree. Iterative (an
 * explicit stack), so the depth costs no call frames. Items the walk does not reach (a
 * parent cycle, which validation refuses before compiling) follow as their own
 * subtrees. 0, or -1 without memory. */
static int preorder(const item_set *s, uint32_t *pre_of, uint32_t *idx_of_pre, uint32_t *end) {
  size_t n = s->n;
  uint32_t *cstart = calloc(n + 2, sizeof *cstart);
  uint32_t *child = malloc((n ? n : 1) * sizeof *child);
  uint32_t *stack = malloc((n ? n : 1) * sizeof *stack); /* items whose subtree is open */
  uint32_t *next = malloc((n ? n : 1) * sizeof *next);   /* per open item, its next child */
  int rc = -1;
  if (!cstart || !child || !stack || !next) goto done;
  for (size_t i = 0; i < n; i++)
    if (s->parent[i] != UINT32_MAX) cstart[s->parent[i] + 2]++;
  for (size_t i = 0; i < n; i++) cstart[i + 2] += cstart[i + 1];
  for (size_t i = 0; i < n; i++) /* index order within each parent: id order */
    if (s->parent[i] != UINT32_MAX) child[cstart[s->parent[i] + 1]++] = (uint32_t)i;
  /* now the children of i are child[cstart[i] .. cstart[i + 1]) */
  for (size_t i = 0; i < n; i++) pre_of[i] = UINT32_MAX;
  uint32_t p = 0;
  for (int pass = 0; pass < 2; pass++)
    for (size_t r = 0; r < n; r++) {
      if (pre_of[r] != UINT32_MAX || (pass == 0 && s->parent[r] != UINT32_MAX)) continue;
      size_t sp = 0;
      pre_of[r] = p;
      idx_of_pre[p++] = (uint32_t)r;
      stack[sp] = (uint32_t)r;
      next[sp++] = cstart[r];
      while (sp) {
        uint32_t x = stack[sp - 1];
        if (next[sp - 1] == cstart[x + 1]) {
          end[pre_of[x]] = p;
          sp--;
          continue;
        }
        uint32_t c = child[next[sp - 1]++];
        if (pre_of[c] != UINT32_MAX) continue;
        pre_of[c] = p;
        idx_of_pre[p++] = c;
        stack[sp] = c;
        next[sp++] = cstart[c];
      }
    }
  rc = 0;
done:
  free(cstart);
  free(child);
  free(stack);
  free(next);
  return rc;
}

static int compile_all(const sg_compile_item *items, size_t n, const sg_compile_opts *opts,
                       const sg_synonym_set *sets, size_t n_sets, unsigned leave_out, sg_buf *out);

int sg_compile(const sg_compile_item *items, size_t n, const sg_compile_opts *opts, sg_buf *out) {
  return compile_all(items, n, opts, NULL, 0, 0, out);
}

int sg_compile_leaving_out(const sg_compile_item *items, size_t n, const sg_compile_opts *opts,
                           unsigned leave_out, sg_buf *out) {
  return compile_all(items, n, opts, NULL, 0, leave_out, out);
}

int sg_compile_synonyms(const sg_compile_item *items, size_t n, const sg_compile_opts *opts,
                        const sg_synonym_set *sets, size_t n_sets, sg_buf *out) {
  return compile_all(items, n, opts, sets, n_sets, 0, out);
}

static int compile_all(const sg_compile_item *items, size_t n, const sg_compile_opts *opts,
                       const sg_synonym_set *sets, size_t n_sets, unsigned leave_out, sg_buf *out) {
  if (!opts || !opts->default_locale || opts->n_supported == 0 ||
      opts->n_supported > SG__MAX_LOCALES || n > SG__MAX_ITEMS)
    return -1;
  size_t def = SIZE_MAX;
  for (size_t i = 0; i < opts->n_supported; i++)
    if (def == SIZE_MAX && strcasecmp(opts->supported_locales[i], opts->default_locale) == 0)
      def = i;
  if (def == SIZE_MAX) return -1;

  sg__synonyms *syn = NULL;
  if (n_sets && !(syn = sg__synonyms_new(sets, n_sets))) return -1;
  item_set s = {0};
  s.n = n;
  s.item = malloc((n ? n : 1) * sizeof *s.item);
  s.parent = malloc((n ? n : 1) * sizeof *s.parent);
  uint32_t *def_off = calloc(n ? n : 1, sizeof *def_off);
  uint32_t *def_len = calloc(n ? n : 1, sizeof *def_len);
  sg_buf frags;
  sg_buf_init(&frags, 0);
  ext_list exts = {0};
  uint32_t *pre_of = NULL, *idx_of_pre = NULL, *tree_end = NULL;
  size_t base = out->len, orig_len = out->len;
  int rc = -1;
  if (!s.item || !s.parent || !def_off || !def_len || sg_buf_reserve(&frags, 0)) goto done;
  for (size_t i = 0; i < n; i++) s.item[i] = &items[i];
  qsort(s.item, n, sizeof *s.item, cmp_item_id);
  for (size_t i = 0; i + 1 < n; i++)
    if (strcmp(s.item[i]->id, s.item[i + 1]->id) == 0) goto done; /* ids must be unique */
  for (size_t i = 0; i < n; i++) {
    s.parent[i] = UINT32_MAX;
    if (s.item[i]->parent_id) {
      s.parent[i] = find_id(&s, s.item[i]->parent_id);
      if (s.parent[i] == UINT32_MAX) goto done;
    }
  }

  /* The preorder of the parent forest (format.h, SG__EXT_TREE), when some item has a
   * parent: roots in id order, each followed by its subtrees, children in id order. */
  bool tree = false;
  for (size_t i = 0; i < n && !tree; i++) tree = s.parent[i] != UINT32_MAX;
  if (tree && !(pre_of = malloc(n * sizeof *pre_of))) goto done;
  if (tree && !(idx_of_pre = malloc(n * sizeof *idx_of_pre))) goto done;
  if (tree && !(tree_end = malloc(n * sizeof *tree_end))) goto done;
  if (tree && preorder(&s, pre_of, idx_of_pre, tree_end)) goto done;

  /* Header and locale records first (patched at the end), then the tags. The header
   * starts 8-byte aligned relative to base, which is all offsets are relative to. */
  size_t nloc = opts->n_supported;
  size_t hdr_len = SG__HDR_SIZE + nloc * SG__LOC_SIZE;
  if (sg_buf_reserve(out, hdr_len)) goto done;
  memset(out->data + base, 0, hdr_len);
  out->len += hdr_len;

  size_t tags_off = out->len - base;
  uint32_t *tag_off = calloc(nloc, sizeof *tag_off);
  if (!tag_off) goto done;
  for (size_t l = 0; l < nloc; l++) {
    tag_off[l] = (uint32_t)(out->len - base - tags_off);
    if (sg_buf_append(out, opts->supported_locales[l], strlen(opts->supported_locales[l]) + 1)) {
      free(tag_off);
      goto done;
    }
  }
  size_t tags_len = out->len - base - tags_off;
  if (pad8(out, base)) {
    free(tag_off);
    goto done;
  }

  /* The default locale is compiled first so the others can share its fragments. */
  unsigned char *recs = calloc(nloc, SG__LOC_SIZE);
  if (!recs) {
    free(tag_off);
    goto done;
  }
  for (size_t step = 0; step < nloc; step++) {
    size_t l = step == 0 ? def : (step <= def ? step - 1 : step);
    locale_job job = {&s,         opts->supported_locales[l],
                      l == def,   &frags,
                      def_off,    def_len,
                      syn,        (uint32_t)l,
                      &exts,      tree ? pre_of : NULL,
                      idx_of_pre, (leave_out & SG_LEAVE_OUT_WORDS) != 0,
                      tree_end,   (leave_out & SG_LEAVE_OUT_SKIP) != 0};
    unsigned char *rec = recs + l * SG__LOC_SIZE;
    sg__wr32(rec + SG__LOC_TAG_OFF, tag_off[l]);
    sg__wr32(rec + SG__LOC_TAG_LEN, (uint32_t)strlen(opts->supported_locales[l]));
    if (compile_locale(&job, out, base, rec)) {
      free(recs);
      free(tag_off);
      goto done;
    }
  }
  free(tag_off);
  if (tree) {
    unsigned char *te = malloc(n * 4);
    int bad = !te;
    for (size_t p = 0; !bad && p < n; p++) sg__wr32(te + 4 * p, tree_end[p]);
    bad = bad || ext_append(&exts, out, base, SG__EXT_TREE, SG__EXT_GLOBAL, te, n * 4);
    free(te);
    if (bad) {
      free(recs);
      goto done;
    }
  }

  size_t frags_off = out->len - base;
  uint64_t ext_off = 0;
  if (sg_buf_append(out, frags.data, frags.len) || pad8(out, base) ||
      ext_write_dir(&exts, out, base, &ext_off)) {
    free(recs);
    goto done;
  }

  unsigned char *h = (unsigned char *)out->data + base;
  memcpy(h + SG__HDR_MAGIC, SG__ART_MAGIC, 8);
  sg__wr32(h + SG__HDR_VERSION, SG__ART_VERSION);
  sg__wr32(h + SG__HDR_HEADER_LEN, (uint32_t)hdr_len);
  sg__wr64(h + SG__HDR_TOTAL_LEN, out->len - base);
  sg__wr32(h + SG__HDR_ITEM_COUNT, (uint32_t)n);
  sg__wr32(h + SG__HDR_N_LOCALES, (uint32_t)nloc);
  sg__wr32(h + SG__HDR_DEFAULT, (uint32_t)def);
  sg__wr32(h + SG__HDR_THRESHOLD, BUCKET_THRESHOLD);
  sg__wr64(h + SG__HDR_TAGS_OFF, tags_off);
  sg__wr64(h + SG__HDR_TAGS_LEN, tags_len);
  sg__wr64(h + SG__HDR_FRAGS_OFF, frags_off);
  sg__wr64(h + SG__HDR_FRAGS_LEN, frags.len);
  sg__wr64(h + SG__HDR_EXT_OFF, ext_off);
  sg__wr64(h + SG__HDR_EXT_N, exts.n);
  memcpy(h + SG__HDR_SIZE, recs, nloc * SG__LOC_SIZE);
  free(recs);
  rc = 0;
done:
  if (rc) {
    out->len = orig_len;
    if (out->data) out->data[orig_len] = '\0';
  }
  sg_buf_free(&frags);
  free(exts.v);
  free(pre_of);
  free(idx_of_pre);
  free(tree_end);
  sg__synonyms_free(syn);
  free(s.item);
  free(s.parent);
  free(def_off);
  free(def_len);
  return rc;
}
