/*
 * Typo tolerance (docs/DESIGN.md §3.1) and highlighting (section 3.2).
 *
 * The distance is optimal string alignment (Levenshtein plus the swap of two adjacent
 * code points) between the query q and a prefix p of a text t, minimised over p. A row i
 * of the DP holds D[i][j] = OSA(t[0..i), q[0..j)) for every j; D[i][n] is the distance of
 * q to the prefix of i code points, so edits(q, t) = min over i of D[i][n]. Budgets are at
 * most 2, so only the band |i - j| <= 2 matters (a cell outside it is at least |i - j|)
 * and cells saturate at 3: a row is five bytes.
 *
 * No row has a cell below the least cell of the row before it (each recurrence term,
 * the swap included, is at least a cell of the previous row), which is what lets the
 * search drop a whole subtree of keys once a row's least cell passes the budget.
 */
#include "compiler/typo.h"

#include <stdbool.h>
#include <string.h>

#include "compiler/normalize.h"
#include "compiler/words.h"

#define CAP SG__CAP

unsigned sg_typo_edits(const uint32_t *q, size_t n, const char *t, size_t *plen) {
  uint32_t c0;
  size_t l0 = sg__utf8_next(t, &c0);
  if (n == 0 || l0 == 0 || c0 != q[0]) return CAP;
  sg__osa_row r[3];
  sg__osa_row0(&r[0], n);
  unsigned best = sg__osa_last(&r[0], 0, n);
  size_t best_i = 0;
  uint32_t prev_cp = 0;
  size_t i = 0;
  for (const char *p = t;;) {
    uint32_t cp;
    size_t l = sg__utf8_next(p, &cp);
    if (l == 0) break;
    p += l;
    i++;
    sg__osa_step(&r[i % 3], &r[(i - 1) % 3], i >= 2 ? &r[(i - 2) % 3] : NULL, i, cp, prev_cp, q, n);
    prev_cp = cp;
    unsigned last = sg__osa_last(&r[i % 3], i, n);
    if (last < best) {
      best = last;
      best_i = i;
    }
    if (sg__osa_min(&r[i % 3], i, n) >= best) break; /* nothing deeper is smaller */
  }
  if (plen) *plen = best_i;
  return best;
}

/* Decodes NUL-free UTF-8 s[0..len) into at most max code points; returns the count or
 * (size_t)-1 when it does not fit. */
static size_t decode(const char *s, size_t len, uint32_t *out, size_t max, char *nul_copy) {
  memcpy(nul_copy, s, len);
  nul_copy[len] = '\0';
  size_t n = 0;
  for (const char *p = nul_copy;;) {
    uint32_t cp;
    size_t l = sg__utf8_next(p, &cp);
    if (l == 0) break;
    if (n == max) return (size_t)-1;
    out[n++] = cp;
    p += l;
  }
  return n;
}

/* The displayValue cap (512 bytes) bounds the normalised text far below this; a longer
 * one gets no highlight rather than an allocation. */
#define HL_MAX_BYTES 8192
#define HL_MAX_CP 2048

/* True when q[0..len) is non-empty ASCII without a NUL. */
static bool ascii_query(const char *q, size_t len) {
  if (len == 0 || len > HL_MAX_CP) return false;
  for (size_t i = 0; i < len; i++)
    if ((unsigned char)q[i] - 1u >= 0x7Fu) return false;
  return true;
}

/* Adds the UTF-16 ranges of normalised code points [from, to) (map of ncp pairs) to
 * out[0..*np) (kept sorted by start), merging ranges that touch or overlap. */
static void add_range(const uint32_t *map, size_t ncp, size_t from, size_t to, uint32_t *out,
                      size_t *np, size_t max) {
  for (size_t k = from; k < to && k < ncp; k++) {
    uint32_t a = map[2 * k], b = map[2 * k + 1];
    size_t i = 0;
    while (i < *np && out[2 * i] <= a) i++;
    /* Merge with the pair before (start <= a) when it reaches a. */
    if (i > 0 && a <= out[2 * i - 1]) {
      if (b > out[2 * i - 1]) out[2 * i - 1] = b;
      i--;
    } else {
      if (*np == max) continue;
      memmove(out + 2 * i + 2, out + 2 * i, (*np - i) * 2 * sizeof *out);
      out[2 * i] = a;
      out[2 * i + 1] = b;
      (*np)++;
    }
    /* The pair at i may now reach the ones after it. */
    while (i + 1 < *np && out[2 * i + 2] <= out[2 * i + 1]) {
      if (out[2 * i + 3] > out[2 * i + 1]) out[2 * i + 1] = out[2 * i + 3];
      memmove(out + 2 * i + 2, out + 2 * i + 4, (*np - i - 2) * 2 * sizeof *out);
      (*np)--;
    }
  }
}

/* Tiers 3 and 4 (docs/DESIGN.md §3.3) on the normalised displayValue norm[0..nl): the
 * words of the lexicographically smallest assignment, or the run from the start through
 * the last matched code point; 0 pairs when the displayValue does not match (the item
 * matched through an alias). */
static long words_highlight(const char *norm, size_t nl, const uint32_t *map, size_t ncp,
                            const char *nq, size_t qlen, unsigned tier, uint32_t *out, size_t max) {
  size_t np = 0;
  if (tier == 3) {
    sg__qwords q;
    sg__qwords_parse(nq, qlen, &q);
    size_t st[SG_T3_MAX_WORDS], ln[SG_T3_MAX_WORDS];
    if (!sg__t3_assign(norm, nl, &q, st, ln)) return 0;
    for (size_t i = 0; i < q.m; i++) add_range(map, ncp, st[i], st[i] + ln[i], out, &np, max);
  } else {
    size_t end = 0;
    if (!sg__t4_applies(nq, qlen) || !sg__t4_match(norm, nq, qlen, &end)) return 0;
    add_range(map, ncp, 0, end + 1, out, &np, max);
  }
  return (long)np;
}

long sg_typo_highlight(const char *dv, size_t dvlen, const char *nq, size_t qlen, unsigned edits,
                       unsigned tier, uint32_t *out, size_t max) {
  if (tier == 1 || tier > 4 || edits > SG_TYPO_MAX_K || qlen >= HL_MAX_BYTES) return 0;
  static _Thread_local char norm[HL_MAX_BYTES];
  static _Thread_local uint32_t map[2 * HL_MAX_CP];
  static _Thread_local uint32_t q[HL_MAX_CP];
  size_t ncp = 0;
  long nl = sg_normalize_map(dv, dvlen, norm, sizeof norm, map, HL_MAX_CP, &ncp);
  if (nl == -1) return -1;
  if (nl < 0) return 0;
  if (tier >= 3)
    return edits ? 0 : words_highlight(norm, (size_t)nl, map, ncp, nq, qlen, tier, out, max);
  /* Candidates: the whole text for tier 0; for tier 2 each later word, left to right,
   * the first whose distance is the item's. */
  size_t start_cp = 0, plen = 0;
  int found = 0;
  size_t cpi = 0;
  /* Distance 0 to a prefix means the candidate's first code points are q's, and the
   * shortest such prefix is q itself. For an ASCII q against valid UTF-8 (the normalised
   * text) that is a byte comparison: no decoding and no DP for an exact answer. */
  bool bytes = edits == 0 && ascii_query(nq, qlen);
  size_t n = qlen;
  if (!bytes) {
    /* q into code points (the query buffer is reused as its NUL-terminated copy). */
    static _Thread_local char qcopy[HL_MAX_BYTES];
    n = decode(nq, qlen, q, HL_MAX_CP, qcopy);
    if (n == (size_t)-1 || n == 0) return 0;
  }
  for (const char *p = norm; *p && !found;) {
    int word_start = (tier == 0 && p == norm) || (tier == 2 && p != norm && p[-1] == ' ');
    if (word_start) {
      size_t pl = n;
      if (bytes ? strncmp(p, nq, qlen) == 0 : sg_typo_edits(q, n, p, &pl) == edits) {
        start_cp = cpi;
        plen = pl;
        found = 1;
      }
      if (tier == 0) break;
    }
    uint32_t cp;
    p += sg__utf8_next(p, &cp);
    cpi++;
  }
  if (!found || plen == 0) return 0;
  /* The union of the characters' ranges, merged where they touch or overlap. */
  size_t np = 0;
  for (size_t k = start_cp; k < start_cp + plen && k < ncp; k++) {
    uint32_t a = map[2 * k], b = map[2 * k + 1];
    if (np > 0 && a <= out[2 * np - 1]) {
      if (b > out[2 * np - 1]) out[2 * np - 1] = b;
      continue;
    }
    if (np == max) break;
    out[2 * np] = a;
    out[2 * np + 1] = b;
    np++;
  }
  return (long)np;
}
