/*
 * In-process latency of the filter by ancestor (docs/DESIGN.md §3.5, `within=ITEM_ID`) on
 * the GeoNames cities with their countries as parents, and a checksum of every answer
 * (so two builds can be shown to answer the same):
 *
 *   within_bench [--items .cache/datasets/cities.jsonl] [--rounds 3] [--cities 6]
 *                [--seed 24] [--slowest N] [--unfiltered 0]
 *
 * The list: every city, plus one item per country (the code after the last ", " of the
 * value, "itm_countryXX"), each city the child of its country: the hierarchy of
 * tests/unit/search/test_cities.c, compiled in-process (sg_compile). The mix: for every
 * country as ancestor, --cities of its own cities (drawn with a fixed seed), every prefix
 * of 1 to 8 code points of each, and a one- and a two-edit variant of each prefix (random
 * insert, delete, substitute or swap of code points). Per query: sg_normalize_into,
 * sg_artifact_within (the id lookup, as the runtime does per request) and
 * sg_artifact_query_within with the default policy's typo budget. Each query is timed in
 * every round and its best round kept (the shared machine's noise is one-sided).
 * Prints one JSON object: the distribution over the whole mix, over the queries whose
 * ancestor is one of the 5 largest countries; the same filtered queries on the same list
 * compiled without the subtree index (SG__EXT_WSUB: the search then visits every member
 * of the ancestor, as before the index; "scan"), interleaved per query, with its own
 * checksum, which must equal the indexed one; the same queries without the filter
 * (sg_artifact_query_k) for reference; the artifacts' sizes and compile times; with
 * --slowest N also the N slowest filtered queries on stderr (--unfiltered 0 leaves the
 * reference out, for a profile of the filter alone).
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/buf.h"
#include "compiler/compiler.h"
#include "compiler/format.h"
#include "compiler/normalize.h"
#include "compiler/typo.h"
#include "search/artifact.h"

#include "bench_time.h"

static uint64_t rnd(uint64_t *s) { /* splitmix64 */
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Code point boundaries of s[0..len): starts of each code point into at[], count. */
static size_t cps(const char *s, size_t len, size_t *at, size_t cap) {
  size_t n = 0;
  for (size_t i = 0; i < len && n < cap; i++)
    if (((unsigned char)s[i] >> 6) != 2) at[n++] = i;
  return n;
}

/* One random edit of code points of q[0..ql) into out (at most cap - 1 bytes); its length. */
static size_t edit1(const char *q, size_t ql, uint64_t *st, char *out, size_t cap) {
  size_t at[64];
  size_t n = cps(q, ql, at, 63);
  at[n] = ql;
  if (n == 0 || ql + 8 > cap) return 0;
  size_t i = rnd(st) % n, o = 0;
  char c = (char)('a' + rnd(st) % 26);
  switch (rnd(st) % 4) {
  case 0: /* insert before code point i */
    memcpy(out, q, at[i]);
    o = at[i];
    out[o++] = c;
    memcpy(out + o, q + at[i], ql - at[i]);
    o += ql - at[i];
    break;
  case 1: /* delete code point i (never the only one) */
    if (n == 1) return edit1(q, ql, st, out, cap);
    memcpy(out, q, at[i]);
    o = at[i];
    memcpy(out + o, q + at[i + 1], ql - at[i + 1]);
    o += ql - at[i + 1];
    break;
  case 2: /* substitute code point i */
    memcpy(out, q, at[i]);
    o = at[i];
    out[o++] = c;
    memcpy(out + o, q + at[i + 1], ql - at[i + 1]);
    o += ql - at[i + 1];
    break;
  default: /* swap code points i and i + 1 */
    if (i + 1 >= n) return edit1(q, ql, st, out, cap);
    memcpy(out, q, at[i]);
    o = at[i];
    memcpy(out + o, q + at[i + 1], at[i + 2] - at[i + 1]);
    o += at[i + 2] - at[i + 1];
    memcpy(out + o, q + at[i], at[i + 1] - at[i]);
    o += at[i + 1] - at[i];
    memcpy(out + o, q + at[i + 2], ql - at[i + 2]);
    o += ql - at[i + 2];
    break;
  }
  return o;
}

typedef struct {
  char *q;      /* raw query */
  uint32_t cty; /* country index */
} wq;

static char (*codes)[3];
static sg_typo_policy pol = SG_TYPO_POLICY_DEFAULT;

/* Answers query x (filtered when within), folds the answer into *sum. */
static void answer(const sg_artifact *a, const wq *x, int within, unsigned long long *sum) {
  char nb[1024];
  long nl = sg_normalize_into(x->q, strlen(x->q), nb, sizeof nb);
  size_t len = nl > 0 ? (size_t)nl : 0, ncp = 0;
  for (size_t i = 0; i < len; i++) ncp += ((unsigned char)nb[i] & 0xC0) != 0x80;
  unsigned k = sg_typo_budget(&pol, ncp);
  sg_query_result r;
  if (within) {
    char id[32];
    int il = snprintf(id, sizeof id, "itm_country%s", codes[x->cty]);
    sg_within w;
    if (sg_artifact_within(a, id, (size_t)il, &w) == 0)
      sg_artifact_query_within(a, 0, nb, len, k, &w, &r);
    else
      r.n = 0;
  } else {
    sg_artifact_query_k(a, 0, nb, len, k, &r);
  }
  unsigned long long h = r.n;
  for (size_t i = 0; i < r.n; i++) {
    for (uint32_t j = 0; j < r.items[i].len; j++)
      h = (h ^ (unsigned char)r.items[i].json[j]) * 1099511628211ULL;
    h = (h ^ (r.items[i].edits * 16u + r.items[i].tier)) * 1099511628211ULL;
  }
  *sum = *sum * 31 + h;
}

static void dist(const char *name, long long *t, size_t n) {
  qsort(t, n, sizeof *t, cmp_ll);
  if (n == 0) {
    printf("\"%s\":{\"n\":0}", name);
    return;
  }
  printf("\"%s\":{\"n\":%zu,\"median\":%lld,\"p99\":%lld,\"max\":%lld}", name, n, t[n / 2],
         t[n * 99 / 100], t[n - 1]);
}

int main(int argc, char **argv) {
  const char *path = ".cache/datasets/cities.jsonl";
  int rounds = 3, per = 6, slowest = 0, unfiltered = 1;
  uint64_t st = 24;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--items"))
      path = argv[i + 1];
    else if (!strcmp(argv[i], "--rounds"))
      rounds = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--cities"))
      per = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--unfiltered"))
      unfiltered = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--slowest"))
      slowest = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--seed"))
      st = strtoull(argv[i + 1], NULL, 10);
  }
  if (rounds < 1 || per < 1) {
    fprintf(stderr, "usage: within_bench [--items F] [--rounds N] [--cities N] [--seed S]\n");
    return 2;
  }
  FILE *f = fopen(path, "r");
  if (!f) {
    perror(path);
    return 1;
  }
  size_t cap = 1 << 18, n = 0, nc = 0;
  sg_compile_item *items = calloc(cap, sizeof *items);
  codes = calloc(1024, sizeof *codes);
  uint32_t *country = calloc(cap, sizeof *country);
  char *line = NULL;
  size_t lcap = 0;
  while (getline(&line, &lcap, f) > 0) {
    json_t *o = json_loads(line, 0, NULL);
    if (!o) continue;
    if (n + 1 >= cap) {
      items = realloc(items, (cap *= 2) * sizeof *items);
      country = realloc(country, cap * sizeof *country);
    }
    sg_compile_item *it = &items[n];
    memset(it, 0, sizeof *it);
    it->id = strdup(json_string_value(json_object_get(o, "id")));
    const char *v = json_string_value(json_object_get(o, "value"));
    it->value = strdup(v);
    json_t *dv = json_object_get(o, "displayValue");
    it->display_value = dv ? strdup(json_string_value(dv)) : it->value;
    it->rank = json_integer_value(json_object_get(o, "rank"));
    country[n] = UINT32_MAX;
    const char *c = strrchr(v, ',');
    if (c && strlen(c) == 4 && c[1] == ' ' && c[2] >= 'A' && c[2] <= 'Z' && c[3] >= 'A' &&
        c[3] <= 'Z') {
      size_t k = 0;
      while (k < nc && memcmp(codes[k], c + 2, 2) != 0) k++;
      if (k == nc && nc < 1024) memcpy(codes[nc++], c + 2, 2);
      if (k < nc) {
        char pid[32];
        snprintf(pid, sizeof pid, "itm_country%.2s", c + 2);
        it->parent_id = strdup(pid);
        country[n] = (uint32_t)k;
      }
    }
    n++;
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
    snprintf(id, sizeof id, "itm_country%s", codes[k]);
    snprintf(name, sizeof name, "Country %s", codes[k]);
    it->id = strdup(id);
    it->value = strdup(name);
    it->display_value = it->value;
    it->rank = 1;
  }
  const char *const locs[] = {"en"};
  sg_compile_opts opts = {"en", locs, 1, 0};
  sg_buf out;
  sg_buf_init(&out, 0);
  long long c0 = now_ns();
  if (sg_compile(items, n, &opts, &out) != 0) {
    fprintf(stderr, "compile failed\n");
    return 1;
  }
  long long compile_ns = now_ns() - c0;
  sg_artifact *a;
  if (sg_artifact_open_mem(out.data, out.len, &a) != 0) {
    fprintf(stderr, "open failed\n");
    return 1;
  }
  /* The same list without the subtree index (SG__EXT_WSUB): every filtered query visits
   * the ancestor's members, as before the index existed. */
  sg_buf out0;
  sg_buf_init(&out0, 0);
  sg__wsub_min_refs = UINT32_MAX;
  c0 = now_ns();
  if (sg_compile(items, n, &opts, &out0) != 0) {
    fprintf(stderr, "compile failed\n");
    return 1;
  }
  long long compile0_ns = now_ns() - c0;
  sg__wsub_min_refs = SG__WSUB_MIN_REFS;
  sg_artifact *a0;
  if (sg_artifact_open_mem(out0.data, out0.len, &a0) != 0) {
    fprintf(stderr, "open failed\n");
    return 1;
  }

  /* cities of each country, and the 5 largest countries */
  size_t *count = calloc(nc, sizeof *count), **of = calloc(nc, sizeof *of);
  for (size_t i = 0; i < n_cities; i++) {
    if (country[i] == UINT32_MAX) continue;
    size_t k = country[i];
    of[k] = realloc(of[k], (count[k] + 1) * sizeof **of);
    of[k][count[k]++] = i;
  }
  char *large = calloc(nc, 1);
  for (size_t k = 0; k < nc; k++) {
    size_t above = 0;
    for (size_t j = 0; j < nc; j++) above += count[j] > count[k];
    large[k] = above < 5;
  }
  /* the mix */
  size_t qn = 0, qcap = 1024;
  wq *qs = malloc(qcap * sizeof *qs);
  for (size_t k = 0; k < nc; k++) {
    for (int c = 0; c < per && count[k]; c++) {
      const sg_compile_item *it = &items[of[k][rnd(&st) % count[k]]];
      char *dv;
      size_t at[16], dl;
      if (sg_normalize(it->display_value, strlen(it->display_value), &dv, &dl) != 0) continue;
      size_t m = cps(dv, dl, at, 9);
      for (size_t p = 1; p <= m && p <= 8; p++) {
        size_t pl = p < m ? at[p] : dl;
        char e1[1100], e2[1100];
        size_t l1 = edit1(dv, pl, &st, e1, sizeof e1);
        size_t l2 = l1 ? edit1(e1, l1, &st, e2, sizeof e2) : 0;
        const char *v[3] = {dv, e1, e2};
        size_t vl[3] = {pl, l1, l2};
        for (int e = 0; e < 3; e++) {
          if (e && !vl[e]) continue;
          if (qn == qcap) qs = realloc(qs, (qcap *= 2) * sizeof *qs);
          qs[qn].q = strndup(v[e], vl[e]);
          qs[qn].cty = (uint32_t)k;
          qn++;
        }
      }
      free(dv);
    }
  }
  long long *tw = malloc(qn * sizeof *tw), *tu = malloc(qn * sizeof *tu);
  long long *ts = malloc(qn * sizeof *ts);
  for (size_t i = 0; i < qn; i++) tw[i] = tu[i] = ts[i] = -1;
  unsigned long long sum = 0, usum = 0, ssum = 0;
  { /* warm up: the id index is built on first use */
    unsigned long long s = 0;
    answer(a, &qs[0], 1, &s);
    answer(a0, &qs[0], 1, &s);
  }
  for (int r = 0; r < rounds; r++) {
    sum = usum = ssum = 0;
    for (size_t i = 0; i < qn; i++) {
      long long t0 = now_ns();
      answer(a, &qs[i], 1, &sum);
      long long d = now_ns() - t0;
      if (tw[i] < 0 || d < tw[i]) tw[i] = d;
      t0 = now_ns();
      answer(a0, &qs[i], 1, &ssum);
      d = now_ns() - t0;
      if (ts[i] < 0 || d < ts[i]) ts[i] = d;
      if (!unfiltered) continue;
      t0 = now_ns();
      answer(a, &qs[i], 0, &usum);
      d = now_ns() - t0;
      if (tu[i] < 0 || d < tu[i]) tu[i] = d;
    }
  }
  /* --slowest N: the N slowest filtered queries on stderr (country, its cities, query). */
  for (int j = 0; j < slowest; j++) {
    size_t w = 0;
    for (size_t i = 1; i < qn; i++)
      if (tw[i] > tw[w]) w = i;
    if (tw[w] < 0) break;
    fprintf(stderr, "%8lld ns  %s (%zu cities)  [%s]\n", tw[w], codes[qs[w].cty], count[qs[w].cty],
            qs[w].q);
    tw[w] = -tw[w] - 1;
  }
  for (size_t i = 0; i < qn; i++)
    if (tw[i] < 0) tw[i] = -tw[i] - 1;
  long long *tl = malloc(qn * sizeof *tl), *tsl = malloc(qn * sizeof *tsl);
  size_t nl = 0;
  for (size_t i = 0; i < qn; i++)
    if (large[qs[i].cty]) {
      tsl[nl] = ts[i];
      tl[nl++] = tw[i];
    }
  printf("{\"rounds\":%d,\"countries\":%zu,\"items\":%zu,\"queries\":%zu,"
         "\"artifactBytes\":%zu,\"compileMs\":%lld,\"scanArtifactBytes\":%zu,"
         "\"scanCompileMs\":%lld,",
         rounds, nc, n, qn, out.len, compile_ns / 1000000, out0.len, compile0_ns / 1000000);
  dist("withinNs", tw, qn);
  printf(",");
  dist("withinLargestNs", tl, nl);
  printf(",");
  dist("scanNs", ts, qn);
  printf(",");
  dist("scanLargestNs", tsl, nl);
  printf(",");
  if (unfiltered) {
    dist("unfilteredNs", tu, qn);
    printf(",");
  }
  printf("\"checksum\":\"%016llx\",\"scanChecksum\":\"%016llx\"", sum, ssum);
  if (unfiltered) printf(",\"unfilteredChecksum\":\"%016llx\"", usum);
  printf("}\n");
  sg_artifact_close(a0);
  sg_buf_free(&out0);
  free(ts);
  free(tsl);

  sg_artifact_close(a);
  sg_buf_free(&out);
  for (size_t i = 0; i < qn; i++) free(qs[i].q);
  free(qs);
  free(tw);
  free(tu);
  free(tl);
  for (size_t k = 0; k < nc; k++) free(of[k]);
  free(of);
  free(count);
  free(large);
  for (size_t i = 0; i < n; i++) {
    if (items[i].display_value != items[i].value) free((char *)items[i].display_value);
    free((char *)items[i].id);
    free((char *)items[i].value);
    free((char *)items[i].parent_id);
  }
  free(items);
  free(country);
  free(codes);
  return 0;
}
