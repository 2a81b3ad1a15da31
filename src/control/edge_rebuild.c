/*
 * Rewriting the whole edge store from the relational store (the edge is a projection of
 * the database): what `suggestd admin edge rebuild` and the control plane's guard do
 * (edge_guard.c) when the edge went back or lost what it held.
 *
 * 1. Artifacts first (a list record must never name an artifact the edge lacks): every
 *    artifact the store names (sg_store_artifacts_in_use: active, previous, unresolved
 *    versions and every list record's hash) is loaded from the edge and verified; one
 *    that is missing or damaged is restored from the store's durable copy when the
 *    backend keeps copies (PostgreSQL), checked against its hash before it is written.
 *    A SQLite store keeps none (the edge directory is the durable copy): a missing one is
 *    reported.
 * 2. Every record the edge outbox knows is rewritten from its source through the
 *    outbox's own writer (sg_edge_sync_record), so each write is conditional on the
 *    record's generation and never replaces a newer one written meanwhile.
 * 3. Every edge record the store does not know is passed through the same writer, which
 *    removes it (its source is gone).
 * Artifacts on the edge that nothing names are left to garbage collection.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/util.h"
#include "control/edge_sync.h"
#include "search/artifact.h"

/* Outbox rows read per store call. */
#define PAGE 256
/* The largest artifact a restore reads into memory (the compiler's outputs are far
 * smaller; this only bounds a damaged length). */
#define MAX_ARTIFACT ((size_t)4 << 30)

static int collect(const void *data, size_t len, void *ctx) {
  return sg_buf_append(ctx, data, len);
}

/* Restores one artifact from the store's copy; 0, or -1 with *why set. */
static int restore(sg_store *st, sg_edge *e, const char *hash, const char **why) {
  sg_buf b;
  sg_buf_init(&b, MAX_ARTIFACT);
  sg_err err = sg_store_artifact_get(st, hash, NULL, collect, &b);
  int rc = -1;
  char got[72];
  if (err == SG_E_NOT_FOUND) {
    *why = "no copy in the store";
  } else if (err != SG_E_OK) {
    *why = "store read failed";
  } else if (sg_sha256_tagged(b.data, b.len, got), strcmp(got, hash) != 0) {
    *why = "the store's copy does not match its hash";
  } else if (sg_edge_put_artifact(e, hash, b.data, b.len)) {
    *why = "edge write failed";
  } else {
    rc = 0;
  }
  sg_buf_free(&b);
  return rc;
}

typedef struct {
  size_t needed, present, restored;
  json_t *missing; /* [{contentHash, reason}] */
} art_stats;

static int artifacts(sg_store *st, sg_edge *e, art_stats *a) {
  json_t *in_use = NULL;
  if (sg_store_artifacts_in_use(st, &in_use) != SG_E_OK) return -1;
  bool copies = sg_store_keeps_artifacts(st);
  size_t i;
  json_t *h;
  json_array_foreach(in_use, i, h) {
    const char *hash = json_string_value(h);
    if (!hash) continue;
    a->needed++;
    sg_artifact *art = NULL;
    /* Loaded and verified: a damaged file counts as missing. */
    if (sg_edge_artifact_load(e, hash, &art) == 0) {
      sg_artifact_close(art);
      a->present++;
      continue;
    }
    const char *why = "missing on the edge, and this store keeps no copies";
    if (copies && restore(st, e, hash, &why) == 0) {
      a->restored++;
      continue;
    }
    json_array_append_new(a->missing, json_pack("{s:s,s:s}", "contentHash", hash, "reason", why));
  }
  json_decref(in_use);
  return 0;
}

typedef struct {
  json_t *known; /* "kind/id" -> true: what the store knows */
  json_t *stale; /* ids of the kind being walked that the store does not know */
  const char *kind;
} walk;

static int visit(const char *id, const char *json, size_t len, void *arg) {
  walk *w = arg;
  char key[160];
  snprintf(key, sizeof key, "%.23s/%.128s", w->kind, id);
  if (!json_object_get(w->known, key)) json_array_append_new(w->stale, json_string(id));
  return 0;
}

int sg_edge_sync_rebuild(sg_store *st, sg_edge *e, json_t **report) {
  art_stats a = {0, 0, 0, json_array()};
  json_t *known = json_object();
  size_t written = 0, removed = 0, failed = 0;
  int rc = -1;
  *report = NULL;
  if (artifacts(st, e, &a)) goto out;
  sg_edge_dirty page[PAGE];
  char after_kind[24] = "", after_id[129] = "";
  for (;;) {
    size_t n = 0;
    if (sg_store_edge_records(st, after_kind, after_id, page, PAGE, &n) != SG_E_OK) goto out;
    for (size_t i = 0; i < n; i++) {
      char key[160];
      snprintf(key, sizeof key, "%.23s/%.128s", page[i].kind, page[i].id);
      json_object_set_new(known, key, json_true());
      if (sg_edge_sync_record(st, e, page[i].kind, page[i].id))
        failed++;
      else
        written++;
    }
    if (n < PAGE) break;
    snprintf(after_kind, sizeof after_kind, "%s", page[n - 1].kind);
    snprintf(after_id, sizeof after_id, "%s", page[n - 1].id);
  }
  for (int k = 0; k < SG_EDGE__KINDS; k++) {
    walk w = {known, json_array(), sg_edge_kind_name((sg_edge_kind)k)};
    /* Collected first, written after: the walk does not race its own writes. */
    if (sg_edge_foreach(e, (sg_edge_kind)k, visit, &w) && errno != ENOENT) failed++;
    size_t i;
    json_t *id;
    json_array_foreach(w.stale, i, id) {
      if (sg_edge_sync_record(st, e, w.kind, json_string_value(id)))
        failed++;
      else
        removed++;
    }
    json_decref(w.stale);
  }
  uint64_t rev = 0;
  sg_edge_revision(e, &rev);
  *report =
      json_pack("{s:{s:I,s:I,s:I},s:{s:I,s:I,s:I,s:b,s:O},s:I}", "records", "written",
                (json_int_t)written, "removed", (json_int_t)removed, "failed", (json_int_t)failed,
                "artifacts", "needed", (json_int_t)a.needed, "present", (json_int_t)a.present,
                "restored", (json_int_t)a.restored, "storeKeepsCopies",
                sg_store_keeps_artifacts(st), "missing", a.missing, "revision", (json_int_t)rev);
  if (*report) rc = failed ? 1 : 0;
out:
  json_decref(a.missing);
  json_decref(known);
  return rc;
}
