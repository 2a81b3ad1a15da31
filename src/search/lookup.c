/*
 * The exact lookup of docs/DESIGN.md §3 over an opened artifact: the keys having the
 * query as a prefix are one range of the sorted keys, answered from its bucket or a scan
 * of at most T keys (docs/ARTIFACT.md, "Lookup and why it is exact"); then, with a typo
 * budget and fewer than 10 exact items, the typo search (typo_search.c).
 */
#include <stdint.h>
#include <string.h>

#include "search/internal.h"

/* Compares the key's first min(len, qlen) bytes with q, a key shorter than q and equal
 * to its start comparing below; a key that q is a prefix of compares equal, which is
 * what both range ends need. q holds no NUL, so strncmp stops exactly at the key's
 * terminating NUL (inside the text section, checked at open). */
static inline int cmp_key_prefix(const locale_view *v, uint64_t i, const char *q, size_t qlen) {
  const char *k = v->text + sg__rd32(v->keys + i * SG__KEY_SIZE);
  /* Most probes of a binary search differ in the first byte: decide those inline. */
  if (*k != *q) return (unsigned char)*k < (unsigned char)*q ? -1 : 1;
  return strncmp(k, q, qlen);
}

/* The keys having nq[0..len) as a prefix, [*plo, *phi) (empty when none, at a position
 * no caller reads). The trie walks nq's leading code points down to the node of the
 * longest run of them that has one: every key starting with nq is among that node's
 * keys, all of them when the run is nq itself. Where the walk stops at a code point that
 * no key of the node has next (the node's next mask), no key starts with nq. Otherwise
 * the search runs among the keys between the node's two children around that code point
 * (or among all the node's keys, when nq is malformed there): every key outside them
 * sorts on the same side of nq as all of them, sorted UTF-8 being sorted by code point.
 * One search narrows [lo, hi) until a key that starts with nq is met; then lo is the
 * first such key at or before it, and hi the first key after it that does not start with
 * nq. Probes that land outside the range on either side shrink both searches. A code
 * point is walked only when all its bytes are in nq and it is well formed. Returns the
 * trie node whose keys the range is, when the walk named it (else 0). */
uint32_t sg__prefix_range_dead(const locale_view *v, const char *nq, size_t len, uint64_t *plo,
                               uint64_t *phi, size_t *dead) {
  uint64_t lo = 0, hi = v->n_keys;
  if (dead) *dead = SIZE_MAX;
  if (v->n_trie && len) {
    uint32_t x = 0, cp = 0, nch = 0, first = 0, b = 0;
    size_t i = 0, l = 0;
    while (i < len && (l = sg__cp_in(nq, len, i, &cp))) {
      nch = sg__trie_rd(v, x, SG__T_N);
      first = sg__trie_rd(v, x, SG__T_FIRST);
      b = sg__trie_lower(v, first, nch, cp);
      if (b == nch || sg__trie_rd(v, first + b, SG__T_CP) != cp) break; /* no child for cp */
      x = first + b;
      i += l;
    }
    uint32_t tlo, thi;
    sg__trie_span(v, x, &tlo, &thi);
    if (i == len) { /* the node's keys are the ones starting with nq */
      *plo = tlo;
      *phi = thi;
      return x;
    }
    if (l && !(sg__trie_next(v, x) & sg__cp_bit(cp))) { /* none continues with cp */
      /* No key starts with nq[0..i + l): x's prefix and cp. */
      if (dead) *dead = i + l;
      *plo = *phi = tlo;
      return 0;
    }
    lo = tlo;
    hi = thi;
    if (l) sg__trie_gap(v, x, first, nch, b, &lo, &hi); /* cp's keys, in no node */
  }
  for (; len;) { /* an empty nq is a prefix of every key: the whole range */
    if (lo >= hi) break;
    uint64_t mid = lo + (hi - lo) / 2;
    int c = cmp_key_prefix(v, mid, nq, len);
    if (c < 0) {
      lo = mid + 1;
    } else if (c > 0) {
      hi = mid;
    } else {
      uint64_t b = mid; /* lower bound in [lo, mid] */
      while (lo < b) {
        uint64_t m = lo + (b - lo) / 2;
        if (cmp_key_prefix(v, m, nq, len) < 0)
          lo = m + 1;
        else
          b = m;
      }
      uint64_t e = mid + 1; /* upper bound in [mid + 1, hi] */
      while (e < hi) {
        uint64_t m = e + (hi - e) / 2;
        if (cmp_key_prefix(v, m, nq, len) <= 0)
          e = m + 1;
        else
          hi = m;
      }
      break;
    }
  }
  *plo = lo;
  *phi = lo < hi ? hi : lo;
  if (dead && lo >= hi) *dead = len;
  return 0;
}

/* Adds the best 10 distinct items of the key range [lo, hi) (a range some prefix selects)
 * to top, each valued base | tier << 32 | ordinal. */
void sg__range_top(const sg_artifact *a, const locale_view *v, uint64_t lo, uint64_t hi,
                   uint64_t base, sg__top10 *top) {
  const unsigned char *bucket = NULL;
  if (hi - lo > a->threshold) {
    /* Buckets are sorted by (lo asc, hi desc); find exactly [lo, hi). */
    uint64_t b = 0, e = v->n_buckets;
    while (b < e) {
      uint64_t mid = b + (e - b) / 2;
      const unsigned char *r = v->buckets + mid * SG__BUCKET_SIZE;
      uint32_t rlo = sg__rd32(r), rhi = sg__rd32(r + 4);
      if (rlo < lo || (rlo == lo && rhi > hi))
        b = mid + 1;
      else
        e = mid;
    }
    if (b < v->n_buckets) {
      const unsigned char *r = v->buckets + b * SG__BUCKET_SIZE;
      if (sg__rd32(r) == lo && sg__rd32(r + 4) == hi) bucket = r;
    }
  }
  if (bucket) {
    uint32_t n = sg__rd32(bucket + 8);
    if (top->n == 0) { /* the common case: already the answer, in order */
      for (uint32_t j = 0; j < n; j++) {
        uint32_t w = sg__rd32(bucket + 12 + 4 * j);
        top->v[j] = base | (uint64_t)(w >> SG__KEY_TIER_SHIFT) << 32 | (w & SG__KEY_ORD_MASK);
      }
      top->n = n;
      return;
    }
    for (uint32_t j = 0; j < n; j++) {
      uint32_t w = sg__rd32(bucket + 12 + 4 * j);
      sg__top10_add(top, base | (uint64_t)(w >> SG__KEY_TIER_SHIFT) << 32 | (w & SG__KEY_ORD_MASK));
    }
    return;
  }
  /* At most T keys by construction (a larger range always has a bucket); on a corrupted
   * file this is still correct, just slower. */
  for (uint64_t i = lo; i < hi; i++) {
    uint32_t w = sg__rd32(v->keys + i * SG__KEY_SIZE + 4);
    sg__top10_add(top, base | (uint64_t)(w >> SG__KEY_TIER_SHIFT) << 32 | (w & SG__KEY_ORD_MASK));
  }
}

void sg_artifact_query_k(const sg_artifact *a, int loc, const char *nq, size_t len, unsigned k,
                         sg_query_result *res) {
  res->n = 0;
  if (loc < 0 || (uint32_t)loc >= a->n_locales) loc = (int)a->def;
  const locale_view *v = &a->loc[loc];
  /* No key contains a NUL, so a query with one matches nothing. */
  if (memchr(nq, '\0', len)) return;
  sg__top10 top = {{0}, 0};
  uint64_t lo, hi;
  size_t dead;
  sg__prefix_range_dead(v, nq, len, &lo, &hi, &dead);
  if (lo < hi) sg__range_top(a, v, lo, hi, 0, &top);
  /* Tiers 3 and 4 (zero edits, after tiers 0-2): whether or not typos are allowed. */
  if (v->cand_start || v->runon) sg__words_search(a, v, nq, len, dead, &top);
  /* Zero edits beat any typo: ten exact matches are the answer. */
  if (k > 0 && top.n < SG_BUCKET_ITEMS && len > 0) sg__typo_search(a, v, nq, len, k, &top);
  for (uint32_t j = 0; j < top.n; j++) {
    const unsigned char *f = v->fragidx + (uint64_t)(uint32_t)top.v[j] * SG__FRAGIDX_SIZE;
    res->items[j].json = a->frags + sg__rd32(f);
    res->items[j].len = sg__rd32(f + 4);
    res->items[j].edits = (uint8_t)(top.v[j] >> SG__EDITS_SHIFT);
    res->items[j].tier = (uint8_t)(top.v[j] >> 32 & 0xff);
  }
  res->n = top.n;
}

void sg_artifact_query(const sg_artifact *a, int loc, const char *nq, size_t len,
                       sg_query_result *res) {
  sg_artifact_query_k(a, loc, nq, len, 0, res);
}
