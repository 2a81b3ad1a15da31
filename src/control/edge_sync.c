/*
 * The edge outbox's writer (edge_sync.h): rebuilds edge records from the store.
 */
#include "control/edge_sync.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "control/internal.h"
#include "edge/records.h"

/* Dirty records handled per store read. */
#define BATCH 64

/* The highest edge revision this process saw a write return (or its guard read), and
 * whether a write since returned a lower one: the edge went back under the outbox (a
 * failover to a replica that missed writes). The guard rewrites the edge then. */
static _Atomic uint64_t seen_revision;
static atomic_bool went_back;

void sg_edge_sync_observe(uint64_t rev) {
  uint64_t cur = atomic_load(&seen_revision);
  while (rev > cur && !atomic_compare_exchange_weak(&seen_revision, &cur, rev)) {}
}

bool sg_edge_sync_went_back(void) { return atomic_exchange(&went_back, false); }

uint64_t sg_edge_sync_seen(void) { return atomic_load(&seen_revision); }

typedef struct {
  sg_store *st;
  const char *kind, *id;
  sg_edge_kind k;
  int64_t gen; /* the generation the built record answers for */
} build_ctx;

static int kind_of(const char *name, sg_edge_kind *k) {
  for (int i = 0; i < SG_EDGE__KINDS; i++)
    if (strcmp(sg_edge_kind_name((sg_edge_kind)i), name) == 0) {
      *k = (sg_edge_kind)i;
      return 0;
    }
  return -1;
}

/* sg_edge_build_cb: reads the record's source inside the edge writer lock. */
static int build(void *arg, char **json, size_t *len, uint64_t *seq) {
  build_ctx *b = arg;
  json_t *src = NULL;
  sg_err e = sg_store_edge_source(b->st, b->kind, b->id, &b->gen, &src);
  /* The outbox generation orders the writes: the edge never takes an older one. */
  if (e == SG_E_OK || e == SG_E_NOT_FOUND) *seq = b->gen > 0 ? (uint64_t)b->gen : 0;
  if (e == SG_E_NOT_FOUND) return 1;
  if (e != SG_E_OK) return -1;
  int rc = sg_edge_record_encode(b->k, src, sg_now_s(), json, len);
  json_decref(src);
  return rc;
}

int sg_edge_sync_record(sg_store *st, sg_edge *e, const char *kind, const char *id) {
  build_ctx b = {st, kind, id, SG_EDGE__KINDS, 0};
  uint64_t rev = 0;
  /* Any write that starts after a revision was returned gets a higher one, unless the
   * edge lost what it held. */
  uint64_t before = atomic_load(&seen_revision);
  /* SG_EDGE_STALE: a writer that read a newer generation got there first; confirming the
   * generation read here is still right (done never goes down). */
  if (kind_of(kind, &b.k) || sg_edge_update(e, b.k, id, build, &b, &rev) < 0) {
    fprintf(stderr,
            "{\"level\":\"error\",\"msg\":\"edge write failed; retried\",\"kind\":\"%s\","
            "\"id\":\"%s\",\"detail\":\"%s\"}\n",
            kind, id, strerror(errno));
    return -1;
  }
  if (rev < before) {
    atomic_store(&went_back, true);
    fprintf(stderr,
            "{\"level\":\"warn\",\"msg\":\"edge write returned a revision below one already "
            "seen; the guard rewrites the edge\",\"revision\":%llu,\"seen\":%llu}\n",
            (unsigned long long)rev, (unsigned long long)before);
  }
  sg_edge_sync_observe(rev);
  return sg_store_edge_done(st, kind, id, b.gen, (int64_t)rev) == SG_E_OK ? 0 : -1;
}

int sg_edge_sync_pending(sg_store *st, sg_edge *e) {
  sg_edge_dirty d[BATCH];
  size_t n = 0;
  int failed = 0;
  /* Batches until none is left; after a failure the same records would come back first,
   * so the call ends there and the caller retries on its next tick. */
  for (int round = 0; round < 1000 && failed == 0; round++) {
    if (sg_store_edge_dirty(st, d, BATCH, &n) != SG_E_OK) return -1;
    for (size_t i = 0; i < n; i++)
      if (sg_edge_sync_record(st, e, d[i].kind, d[i].id)) failed++;
    if (n < BATCH) break;
  }
  return failed;
}

json_t *sg_edge_sync_state(sg_store *st, const char *kind, const char *id) {
  int64_t want = 0, done = 0, rev = 0;
  bool ok = sg_store_edge_state(st, kind, id, &want, &done, &rev) == SG_E_OK;
  return json_pack("{s:I,s:s}", "revision", (json_int_t)rev, "state",
                   ok && want <= done ? "synced" : "pending");
}

/* ---- control-plane glue ---------------------------------------------------------------- */

json_t *sg__edge_sync_state(sg_control *c, const char *kind, const char *id) {
  json_t *o = sg_edge_sync_state(c->cfg.store, kind, id);
  /* An edge the guard found behind the store, or is rewriting, holds no record as
   * stored, whatever the outbox confirmed before it went back. */
  if (o && atomic_load(&c->guard.state) != SG_EDGE_GUARD_CURRENT)
    json_object_set_new(o, "state", json_string("pending"));
  return o;
}

json_t *sg__edge_sync_list(sg_control *c, const char *list_id) {
  int64_t want = 0, done = 0, rev = 0;
  /* Only a dirty record is written: a PATCH of the name alone bumps no edge revision. */
  if (sg_store_edge_state(c->cfg.store, "lists", list_id, &want, &done, &rev) != SG_E_OK ||
      want > done)
    sg_edge_sync_record(c->cfg.store, c->cfg.edge, "lists", list_id);
  return sg__edge_sync_state(c, "lists", list_id);
}
