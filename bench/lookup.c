/*
 * In-process lookup benchmark: normalise + sg_artifact_query for every prefix of the
 * display values of the N highest-ranked items of a JSONL file, against an artifact
 * compiled from it. Prints one JSON object: queries, median and p99 nanoseconds for the
 * lookup alone and for normalise + lookup.
 *
 *   bench/lookup ARTIFACT ITEMS.jsonl [N=2000]
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compiler/artifact.h"
#include "compiler/normalize.h"
#include "compiler/typo.h"

typedef struct {
  long long rank;
  char *dv;
} entry;

static int cmp_rank(const void *a, const void *b) {
  const entry *x = a, *y = b;
  return x->rank > y->rank ? -1 : x->rank < y->rank;
}

static int cmp_ll(const void *a, const void *b) {
  long long x = *(const long long *)a, y = *(const long long *)b;
  return x < y ? -1 : x > y;
}

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static uint64_t rng(uint64_t *st) {
  uint64_t z = (*st += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* Byte offsets of the code points of s[0..len) into starts (at most max), and len last. */
static size_t cp_starts(const char *s, size_t len, size_t *starts, size_t max) {
  size_t n = 0;
  for (size_t i = 0; i < len && n + 1 < max; i++)
    if (((unsigned char)s[i] & 0xC0) != 0x80) starts[n++] = i;
  starts[n] = len;
  return n;
}

/* One edit (insert, delete, substitute, swap of neighbours) of s[0..*len) in place, at a
 * code point other than the first (an edit of the first one matches nothing by
 * definition, so it measures nothing). */
static void edit_once(char *s, size_t *len, uint64_t *st) {
  size_t starts[600];
  size_t n = cp_starts(s, *len, starts, 600);
  if (n < 2) return;
  size_t at = 1 + rng(st) % (n - 1);
  char c = (char)('a' + rng(st) % 26);
  char tmp[2400];
  size_t b = starts[at], e = starts[at + 1];
  switch (rng(st) % 4) {
  case 0: /* insert */
    memcpy(tmp, s, b);
    tmp[b] = c;
    memcpy(tmp + b + 1, s + b, *len - b);
    *len += 1;
    break;
  case 1: /* delete */
    memcpy(tmp, s, b);
    memcpy(tmp + b, s + e, *len - e);
    *len -= e - b;
    break;
  case 2: /* substitute */
    memcpy(tmp, s, b);
    tmp[b] = c;
    memcpy(tmp + b + 1, s + e, *len - e);
    *len = *len - (e - b) + 1;
    break;
  default: /* swap with the previous code point */
    memcpy(tmp, s, *len);
    {
      size_t pb = starts[at - 1];
      memcpy(tmp + pb, s + b, e - b);
      memcpy(tmp + pb + (e - b), s + pb, b - pb);
    }
  }
  memcpy(s, tmp, *len);
  s[*len] = '\0';
}

static void report(const char *name, long long *t, size_t n, size_t items, int last) {
  qsort(t, n, sizeof *t, cmp_ll);
  printf("\"%s\":{\"queries\":%zu,\"median\":%lld,\"p99\":%lld,\"max\":%lld,\"items\":%zu}%s", name,
         n, t[n / 2], t[n * 99 / 100], t[n - 1], items, last ? "" : ",");
}

/* The typo mix next to the exact mix: M random items; for each a random prefix of at
 * least 4 code points of its normalised text (the query a user types), then (typo mix)
 * 1 edit, or 2 when the prefix has 8 or more code points. Timed: sg_artifact_query_k
 * with the default policy's budget (what the runtime does), and the exact mix again
 * without typo tolerance (the lookup before typo tolerance existed). */
static void typo_mix(const sg_artifact *a, const entry *e, size_t n, size_t m) {
  uint64_t st = 42;
  sg_typo_policy pol = SG_TYPO_POLICY_DEFAULT;
  long long *t_exact0 = malloc(m * sizeof(long long)), *t_exact = malloc(m * sizeof(long long)),
            *t_typo = malloc(m * sizeof(long long)), *t_t1 = malloc(m * sizeof(long long)),
            *t_t2 = malloc(m * sizeof(long long));
  size_t got = 0, n1 = 0, n2 = 0, items0 = 0, items = 0, itemst = 0;
  for (size_t tries = 0; got < m && tries < m * 50; tries++) {
    const entry *x = &e[rng(&st) % n];
    char nb[2400];
    long nl = sg_normalize_into(x->dv, strlen(x->dv), nb, 1024);
    if (nl <= 0) continue;
    size_t starts[600];
    size_t ncp = cp_starts(nb, (size_t)nl, starts, 600);
    if (ncp < 4) continue;
    size_t pl = 4 + rng(&st) % (ncp - 3);
    size_t len = starts[pl];
    nb[len] = '\0';
    char tq[2400];
    memcpy(tq, nb, len + 1);
    size_t tl = len;
    int edits = pl >= 8 ? 1 + (int)(rng(&st) % 2) : 1;
    for (int k = 0; k < edits; k++) edit_once(tq, &tl, &st);
    char nt[2400];
    long ntl = sg_normalize_into(tq, tl, nt, sizeof nt);
    if (ntl <= 0) continue;
    sg_query_result r;
    for (int round = 0; round < 2; round++) { /* the first round warms the pages */
      long long t0 = now_ns();
      sg_artifact_query(a, 0, nb, len, &r);
      long long t1 = now_ns();
      t_exact0[got] = t1 - t0;
      if (round) items0 += r.n;
      unsigned k = sg_typo_budget(&pol, pl);
      t0 = now_ns();
      sg_artifact_query_k(a, 0, nb, len, k, &r);
      t1 = now_ns();
      t_exact[got] = t1 - t0;
      if (round) items += r.n;
      size_t tcp = cp_starts(nt, (size_t)ntl, starts, 600);
      k = sg_typo_budget(&pol, tcp);
      t0 = now_ns();
      sg_artifact_query_k(a, 0, nt, (size_t)ntl, k, &r);
      t1 = now_ns();
      t_typo[got] = t1 - t0;
      if (round) itemst += r.n;
    }
    if (getenv("SLOW_NS") && t_typo[got] > atoll(getenv("SLOW_NS")))
      fprintf(stderr, "slow %lld ns: [%s] k=%u from [%s]\n", t_typo[got], nt,
              sg_typo_budget(&pol, cp_starts(nt, (size_t)ntl, starts, 600)), nb);
    if (getenv("SLOW_NS") && t_exact[got] > atoll(getenv("SLOW_NS")))
      fprintf(stderr, "slow exact %lld ns: [%s]\n", t_exact[got], nb);
    if (edits == 1)
      t_t1[n1++] = t_typo[got];
    else
      t_t2[n2++] = t_typo[got];
    got++;
  }
  printf("{");
  report("exactNoTypo", t_exact0, got, items0, 0);
  report("exact", t_exact, got, items, 0);
  report("typo", t_typo, got, itemst, 0);
  report("typo1", t_t1, n1, 0, 0);
  report("typo2", t_t2, n2, 0, 1);
  printf("}\n");
  free(t_exact0);
  free(t_exact);
  free(t_typo);
  free(t_t1);
  free(t_t2);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s ARTIFACT ITEMS.jsonl [N]\n", argv[0]);
    return 2;
  }
  size_t top = argc > 3 ? (size_t)atol(argv[3]) : 2000;
  sg_artifact *a;
  if (sg_artifact_open_file(argv[1], &a)) {
    fprintf(stderr, "cannot open %s\n", argv[1]);
    return 1;
  }
  FILE *f = fopen(argv[2], "r");
  if (!f) return 1;
  size_t n = 0, cap = 1024;
  entry *e = malloc(cap * sizeof *e);
  char *line = NULL;
  size_t lcap = 0;
  while (getline(&line, &lcap, f) > 0) {
    json_t *o = json_loads(line, 0, NULL);
    if (!o) continue;
    json_t *dv = json_object_get(o, "displayValue");
    if (!dv) dv = json_object_get(o, "value");
    if (n == cap) e = realloc(e, (cap *= 2) * sizeof *e);
    e[n].rank = json_integer_value(json_object_get(o, "rank"));
    e[n].dv = strdup(json_string_value(dv));
    n++;
    json_decref(o);
  }
  free(line);
  fclose(f);
  qsort(e, n, sizeof *e, cmp_rank);
  if (top > n) top = n;

  /* Queries: every character-boundary prefix of each name (what a user types). */
  size_t nq = 0, qcap = 1 << 16;
  char **qs = malloc(qcap * sizeof *qs);
  for (size_t i = 0; i < top; i++) {
    size_t len = strlen(e[i].dv);
    for (size_t k = 1; k <= len; k++) {
      if (k < len && ((unsigned char)e[i].dv[k] & 0xC0) == 0x80) continue;
      if (nq == qcap) qs = realloc(qs, (qcap *= 2) * sizeof *qs);
      qs[nq++] = strndup(e[i].dv, k);
    }
  }
  long long *t_lookup = malloc(nq * sizeof *t_lookup), *t_total = malloc(nq * sizeof *t_total);
  unsigned long long sink = 0;
  for (int round = 0; round < 2; round++) /* the first round warms the page cache */
    for (size_t i = 0; i < nq; i++) {
      char nb[1024];
      sg_query_result r;
      long long t0 = now_ns();
      long nl = sg_normalize_into(qs[i], strlen(qs[i]), nb, sizeof nb);
      long long t1 = now_ns();
      sg_artifact_query(a, 0, nb, nl > 0 ? (size_t)nl : 0, &r);
      long long t2 = now_ns();
      sink += r.n;
      t_lookup[i] = t2 - t1;
      t_total[i] = t2 - t0;
    }
  qsort(t_lookup, nq, sizeof *t_lookup, cmp_ll);
  qsort(t_total, nq, sizeof *t_total, cmp_ll);
  printf("{\"queries\":%zu,\"lookupNs\":{\"median\":%lld,\"p99\":%lld,\"max\":%lld},"
         "\"normalizeAndLookupNs\":{\"median\":%lld,\"p99\":%lld},\"items\":%llu}\n",
         nq, t_lookup[nq / 2], t_lookup[nq * 99 / 100], t_lookup[nq - 1], t_total[nq / 2],
         t_total[nq * 99 / 100], sink);
  if (argc > 4) typo_mix(a, e, n, (size_t)atol(argv[4]));
  sg_artifact_close(a);
  return 0;
}
