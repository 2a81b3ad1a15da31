/*
 * The clock and the sort the in-process benchmarks (lookup.c, query_bench.c, typo_bench.c,
 * typo_profile.c, within_bench.c) time and rank their queries with.
 */
#ifndef SUGGESTD_BENCH_TIME_H
#define SUGGESTD_BENCH_TIME_H

#include <time.h>

/* Monotonic nanoseconds. */
static inline long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* qsort comparator for long long, ascending (per-query nanoseconds → median, p99). */
static inline int cmp_ll(const void *a, const void *b) {
  long long x = *(const long long *)a, y = *(const long long *)b;
  return x < y ? -1 : x > y;
}

/* qsort comparator for double, ascending (per-round ratios → their median). */
static inline int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

#endif
