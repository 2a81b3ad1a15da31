/*
 * The filter by ancestor of docs/DESIGN.md §3.5: only the descendants (any depth) of one
 * item, the first 10 of them by the relevance contract (§3–§3.2), taken after the filter.
 *
 * The compiler numbers items in depth-first preorder of the parent forest, so an item's
 * descendants are one preorder interval, and stores per locale every key of every item
 * with a parent grouped by preorder (format.h, SG__EXT_TREE and SG__EXT_WITHIN). So the
 * descendants' candidate texts are one contiguous run of key references, and a filtered
 * query evaluates each of them against q exactly as the definition says (prefix, then
 * edits(q, t) within the budget), keeping the best 10 distinct items: the brute force of
 * §3.1 over the subtree, with two shortcuts that change no answer:
 *   - a candidate whose best possible value (edits 0, its tier and ordinal) cannot enter
 *     a full top 10 is not read further;
 *   - when the query's key range (the exact matches of the whole list) is smaller than
 *     the subtree's references, the exact matches are taken from that range, filtered;
 *     if they fill 10 items no typo can beat them.
 * A format-5 artifact has no such sections: every key of the locale is a candidate and
 * the filter reads the candidate item's ancestors in its fragment (exact, slower).
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "compiler/typo.h"
#include "search/internal.h"

/* ---- open: check the sections ------------------------------------------------------ */

static int check_locale_within(const sg_artifact *a, uint32_t l, locale_view *v) {
  uint64_t len;
  const unsigned char *d = sg__artifact_ext(a, SG__EXT_WITHIN, l, &len);
  uint64_t n = a->n_items;
  if (!d) return a->tree_end ? -1 : 0; /* both sections or neither */
  if (!a->tree_end) return -1;
  if (len < 4 * (3 * n + 1)) return -1;
  const unsigned char *o2p = d, *p2o = d + 4 * n, *ks = d + 8 * n, *refs = d + 4 * (3 * n + 1);
  for (uint64_t o = 0; o < n; o++) {
    uint32_t p = sg__rd32(o2p + 4 * o);
    if (p >= n || sg__rd32(p2o + 4 * (uint64_t)p) != o) return -1; /* a bijection */
  }
  if (sg__rd32(ks) != 0) return -1;
  for (uint64_t p = 0; p < n; p++)
    if (sg__rd32(ks + 4 * p) > sg__rd32(ks + 4 * (p + 1))) return -1;
  uint64_t nrefs = sg__rd32(ks + 4 * n);
  if ((len - 4 * (3 * n + 1)) / SG__WREF_SIZE < nrefs) return -1;
  for (uint64_t i = 0; i < nrefs; i++) {
    const unsigned char *r = refs + i * SG__WREF_SIZE;
    /* The text section ends with a NUL (checked with the locale): every read of a
     * reference's text stops inside it. */
    if (sg__rd32(r) >= v->text_len || r[4] > 2) return -1;
  }
  v->w_ord2pre = o2p;
  v->w_pre2ord = p2o;
  v->w_kstart = ks;
  v->w_refs = refs;
  /* The index of the large subtrees (optional): records by ascending preorder, each a
   * run of the key records that follow them; every key names a text inside the pool
   * (which ends with a NUL) and an ordinal. */
  const unsigned char *x = sg__artifact_ext(a, SG__EXT_WSUB, l, &len);
  if (!x) return 0;
  if (len < 16 || v->text_len == 0 || v->text[v->text_len - 1] != '\0') return -1;
  uint64_t m = sg__rd64(x), nk = sg__rd64(x + 8);
  if (m > n || m > (len - 16) / SG__WSUB_REC) return -1;
  if (nk > UINT32_MAX || nk > (len - 16 - m * SG__WSUB_REC) / (SG__KEY_SIZE + 1)) return -1;
  const unsigned char *keys = x + 16 + m * SG__WSUB_REC;
  for (uint64_t i = 0; i < m; i++) {
    const unsigned char *r = x + 16 + i * SG__WSUB_REC;
    uint32_t p = sg__rd32(r), s = sg__rd32(r + 4), e = sg__rd32(r + 8);
    if (p >= n || s > e || e > nk) return -1;
    if (i && p <= sg__rd32(r - SG__WSUB_REC)) return -1;
  }
  for (uint64_t i = 0; i < nk; i++) {
    const unsigned char *r = keys + i * SG__KEY_SIZE;
    uint32_t w = sg__rd32(r + 4);
    if (sg__rd32(r) >= v->text_len || (w & SG__KEY_ORD_MASK) >= n || w >> SG__KEY_TIER_SHIFT > 2)
      return -1;
  }
  /* Each LCP byte is the true one (capped at 255): the typo walk resumes a key at that
   * offset without reading the bytes before it, so it must lie inside the key. */
  const unsigned char *lcp = keys + nk * SG__KEY_SIZE;
  for (uint64_t i = 0; i < m; i++) {
    const unsigned char *r = x + 16 + i * SG__WSUB_REC;
    uint32_t s = sg__rd32(r + 4), e = sg__rd32(r + 8);
    for (uint32_t k = s; k < e; k++) {
      unsigned sh = 0;
      if (k > s) {
        const char *p = v->text + sg__rd32(keys + (uint64_t)(k - 1) * SG__KEY_SIZE);
        const char *t = v->text + sg__rd32(keys + (uint64_t)k * SG__KEY_SIZE);
        while (sh < 255 && t[sh] && t[sh] == p[sh]) sh++;
      }
      if (lcp[k] != sh) return -1;
    }
  }
  v->ws_recs = x + 16;
  v->ws_n = m;
  v->ws_keys = keys;
  v->ws_lcp = keys + nk * SG__KEY_SIZE;
  return 0;
}

int sg__within_open(sg_artifact *a) {
  if (a->version < 6) return 0;
  uint64_t len;
  const unsigned char *te = sg__artifact_ext(a, SG__EXT_TREE, SG__EXT_GLOBAL, &len);
  if (te) {
    uint64_t n = a->n_items;
    if (len < 4 * n) return -1;
    /* end[p] in (p, n]: every interval read stays inside the preorder arrays. */
    for (uint64_t p = 0; p < n; p++) {
      uint32_t e = sg__rd32(te + 4 * p);
      if (e <= p || e > n) return -1;
    }
    a->tree_end = te;
  }
  for (uint32_t l = 0; l < a->n_locales; l++)
    if (check_locale_within(a, l, &a->loc[l])) return -1;
  return 0;
}

/* ---- resolve the ancestor ---------------------------------------------------------- */

int sg_artifact_within(const sg_artifact *a, const char *id, size_t len, sg_within *w) {
  memset(w, 0, sizeof *w);
  long ord = sg__artifact_item_ord(a, id, len);
  if (ord < 0) return -1;
  if (a->version < 6) {
    uint32_t off, il;
    if (sg__fragment_id(a, (uint32_t)ord, &off, &il)) return -1;
    w->id_off = off;
    w->id_len = il;
    w->mode = 2;
    return 0;
  }
  if (!a->tree_end) return 0; /* no item has a parent: nothing descends from any */
  uint32_t p = sg__rd32(a->loc[0].w_ord2pre + 4 * (uint64_t)ord);
  w->lo = p + 1;
  w->hi = sg__rd32(a->tree_end + 4 * (uint64_t)p);
  w->mode = w->lo < w->hi ? 1 : 0;
  return 0;
}

/* ---- the query --------------------------------------------------------------------- */

typedef struct {
  const char *s; /* the normalised query, no NUL */
  size_t len;
  unsigned k;
  const uint32_t *cp; /* its code points when k > 0 */
  size_t ncp;
} wquery;

static _Thread_local uint32_t tl_qcp[SG_TYPO_MAX_Q];

/* Offers one candidate text t (tier, item ordinal) of §3.1 to top. head: the text's first
 * three bytes (NUL padded) when known, else NULL. */
static inline void consider(const wquery *q, const char *t, const unsigned char *head,
                            unsigned tier, uint32_t ord, sg__top10 *top) {
  uint64_t v = (uint64_t)tier << 32 | ord;
  if (top->n == SG_BUCKET_ITEMS && v >= top->v[SG_BUCKET_ITEMS - 1]) return;
  if (q->len == 0) { /* the empty query is a prefix of everything */
    sg__top10_add(top, v);
    return;
  }
  /* Both a prefix match and a finite edit count need the first byte. */
  if (head) {
    if (head[0] != (unsigned char)q->s[0]) return;
    size_t m = q->len < 3 ? q->len : 3;
    if (memcmp(head, q->s, m) == 0 && strncmp(t, q->s, q->len) == 0) {
      sg__top10_add(top, v);
      return;
    }
  } else {
    if (*t != q->s[0]) return;
    if (strncmp(t, q->s, q->len) == 0) {
      sg__top10_add(top, v);
      return;
    }
  }
  if (q->k == 0) return;
  v |= 1ull << SG__EDITS_SHIFT;
  if (top->n == SG_BUCKET_ITEMS && v >= top->v[SG_BUCKET_ITEMS - 1]) return;
  unsigned e = sg_typo_edits(q->cp, q->ncp, t, NULL);
  if (e >= 1 && e <= q->k)
    sg__top10_add(top, (uint64_t)e << SG__EDITS_SHIFT | (v & ~(1ull << SG__EDITS_SHIFT)));
}

/* Whether the fragment of ordinal ord (locale v) lists the ancestor of w (format 5). In
 * a fragment every quote inside a string is escaped, so "itemId":"<id>" occurs only as a
 * field: the item's own (at the start, skipped) or an ancestor's. */
static bool fragment_within(const sg_artifact *a, const locale_view *v, uint32_t ord,
                            const sg_within *w) {
  const unsigned char *f = v->fragidx + (uint64_t)ord * SG__FRAGIDX_SIZE;
  const char *j = a->frags + sg__rd32(f);
  size_t fl = sg__rd32(f + 4);
  static const char anc[] = "\"ancestors\":[";
  const char *p = memmem(j, fl, anc, sizeof anc - 1);
  if (!p) return false;
  const char *id = a->frags + w->id_off;
  for (p += sizeof anc - 1; (size_t)(p - j) < fl;) {
    static const char key[] = "\"itemId\":\"";
    const char *h = memmem(p, fl - (size_t)(p - j), key, sizeof key - 1);
    if (!h) return false;
    h += sizeof key - 1;
    size_t rest = fl - (size_t)(h - j);
    if (rest > w->id_len && memcmp(h, id, w->id_len) == 0 && h[w->id_len] == '"') return true;
    p = h;
  }
  return false;
}

/* ---- the index of a large subtree (SG__EXT_WSUB) ----------------------------------- */

/* The key records of the indexed subtree of preorder p as a view (its text and keys;
 * what sg__prefix_range reads), or false when p has no index. */
static bool wsub_view(const locale_view *v, uint32_t p, locale_view *sub) {
  uint64_t b = 0, e = v->ws_n;
  while (b < e) {
    uint64_t mid = b + (e - b) / 2;
    uint32_t mp = sg__rd32(v->ws_recs + mid * SG__WSUB_REC);
    if (mp < p)
      b = mid + 1;
    else
      e = mid;
  }
  if (b == v->ws_n) return false;
  const unsigned char *r = v->ws_recs + b * SG__WSUB_REC;
  if (sg__rd32(r) != p) return false;
  memset(sub, 0, sizeof *sub);
  sub->text = v->text;
  sub->text_len = v->text_len;
  sub->keys = v->ws_keys + (uint64_t)sg__rd32(r + 4) * SG__KEY_SIZE;
  sub->lcp = v->ws_lcp + sg__rd32(r + 4);
  sub->n_keys = sg__rd32(r + 8) - sg__rd32(r + 4);
  return true;
}

static inline const char *key_text(const locale_view *s, uint64_t i) {
  return s->text + sg__rd32(s->keys + i * SG__KEY_SIZE);
}

static inline uint32_t key_word(const locale_view *s, uint64_t i) {
  return sg__rd32(s->keys + i * SG__KEY_SIZE + 4);
}

/* The byte of key i at offset at (every key of a range some prefix of at least at bytes
 * selects is that long; a corrupted order reads a harmless byte of the pool). */
static inline unsigned char kbyte(const locale_view *s, uint64_t i, size_t at) {
  uint64_t off = (uint64_t)sg__rd32(s->keys + i * SG__KEY_SIZE) + at;
  return off < s->text_len ? (unsigned char)s->text[off] : 0xFF;
}

/* Within [lo, hi), whose keys share their first `at` bytes, the keys whose byte at `at`
 * is c: [*plo, *phi). */
static void byte_range(const locale_view *s, uint64_t lo, uint64_t hi, size_t at, unsigned char c,
                       uint64_t *plo, uint64_t *phi) {
  uint64_t b = lo, e = hi;
  while (b < e) {
    uint64_t mid = b + (e - b) / 2;
    if (kbyte(s, mid, at) < c)
      b = mid + 1;
    else
      e = mid;
  }
  uint64_t x = b;
  e = hi;
  while (x < e) {
    uint64_t mid = x + (e - x) / 2;
    if (kbyte(s, mid, at) <= c)
      x = mid + 1;
    else
      e = mid;
  }
  *plo = b;
  *phi = x;
}

/* Adds every key of [lo, hi) valued base | tier << 32 | ordinal, as far as it can enter. */
static void add_range(const locale_view *s, uint64_t lo, uint64_t hi, uint64_t base,
                      sg__top10 *top) {
  for (uint64_t i = lo; i < hi; i++) {
    uint32_t w = key_word(s, i);
    uint64_t val = base | (uint64_t)(w >> SG__KEY_TIER_SHIFT) << 32 | (w & SG__KEY_ORD_MASK);
    if (top->n == SG_BUCKET_ITEMS && val >= top->v[SG_BUCKET_ITEMS - 1]) continue;
    sg__top10_add(top, val);
  }
}

static bool in_top(const sg__top10 *top, uint32_t ord) {
  for (uint32_t j = 0; j < top->n; j++)
    if ((uint32_t)top->v[j] == ord) return true;
  return false;
}

/* Verifies item ord at tier 3 unless it is already in top (at a lower tier: a tier 3
 * value could not improve it) or cannot enter it. */
static inline void t3_item(const locale_view *v, uint32_t ord, const sg__qwords *qw, const char *nq,
                           size_t len, sg__top10 *top) {
  if (in_top(top, ord)) return;
  sg__words_item(v, ord, qw, false, nq, len, top);
}

/* A per-thread open-addressing set of ordinals (value ord + 1; TOMB once verified), and
 * per slot the number of the ordinal's keys in the range it was built from (at most 2). */
#define WSET_MAX (1u << 15)
#define WSET_TOMB UINT32_MAX
static _Thread_local uint32_t tl_wset[WSET_MAX];
static _Thread_local uint8_t tl_wcnt[WSET_MAX];

/* Tier 3 (docs/DESIGN.md §3.3): an item matching it has, for each query word, a key starting at
 * that word: equal to w or starting with "w " for w1 .. w(m-1), starting with wm for the
 * last. So it has a key in each of those ranges, and since the words take distinct
 * positions of one text, two of those keys are distinct records (suffixes of one text
 * from two positions differ in length). When the smallest range is short its items are
 * verified; otherwise only those with a key in the second smallest other than their
 * only key in the smallest (the two ranges can overlap: "sankt" within "s"), found
 * with a set of the smallest's ordinals probed in the other's order, each once. */
static void wsub_tier3(const locale_view *v, const locale_view *s, const sg__qwords *qw,
                       const char *nq, size_t len, sg__top10 *top) {
  uint64_t lo[SG_T3_MAX_WORDS] = {0}, hi[SG_T3_MAX_WORDS] = {0};
  size_t a = 0, b = SIZE_MAX; /* the smallest range, and the next */
  for (size_t i = 0; i < qw->m; i++) {
    sg__prefix_range(s, qw->w[i], qw->len[i], &lo[i], &hi[i]);
    if (i + 1 < qw->m && lo[i] < hi[i]) { /* exact word: the key ends or has a space there */
      uint64_t x = lo[i], e = hi[i];
      while (x < e) {
        uint64_t mid = x + (e - x) / 2;
        if (kbyte(s, mid, qw->len[i]) <= ' ')
          x = mid + 1;
        else
          e = mid;
      }
      hi[i] = x;
    }
    if (i == 0 || hi[i] - lo[i] < hi[a] - lo[a]) {
      if (i) b = a;
      a = i;
    } else if (b == SIZE_MAX || hi[i] - lo[i] < hi[b] - lo[b]) {
      b = i;
    }
  }
  uint64_t na = hi[a] - lo[a];
  if (na == 0) return;
  if (na <= 32 || b == SIZE_MAX || na * 2 > WSET_MAX) {
    for (uint64_t i = lo[a]; i < hi[a]; i++)
      t3_item(v, key_word(s, i) & SG__KEY_ORD_MASK, qw, nq, len, top);
    return;
  }
  uint32_t cap = 64;
  while (cap < na * 2) cap <<= 1;
  uint32_t mask = cap - 1;
  memset(tl_wset, 0, cap * sizeof *tl_wset);
  for (uint64_t i = lo[a]; i < hi[a]; i++) {
    uint32_t ord = key_word(s, i) & SG__KEY_ORD_MASK;
    uint32_t h = (ord * 0x9E3779B1u) & mask;
    while (tl_wset[h] && tl_wset[h] != ord + 1) h = (h + 1) & mask;
    if (!tl_wset[h]) tl_wcnt[h] = 0;
    tl_wset[h] = ord + 1;
    if (tl_wcnt[h] < 2) tl_wcnt[h]++;
  }
  for (uint64_t i = lo[b]; i < hi[b]; i++) {
    uint32_t ord = key_word(s, i) & SG__KEY_ORD_MASK;
    uint32_t h = (ord * 0x9E3779B1u) & mask;
    while (tl_wset[h] && tl_wset[h] != ord + 1) h = (h + 1) & mask;
    if (!tl_wset[h]) continue;
    /* key i is the item's only key in the smallest range: not two distinct keys */
    if (i >= lo[a] && i < hi[a] && tl_wcnt[h] < 2) continue;
    tl_wset[h] = WSET_TOMB;
    t3_item(v, ord, qw, nq, len, top);
  }
}

/* Tier 4: a candidate text c matching it is a tier 0 or 1 key (tier 4 matches from the
 * start of c only) whose bytes are those of q without its spaces, with at most one space
 * between two of them (normalised text has single spaces and none in front). A descent
 * over those bytes keeps, for each spacing, the key range that begins with it; past
 * WSUB_T4_DEPTH bytes of q the remaining ranges are verified whole (a superset: still
 * exact, since every item found is verified). */
#define WSUB_T4_DEPTH 24
typedef struct {
  uint64_t lo, hi;
  uint32_t at, qi;
} t4_state;

static void wsub_tier4(const locale_view *v, const locale_view *s, const char *nq, size_t len,
                       sg__top10 *top) {
  char qs[WSUB_T4_DEPTH];
  size_t ql = 0;
  for (size_t i = 0; i < len && ql < WSUB_T4_DEPTH; i++)
    if (nq[i] != ' ') qs[ql++] = nq[i];
  sg__qwords none;
  memset(&none, 0, sizeof none);
  t4_state st[2 * WSUB_T4_DEPTH + 2];
  size_t sp = 0;
  st[sp++] = (t4_state){0, s->n_keys, 0, 0};
  while (sp) {
    t4_state x = st[--sp];
    if (x.lo >= x.hi) continue;
    if (x.qi == ql) {
      for (uint64_t i = x.lo; i < x.hi; i++) {
        uint32_t w = key_word(s, i);
        if (w >> SG__KEY_TIER_SHIFT <= 1 && !in_top(top, w & SG__KEY_ORD_MASK))
          sg__words_item(v, w & SG__KEY_ORD_MASK, &none, true, nq, len, top);
      }
      continue;
    }
    uint64_t lo, hi;
    if (x.at > 0) { /* a space, then the byte */
      byte_range(s, x.lo, x.hi, x.at, ' ', &lo, &hi);
      if (lo < hi) {
        uint64_t l2, h2;
        byte_range(s, lo, hi, x.at + 1, (unsigned char)qs[x.qi], &l2, &h2);
        if (l2 < h2) st[sp++] = (t4_state){l2, h2, x.at + 2, x.qi + 1};
      }
    }
    byte_range(s, x.lo, x.hi, x.at, (unsigned char)qs[x.qi], &lo, &hi);
    if (lo < hi) st[sp++] = (t4_state){lo, hi, x.at + 1, x.qi + 1};
  }
}

/* The typo search (docs/DESIGN.md §3.1) over the subtree's sorted keys that begin with q's first
 * code point, for a budget of exactly d edits: one OSA row per code point of a key, the
 * rows of the prefix a key shares with the key before reused. Along a key, once a row's
 * least cell is over d or at least the least last cell so far (rows never go below the
 * least cell of the row before: nothing deeper is smaller), every key sharing that
 * prefix has the same value, the least last cell so far: the whole run is added (within
 * d) or skipped, and the walk resumes after it. So each key's value is min over its
 * prefixes p of OSA(q, p), as the definition says. */
/* A row of the banded OSA DP (compiler/typo.h) kept as one word: byte b is cell b of
 * sg__osa_row, bytes SG__BAND .. 7 are SG__CAP. Written and read whole, so a row computed
 * is read back without a store-forwarding stall (the walk's hot path). */
typedef struct {
  uint64_t band;
  uint32_t cp;   /* the code point of this depth */
  uint32_t boff; /* bytes of the key's first `depth` code points */
  uint8_t best;  /* least last cell of rows 0 .. depth */
} wrow;
#define WMAXD (SG_TYPO_MAX_Q + SG_TYPO_MAX_K + 2)
static _Thread_local wrow tl_rows[WMAXD];

#define BAND_PAD 0x0303030000000000ull /* SG__CAP in bytes 5..7 */
#define BAND_MASK 0x000000FFFFFFFFFFull

static inline uint64_t band_of(const sg__osa_row *r) {
  uint64_t u = 0;
  memcpy(&u, r->c, SG__BAND);
  return (u & BAND_MASK) | BAND_PAD;
}

static inline unsigned band_cell(uint64_t u, size_t b) { return (unsigned)(u >> (8 * b)) & 0xFF; }

/* sg__osa_last and sg__osa_min of compiler/typo.h on a word row. */
static inline unsigned band_last(uint64_t u, size_t i, size_t n) {
  if (n + SG_TYPO_MAX_K < i || i + SG_TYPO_MAX_K < n) return SG__CAP;
  return band_cell(u, n + SG_TYPO_MAX_K - i);
}

static inline unsigned band_min(uint64_t u, size_t i, size_t n) {
  unsigned m = SG__CAP;
  for (size_t b = 0; b < SG__BAND; b++) {
    long j = (long)i - SG_TYPO_MAX_K + (long)b;
    unsigned c = band_cell(u, b);
    if (j >= 0 && (size_t)j <= n && c < m) m = c;
  }
  return m;
}

/* sg__osa_step of compiler/typo.h on word rows: the same recurrence, term for term (the
 * SSE2 form for the inner rows, the header's own step for the others). */
static inline uint64_t band_step(uint64_t prev, const uint64_t *prev2, size_t i, uint32_t t_i,
                                 uint32_t t_im1, const uint32_t *q, size_t n) {
#if defined(__SSE2__) && SG_TYPO_MAX_K == 2
  if (prev2 && i >= SG_TYPO_MAX_K + 2 && i + SG_TYPO_MAX_K <= n) {
    __m128i x = sg__osa_terms_sse2(prev, *prev2, t_i, t_im1, q + i - SG_TYPO_MAX_K - 2);
    x = _mm_min_epu8(sg__osa_left_sse2(x), _mm_set1_epi8(SG__CAP));
    return ((uint64_t)_mm_cvtsi128_si64(x) & BAND_MASK) | BAND_PAD;
  }
#endif
  sg__osa_row a, b, out;
  memcpy(a.c, &prev, SG__BAND);
  if (prev2) memcpy(b.c, prev2, SG__BAND);
  sg__osa_step(&out, &a, prev2 ? &b : NULL, i, t_i, t_im1, q, n);
  return band_of(&out);
}

/* The typo search (docs/DESIGN.md §3.1) over the subtree's sorted keys that begin with q's first
 * code point, for a budget of exactly d edits: one OSA row per code point of a key, the
 * rows of the prefix a key shares with the key before reused. Along a key, once a row's
 * least cell is over d or at least the least last cell so far (rows never go below the
 * least cell of the row before: nothing deeper is smaller), every key sharing that
 * prefix has the same value, the least last cell so far: the whole run is added (within
 * d) or skipped, and the walk resumes after it. So each key's value is min over its
 * prefixes p of OSA(q, p), as the definition says. */
static void wsub_typo(const locale_view *s, const wquery *q, unsigned d, uint64_t lo, uint64_t hi,
                      sg__top10 *top) {
  size_t n = q->ncp;
  wrow *rw = tl_rows;
  sg__osa_row r0;
  sg__osa_row0(&r0, n);
  rw[0].band = band_of(&r0);
  rw[0].cp = 0;
  rw[0].boff = 0;
  rw[0].best = (uint8_t)band_last(rw[0].band, 0, n);
  const char *prev = NULL;
  uint32_t dv = 0; /* rows 0 .. dv hold the path of prev */
  unsigned L = 0;  /* bytes key i shares with prev (255: 255 or more, count them) */
  for (uint64_t i = lo; i < hi;) {
    const char *t = key_text(s, i);
    uint32_t r = 0;
    if (prev) {
      if (L >= 255) {
        L = 0;
        while (L < rw[dv].boff && t[L] == prev[L]) L++;
      }
      r = dv;
      while (r > 0 && rw[r].boff > L) r--;
    }
    const char *p = t + rw[r].boff;
    bool ended = false;
    for (;;) {
      unsigned mn = band_min(rw[r].band, r, n);
      if (r > 0 && (mn > d || mn >= rw[r].best)) break;
      uint32_t cp;
      size_t l = sg__utf8_next(p, &cp);
      if (l == 0 || r + 1 >= WMAXD) {
        ended = true;
        break;
      }
      p += l;
      r++;
      rw[r].band =
          band_step(rw[r - 1].band, r >= 2 ? &rw[r - 2].band : NULL, r, cp, rw[r - 1].cp, q->cp, n);
      rw[r].cp = cp;
      rw[r].boff = rw[r - 1].boff + (uint32_t)l;
      unsigned last = band_last(rw[r].band, r, n);
      rw[r].best = (uint8_t)(last < rw[r - 1].best ? last : rw[r - 1].best);
    }
    prev = t;
    dv = r;
    /* The run: this key alone when it ended, else every key sharing its first r code
     * points (B bytes), read from the LCP bytes; m ends as what the next key shares. */
    uint32_t B = ended ? UINT32_MAX : rw[r].boff;
    uint64_t j = i + 1;
    unsigned m = 255;
    for (; j < hi; j++) {
      unsigned lb = s->lcp[j];
      if (lb < m) m = lb;
      if (m < B && m < 255) break;
      if (m == 255 && B > 255 && (ended || strncmp(key_text(s, j), t, B) != 0)) break;
    }
    if (rw[r].best <= d) add_range(s, i, j, (uint64_t)rw[r].best << SG__EDITS_SHIFT, top);
    L = m;
    i = j;
  }
}

/* The filtered query over an indexed subtree: the exact matches from its prefix range,
 * then tiers 3 and 4 from the ranges that can hold them, then typos, each step only
 * while the ten found so far can still be beaten. */
static void wsub_query(const locale_view *v, const locale_view *s, const wquery *q, const char *nq,
                       size_t len, sg__top10 *top) {
  uint64_t lo, hi;
  sg__prefix_range(s, nq, len, &lo, &hi);
  add_range(s, lo, hi, 0, top);
  if (top->n == SG_BUCKET_ITEMS) return; /* ten zero-edit matches of tiers 0-2 */
  if (v->cand_start) {
    sg__qwords qw;
    sg__qwords_parse(nq, len, &qw);
    if (qw.m) wsub_tier3(v, s, &qw, nq, len, top);
    if (sg__t4_applies(nq, len)) wsub_tier4(v, s, nq, len, top);
  }
  if (q->k == 0 || len == 0 || q->ncp == 0) return;
  uint32_t c0;
  char head[8] = {0};
  memcpy(head, nq, len < 4 ? len : 4);
  size_t l0 = sg__utf8_next(head, &c0);
  if (l0 == 0) return;
  sg__prefix_range(s, nq, l0, &lo, &hi);
  for (unsigned d = 1; d <= q->k && top->n < SG_BUCKET_ITEMS; d++)
    if (lo < hi) wsub_typo(s, q, d, lo, hi, top);
}

void sg_artifact_query_within(const sg_artifact *a, int loc, const char *nq, size_t len, unsigned k,
                              const sg_within *w, sg_query_result *res) {
  res->n = 0;
  if (loc < 0 || (uint32_t)loc >= a->n_locales) loc = (int)a->def;
  const locale_view *v = &a->loc[loc];
  if (w->mode == 0 || memchr(nq, '\0', len)) return;
  if (k > SG_TYPO_MAX_K) k = SG_TYPO_MAX_K;
  wquery q = {nq, len, k, tl_qcp, 0};
  if (k) {
    /* decode: normalised text is valid UTF-8 of at most SG_TYPO_MAX_Q code points */
    char buf[8] = {0};
    for (size_t i = 0; i < len && q.ncp < SG_TYPO_MAX_Q;) {
      size_t m = len - i < 4 ? len - i : 4;
      memcpy(buf, nq + i, m);
      buf[m] = '\0';
      uint32_t cp;
      size_t l = sg__utf8_next(buf, &cp);
      if (!l) break;
      tl_qcp[q.ncp++] = cp;
      i += l;
    }
  }
  sg__top10 top = {{0}, 0};
  uint64_t lo, hi;
  sg__prefix_range(v, nq, len, &lo, &hi);
  locale_view sub;

  if (w->mode == 2) { /* format 5: every key is a candidate; the fragment decides */
    /* Exact matches first, from their range: ten of them end the search. */
    for (uint64_t i = lo; i < hi; i++) {
      uint32_t x = sg__rd32(v->keys + i * SG__KEY_SIZE + 4), ord = x & SG__KEY_ORD_MASK;
      uint64_t val = (uint64_t)(x >> SG__KEY_TIER_SHIFT) << 32 | ord;
      if (top.n == SG_BUCKET_ITEMS && val >= top.v[SG_BUCKET_ITEMS - 1]) continue;
      if (fragment_within(a, v, ord, w)) sg__top10_add(&top, val);
    }
    if (k && top.n < SG_BUCKET_ITEMS)
      for (uint64_t i = 0; i < v->n_keys; i++) {
        const unsigned char *r = v->keys + i * SG__KEY_SIZE;
        uint32_t x = sg__rd32(r + 4), ord = x & SG__KEY_ORD_MASK;
        sg__top10 t1 = {{0}, 0};
        consider(&q, v->text + sg__rd32(r), NULL, x >> SG__KEY_TIER_SHIFT, ord, &t1);
        if (t1.n && fragment_within(a, v, ord, w)) sg__top10_add(&top, t1.v[0]);
      }
  } else if (v->w_refs && v->ws_recs && wsub_view(v, w->lo - 1, &sub)) {
    wsub_query(v, &sub, &q, nq, len, &top);
  } else if (v->w_refs) {
    /* Tiers 3 and 4 (docs/DESIGN.md §3.3) of every member, when the query can match at them. */
    sg__qwords qw;
    sg__qwords_parse(nq, len, &qw);
    bool t4 = sg__t4_applies(nq, len), words = v->cand_start && (qw.m || t4);
    uint32_t r0 = sg__rd32(v->w_kstart + 4 * (uint64_t)w->lo);
    uint32_t r1 = sg__rd32(v->w_kstart + 4 * (uint64_t)w->hi);
    if (hi - lo < (uint64_t)(r1 - r0)) {
      /* Fewer exact matches in the whole list than candidates in the subtree. */
      for (uint64_t i = lo; i < hi; i++) {
        uint32_t x = sg__rd32(v->keys + i * SG__KEY_SIZE + 4), ord = x & SG__KEY_ORD_MASK;
        uint32_t p = sg__rd32(v->w_ord2pre + 4 * (uint64_t)ord);
        if (p >= w->lo && p < w->hi)
          sg__top10_add(&top, (uint64_t)(x >> SG__KEY_TIER_SHIFT) << 32 | ord);
      }
      if (top.n == SG_BUCKET_ITEMS || (k == 0 && !words)) goto out;
    }
    for (uint32_t p = w->lo; p < w->hi; p++) {
      uint32_t e0 = sg__rd32(v->w_kstart + 4 * (uint64_t)p);
      uint32_t e1 = sg__rd32(v->w_kstart + 4 * (uint64_t)p + 4);
      if (e0 == e1) continue;
      uint32_t ord = sg__rd32(v->w_pre2ord + 4 * (uint64_t)p);
      for (uint32_t e = e0; e < e1; e++) {
        const unsigned char *r = v->w_refs + (uint64_t)e * SG__WREF_SIZE;
        consider(&q, v->text + sg__rd32(r), r + 5, r[4], ord, &top);
      }
      if (words) sg__words_item(v, ord, &qw, t4, nq, len, &top);
    }
  }
out:
  for (uint32_t j = 0; j < top.n; j++) {
    const unsigned char *f = v->fragidx + (uint64_t)(uint32_t)top.v[j] * SG__FRAGIDX_SIZE;
    res->items[j].json = a->frags + sg__rd32(f);
    res->items[j].len = sg__rd32(f + 4);
    res->items[j].edits = (uint8_t)(top.v[j] >> SG__EDITS_SHIFT);
    res->items[j].tier = (uint8_t)(top.v[j] >> 32 & 0xff);
  }
  res->n = top.n;
}
