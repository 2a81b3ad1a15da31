/*
 * What the runtime pays to load an artifact into sealed memory with its hash checked
 * (sg_artifact_load_file) against mapping the shared file (sg_artifact_open_file):
 * wall time and resident memory. See docs/RUNTIME.md ("Artifacts in memory").
 *
 *   make && cc -std=c17 -D_GNU_SOURCE -O2 -Isrc bench/artifact_load.c build/libsuggestd.a \
 *     $(pkg-config --libs libmicrohttpd jansson sqlite3 libpq hiredis libsodium libcrypto libutf8proc \
 *     libcurl) -lhttp_parser -lpthread -lm -o /tmp/artifact_load
 *   build/suggestd compile --input .cache/datasets/packages.jsonl --output /tmp/pk.sga
 *   /tmp/artifact_load /tmp/pk.sga sha256:<contentHash printed by compile>
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/util.h"
#include "search/artifact.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Resident set size in MiB, from /proc/self/statm. */
static double rss_mib(void) {
  long pages = 0, res = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f) {
    if (fscanf(f, "%ld %ld", &pages, &res) != 2) res = 0;
    fclose(f);
  }
  return (double)res * 4096.0 / (1024.0 * 1024.0);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: artifact_load FILE sha256:HEX\n");
    return 2;
  }
  const char *mode[] = {"mmap (shared file)", "read + SHA-256 (sealed copy)"};
  for (int m = 0; m < 2; m++) {
    double r0 = rss_mib(), t0 = now_s();
    sg_artifact *a = NULL;
    int rc = m == 0 ? sg_artifact_open_file(argv[1], &a) : sg_artifact_load_file(argv[1], argv[2], &a);
    double t1 = now_s();
    if (rc) {
      fprintf(stderr, "%s: failed\n", mode[m]);
      return 1;
    }
    sg_query_result r;
    sg_artifact_query(a, 0, "re", 2, &r);
    printf("%-32s load %.2f s, resident +%.0f MiB, %zu items\n", mode[m], t1 - t0, rss_mib() - r0,
           sg_artifact_item_count(a));
    sg_artifact_close(a);
  }
  return 0;
}
