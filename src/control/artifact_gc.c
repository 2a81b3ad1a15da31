/*
 * Artifact garbage collection (docs/DESIGN.md §5): artifacts other than each list's active and
 * previous version are deleted from the edge --artifact-grace seconds after they stop
 * being served.
 *
 * The publish worker calls sg__artifact_gc_run every tick. An artifact the store no
 * longer names (sg_store_artifacts_in_use: unresolved and active versions, each list's
 * previous active version, every list record's hash) starts a grace timer here, in
 * memory; it is deleted once it stayed unnamed for the whole grace AND its file was last
 * written longer than the grace ago. A restart starts every timer again, which only
 * delays deletions. Runtimes read an artifact once into their own memory (docs/RUNTIME.md),
 * so the grace is for runtimes still loading a version that was just replaced.
 *
 * The race with a publish in this process (artifact written, then the version staged in
 * the store) is closed by a lock: the pipeline holds it shared from the artifact write to
 * the staged transition (sg__artifact_gc_hold), a collection holds it exclusively. Another
 * process's publish is covered by the file's write time: an artifact written (or found
 * already present, which refreshes the time) within the grace is never deleted.
 *
 * A store that keeps durable copies (PostgreSQL) has them collected by the same rule, in
 * a pass of their own before the edge's (so a copy never outlives its reason to exist,
 * and the edge copy is never the last one of an artifact still named): unnamed for the
 * whole grace, and written (or re-put) longer than the grace ago.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "control/internal.h"
#include "edge/edge.h"

/* Temporary files of unfinished artifact writes are removed after this long. */
#define TEMP_MIN_AGE_S 3600

typedef struct {
  char hex[65];
  int64_t since_ms; /* when this process first saw it unnamed */
  bool seen;        /* still on the edge in the current pass */
} unnamed;

struct sg__artifact_gc {
  pthread_rwlock_t lock;
  unnamed *v;
  size_t n, cap;
};

int sg__artifact_gc_init(sg_control *c) {
  struct sg__artifact_gc *g = calloc(1, sizeof *g);
  if (!g) return -1;
  pthread_rwlock_init(&g->lock, NULL);
  c->gc = g;
  return 0;
}

void sg__artifact_gc_free(sg_control *c) {
  if (!c || !c->gc) return;
  pthread_rwlock_destroy(&c->gc->lock);
  free(c->gc->v);
  free(c->gc);
  c->gc = NULL;
}

void sg__artifact_gc_hold(sg_control *c) { pthread_rwlock_rdlock(&c->gc->lock); }
void sg__artifact_gc_release(sg_control *c) { pthread_rwlock_unlock(&c->gc->lock); }

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

typedef struct {
  sg_control *c;
  const char **named; /* sorted bare hex hashes the store names */
  size_t n_named;
  int64_t now_ms, now_s, grace_s;
  size_t deleted;
  bool store_pass; /* deleting the store's copies; the edge pass comes after */
} pass;

static int delete_copy(pass *ps, const char *h) {
  if (ps->store_pass) return sg_store_artifact_delete(ps->c->cfg.store, h) == SG_E_OK ? 0 : -1;
  return sg_edge_delete_artifact(ps->c->cfg.edge, h);
}

static int visit(const char *hex, int64_t written_at, void *arg) {
  pass *ps = arg;
  struct sg__artifact_gc *g = ps->c->gc;
  const char *key = hex;
  if (bsearch(&key, ps->named, ps->n_named, sizeof *ps->named, cmp_str)) return 0;
  unnamed *u = NULL;
  for (size_t i = 0; i < g->n && !u; i++)
    if (strcmp(g->v[i].hex, hex) == 0) u = &g->v[i];
  if (!u) {
    if (g->n == g->cap) {
      size_t nc = g->cap ? g->cap * 2 : 16;
      unnamed *nv = realloc(g->v, nc * sizeof *nv);
      if (!nv) return 0; /* try again next pass */
      g->v = nv;
      g->cap = nc;
    }
    u = &g->v[g->n++];
    snprintf(u->hex, sizeof u->hex, "%s", hex);
    u->since_ms = ps->now_ms;
  }
  u->seen = true;
  if (ps->now_ms - u->since_ms < ps->grace_s * 1000 || ps->now_s - written_at < ps->grace_s)
    return 0;
  char h[72];
  snprintf(h, sizeof h, "sha256:%s", hex);
  if (delete_copy(ps, h) == 0) {
    fprintf(stderr, "{\"level\":\"info\",\"msg\":\"%s\",\"contentHash\":\"%s\"}\n",
            ps->store_pass ? "artifact copy deleted from the store" : "artifact deleted", h);
    ps->deleted++;
    if (!ps->store_pass) u->seen = false; /* gone: dropped below */
  }
  return 0;
}

void sg__artifact_gc_run(sg_control *c) {
  struct sg__artifact_gc *g = c->gc;
  json_t *in_use = NULL;
  pthread_rwlock_wrlock(&g->lock);
  if (sg_store_artifacts_in_use(c->cfg.store, &in_use) != SG_E_OK) goto out;
  size_t n = json_array_size(in_use);
  pass ps = {c,          calloc(n + 1, sizeof(char *)),    0, sg_mono_ms(),
             sg_now_s(), (int64_t)c->cfg.artifact_grace_s, 0, false};
  if (!ps.named) goto out;
  for (size_t i = 0; i < n; i++) {
    const char *h = json_string_value(json_array_get(in_use, i));
    if (h && strncmp(h, "sha256:", 7) == 0) ps.named[ps.n_named++] = h + 7;
  }
  qsort(ps.named, ps.n_named, sizeof *ps.named, cmp_str);
  for (size_t i = 0; i < g->n; i++) g->v[i].seen = false;
  if (sg_store_keeps_artifacts(c->cfg.store)) {
    ps.store_pass = true;
    sg_store_artifacts(c->cfg.store, visit, &ps);
    ps.store_pass = false;
  }
  sg_edge_artifacts(c->cfg.edge, visit, &ps);
  /* Forget artifacts that are named again, deleted, or gone. */
  size_t k = 0;
  for (size_t i = 0; i < g->n; i++)
    if (g->v[i].seen) g->v[k++] = g->v[i];
  g->n = k;
  free(ps.named);
  /* Half-written artifacts of a process killed mid-publish. A live writer touches its
   * temp file until the rename (only the final fsync may take long), so an hour is safe. */
  size_t swept = 0;
  int64_t temp_age = ps.grace_s > TEMP_MIN_AGE_S ? ps.grace_s : TEMP_MIN_AGE_S;
  if (sg_edge_sweep_temp(c->cfg.edge, temp_age, &swept) == 0 && swept)
    fprintf(stderr,
            "{\"level\":\"info\",\"msg\":\"unfinished artifact writes removed\","
            "\"files\":%zu}\n",
            swept);
out:
  pthread_rwlock_unlock(&g->lock);
  json_decref(in_use);
}
