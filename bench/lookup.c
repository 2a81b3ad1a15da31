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

#include "compiler/normalize.h"
#include "search/artifact.h"

#include "bench_time.h"

typedef struct {
  long long rank;
  char *dv;
} entry;

static int cmp_rank(const void *a, const void *b) {
  const entry *x = a, *y = b;
  return x->rank > y->rank ? -1 : x->rank < y->rank;
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
  sg_artifact_close(a);
  return 0;
}
