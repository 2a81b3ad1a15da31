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
  if (e >= 1 && e <= q->k) sg__top10_add(top, (uint64_t)e << SG__EDITS_SHIFT | (v & ~(1ull << SG__EDITS_SHIFT)));
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

void sg_artifact_query_within(const sg_artifact *a, int loc, const char *nq, size_t len,
                              unsigned k, const sg_within *w, sg_query_result *res) {
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
  } else if (v->w_refs) {
    /* Tiers 3 and 4 (DESIGN §3.3) of every member, when the query can match at them. */
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
