/*
 * In-process latency of the exact and typo query mixes on one artifact, and a checksum
 * of every answer (so two builds can be shown to answer the same):
 *
 *   typo_bench --artifact A.art --content-hash sha256:… --exact FILE --typo FILE
 *              [--rounds 3] [--highlight 1] [--typos 0] [--settle 0]
 *
 * FILE holds one raw query per line (query_bench --queries-out / --typo-queries-out).
 * Per query: sg_normalize_into + sg_artifact_query_k with the default policy's budget
 * (no body; with --highlight 1 also the highlight of every item, as the runtime
 * answers, else the lookup alone). Each query is timed in every round and
 * its best round kept (the shared machine's noise is one-sided); the two mixes are
 * interleaved per query so both see the same machine. Prints one JSON object.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compiler/normalize.h"
#include "compiler/typo.h"
#include "search/artifact.h"

#include "bench_time.h"

static char **read_lines(const char *path, size_t *n) {
  FILE *f = fopen(path, "r");
  if (!f) {
    perror(path);
    exit(1);
  }
  size_t cap = 1024;
  char **v = malloc(cap * sizeof *v);
  char *line = NULL;
  size_t lcap = 0;
  ssize_t l;
  *n = 0;
  while ((l = getline(&line, &lcap, f)) > 0) {
    if (line[l - 1] == '\n') line[--l] = '\0';
    if (*n == cap) v = realloc(v, (cap *= 2) * sizeof *v);
    v[(*n)++] = strdup(line);
  }
  free(line);
  fclose(f);
  return v;
}

static unsigned long long sum;
static int with_highlight;
static int typos = 1; /* --typos 0: every query without typos (budget 0) */
static int settle = 1; /* --settle 0: leave the artifact on small pages (sg_artifact_settle) */

static void answer(const sg_artifact *a, const char *q) {
  char nb[1024];
  long nl = sg_normalize_into(q, strlen(q), nb, sizeof nb);
  size_t len = nl > 0 ? (size_t)nl : 0, ncp = 0;
  for (size_t i = 0; i < len; i++) ncp += ((unsigned char)nb[i] & 0xC0) != 0x80;
  sg_typo_policy pol = SG_TYPO_POLICY_DEFAULT;
  sg_query_result r;
  sg_artifact_query_k(a, 0, nb, len, typos ? sg_typo_budget(&pol, ncp) : 0, &r);
  unsigned long long h = r.n;
  for (size_t i = 0; i < r.n; i++) {
    for (uint32_t j = 0; j < r.items[i].len; j++)
      h = (h ^ (unsigned char)r.items[i].json[j]) * 1099511628211ULL;
    h = (h ^ (r.items[i].edits * 16u + r.items[i].tier)) * 1099511628211ULL;
    if (with_highlight) {
      char dv[2048];
      uint32_t hl[16];
      long dl = sg_fragment_display_value(&r.items[i], dv, sizeof dv);
      long nh = dl < 0 ? 0
                       : sg_typo_highlight(dv, (size_t)dl, nb, len, r.items[i].edits,
                                           r.items[i].tier, hl, 8);
      for (long k = 0; k < 2 * nh; k++) h = (h ^ hl[k]) * 1099511628211ULL;
    }
  }
  sum = sum * 31 + h;
}

static void dist(const char *name, long long *t, size_t n) {
  qsort(t, n, sizeof *t, cmp_ll);
  printf("\"%s\":{\"n\":%zu,\"median\":%lld,\"p99\":%lld,\"max\":%lld}", name, n, t[n / 2],
         t[n * 99 / 100], t[n - 1]);
}

int main(int argc, char **argv) {
  const char *art = NULL, *hash = NULL, *ef = NULL, *tf = NULL;
  int rounds = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--artifact"))
      art = argv[i + 1];
    else if (!strcmp(argv[i], "--content-hash"))
      hash = argv[i + 1];
    else if (!strcmp(argv[i], "--exact"))
      ef = argv[i + 1];
    else if (!strcmp(argv[i], "--typo"))
      tf = argv[i + 1];
    else if (!strcmp(argv[i], "--rounds"))
      rounds = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--highlight"))
      with_highlight = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--typos"))
      typos = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--settle"))
      settle = atoi(argv[i + 1]);
  }
  if (!art || !hash || !ef || !tf || rounds < 1) {
    fprintf(stderr, "usage: typo_bench --artifact A --content-hash H --exact F --typo F\n");
    return 2;
  }
  sg_artifact *a;
  if (sg_artifact_load_file(art, hash, &a) != 0) {
    perror("load");
    return 1;
  }
  /* As the runtime serves it once its loader settled the artifact onto huge pages. */
  long long settle_ns = now_ns();
  for (size_t done = 0; settle && done < sg_artifact_size(a);)
    if (sg_artifact_settle(a, &done, SIZE_MAX) < 0) perror("settle");
  settle_ns = now_ns() - settle_ns;
  size_t ne, nt;
  char **eq = read_lines(ef, &ne), **tq = read_lines(tf, &nt);
  size_t n = ne > nt ? ne : nt;
  long long *te = malloc(ne * sizeof *te), *tt = malloc(nt * sizeof *tt);
  for (size_t i = 0; i < ne; i++) te[i] = -1;
  for (size_t i = 0; i < nt; i++) tt[i] = -1;
  for (int r = 0; r < rounds; r++) {
    sum = 0;
    for (size_t i = 0; i < n; i++) {
      if (i < ne) {
        long long t0 = now_ns();
        answer(a, eq[i]);
        long long d = now_ns() - t0;
        if (te[i] < 0 || d < te[i]) te[i] = d;
      }
      if (i < nt) {
        long long t0 = now_ns();
        answer(a, tq[i]);
        long long d = now_ns() - t0;
        if (tt[i] < 0 || d < tt[i]) tt[i] = d;
      }
    }
  }
  printf("{\"rounds\":%d,\"settleMs\":%lld,", rounds, settle ? settle_ns / 1000000 : -1);
  dist("exactNs", te, ne);
  printf(",");
  dist("typoNs", tt, nt);
  printf(",\"checksum\":\"%016llx\"}\n", sum);
  sg_artifact_close(a);
  return 0;
}
