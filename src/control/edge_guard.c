/*
 * The edge guard (edge_guard.h; docs/EDGE.md, "The staleness guard").
 */
#include "control/edge_guard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "control/edge_sync.h"

static void log_rewrite(const char *why, uint64_t epoch, const sg_edge_stamp *s, uint64_t rev,
                        const sg_edge_guard *g) {
  /* A store's first start (or the first of a version with the guard) is routine. */
  bool first = strcmp(why, "never guarded") == 0;
  fprintf(stderr,
          "{\"level\":\"%s\",\"msg\":\"%s\",\"reason\":\"%s\","
          "\"epoch\":%llu,\"edgeStamp\":{\"present\":%s,\"epoch\":%llu,\"heartbeatMs\":%lld},"
          "\"edgeRevision\":%llu,\"storeEpoch\":%llu,\"storeHeartbeatMs\":%lld,"
          "\"confirmedRevision\":%lld}\n",
          first ? "info" : "warn",
          first ? "edge written whole from the store (first guarded start)"
                : "edge behind the store; rewriting it",
          why, (unsigned long long)epoch, s->present ? "true" : "false",
          (unsigned long long)s->epoch, (long long)s->heartbeat_ms, (unsigned long long)rev,
          (unsigned long long)g->epoch, (long long)g->heartbeat_ms,
          (long long)g->confirmed_revision);
}

/* The rewrite itself, above epoch `above` (the highest either side has seen). */
static int rewrite(sg_store *st, sg_edge *e, sg_edge_guard_proc *p, uint64_t above, int64_t min_rev,
                   json_t **report) {
  *report = NULL;
  uint64_t epoch;
  if (sg_store_edge_guard_begin(st, above, &epoch) != SG_E_OK) return -1;
  p->own_epoch = epoch;
  /* Open the epoch on the edge: from here until the stamp completes, a reader that
   * follows the stamp holds what it has. A higher epoch already there means another
   * process started a later rewrite: it finishes the job. */
  sg_edge_stamp open = {true, epoch, 0, 0};
  int rc = sg_edge_stamp_put(e, NULL, &open);
  if (rc == SG_EDGE_STALE) return 1;
  uint64_t rev;
  /* Above every revision confirmed in the store and seen by this process, so no reader
   * and no later write check sees the revision go back. */
  uint64_t floor = (uint64_t)(min_rev > 0 ? min_rev : 0);
  if (sg_edge_sync_seen() > floor) floor = sg_edge_sync_seen();
  if (rc || sg_edge_raise_revision(e, floor + 1, &rev)) return -1;
  sg_edge_sync_observe(rev);
  /* What writes found before the raise is what this rewrite repairs. */
  sg_edge_sync_went_back();
  rc = sg_edge_sync_rebuild(st, e, report);
  if (rc != 0) return rc;
  sg_edge_guard g;
  if (sg_store_edge_guard_get(st, &g) != SG_E_OK || sg_edge_revision(e, &rev)) return -1;
  sg_edge_stamp done = {true, epoch, g.now_ms > 0 ? g.now_ms : 1, rev};
  rc = sg_edge_stamp_put(e, &open, &done);
  if (rc) return rc == SG_EDGE_STALE ? 1 : -1;
  if (sg_store_edge_guard_beat(st, epoch, done.heartbeat_ms) != SG_E_OK) return -1;
  atomic_fetch_add(&p->rewrites, 1);
  json_object_set_new(*report, "epoch", json_integer((json_int_t)epoch));
  return 0;
}

int sg_edge_guard_rewrite(sg_store *st, sg_edge *e, sg_edge_guard_proc *p, json_t **report) {
  sg_edge_guard g;
  sg_edge_stamp s;
  uint64_t rev;
  *report = NULL;
  if (sg_store_edge_guard_get(st, &g) != SG_E_OK || sg_edge_stamp_get(e, &s) ||
      sg_edge_revision(e, &rev))
    return -1;
  int64_t min_rev = g.confirmed_revision > (int64_t)rev ? g.confirmed_revision : (int64_t)rev;
  int rc = rewrite(st, e, p, g.epoch > s.epoch ? g.epoch : s.epoch, min_rev, report);
  atomic_store(&p->state, rc == 0 ? SG_EDGE_GUARD_CURRENT : SG_EDGE_GUARD_REPAIRING);
  return rc;
}

/* Why the edge is not current, or NULL when it is. */
static const char *behind(const sg_edge_guard *g, const sg_edge_stamp *s, uint64_t rev) {
  if (g->epoch == 0) return "never guarded";
  if (!s->present) return rev == 0 ? "edge empty (revision gone)" : "edge has no stamp";
  if (s->epoch != g->epoch) return "epoch differs from the store's";
  if (s->heartbeat_ms == 0 || g->heartbeat_ms == 0) return "rewrite under way";
  if (s->heartbeat_ms < g->heartbeat_ms) return "edge stamp older than the last heartbeat";
  if ((int64_t)rev < g->confirmed_revision) return "edge revision below a confirmed write";
  if (rev < s->revision) return "edge revision below its stamp";
  return NULL;
}

sg_edge_guard_state sg_edge_guard_tick(sg_store *st, sg_edge *e, sg_edge_guard_proc *p) {
  sg_edge_guard g;
  sg_edge_stamp s;
  uint64_t rev;
  /* The store first, then the edge: a heartbeat is written to the edge before the store,
   * so an edge read after the store holds a heartbeat at least as new, unless it went
   * back. */
  if (sg_store_edge_guard_get(st, &g) != SG_E_OK || sg_edge_stamp_get(e, &s) ||
      sg_edge_revision(e, &rev)) {
    atomic_store(&p->state, SG_EDGE_GUARD_UNKNOWN);
    return SG_EDGE_GUARD_UNKNOWN;
  }
  const char *why = behind(&g, &s, rev);
  /* An edge that reads as empty because it cannot be reached (a directory moved away) is
   * unavailable: there is nothing to rewrite it into yet. And an edge that was guarded
   * and reads as empty is rewritten only when the next tick finds it so too: a directory
   * that came back between the reads above must not cost a whole rewrite (a flushed Redis
   * is still rewritten within two ticks). */
  bool empty = why && (!s.present || rev == 0);
  if (empty && sg_edge_check(e)) {
    atomic_store(&p->state, SG_EDGE_GUARD_UNKNOWN);
    return SG_EDGE_GUARD_UNKNOWN;
  }
  p->empty_ticks = empty && g.epoch > 0 ? p->empty_ticks + 1 : 0;
  if (p->empty_ticks == 1) {
    atomic_store(&p->state, SG_EDGE_GUARD_UNKNOWN);
    return SG_EDGE_GUARD_UNKNOWN;
  }
  if (!why && sg_edge_sync_went_back()) why = "a record write returned a revision below one seen";
  if (!why) {
    sg_edge_sync_observe(rev);
    p->waiting_epoch = 0;
    sg_edge_stamp next = {true, g.epoch, g.now_ms, rev};
    if (next.heartbeat_ms <= s.heartbeat_ms) next.heartbeat_ms = s.heartbeat_ms + 1;
    /* Conditional on the stamp checked: an edge that went back since then keeps its old
     * stamp, and the next tick sees it. */
    int rc = sg_edge_stamp_put(e, &s, &next);
    if (rc == 0) sg_store_edge_guard_beat(st, g.epoch, next.heartbeat_ms);
    atomic_store(&p->state, rc < 0 ? SG_EDGE_GUARD_UNKNOWN : SG_EDGE_GUARD_CURRENT);
    return rc < 0 ? SG_EDGE_GUARD_UNKNOWN : SG_EDGE_GUARD_CURRENT;
  }
  /* Another process's rewrite (its epoch open on both sides) is given time to finish;
   * one of our own that failed is retried at once in a new epoch. */
  if (s.present && s.epoch == g.epoch && s.heartbeat_ms == 0 && g.heartbeat_ms == 0 &&
      g.epoch != p->own_epoch) {
    int64_t now = sg_mono_ms();
    if (p->waiting_epoch != g.epoch) {
      p->waiting_epoch = g.epoch;
      p->waiting_since = now;
    }
    if (now - p->waiting_since < SG_EDGE_GUARD_TAKEOVER_MS) {
      atomic_store(&p->state, SG_EDGE_GUARD_REPAIRING);
      return SG_EDGE_GUARD_REPAIRING;
    }
    why = "another process's rewrite did not finish";
  }
  p->waiting_epoch = 0;
  uint64_t above = g.epoch > s.epoch ? g.epoch : s.epoch;
  log_rewrite(why, above + 1, &s, rev, &g);
  int64_t min_rev = g.confirmed_revision > (int64_t)rev ? g.confirmed_revision : (int64_t)rev;
  json_t *report = NULL;
  int rc = rewrite(st, e, p, above, min_rev, &report);
  if (report) {
    char *text = json_dumps(report, JSON_COMPACT);
    fprintf(stderr, "{\"level\":\"%s\",\"msg\":\"edge rewritten from the store\",\"report\":%s}\n",
            rc == 0 ? "info" : "error", text ? text : "null");
    free(text);
    json_decref(report);
  }
  sg_edge_guard_state out = rc == 0 ? SG_EDGE_GUARD_CURRENT : SG_EDGE_GUARD_REPAIRING;
  atomic_store(&p->state, out);
  return out;
}
