/*
 * The background recompile (docs/DESIGN.md §10, docs/UPGRADING.md): after an upgrade that
 * changed the artifact format, each list's active artifact of an older format is compiled
 * again into the current one, from the active version's own snapshot, at a bounded rate,
 * and only once every live runtime reads the current format.
 *
 * Why it is safe in every order of a rolling upgrade: a runtime reads the current and the
 * previous format (search/artifact.h), and announces what it reads (edge.h "runtime
 * presence"). Until each live runtime announces the current format nothing is recompiled,
 * so a runtime of the previous release keeps finding artifacts it reads; a list keeps
 * serving its old artifact until the new version is active, exactly as after a publish.
 *
 * Coordination across control processes is the publish queue's: the new version is made
 * by sg_store_version_recompile, which refuses while any version of the list is queued or
 * staged (one transaction), so two processes never queue two; the version is then an
 * ordinary queued (async) version that the workers claim under their leases. Its content
 * is the active version's snapshot, so its answers equal the old artifact's for every
 * query (the compiler is deterministic; only the bytes' layout changes).
 *
 * The publish thread set runs sg__recompile_tick once a second; it scans the active
 * versions every SCAN_MS while some remain to do, IDLE_SCAN_MS once none do. A version's
 * format is read from its artifact once per process (content-addressed, so it never
 * changes) and remembered in a bounded table.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/metrics.h"
#include "common/util.h"
#include "compiler/format.h"
#include "control/internal.h"
#include "edge/edge.h"
#include "search/artifact.h"
#include "store/members.h"

#define SCAN_MS 5000
#define IDLE_SCAN_MS 60000
#define PAGE 128
#define FORMATS_MAX 8192 /* remembered artifact formats; the table is emptied when full */

typedef struct {
  char hash[80];
  uint32_t format; /* 0: unreadable here */
  bool noted;      /* a refusal about this version was logged already */
} known;

struct sg__recompiler {
  int64_t next_scan_ms, next_allowed_ms;
  known *formats;
  size_t n_formats;
  const char *held; /* why the last scan held back (logged once per spell), or NULL */
  int64_t behind;   /* active versions below the current format at the last scan (-1: none yet) */
  /* What /metrics shows (read by the metrics thread): behind, and whether the last scan
   * was held back by the runtimes. */
  _Atomic int64_t m_behind;
  atomic_int m_held;
};

/* /metrics (docs/OBSERVABILITY.md): how far the upgrade has come, as this process saw it. */
static void metrics(sg_buf *out, void *ctx) {
  struct sg__recompiler *r = ((sg_control *)ctx)->recompile;
  int64_t behind = atomic_load(&r->m_behind);
  if (behind >= 0) {
    sg_metrics_family(out, "suggestd_artifacts_behind_format", "gauge",
                      "Active versions whose artifact is of an older format than this build "
                      "writes, at the background recompile's last scan.");
    sg_buf_printf(out, "suggestd_artifacts_behind_format %lld\n", (long long)behind);
  }
  sg_metrics_family(out, "suggestd_recompile_held", "gauge",
                    "1 while the background recompile waits because a live runtime does not "
                    "announce the current artifact format (or none announces any), else 0.");
  sg_buf_printf(out, "suggestd_recompile_held %d\n", atomic_load(&r->m_held));
}

int sg__recompile_init(sg_control *c) {
  c->recompile = calloc(1, sizeof *c->recompile);
  if (!c->recompile) return -1;
  c->recompile->behind = -1;
  atomic_init(&c->recompile->m_behind, -1);
  atomic_init(&c->recompile->m_held, 0);
  sg_metrics_add_collector(metrics, c);
  return 0;
}

void sg__recompile_free(sg_control *c) {
  if (!c->recompile) return;
  sg_metrics_remove_collector(metrics, c);
  free(c->recompile->formats);
  free(c->recompile);
  c->recompile = NULL;
}

/* The artifact format of content_hash, read once (0 when it cannot be read now: absent,
 * damaged, or a format this build does not open; not remembered, so it is tried again). */
static known *format_of(sg_control *c, const char *hash) {
  struct sg__recompiler *r = c->recompile;
  for (size_t i = 0; i < r->n_formats; i++)
    if (strcmp(r->formats[i].hash, hash) == 0) return &r->formats[i];
  sg_artifact *a = NULL;
  if (sg_edge_artifact_load(c->cfg.edge, hash, &a)) return NULL;
  uint32_t f = sg_artifact_format(a);
  sg_artifact_close(a);
  if (!r->formats) {
    r->formats = calloc(FORMATS_MAX, sizeof *r->formats);
    if (!r->formats) return NULL;
  }
  if (r->n_formats == FORMATS_MAX) r->n_formats = 0;
  known *k = &r->formats[r->n_formats++];
  snprintf(k->hash, sizeof k->hash, "%s", hash);
  k->format = f;
  k->noted = false;
  return k;
}

typedef struct {
  int live, stale; /* live runtimes; of those, how many do not read the current format */
  char first_stale[SG_EDGE_MAX_ID + 1];
} fleet;

static int count_runtime(const char *id, const char *json, size_t len, void *ctx) {
  fleet *f = ctx;
  sg_edge_runtime_rec rec;
  /* A record that is not one names no format anybody could hold back for. */
  if (sg_edge_runtime_decode(json, len, &rec)) return 0;
  f->live++;
  if (!(rec.formats & ((uint64_t)1 << SG__ART_VERSION))) {
    if (!f->stale++) snprintf(f->first_stale, sizeof f->first_stale, "%s", id);
  }
  return 0;
}

static void log_held(struct sg__recompiler *r, const char *why, const fleet *f) {
  atomic_store(&r->m_held, why != NULL);
  if (why == r->held) return;
  r->held = why;
  if (!why) return;
  fprintf(stderr,
          "{\"level\":\"info\",\"msg\":\"artifact recompile waits\",\"reason\":\"%s\","
          "\"format\":%u,\"liveRuntimes\":%d,\"runtimesWithoutFormat\":%d,\"runtimeId\":\"%s\"}\n",
          why, SG__ART_VERSION, f->live, f->stale, f->first_stale);
}

/* Queues the recompile of one version; true when a version was queued. */
static bool recompile_one(sg_control *c, const sg_active_version *v, known *k) {
  json_t *out = NULL;
  sg_err e = sg_store_version_recompile(c->cfg.store, v->list_id, v->number, &out);
  if (e != SG_E_OK) {
    json_decref(out);
    /* A publish queued, a newer version active, an archived list: the next scan sees. */
    if (e == SG_E_VERSION_NOT_AVAILABLE && !k->noted) {
      k->noted = true;
      fprintf(stderr,
              "{\"level\":\"warn\",\"msg\":\"active version's snapshot is no longer whole; "
              "it keeps serving its format-%u artifact until the list is published again\","
              "\"listId\":\"%s\",\"versionNumber\":%lld}\n",
              k->format, v->list_id, (long long)v->number);
    }
    return false;
  }
  int64_t number = json_integer_value(json_object_get(out, "versionNumber"));
  json_decref(out);
  /* Like a 202 publish: the workers resolve it, and a newer publish may supersede it. */
  sg_store_version_set_async(c->cfg.store, v->list_id, number);
  sg__publish_kick(c);
  fprintf(stderr,
          "{\"level\":\"info\",\"msg\":\"artifact recompile queued\",\"listId\":\"%s\","
          "\"fromVersion\":%lld,\"fromFormat\":%u,\"versionNumber\":%lld,\"format\":%u}\n",
          v->list_id, (long long)v->number, k->format, (long long)number, SG__ART_VERSION);
  json_t *details = json_pack("{s:I,s:I,s:i,s:i}", "versionNumber", (json_int_t)number,
                              "fromVersion", (json_int_t)v->number, "fromFormat", (int)k->format,
                              "format", (int)SG__ART_VERSION);
  sg_audit_entry a = {.workspace_id = v->workspace_id,
                      .actor = "system",
                      .action = "version.recompile",
                      .target = v->list_id,
                      .status = 202,
                      .details = details};
  if (sg_store_audit_add(c->cfg.store, &a) != SG_E_OK)
    fprintf(stderr,
            "{\"level\":\"error\",\"msg\":\"audit entry not saved\",\"action\":"
            "\"version.recompile\",\"listId\":\"%s\"}\n",
            v->list_id);
  json_decref(details);
  return true;
}

void sg__recompile_tick(sg_control *c) {
  struct sg__recompiler *r = c->recompile;
  if (!r || c->cfg.recompile_per_minute == 0) return;
  int64_t now = sg_mono_ms();
  if (now < r->next_scan_ms) return;
  r->next_scan_ms = now + SCAN_MS;
  fleet f = {0};
  if (sg_edge_runtimes(c->cfg.edge, count_runtime, &f)) return; /* the edge is away */
  /* Held only matters (and is only logged) while some active version is behind. */
  const char *why = f.live == 0 ? "no live runtime announces the formats it reads"
                    : f.stale   ? "a live runtime does not read the current format"
                                : NULL;
  int64_t behind = 0;
  bool rate_left = true;
  char after[64] = "";
  sg_active_version page[PAGE];
  for (;;) {
    size_t n = 0;
    if (sg_store_active_versions(c->cfg.store, after, page, PAGE, &n) != SG_E_OK) return;
    for (size_t i = 0; i < n; i++) {
      known *k = format_of(c, page[i].content_hash);
      if (!k || k->format >= SG__ART_VERSION) continue;
      behind++;
      if (why || !rate_left) continue;
      if (sg_mono_ms() < r->next_allowed_ms) {
        rate_left = false;
        continue;
      }
      if (recompile_one(c, &page[i], k))
        r->next_allowed_ms = sg_mono_ms() + 60000 / (int64_t)c->cfg.recompile_per_minute;
    }
    if (n < PAGE) break;
    snprintf(after, sizeof after, "%s", page[n - 1].list_id);
  }
  log_held(r, behind ? why : NULL, &f);
  if (behind != r->behind)
    fprintf(stderr,
            "{\"level\":\"info\",\"msg\":\"artifact format upgrade\",\"format\":%u,"
            "\"activeVersionsBehind\":%lld}\n",
            SG__ART_VERSION, (long long)behind);
  r->behind = behind;
  atomic_store(&r->m_behind, behind);
  if (behind == 0) r->next_scan_ms = now + IDLE_SCAN_MS;
}
