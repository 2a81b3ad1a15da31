/*
 * Where the typo search's time goes, per class of query, and a fixed-work driver for
 * callgrind (docs/PERFORMANCE.md, "Issue 23"):
 *
 *   typo_profile ARTIFACT FILE [ROUNDS [CONTENT_HASH]]
 *
 * Opens ARTIFACT by mmap (no hash check: nothing to count but the queries), answers
 * every line of FILE (raw queries, one a line) with the default policy ROUNDS times
 * (default 3; keeps each query's best time) and prints, per class — the typo budget and
 * how the answer ended (10 items reached with 0, 1 or 2 edits, or fewer than 10 in
 * all) — the count, the mean and the share of the total time, then a checksum of every
 * answer (items, order, edits, tier), and the median and p99 of every query's time.
 * Under callgrind use ROUNDS 1 and --toggle-collect=sg_artifact_query_k. With
 * CONTENT_HASH the artifact is loaded as the runtime serves it (sealed memory, hash
 * checked, settled onto huge pages); ROUNDS 1 over a shuffled FILE then times each query
 * once with the cache as a stream of different queries leaves it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compiler/normalize.h"
#include "compiler/typo.h"
#include "search/artifact.h"

#include "bench_time.h"

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: typo_profile ARTIFACT FILE [ROUNDS [CONTENT_HASH]]\n");
    return 2;
  }
  int rounds = argc > 3 ? atoi(argv[3]) : 3;
  if (rounds < 1) rounds = 1;
  sg_artifact *a;
  if ((argc > 4 ? sg_artifact_load_file(argv[1], argv[4], &a) : sg_artifact_open_file(argv[1], &a)) !=
      0) {
    perror(argv[1]);
    return 1;
  }
  size_t settled = 0;
  if (argc > 4 && sg_artifact_settle(a, &settled, SIZE_MAX) < 0) perror("settle");
  FILE *f = fopen(argv[2], "r");
  if (!f) {
    perror(argv[2]);
    return 1;
  }
  /* class = budget * 4 + (10 items: the largest edits among them; else 3) */
  double tot[12] = {0}, all = 0;
  long cnt[12] = {0};
  unsigned long long sum = 0;
  long long *times = NULL;
  size_t nt = 0, cap = 0;
  char line[4096];
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    char nb[1024];
    long nl = sg_normalize_into(line, strlen(line), nb, sizeof nb);
    size_t len = nl > 0 ? (size_t)nl : 0, ncp = 0;
    for (size_t i = 0; i < len; i++) ncp += ((unsigned char)nb[i] & 0xC0) != 0x80;
    sg_typo_policy pol = SG_TYPO_POLICY_DEFAULT;
    unsigned k = sg_typo_budget(&pol, ncp);
    sg_query_result r;
    long long best = -1;
    for (int rep = 0; rep < rounds; rep++) {
      long long t0 = now_ns();
      sg_artifact_query_k(a, 0, nb, len, k, &r);
      long long d = now_ns() - t0;
      if (best < 0 || d < best) best = d;
    }
    unsigned long long h = r.n;
    unsigned most = 0;
    for (size_t i = 0; i < r.n; i++) {
      for (uint32_t j = 0; j < r.items[i].len; j++)
        h = (h ^ (unsigned char)r.items[i].json[j]) * 1099511628211ULL;
      h = (h ^ (r.items[i].edits * 16u + r.items[i].tier)) * 1099511628211ULL;
      if (r.items[i].edits > most) most = r.items[i].edits;
    }
    sum = sum * 31 + h;
    int c = (int)k * 4 + (r.n == SG_BUCKET_ITEMS ? (int)most : 3);
    tot[c] += (double)best;
    cnt[c]++;
    all += (double)best;
    if (nt == cap) {
      cap = cap ? 2 * cap : 4096;
      long long *g = realloc(times, cap * sizeof *times);
      if (!g) {
        perror("realloc");
        return 1;
      }
      times = g;
    }
    times[nt++] = best;
  }
  fclose(f);
  static const char *end[] = {"10 items, 0 edits", "10 items, <= 1 edit", "10 items, <= 2 edits",
                              "fewer than 10"};
  for (int c = 0; c < 12; c++)
    if (cnt[c])
      printf("budget %d, %-20s %7ld queries  mean %9.1f us  %5.1f %%\n", c / 4, end[c % 4],
             cnt[c], tot[c] / (double)cnt[c] / 1e3, all > 0 ? 100 * tot[c] / all : 0);
  if (nt) {
    qsort(times, nt, sizeof *times, cmp_ll);
    printf("all %zu queries  median %.1f us  p99 %.1f us\n", nt, (double)times[nt / 2] / 1e3,
           (double)times[nt * 99 / 100] / 1e3);
  }
  free(times);
  printf("checksum %016llx\n", sum);
  sg_artifact_close(a);
  return 0;
}
