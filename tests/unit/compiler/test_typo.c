/*
 * Typo tolerance at its edges (src/compiler/typo.c, docs/DESIGN.md §3.1 and §3.2): the
 * budget at exactly 4 and 8 code points, transpositions, the first code point, spaces,
 * code points rather than bytes, the shortest prefix, and the normaliser's offset map.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compiler/normalize.h"
#include "compiler/typo.h"
#include "search/bruteforce.h"

#define INF (SG_TYPO_MAX_K + 1)

static size_t to_cps(const char *s, uint32_t *out) {
  size_t n = 0;
  for (const char *p = s; *p;) {
    uint32_t cp;
    p += sg__utf8_next(p, &cp);
    out[n++] = cp;
  }
  return n;
}

/* edits(q, t) and the shortest prefix length (code points). */
static unsigned ed(const char *q, const char *t, size_t *plen) {
  uint32_t qc[256];
  size_t n = to_cps(q, qc);
  size_t pl = 999;
  unsigned e = sg_typo_edits(qc, n, t, &pl);
  if (plen) *plen = pl;
  return e;
}

static void test_budget_at_exactly_4_and_8(void **state) {
  (void)state;
  sg_typo_policy p = SG_TYPO_POLICY_DEFAULT;
  assert_int_equal(sg_typo_budget(&p, 3), 0);
  assert_int_equal(sg_typo_budget(&p, 4), 1);
  assert_int_equal(sg_typo_budget(&p, 7), 1);
  assert_int_equal(sg_typo_budget(&p, 8), 2);
  assert_int_equal(sg_typo_budget(&p, 255), 2);
  sg_typo_policy off = {0, 4, 8};
  assert_int_equal(sg_typo_budget(&off, 100), 0);
  sg_typo_policy one = {1, 1, 1};
  assert_int_equal(sg_typo_budget(&one, 1), 2);
  sg_typo_policy never_two = {1, 2, 255};
  assert_int_equal(sg_typo_budget(&never_two, 1), 0);
  assert_int_equal(sg_typo_budget(&never_two, 2), 1);
  assert_int_equal(sg_typo_budget(&never_two, 254), 1);
  assert_int_equal(sg_typo_budget(&never_two, 255), 2);
}

static void test_transpositions(void **state) {
  (void)state;
  size_t pl;
  assert_int_equal(ed("acbd", "abcd", &pl), 1); /* one swap, not two substitutions */
  assert_int_equal(pl, 4);
  assert_int_equal(ed("parsi", "paris", &pl), 1);
  assert_int_equal(pl, 4); /* "pari": the shortest prefix at distance 1 */
  assert_int_equal(ed("new yrok", "new york", &pl), 1);
  assert_int_equal(pl, 8);
  /* Two swaps. */
  assert_int_equal(ed("bcaedf", "bacdef", NULL), 2);
  /* OSA, not Damerau: a swapped pair is not edited again ("ca" -> "abc" is 3 in OSA,
   * 2 in Damerau-Levenshtein); sgt_osa is the brute force's full table. */
  const unsigned ca[] = {'c', 'a'}, abc[] = {'a', 'b', 'c'};
  assert_int_equal(sgt_osa(ca, 2, abc, 3), 3);
}

static void test_first_code_point_must_match(void **state) {
  (void)state;
  assert_int_equal(ed("bacd", "abcd", NULL), INF); /* a swap at the start is not allowed */
  assert_int_equal(ed("oaris", "paris", NULL), INF);
  assert_int_equal(ed("aris", "paris", NULL), INF);    /* nor a deletion of the first */
  assert_int_equal(ed("éclair", "eclair", NULL), INF); /* code points, after normalising */
  assert_int_equal(ed("p", "", NULL), INF);
  assert_int_equal(ed("", "paris", NULL), INF);
  assert_int_equal(ed("p", "paris", NULL), 0);
}

static void test_spaces_count_as_code_points(void **state) {
  (void)state;
  size_t pl;
  assert_int_equal(ed("newyork", "new york", &pl), 1);
  assert_int_equal(pl, 8);
  assert_int_equal(ed("new york", "newyork", &pl), 1);
  assert_int_equal(ed("new  york", "new york", NULL), 1);
  assert_int_equal(ed("san jose", "sanjose", NULL), 1);
}

static void test_code_points_not_bytes(void **state) {
  (void)state;
  size_t pl;
  assert_int_equal(ed("cafe", "café", &pl), 1); /* é is 2 bytes, 1 substitution */
  assert_int_equal(ed("東京都x", "東京", &pl), 2);
  assert_int_equal(ed("東京都", "東京", &pl), 1);
  assert_int_equal(pl, 2);
  assert_int_equal(ed("😀ab", "😀ba", &pl), 1); /* a swap next to a non-BMP code point */
}

static void test_prefixes_and_saturation(void **state) {
  (void)state;
  size_t pl;
  assert_int_equal(ed("pari", "paris", &pl), 0);
  assert_int_equal(pl, 4);
  assert_int_equal(ed("parisx", "paris", &pl), 1); /* a prefix longer than t: one extra */
  assert_int_equal(ed("parisxyz", "paris", NULL), INF);
  assert_int_equal(ed("abcdefgh", "abxdexgh", NULL), 2);
  assert_int_equal(ed("abcdefgh", "axcxexgh", NULL), INF);
}

/* The banded DP equals the full OSA table on every prefix, over random strings. */
static void test_band_matches_full_table(void **state) {
  (void)state;
  uint64_t st = 7;
  static const char *const alpha[] = {"a", "b", "c", " ", "é"};
  for (int round = 0; round < 20000; round++) {
    char q[64] = "", t[64] = "";
    st = st * 6364136223846793005ULL + 1442695040888963407ULL;
    size_t nq = 1 + (st >> 33) % 7, nt = (st >> 40) % 9;
    for (size_t i = 0; i < nq; i++) {
      st = st * 6364136223846793005ULL + 1;
      strcat(q, alpha[(st >> 33) % 5]);
    }
    for (size_t i = 0; i < nt; i++) {
      st = st * 6364136223846793005ULL + 1;
      strcat(t, alpha[(st >> 33) % 5]);
    }
    uint32_t qc[64], tc[64];
    size_t n = to_cps(q, qc), m = to_cps(t, tc);
    unsigned want = INF;
    size_t want_pl = 0;
    if (m > 0 && tc[0] == qc[0])
      for (size_t p = 0; p <= m; p++) {
        unsigned d = sgt_osa((const unsigned *)tc, p, (const unsigned *)qc, n);
        if (d < want) {
          want = d;
          want_pl = p;
        }
      }
    if (want > INF) want = INF;
    size_t pl = 0;
    unsigned got = sg_typo_edits(qc, n, t, &pl);
    if (got != want || (want < INF && pl != want_pl))
      fail_msg("q [%s] t [%s]: got %u (prefix %zu), want %u (prefix %zu)", q, t, got, pl, want,
               want_pl);
  }
}

/* The offset map: each normalised code point -> the UTF-16 range of its characters. */
/* The SSE2 inner step of sg__osa_step against the scalar recurrence, cell for cell, on
 * random rows (any cells 0..SG__CAP) and queries over a small alphabet (so that
 * diagonals and swaps match often), for every row i whose band lies inside q. */
static void test_osa_step_inner_rows(void **state) {
  (void)state;
#if defined(__SSE2__) && SG_TYPO_MAX_K == 2
  uint64_t x = 88172645463325252ull;
#define RND() (x ^= x << 13, x ^= x >> 7, x ^= x << 17, x)
  for (int round = 0; round < 200000; round++) {
    uint32_t q[16];
    size_t n = 6 + RND() % 10;
    uint32_t alpha = 1 + (uint32_t)(RND() % 4);
    for (size_t j = 0; j < n; j++) q[j] = 'a' + (uint32_t)(RND() % alpha);
    size_t i = SG_TYPO_MAX_K + 2 + RND() % (n - SG_TYPO_MAX_K - 2 + 1 - SG_TYPO_MAX_K);
    sg__osa_row prev, prev2, got, want;
    for (size_t b = 0; b < SG__BAND; b++) {
      prev.c[b] = (uint8_t)(RND() % (SG__CAP + 1));
      prev2.c[b] = (uint8_t)(RND() % (SG__CAP + 1));
    }
    uint32_t t_i = 'a' + (uint32_t)(RND() % (alpha + 1));
    uint32_t t_im1 = 'a' + (uint32_t)(RND() % (alpha + 1));
    sg__osa_step_sse2(&got, &prev, &prev2, t_i, t_im1, q + i - SG_TYPO_MAX_K - 2);
    unsigned left = SG__CAP;
    for (size_t b = 0; b < SG__BAND; b++) {
      size_t j = i - SG_TYPO_MAX_K + b;
      unsigned v = prev.c[b] + (t_i != q[j - 1]);
      unsigned up = b + 1 < SG__BAND ? prev.c[b + 1] + 1u : SG__CAP;
      if (up < v) v = up;
      if (left + 1u < v) v = left + 1u;
      if (t_i == q[j - 2] && t_im1 == q[j - 1] && prev2.c[b] + 1u < v) v = prev2.c[b] + 1u;
      v = v < SG__CAP ? v : SG__CAP;
      want.c[b] = (uint8_t)v;
      left = v;
    }
    assert_memory_equal(got.c, want.c, SG__BAND);
  }
#undef RND
#else
  skip();
#endif
}

/* sg__osa_step_pad, for every row i from 1 to n + 2 (the band's edges included),
 * against the bounded scalar recurrence, on random rows whose cells outside [0, n] are
 * SG__CAP (as every computed row has them) and random queries over a small alphabet. */
static void test_osa_step_pad_all_rows(void **state) {
  (void)state;
  uint64_t x = 0x9E3779B97F4A7C15ull;
#define RND() (x ^= x << 13, x ^= x >> 7, x ^= x << 17, x)
  for (int round = 0; round < 200000; round++) {
    uint32_t qp[4 + 16 + 4];
    size_t n = 1 + RND() % 12;
    uint32_t alpha = 1 + (uint32_t)(RND() % 4);
    for (size_t j = 0; j < sizeof qp / sizeof *qp; j++) qp[j] = SG__Q_NONE;
    const uint32_t *q = qp + 4;
    for (size_t j = 0; j < n; j++) qp[4 + j] = 'a' + (uint32_t)(RND() % alpha);
    size_t i = 1 + RND() % (n + 2);
    sg__osa_row prev, prev2, got, want;
    for (size_t b = 0; b < SG__BAND; b++) {
      long jp = (long)i - 1 - SG_TYPO_MAX_K + (long)b, jp2 = jp - 1;
      prev.c[b] = (uint8_t)(jp < 0 || (size_t)jp > n ? SG__CAP : RND() % (SG__CAP + 1));
      prev2.c[b] = (uint8_t)(jp2 < 0 || (size_t)jp2 > n ? SG__CAP : RND() % (SG__CAP + 1));
    }
    uint32_t t_i = 'a' + (uint32_t)(RND() % (alpha + 1));
    uint32_t t_im1 = i >= 2 ? 'a' + (uint32_t)(RND() % (alpha + 1)) : 0;
    const sg__osa_row *p2 = i >= 2 ? &prev2 : NULL;
    sg__osa_step_pad(&got, &prev, p2, i, t_i, t_im1, q, n);
    for (size_t b = 0; b < SG__BAND; b++) {
      long j = (long)i - SG_TYPO_MAX_K + (long)b;
      if (j < 0 || (size_t)j > n) {
        want.c[b] = SG__CAP;
        continue;
      }
      if (j == 0) {
        want.c[b] = (uint8_t)(i < SG__CAP ? i : SG__CAP);
        continue;
      }
      unsigned v = prev.c[b] + (t_i != q[j - 1]);
      unsigned up = b + 1 < SG__BAND ? prev.c[b + 1] + 1u : SG__CAP;
      unsigned left = b > 0 ? want.c[b - 1] + 1u : SG__CAP;
      if (up < v) v = up;
      if (left < v) v = left;
      if (p2 && j >= 2 && t_i == q[j - 2] && t_im1 == q[j - 1] && prev2.c[b] + 1u < v)
        v = prev2.c[b] + 1u;
      want.c[b] = (uint8_t)(v < SG__CAP ? v : SG__CAP);
    }
    assert_memory_equal(got.c, want.c, SG__BAND);
  }
#undef RND
}

static void check_map(const char *in, const char *want_norm, const uint32_t *want, size_t n) {
  char out[256];
  uint32_t map[512];
  size_t ncp = 0;
  long r = sg_normalize_map(in, strlen(in), out, sizeof out, map, 256, &ncp);
  assert_true(r >= 0);
  assert_string_equal(out, want_norm);
  char plain[256];
  assert_int_equal(sg_normalize_into(in, strlen(in), plain, sizeof plain), r);
  assert_string_equal(out, plain);
  assert_int_equal(ncp, n);
  for (size_t k = 0; k < n; k++) {
    if (map[2 * k] != want[2 * k] || map[2 * k + 1] != want[2 * k + 1])
      fail_msg("[%s] code point %zu: got [%u,%u) want [%u,%u)", in, k, map[2 * k], map[2 * k + 1],
               want[2 * k], want[2 * k + 1]);
  }
}

static void test_offset_map(void **state) {
  (void)state;
  check_map("  Ab--c!", "ab c", (const uint32_t[]){2, 3, 3, 4, 4, 6, 6, 7}, 4);
  /* A decomposed accent joins its letter; a precomposed one is one character. */
  check_map("Cafe\xcc\x81 x", "cafe x", (const uint32_t[]){0, 1, 1, 2, 2, 3, 3, 5, 5, 6, 6, 7}, 6);
  check_map("Jùa", "jua", (const uint32_t[]){0, 1, 1, 2, 2, 3}, 3);
  /* Non-BMP: two UTF-16 code units. */
  check_map("\xf0\x9d\x90\x80lp", "alp", (const uint32_t[]){0, 2, 2, 3, 3, 4}, 3);
  check_map("\xf0\x9f\x98\x80 Smile", "smile", (const uint32_t[]){3, 4, 4, 5, 5, 6, 6, 7, 7, 8}, 5);
  /* One character to several code points: both come from it. */
  check_map("Stra\xc3\x9f"
            "e",
            "strasse", (const uint32_t[]){0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 4, 5, 5, 6}, 7);
  check_map("\xef\xac\x81re", "fire", (const uint32_t[]){0, 1, 0, 1, 1, 2, 2, 3}, 4);
  /* Hangul jamo compose into one syllable covering both. */
  check_map("\xe1\x84\x80\xe1\x85\xa1", "\xea\xb0\x80", (const uint32_t[]){0, 2}, 1);
}

static void test_highlight(void **state) {
  (void)state;
  uint32_t h[16];
  /* Tier 0 "pari" for "parsi" on "Paris". */
  assert_int_equal(sg_typo_highlight("Paris", 5, "parsi", 5, 1, 0, h, 8), 1);
  assert_int_equal(h[0], 0);
  assert_int_equal(h[1], 4);
  /* Tier 2 at the first later word at the item's distance. */
  assert_int_equal(sg_typo_highlight("Le Pari Fou", 11, "pari", 4, 0, 2, h, 8), 1);
  assert_int_equal(h[0], 3);
  assert_int_equal(h[1], 7);
  /* Tier 1, and tier 2 reached only through an alias: nothing. */
  assert_int_equal(sg_typo_highlight("Paris", 5, "lut", 3, 0, 1, h, 8), 0);
  assert_int_equal(sg_typo_highlight("Paris Nord", 10, "lut", 3, 0, 2, h, 8), 0);
  /* A prefix ending on a space covers the run of non-letters it stands for. */
  assert_int_equal(sg_typo_highlight("abc -- yz", 9, "abc x", 5, 1, 0, h, 8), 1);
  assert_int_equal(h[0], 0);
  assert_int_equal(h[1], 7);
}

/* Exact answers with an ASCII query take a byte comparison instead of the DP; it must
 * give what the DP gives, including for a non-ASCII displayValue (UTF-16 offsets), a
 * later word, and a candidate that does not start with q. */
static void test_highlight_exact(void **state) {
  (void)state;
  uint32_t h[16];
  assert_int_equal(sg_typo_highlight("Foo-Bar baz", 11, "foo b", 5, 0, 0, h, 8), 1);
  assert_int_equal(h[0], 0);
  assert_int_equal(h[1], 5);
  /* "𝐀" is two UTF-16 code units and normalises to "a". */
  assert_int_equal(sg_typo_highlight("\xf0\x9d\x90\x80lpha", 8, "alp", 3, 0, 0, h, 8), 1);
  assert_int_equal(h[0], 0);
  assert_int_equal(h[1], 4);
  assert_int_equal(sg_typo_highlight("Le Paris Paris", 14, "paris", 5, 0, 2, h, 8), 1);
  assert_int_equal(h[0], 3);
  assert_int_equal(h[1], 8);
  assert_int_equal(sg_typo_highlight("Paris", 5, "pariz", 5, 0, 0, h, 8), 0);
  assert_int_equal(sg_typo_highlight("Pa", 2, "par", 3, 0, 0, h, 8), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_budget_at_exactly_4_and_8),
      cmocka_unit_test(test_transpositions),
      cmocka_unit_test(test_first_code_point_must_match),
      cmocka_unit_test(test_spaces_count_as_code_points),
      cmocka_unit_test(test_code_points_not_bytes),
      cmocka_unit_test(test_prefixes_and_saturation),
      cmocka_unit_test(test_band_matches_full_table),
      cmocka_unit_test(test_osa_step_inner_rows),
      cmocka_unit_test(test_osa_step_pad_all_rows),
      cmocka_unit_test(test_offset_map),
      cmocka_unit_test(test_highlight),
      cmocka_unit_test(test_highlight_exact),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
