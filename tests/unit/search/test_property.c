/*
 * THE property: for random lists and thousands of queries, sg_artifact_query returns
 * exactly what the brute-force reading of docs/DESIGN.md §3-3.4 returns (bruteforce.c),
 * in every locale. Queries are every byte prefix of random keys (whole normalised texts
 * and their word suffixes), random normalised strings, and the empty string.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bruteforce.h"
#include "compiler/normalize.h"
#include "compiler/format.h"
#include "compiler/typo.h"
#include "randlist.h"
#include "search/artifact.h"
#include "typocheck.h"

static size_t g_queries, g_nonempty;

static sgt_typo_stats g_typo, g_within;

/* The filters by ancestor (docs/DESIGN.md §3.5) every query is also compared under: each a
 * brute force restricted to the item's descendants (set by run_one per locale). */
#define MAX_W 4
static const char *g_w_id[MAX_W];
static sgt_bf *g_w_bf[MAX_W];
static size_t g_n_w;
/* Every query is compared unfiltered; one in WITHIN_EVERY also under each filter (the
 * filtered comparisons, four per query, dominated the test's time). */
#define WITHIN_EVERY 4
static size_t g_w_tick;
static bool within_turn(void) { return g_w_tick++ % WITHIN_EVERY == 0; }

static void check_within(const sg_artifact *art, int loc, const sgt_list *l, const char *nq,
                         size_t len, unsigned k, uint64_t seed) {
  if (!within_turn()) return;
  for (size_t w = 0; w < g_n_w; w++)
    if (sgt_check_within(art, loc, g_w_bf[w], l->items, nq, len, k, g_w_id[w], &g_within)) {
      fprintf(stderr, "seed %llu\n", (unsigned long long)seed);
      fail();
    }
}

static void check_query_k(const sg_artifact *art, int loc, const sgt_bf *bf, const sgt_list *l,
                          const char *nq, size_t len, unsigned k, uint64_t seed) {
  if (sgt_check_typo(art, loc, bf, l->items, nq, len, k, &g_typo)) {
    fprintf(stderr, "seed %llu\n", (unsigned long long)seed);
    fail();
  }
  check_within(art, loc, l, nq, len, k, seed);
}

/* A random policy's budget for a query of n code points (section 3.1). */
static unsigned random_budget(uint64_t *st, size_t n) {
  static const sg_typo_policy pols[] = {{1, 4, 8}, {1, 4, 8}, {1, 1, 1},  {1, 2, 5},
                                        {1, 3, 3}, {0, 4, 8}, {1, 6, 255}};
  sg_typo_policy p = pols[sgt_rand_below(st, sizeof pols / sizeof *pols)];
  return sg_typo_budget(&p, n);
}

static size_t cp_len(const char *s, size_t len) {
  size_t n = 0;
  for (size_t i = 0; i < len; i++) n += ((unsigned char)s[i] >> 6) != 2;
  return n;
}

/* Typo queries from text: random edits of random prefixes of it and of its word
 * suffixes, with random policies, and the unedited prefix under a budget too. */
static void typo_queries(const sg_artifact *art, int loc, const sgt_bf *bf, const sgt_list *l,
                         const char *text, uint64_t *st, uint64_t seed, size_t count) {
  char *nt;
  size_t nl;
  assert_int_equal(sg_normalize(text, strlen(text), &nt, &nl), 0);
  for (size_t c = 0; c < count && nl > 0; c++) {
    size_t start = 0;
    if (sgt_rand_below(st, 3) == 0) { /* a later word */
      size_t pick = sgt_rand_below(st, nl);
      while (pick > 0 && nt[pick - 1] != ' ') pick--;
      start = pick;
    }
    size_t plen = 1 + sgt_rand_below(st, nl - start);
    while (start + plen < nl && ((unsigned char)nt[start + plen] >> 6) == 2) plen++;
    char q[2400];
    size_t ql = sgt_random_edits(nt + start, plen, st, q, sizeof q);
    if (ql == 0) continue;
    check_query_k(art, loc, bf, l, q, ql, random_budget(st, cp_len(q, ql)), seed);
    check_query_k(art, loc, bf, l, nt + start, plen, random_budget(st, cp_len(nt + start, plen)),
                  seed);
  }
  free(nt);
}

/* Queries for tiers 3 and 4 (section 3.3) from text: shuffled words with the last one
 * cut short, prefixes with spaces removed or added; each under a random policy (typos
 * never apply to these tiers, but may compete with them) and without typos. */
static void words_queries(const sg_artifact *art, int loc, const sgt_bf *bf, const sgt_list *l,
                          const char *text, uint64_t *st, uint64_t seed, size_t count) {
  char *nt;
  size_t nl;
  assert_int_equal(sg_normalize(text, strlen(text), &nt, &nl), 0);
  for (size_t c = 0; c < count && nl > 0; c++) {
    char q[2400];
    size_t ql = sgt_words_query(nt, nl, st, q, sizeof q);
    if (ql == 0) continue;
    check_query_k(art, loc, bf, l, q, ql, random_budget(st, cp_len(q, ql)), seed);
    check_query_k(art, loc, bf, l, q, ql, 0, seed);
  }
  free(nt);
}

/* Compares one query; on a difference prints both answers and fails. */
static void check_query(const sg_artifact *art, int loc, const sgt_bf *bf, const sgt_list *l,
                        const char *nq, size_t len, uint64_t seed) {
  /* Filtered (docs/DESIGN.md §3.5): byte prefixes, as the unfiltered comparison below. */
  for (size_t w = 0, turn = within_turn(); turn && w < g_n_w; w++) {
    size_t want[10];
    size_t nw = sgt_bf_query(g_w_bf[w], nq, len, want);
    sg_query_result got = {.n = 0};
    sg_within wi;
    if (sg_artifact_within(art, g_w_id[w], strlen(g_w_id[w]), &wi) == 0)
      sg_artifact_query_within(art, loc, nq, len, 0, &wi, &got);
    g_within.queries++;
    if (nw) g_within.nonempty++;
    int same = got.n == nw;
    for (size_t i = 0; same && i < nw; i++) {
      char id[64];
      same = sgt_fragment_id(got.items[i].json, got.items[i].len, id, sizeof id) == 0 &&
             strcmp(id, l->items[want[i]].id) == 0 && got.items[i].edits == 0;
    }
    if (!same) {
      fprintf(stderr, "seed %llu locale %d within %s query [%.*s]: want %zu items, got %zu\n",
              (unsigned long long)seed, loc, g_w_id[w], (int)len, nq, nw, got.n);
      for (size_t i = 0; i < nw; i++) fprintf(stderr, "  want %s\n", l->items[want[i]].id);
      for (size_t i = 0; i < got.n; i++)
        fprintf(stderr, "  got  %.*s\n", (int)got.items[i].len, got.items[i].json);
      fail();
    }
  }
  size_t want[10];
  size_t nw = sgt_bf_query(bf, nq, len, want);
  sg_query_result got;
  sg_artifact_query(art, loc, nq, len, &got);
  g_queries++;
  if (nw) g_nonempty++;
  int same = got.n == nw;
  for (size_t i = 0; same && i < nw; i++) {
    char id[64];
    same = sgt_fragment_id(got.items[i].json, got.items[i].len, id, sizeof id) == 0 &&
           strcmp(id, l->items[want[i]].id) == 0;
    /* The fragment shows the locale's display value. */
    char dv[600];
    snprintf(dv, sizeof dv, "\"displayValue\":\"%s\"", sgt_bf_display(bf, want[i]));
    if (same && !memmem(got.items[i].json, got.items[i].len, dv, strlen(dv))) same = 0;
  }
  if (!same) {
    fprintf(stderr, "seed %llu locale %d query [%.*s]: want %zu items, got %zu\n",
            (unsigned long long)seed, loc, (int)len, nq, nw, got.n);
    for (size_t i = 0; i < nw; i++) fprintf(stderr, "  want %s\n", l->items[want[i]].id);
    for (size_t i = 0; i < got.n; i++)
      fprintf(stderr, "  got  %.*s\n", (int)got.items[i].len, got.items[i].json);
    fail();
  }
}

static void all_prefixes(const sg_artifact *art, int loc, const sgt_bf *bf, const sgt_list *l,
                         const char *text, uint64_t seed) {
  char *nt;
  size_t nl;
  assert_int_equal(sg_normalize(text, strlen(text), &nt, &nl), 0);
  /* Every byte prefix of the text and of each of its word suffixes. */
  for (size_t start = 0; start < nl; start++) {
    if (start > 0 && nt[start - 1] != ' ') continue;
    for (size_t k = 1; k <= nl - start; k++) check_query(art, loc, bf, l, nt + start, k, seed);
  }
  free(nt);
}

/* Synonym sets for run_one (docs/DESIGN.md §3.4): none unless g_syn_sets > 0, then that
 * many random sets drawn from the list's vocabulary, so their phrases occur in its texts. */
static size_t g_syn_sets;
static sg_synonym_set g_syn[16];
static const char *g_syn_phrases[16][4];

static void random_synonyms(sgt_list *l, uint64_t seed) {
  uint64_t st = seed ^ 0x5a5a;
  for (size_t i = 0; i < g_syn_sets; i++) {
    int one_way = sgt_rand_below(&st, 3) == 0;
    size_t np = (one_way ? 1 : 2) + sgt_rand_below(&st, 3);
    for (size_t j = 0; j < np; j++) g_syn_phrases[i][j] = sgt_list_text(l, &st, 2);
    g_syn[i] = (sg_synonym_set){one_way ? sgt_list_text(l, &st, 2) : NULL, g_syn_phrases[i], np};
  }
}

static void run_one(size_t n, uint64_t seed, size_t n_texts, size_t typo_per_text) {
  sgt_list l;
  sgt_list_gen(&l, n, seed);
  random_synonyms(&l, seed);
  sg_compile_opts opts = {"en", sgt_locales, 3, 0};
  sg_validation_errors errs = {0};
  assert_int_equal(sg_validate(l.items, l.n, &opts, &errs), 0);
  sg_validation_errors_free(&errs);
  sg_buf out;
  sg_buf_init(&out, 0);
  /* Half the lists index every subtree holding a key (SG__EXT_WSUB, as many as its size
   * budget takes, the largest first), so the filter's two searches, the index's and the
   * scan of the members, are both compared with the brute force. */
  sg__wsub_min_refs = seed & 1 ? 1 : SG__WSUB_MIN_REFS;
  assert_int_equal(sg_compile_synonyms(l.items, l.n, &opts, g_syn, g_syn_sets, &out), 0);
  sg__wsub_min_refs = SG__WSUB_MIN_REFS;
  sg_artifact *art;
  assert_int_equal(sg_artifact_open_mem(out.data, out.len, &art), 0);
  assert_int_equal(sg_artifact_item_count(art), n);
  uint64_t st = seed ^ 0x5eed;
  for (int loc = 0; loc < 3; loc++) {
    const char *tag;
    assert_int_equal(sg_artifact_resolve_locale(art, sgt_locales[loc], &tag), loc);
    sgt_bf *bf = sgt_bf_new(l.items, l.n, sgt_locales[loc]);
    assert_non_null(bf);
    assert_int_equal(sgt_bf_add_synonyms(bf, g_syn, g_syn_sets), 0);
    /* Ancestors to filter by: the parent of a random item that has one (two of them),
     * a random item (often a leaf: no descendants), and an id the list does not hold. */
    g_n_w = 0;
    for (size_t w = 0; w < MAX_W; w++) {
      const char *id = "itm_absentAbsentAbsent000";
      if (w < 2 && n) {
        for (size_t tries = 0; tries < 20; tries++) {
          const sg_compile_item *it = &l.items[sgt_rand_below(&st, n)];
          if (it->parent_id) {
            id = it->parent_id;
            /* the second: its root, the largest subtree around */
            for (size_t up = 0; w == 1 && up < n; up++) {
              size_t j = 0;
              while (j < n && strcmp(l.items[j].id, id) != 0) j++;
              if (j == n || !l.items[j].parent_id) break;
              id = l.items[j].parent_id;
            }
            break;
          }
        }
      } else if (w == 2 && n) {
        id = l.items[sgt_rand_below(&st, n)].id;
      }
      sgt_bf *wb = sgt_bf_new(l.items, l.n, sgt_locales[loc]);
      assert_non_null(wb);
      assert_int_equal(sgt_bf_add_synonyms(wb, g_syn, g_syn_sets), 0);
      sgt_bf_set_within(wb, id);
      g_w_id[g_n_w] = id;
      g_w_bf[g_n_w++] = wb;
    }
    check_query(art, loc, bf, &l, "", 0, seed);
    /* Every prefix of every phrase: what reaches items through their synonym aliases. */
    for (size_t i = 0; i < g_syn_sets; i++) {
      for (size_t j = 0; j < g_syn[i].n_phrases; j++)
        all_prefixes(art, loc, bf, &l, g_syn[i].phrases[j], seed);
      if (g_syn[i].input) all_prefixes(art, loc, bf, &l, g_syn[i].input, seed);
    }
    for (size_t q = 0; q < n_texts && n; q++) {
      const sg_compile_item *it = &l.items[sgt_rand_below(&st, n)];
      const char *text = it->display_value;
      if (it->n_aliases && sgt_rand_below(&st, 2))
        text = it->aliases[sgt_rand_below(&st, it->n_aliases)];
      for (size_t k = 0; k < it->n_locales; k++)
        if (strcmp(it->locales[k].locale, sgt_locales[loc]) == 0 && it->locales[k].display_value)
          text = it->locales[k].display_value;
      all_prefixes(art, loc, bf, &l, text, seed);
      typo_queries(art, loc, bf, &l, text, &st, seed, typo_per_text);
      words_queries(art, loc, bf, &l, text, &st, seed, typo_per_text + 2);
      /* A random text, most of which match nothing or only partially. */
      const char *r = sgt_list_text(&l, &st, 3);
      char nq[1024];
      long nl = sg_normalize_into(r, strlen(r), nq, sizeof nq);
      assert_true(nl >= 0);
      check_query(art, loc, bf, &l, nq, (size_t)nl, seed);
      if (nl > 2) check_query(art, loc, bf, &l, nq, (size_t)nl - 1, seed);
    }
    sgt_bf_free(bf);
    for (size_t w = 0; w < g_n_w; w++) sgt_bf_free(g_w_bf[w]);
    g_n_w = 0;
  }
  sg_artifact_close(art);
  sg_buf_free(&out);
  sgt_list_free(&l);
}

static void test_small_lists(void **state) {
  (void)state;
  for (uint64_t seed = 1; seed <= 60; seed++) run_one(seed % 7, seed, 10, 6);
}

static void test_medium_lists(void **state) {
  (void)state;
  for (uint64_t seed = 100; seed < 112; seed++) run_one(40 + seed * 7 % 200, seed, 60, 4);
}

/* Random lists with random synonym sets: the compiled synonym aliases against the brute
 * force's, through every tier and typo query the other tests make. */
static void test_synonym_lists(void **state) {
  (void)state;
  for (uint64_t seed = 300; seed < 340; seed++) {
    g_syn_sets = 1 + seed % 12;
    run_one(seed % 9 + (seed % 4 == 0 ? 120 : 0), seed, 10, 3);
  }
  g_syn_sets = 0;
}

static void test_large_lists(void **state) {
  (void)state;
  run_one(1500, 4242, 120, 2);
  run_one(3000, 777, 80, 1);
  fprintf(stderr, "property: %zu queries compared (%zu with matches), 0 differences\n", g_queries,
          g_nonempty);
  fprintf(stderr,
          "within property: %zu filtered queries compared (%zu with matches, %zu items with "
          "edits), 0 differences\n",
          g_within.queries, g_within.nonempty, g_within.fuzzy_items);
  fprintf(stderr,
          "typo property: %zu queries compared (%zu with matches, %zu items with edits), 0 "
          "differences in items, order, keys and highlights (%zu items at tier 3, %zu at tier "
          "4)\n",
          g_typo.queries, g_typo.nonempty, g_typo.fuzzy_items, g_typo.tier3_items,
          g_typo.tier4_items);
  assert_true(g_typo.tier3_items > 100 && g_typo.tier4_items > 100);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_small_lists),
      cmocka_unit_test(test_medium_lists),
      cmocka_unit_test(test_synonym_lists),
      cmocka_unit_test(test_large_lists),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
