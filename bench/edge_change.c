/*
 * What one edge change costs the runtime's loader: an edge store (a directory, or a Redis
 * URL) with N lists and one publishable key per list (two workspaces, 100 keys per
 * application), one snapshot loaded, then ROUNDS list PATCHes (a visibility flip) each
 * applied the way the loader applies it: build the next snapshot from the previous one,
 * free the previous one. Prints one JSON object with the median and p90 CPU time (this
 * thread's) and wall time per change, and the initial load's.
 *
 *   bench/edge_change EDGE [N=20000] [ROUNDS=30] [full|workspace]
 *
 * "full": every change is applied by a full read (sg__records_invalidate first), as after
 * an epoch change. "workspace": each change disables or re-enables a workspace instead
 * (half the keys depend on it). Only the runtime's snapshot API is used, so the same file builds
 * against an older tree for a before/after comparison (bench/edge_change.sh).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/util.h"
#include "edge/edge.h"
#include "runtime/rt.h"
#include "state/state.h"

static double now_ms(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int put(sg_edge *e, sg_edge_kind k, const char *id, const char *json) {
  if (sg_edge_put(e, k, id, json, strlen(json), NULL) == 0) return 0;
  fprintf(stderr, "edge_change: put %s failed\n", id);
  return -1;
}

static void list_json(char *out, size_t n, unsigned i, const char *vis) {
  snprintf(out, n,
           "{\"id\":\"lst_%06u\",\"workspaceId\":\"wsp_%u\",\"name\":\"List %u\","
           "\"status\":\"active\",\"visibility\":\"%s\",\"activeContentHash\":null,"
           "\"queryPolicy\":{\"minQueryChars\":1,\"debounceMs\":150}}",
           i, i % 2, i, vis);
}

int main(int argc, char **argv) {
  if (sg_init() || argc < 2) {
    fprintf(stderr, "usage: edge_change EDGE [N=20000] [ROUNDS=30] [full]\n");
    return 2;
  }
  unsigned n = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 20000;
  int rounds = argc > 3 ? atoi(argv[3]) : 30;
  const char *mode = argc > 4 ? argv[4] : "change";
  bool full = strcmp(mode, "full") == 0, wsp = strcmp(mode, "workspace") == 0;
  if (n < 2 || rounds < 1 || rounds > 10000) return 2;
  sg_edge *e;
  if (sg_edge_open(argv[1], &e)) {
    perror("edge_change: open");
    return 1;
  }
  char state_dir[] = "/tmp/sg-edge-change-XXXXXX";
  if (!mkdtemp(state_dir)) return 1;
  sg_rt_state *st;
  if (sg_rt_state_open(state_dir, 600, &st)) return 1;

  char json[512], id[80], hex[65], key[40];
  uint64_t rev;
  if (sg_edge_revision(e, &rev)) return 1;
  if (rev == 0) { /* a fresh edge: fill it */
    for (unsigned w = 0; w < 2; w++) {
      snprintf(id, sizeof id, "wsp_%u", w);
      snprintf(json, sizeof json, "{\"id\":\"%s\",\"status\":\"active\"}", id);
      if (put(e, SG_EDGE_WORKSPACE, id, json)) return 1;
    }
    for (unsigned a = 0; a < (n + 199) / 200 * 2; a++) {
      snprintf(id, sizeof id, "app_%05u", a);
      snprintf(json, sizeof json,
               "{\"id\":\"%s\",\"workspaceId\":\"wsp_%u\",\"status\":\"active\","
               "\"monthlyQuota\":null}",
               id, a % 2);
      if (put(e, SG_EDGE_APP, id, json)) return 1;
    }
    for (unsigned i = 0; i < n; i++) {
      snprintf(id, sizeof id, "lst_%06u", i);
      list_json(json, sizeof json, i, "public");
      if (put(e, SG_EDGE_LIST, id, json)) return 1;
      snprintf(key, sizeof key, "pk_bench_%06u", i);
      sg_edge_key_digest(key, strlen(key), hex);
      /* A list's key belongs to an application of the list's workspace (list i and
       * application a are in workspace i % 2, a % 2), 100 keys per application. */
      unsigned app = i / 200 * 2 + i % 2;
      snprintf(json, sizeof json,
               "{\"id\":\"pk_%06u\",\"applicationId\":\"app_%05u\",\"listId\":\"lst_%06u\","
               "\"status\":\"active\",\"origins\":[\"https://shop.example\"]}",
               i, app, i);
      if (put(e, SG_EDGE_KEY, hex, json)) return 1;
    }
  }

  sg__rt_records *cache = NULL;
  sg__rt_snapshot *cur;
  double c0 = now_ms(CLOCK_THREAD_CPUTIME_ID), w0 = now_ms(CLOCK_MONOTONIC);
  if (sg__snapshot_load(e, st, NULL, &cache, &cur)) {
    perror("edge_change: load");
    return 1;
  }
  double load_cpu = now_ms(CLOCK_THREAD_CPUTIME_ID) - c0, load_wall = now_ms(CLOCK_MONOTONIC) - w0;

  double *cpu = calloc((size_t)rounds, sizeof *cpu), *wall = calloc((size_t)rounds, sizeof *wall);
  if (!cpu || !wall) return 1;
  for (int r = 0; r < rounds; r++) {
    unsigned i = (unsigned)(((unsigned long)r * 7919u) % n);
    if (wsp) {
      snprintf(json, sizeof json, "{\"id\":\"wsp_0\",\"status\":\"%s\"}",
               r % 2 ? "active" : "disabled");
      if (put(e, SG_EDGE_WORKSPACE, "wsp_0", json)) return 1;
    } else {
      snprintf(id, sizeof id, "lst_%06u", i);
      list_json(json, sizeof json, i, r % 2 ? "public" : "private");
      if (put(e, SG_EDGE_LIST, id, json)) return 1;
    }
    if (full) sg__records_invalidate(cache);
    sg__rt_snapshot *next;
    c0 = now_ms(CLOCK_THREAD_CPUTIME_ID);
    w0 = now_ms(CLOCK_MONOTONIC);
    if (sg__snapshot_load(e, st, cur, &cache, &next)) {
      perror("edge_change: reload");
      return 1;
    }
    sg__snapshot_free(cur); /* as the loader does once the new one is published */
    cpu[r] = now_ms(CLOCK_THREAD_CPUTIME_ID) - c0;
    wall[r] = now_ms(CLOCK_MONOTONIC) - w0;
    cur = next;
  }
  qsort(cpu, (size_t)rounds, sizeof *cpu, cmp_d);
  qsort(wall, (size_t)rounds, sizeof *wall, cmp_d);
  printf("{\"lists\":%u,\"keys\":%u,\"rounds\":%d,\"mode\":\"%s\",\"initialLoadCpuMs\":%.2f,"
         "\"initialLoadWallMs\":%.2f,\"changeCpuMsMedian\":%.3f,\"changeCpuMsP90\":%.3f,"
         "\"changeWallMsMedian\":%.3f,\"changeWallMsP90\":%.3f}\n",
         n, n, rounds, mode, load_cpu, load_wall, cpu[rounds / 2], cpu[rounds * 9 / 10],
         wall[rounds / 2], wall[rounds * 9 / 10]);
  free(cpu);
  free(wall);
  sg__snapshot_free(cur);
  sg__records_free(cache);
  sg_rt_state_close(st);
  sg_edge_close(e);
  char cmd[96];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", state_dir);
  return system(cmd) != 0;
}
