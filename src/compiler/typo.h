/*
 * Typo tolerance of docs/DESIGN.md §3.1: the budget, the optimal-string-alignment (OSA)
 * distance of a query against the prefixes of a text, and the highlight of section 3.2.
 * Shared by the artifact's search (src/search/typo_search.c) and the runtime;
 * docs/ARTIFACT.md explains the readings of the definition.
 */
#ifndef SG_COMPILER_TYPO_H
#define SG_COMPILER_TYPO_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Budgets above 2 do not exist (docs/DESIGN.md §3.1). */
#define SG_TYPO_MAX_K 2
/* The DP keeps the cells |i - j| <= SG_TYPO_MAX_K of each row: outside that band a cell
 * is at least |i - j| and so over any budget. */
#define SG__BAND (2 * SG_TYPO_MAX_K + 1)
/* Longest normalised query, in code points, the search handles (a 255-code-point query
 * expands at most 18 times under NFKC). */
#define SG_TYPO_MAX_Q 4608

typedef struct {
  int enabled;          /* 0 or 1 */
  int min_one, min_two; /* 1 <= min_one <= min_two <= 255 */
} sg_typo_policy;

#define SG_TYPO_POLICY_DEFAULT ((sg_typo_policy){1, 4, 8})

/* The budget k for a normalised query of n code points. */
static inline unsigned sg_typo_budget(const sg_typo_policy *p, size_t n) {
  if (!p->enabled || n < (size_t)p->min_one) return 0;
  return n < (size_t)p->min_two ? 1 : 2;
}

/* Decodes one code point of NUL-terminated UTF-8 at s into *cp and returns its byte
 * length (0 at the NUL). A malformed sequence is one byte, decoded as 0x110000 + byte,
 * so the decoder never reads past a NUL and never fails. */
static inline size_t sg__utf8_next(const char *s, uint32_t *cp) {
  const unsigned char *u = (const unsigned char *)s;
  unsigned c = u[0];
  if (c < 0x80) {
    *cp = c;
    return c ? 1 : 0;
  }
  size_t n = c >= 0xF0 && c < 0xF5 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 1;
  if (n > 1) {
    uint32_t v = n == 2 ? c & 0x1F : n == 3 ? c & 0x0F : c & 0x07;
    size_t i = 1;
    for (; i < n && (u[i] & 0xC0) == 0x80; i++) v = v << 6 | (u[i] & 0x3F);
    if (i == n) {
      *cp = v;
      return n;
    }
  }
  *cp = 0x110000u + c;
  return 1;
}

/* One row of the banded OSA DP: cell b holds D[i][i - SG_TYPO_MAX_K + b], saturated at
 * SG_TYPO_MAX_K + 1. */
typedef struct {
  uint8_t c[SG__BAND];
} sg__osa_row;

#define SG__CAP (SG_TYPO_MAX_K + 1)

/* Row 0 (the empty prefix of t) for a query of n code points: D[0][j] = j. */
static inline void sg__osa_row0(sg__osa_row *r, size_t n) {
  for (size_t b = 0; b < SG__BAND; b++) {
    long j = (long)b - SG_TYPO_MAX_K;
    r->c[b] = (uint8_t)(j < 0 || (size_t)j > n ? SG__CAP : (j < SG__CAP ? j : SG__CAP));
  }
}

/* Row i >= 1 from rows i-1 (prev) and i-2 (prev2, NULL when i == 1), t's code points
 * t_i = t[i-1] and t_im1 = t[i-2]. q holds the n query code points. Cell b of row i is
 * column j = i - K + b; the same column is cell b + 1 of row i-1, column j - 1 is cell b
 * of row i-1 and cell b - 1 of row i, column j - 2 is cell b of row i-2. Inline: the
 * search computes one row per trie node it visits. */
#if defined(__SSE2__) && SG_TYPO_MAX_K == 2
/* The inner rows of sg__osa_step below (every column j of the band in [2, n]) with the
 * five cells in one SSE2 register; the same recurrence, term for term:
 * - diagonal prev[b] + (t_i != q[j - 1]), up prev[b + 1] + 1 (past the band: at least
 *   SG__CAP), swap prev2[b] + 1 where t_i = q[j - 2] and t_im1 = q[j - 1];
 * - the left term out[b - 1] + 1 chains along the row; unrolled, out[b] is the least
 *   of x[b'] + (b - b') over b' <= b (x the least of the three terms above), and a term
 *   with b - b' >= 3 = SG__CAP is never below the saturation, so two doubling steps
 *   (distances 1, then 2 and 3) give the row exactly.
 * qa = q + i - 4: qa[m] = q[j - 2] for cell b = m and q[j - 1] for cell b = m - 1. */
/* The diagonal, up and swap terms of the five cells, from rows i-1 (p) and i-2 (p2) as
 * packed bytes (cells past the band read as SG__CAP). */
static inline __m128i sg__osa_terms_sse2(uint64_t p, uint64_t p2, uint32_t t_i, uint32_t t_im1,
                                         const uint32_t *qa) {
  const __m128i one = _mm_set1_epi8(1);
  const __m128i P = _mm_set_epi64x(0x0303030303030303ll, (long long)p);
  const __m128i P2 = _mm_set_epi64x(0x0303030303030303ll, (long long)p2);
  const __m128i lo = _mm_loadu_si128((const __m128i *)(const void *)qa);
  const __m128i hi = _mm_set_epi32(0, 0, (int)qa[5], (int)qa[4]);
  const __m128i ti = _mm_set1_epi32((int)t_i), tm = _mm_set1_epi32((int)t_im1);
  const __m128i z = _mm_setzero_si128(), all = _mm_set1_epi8(-1);
  /* Byte m: 0xFF when t_i (e) or t_im1 (f) equals qa[m], m = 0..5. */
  const __m128i e =
      _mm_packs_epi16(_mm_packs_epi32(_mm_cmpeq_epi32(lo, ti), _mm_cmpeq_epi32(hi, ti)), z);
  const __m128i f =
      _mm_packs_epi16(_mm_packs_epi32(_mm_cmpeq_epi32(lo, tm), _mm_cmpeq_epi32(hi, tm)), z);
  /* diagonal: P + 1, less one where t_i = q[j - 1] (byte b + 1 of e) */
  __m128i x = _mm_add_epi8(_mm_add_epi8(P, one), _mm_srli_si128(e, 1));
  x = _mm_min_epu8(x, _mm_add_epi8(_mm_srli_si128(P, 1), one)); /* up */
  const __m128i sw = _mm_and_si128(e, _mm_srli_si128(f, 1));    /* swap possible */
  return _mm_min_epu8(x, _mm_or_si128(_mm_add_epi8(P2, one), _mm_andnot_si128(sw, all)));
}

/* The left terms chained along the row, as two doubling steps; the bytes shifted in
 * before cell 0 stand for no cell. */
static inline __m128i sg__osa_left_sse2(__m128i x) {
  const __m128i one = _mm_set1_epi8(1), two = _mm_set1_epi8(2);
  const __m128i first1 = _mm_setr_epi8(-1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
  const __m128i first2 = _mm_setr_epi8(-1, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
  x = _mm_min_epu8(x, _mm_adds_epu8(_mm_or_si128(_mm_slli_si128(x, 1), first1), one));
  return _mm_min_epu8(x, _mm_adds_epu8(_mm_or_si128(_mm_slli_si128(x, 2), first2), two));
}

/* A row's five cells as packed bytes (the other three SG__CAP). */
static inline uint64_t sg__osa_pack(const sg__osa_row *r) {
  uint64_t p = 0x0303030303030303ull; /* cells past the band: CAP */
  memcpy(&p, r->c, SG__BAND);
  return p;
}

static inline void sg__osa_step_sse2(sg__osa_row *out, const sg__osa_row *prev,
                                     const sg__osa_row *prev2, uint32_t t_i, uint32_t t_im1,
                                     const uint32_t *qa) {
  __m128i x = sg__osa_terms_sse2(sg__osa_pack(prev), sg__osa_pack(prev2), t_i, t_im1, qa);
  x = _mm_min_epu8(sg__osa_left_sse2(x), _mm_set1_epi8(SG__CAP));
  uint64_t o = (uint64_t)_mm_cvtsi128_si64(x);
  memcpy(out->c, &o, SG__BAND);
}
#endif

static inline void sg__osa_step(sg__osa_row *out, const sg__osa_row *prev, const sg__osa_row *prev2,
                                size_t i, uint32_t t_i, uint32_t t_im1, const uint32_t *q,
                                size_t n) {
#if defined(__SSE2__) && SG_TYPO_MAX_K == 2
  if (prev2 && i >= SG_TYPO_MAX_K + 2 && i + SG_TYPO_MAX_K <= n) {
    sg__osa_step_sse2(out, prev, prev2, t_i, t_im1, q + i - SG_TYPO_MAX_K - 2);
    return;
  }
#endif
  if (prev2 && i >= SG_TYPO_MAX_K + 2 && i + SG_TYPO_MAX_K <= n) {
    /* Every column j of the band is in [2, n]: the same recurrence without the bounds
     * checks (most rows of a long query). */
    const uint32_t *q1 = q + i - SG_TYPO_MAX_K - 1; /* q1[b] = q[j - 1], j = i - K + b */
    const uint32_t *q2 = q1 - 1;                    /* q2[b] = q[j - 2] */
    unsigned left = SG__CAP;
    for (size_t b = 0; b < SG__BAND; b++) {
      unsigned v = prev->c[b] + (t_i != q1[b]);
      unsigned up = b + 1 < SG__BAND ? prev->c[b + 1] + 1u : SG__CAP;
      if (up < v) v = up;
      if (left + 1u < v) v = left + 1u;
      if (t_i == q2[b] && t_im1 == q1[b] && prev2->c[b] + 1u < v) v = prev2->c[b] + 1u;
      v = v < SG__CAP ? v : SG__CAP;
      out->c[b] = (uint8_t)v;
      left = v;
    }
    return;
  }
  for (size_t b = 0; b < SG__BAND; b++) {
    long j = (long)i - SG_TYPO_MAX_K + (long)b;
    if (j < 0 || (size_t)j > n) {
      out->c[b] = SG__CAP;
      continue;
    }
    if (j == 0) {
      out->c[b] = (uint8_t)(i < SG__CAP ? i : SG__CAP);
      continue;
    }
    unsigned v = prev->c[b] + (t_i != q[j - 1]);
    unsigned up = b + 1 < SG__BAND ? prev->c[b + 1] + 1u : SG__CAP;
    unsigned left = b > 0 ? out->c[b - 1] + 1u : SG__CAP;
    if (up < v) v = up;
    if (left < v) v = left;
    if (prev2 && j >= 2 && t_i == q[j - 2] && t_im1 == q[j - 1] && prev2->c[b] + 1u < v)
      v = prev2->c[b] + 1u;
    out->c[b] = (uint8_t)(v < SG__CAP ? v : SG__CAP);
  }
}

/* A code point no text decodes to (sg__utf8_next gives at most 0x110000 + 0xFF). */
#define SG__Q_NONE UINT32_MAX

/* sg__osa_step for any row i >= 1, where qp[-4..-1] and qp[n], qp[n + 1] hold
 * SG__Q_NONE around q[0..n) (prev2 NULL for i == 1). With SSE2, the register step above
 * with the band's edges set as the bounded loop sets them: the sentinels equal no t_i,
 * so no diagonal or swap term uses a column outside q; before the left terms are
 * chained, a cell of a column j < 0 is SG__CAP and the cell of column 0 is min(i, CAP)
 * (what the loop stores there, and so what its right neighbour's left term reads);
 * after, the cells of columns j > n are SG__CAP. */
static inline void sg__osa_step_pad(sg__osa_row *out, const sg__osa_row *prev,
                                    const sg__osa_row *prev2, size_t i, uint32_t t_i,
                                    uint32_t t_im1, const uint32_t *qp, size_t n) {
#if defined(__SSE2__) && SG_TYPO_MAX_K == 2
  static const sg__osa_row none = {{SG__CAP, SG__CAP, SG__CAP, SG__CAP, SG__CAP}};
  const __m128i capv = _mm_set1_epi8(SG__CAP);
  __m128i x = sg__osa_terms_sse2(sg__osa_pack(prev), sg__osa_pack(prev2 ? prev2 : &none), t_i,
                                 t_im1, qp + i - SG_TYPO_MAX_K - 2);
  /* Cell b is column i - K + b: b0 = K - i is column 0 (a lane index, or out of the
   * band when i > K), bn = n + K - i column n. Both are clamped into [-1, 16]. */
  const __m128i lane = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  long b0 = (long)SG_TYPO_MAX_K - (long)i, bn = (long)n + SG_TYPO_MAX_K - (long)i;
  b0 = b0 < -1 ? -1 : b0;
  bn = bn > 16 ? 16 : bn < -1 ? -1 : bn;
  const __m128i B0 = _mm_set1_epi8((char)b0), BN = _mm_set1_epi8((char)bn);
  const __m128i before = _mm_cmpgt_epi8(B0, lane), at0 = _mm_cmpeq_epi8(B0, lane);
  x = _mm_or_si128(_mm_andnot_si128(before, x), _mm_and_si128(before, capv));
  const __m128i c0 = _mm_set1_epi8((char)(i < SG__CAP ? i : SG__CAP));
  x = sg__osa_left_sse2(_mm_or_si128(_mm_andnot_si128(at0, x), _mm_and_si128(at0, c0)));
  x = _mm_or_si128(x, _mm_cmpgt_epi8(lane, BN)); /* columns past n */
  x = _mm_min_epu8(x, capv);
  uint64_t o = (uint64_t)_mm_cvtsi128_si64(x);
  memcpy(out->c, &o, SG__BAND);
#else
  sg__osa_step(out, prev, prev2, i, t_i, t_im1, qp, n);
#endif
}

/* D[i][n] (the distance of q to the prefix of i code points), saturated. */
static inline unsigned sg__osa_last(const sg__osa_row *r, size_t i, size_t n) {
  if (n + SG_TYPO_MAX_K < i || i + SG_TYPO_MAX_K < n) return SG__CAP;
  return r->c[n + SG_TYPO_MAX_K - i];
}

/* The least cell of row i over j in [0, n]: no deeper row has a smaller cell. */
static inline unsigned sg__osa_min(const sg__osa_row *r, size_t i, size_t n) {
  unsigned m = SG__CAP;
  for (size_t b = 0; b < SG__BAND; b++) {
    long j = (long)i - SG_TYPO_MAX_K + (long)b;
    if (j >= 0 && (size_t)j <= n && r->c[b] < m) m = r->c[b];
  }
  return m;
}

/* edits(q, t) of section 3.1 for q[0..n) code points and NUL-terminated normalised t:
 * the least OSA distance of q to a prefix of t, capped at SG_TYPO_MAX_K + 1 (infinite
 * when the first code points differ or n == 0). *plen gets the code-point length of the
 * shortest prefix reaching it (when it is within the cap). */
unsigned sg_typo_edits(const uint32_t *q, size_t n, const char *t, size_t *plen);

/* The highlight of section 3.2 for an item returned with (edits, tier): pairs [start, end)
 * of UTF-16 offsets into its displayValue dv[0..dvlen) (raw UTF-8) covering the characters
 * whose normalisation forms the matched prefix. nq[0..qlen) is the normalised query. At
 * most max pairs are written to out (2 values each); returns their count, 0 for tier 1
 * or a tier-2, 3 or 4 match through an alias, -1 when dv does not normalise. Tiers 3 and
 * 4 (section 3.3, edits 0): the matched words of the lexicographically smallest
 * assignment, or from the start through the last matched character; touching or
 * overlapping ranges are merged and pairs sorted by start. Allocates only for
 * a displayValue whose decomposition passes SG_NORMALIZE_STACK_CP code points. */
long sg_typo_highlight(const char *dv, size_t dvlen, const char *nq, size_t qlen, unsigned edits,
                       unsigned tier, uint32_t *out, size_t max);

#endif
