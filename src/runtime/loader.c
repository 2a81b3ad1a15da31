/*
 * The runtime's loader thread: polls the edge store, builds and swaps in a new snapshot
 * when it changed (or a missing artifact is due a retry), flushes the access log and the
 * quota counters.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "common/util.h"
#include "common/version.h"
#include "runtime/server.h"
#include "search/artifact.h"
#include "state/state.h"

/* A remote edge's local artifact cache keeps what the snapshot serves, and for a while
 * what it served before (a rollback or a flip back finds it locally). */
#define CACHE_PRUNE_MS 60000
#define CACHE_KEEP_S 600

static void prune_cache(sg_runtime *rt, const sg__rt_snapshot *s) {
  const char **keep = calloc(s->n_arts + 1, sizeof *keep);
  if (!keep) return;
  for (size_t i = 0; i < s->n_arts; i++) keep[i] = s->arts[i]->hash;
  size_t removed = 0;
  if (sg_edge_cache_prune(rt->edge, keep, s->n_arts, CACHE_KEEP_S, &removed) == 0 && removed)
    fprintf(stderr, "{\"level\":\"info\",\"msg\":\"artifact cache pruned\",\"removed\":%zu}\n",
            removed);
  free(keep);
}

/* Huge pages for what the snapshot serves (sg_artifact_settle): the lookups' reads are
 * scattered over the whole artifact, and on small pages most of them also miss the TLB
 * (5-12 % of the lookup time: docs/PERFORMANCE.md, "Huge pages after the swap"). The loader
 * moves one step of one artifact per turn, after the artifact is already serving, so the
 * activation never waits for it and a new edge revision waits at most one step. */
#define SETTLE_STEP ((size_t)32 << 20)

/* One step; true while some artifact of s is left. When an artifact is done, one line
 * says how it went. A kernel without the advice (ENOSYS) turns settling off for the
 * process, and says so once. */
static bool settle_step(const sg__rt_snapshot *s) {
  static atomic_bool off; /* for the process: every runtime in it shares the kernel */
  for (size_t i = 0; i < s->n_arts && !atomic_load(&off); i++) {
    sg__rt_art *art = s->arts[i];
    size_t len = sg_artifact_size(art->a);
    if (art->settled >= len) continue;
    int64_t t0 = sg_mono_ms();
    int rc = sg_artifact_settle(art->a, &art->settled, SETTLE_STEP);
    int e = errno;
    art->settle_ms += sg_mono_ms() - t0;
    if (rc < 0 && e == ENOSYS) {
      atomic_store(&off, true);
      fprintf(stderr, "{\"level\":\"info\",\"msg\":\"artifacts stay on small pages: this "
                      "kernel cannot move them onto huge pages (MADV_COLLAPSE, Linux 6.1)\"}\n");
      return false;
    }
    if (rc > 0) art->settle_steps++;
    if (rc < 0 && !art->settle_failed++) art->settle_err = e;
    if (art->settled < len || !(art->settle_steps || art->settle_failed)) return true;
    if (art->settle_failed)
      fprintf(stderr,
              "{\"level\":\"info\",\"msg\":\"artifact left partly on small pages\","
              "\"hash\":\"%s\",\"bytes\":%zu,\"ms\":%lld,\"failedSteps\":%u,\"error\":\"%s\"}\n",
              art->hash, len, (long long)art->settle_ms, art->settle_failed,
              strerror(art->settle_err));
    else
      fprintf(stderr,
              "{\"level\":\"info\",\"msg\":\"artifact on huge pages\",\"hash\":\"%s\","
              "\"bytes\":%zu,\"ms\":%lld}\n",
              art->hash, len, (long long)art->settle_ms);
    return true;
  }
  return false;
}

/* Logs a hold once per spell of the same reason. */
static void log_hold(sg_runtime *rt, const char *why, const sg_edge_stamp *s, uint64_t rev) {
  static _Thread_local const char *last;
  if (why == last) return;
  last = why;
  if (!why) return;
  /* A rewrite under way (a first start, `admin edge rebuild`) is routine; an edge that
   * went back is not. */
  bool routine = strcmp(why, "the control plane is rewriting the edge") == 0;
  fprintf(stderr,
          "{\"level\":\"%s\",\"msg\":\"edge store behind what this runtime saw; holding "
          "its snapshot\",\"reason\":\"%s\",\"edgeRevision\":%llu,\"servedRevision\":%llu,"
          "\"edgeStamp\":{\"present\":%s,\"epoch\":%llu,\"heartbeatMs\":%lld},"
          "\"acceptedStamp\":{\"epoch\":%llu,\"heartbeatMs\":%lld}}\n",
          routine ? "info" : "warn", why, (unsigned long long)rev,
          (unsigned long long)rt->load_stamp.revision, s->present ? "true" : "false",
          (unsigned long long)s->epoch, (long long)s->heartbeat_ms,
          (unsigned long long)rt->stamp.epoch, (long long)rt->stamp.heartbeat_ms);
}

/* <state-dir>/edge-stamp: the accepted stamp, rewritten when it moves. */
static void stamp_path(const sg_runtime *rt, char *out, size_t n) {
  snprintf(out, n, "%s/edge-stamp", rt->state_dir);
}

static void stamp_keep(sg_runtime *rt) {
  if (!rt->stamp.present || sg_edge_stamp_cmp(&rt->stamp, &rt->saved) == 0) return;
  char p[4200], text[72];
  stamp_path(rt, p, sizeof p);
  if (sg_edge_stamp_format(&rt->stamp, text) == 0 &&
      sg_write_file_atomic(p, text, strlen(text)) == 0)
    rt->saved = rt->stamp;
}

void sg__rt_stamp_restore(sg_runtime *rt) {
  char p[4200], *text = NULL;
  size_t len = 0;
  stamp_path(rt, p, sizeof p);
  rt->saved = (sg_edge_stamp){0};
  if (sg_read_file(p, 71, &text, &len) == 0 && sg_edge_stamp_parse(text, len, &rt->saved))
    rt->saved = (sg_edge_stamp){0};
  free(text);
}

void sg__rt_stamp_final(sg_runtime *rt) {
  sg_edge_stamp s;
  if (!atomic_load(&rt->edge_verified) || !rt->stamp.present || sg_edge_stamp_get(rt->edge, &s) ||
      !s.present || s.epoch != rt->stamp.epoch || s.heartbeat_ms < rt->stamp.heartbeat_ms)
    return;
  rt->stamp = s;
  stamp_keep(rt);
}

/* A runtime that never held a guarded snapshot trusts one only once the control plane
 * moved the heartbeat past the stamp it loaded under (s: the stamp just read): the control
 * plane writes a heartbeat only on an edge it checked against the store, conditional on
 * the stamp it checked, so an edge that went back never gets one. */
static void confirm(sg_runtime *rt, const sg_edge_stamp *s) {
  if (!s->present || atomic_load(&rt->edge_verified) || s->epoch != rt->load_stamp.epoch ||
      s->heartbeat_ms <= rt->load_stamp.heartbeat_ms)
    return;
  atomic_store(&rt->edge_verified, true);
  if (sg_edge_stamp_cmp(s, &rt->stamp) > 0) rt->stamp = *s;
  stamp_keep(rt);
  fprintf(stderr,
          "{\"level\":\"info\",\"msg\":\"edge store confirmed current\","
          "\"epoch\":%llu}\n",
          (unsigned long long)s->epoch);
}

int sg__rt_edge_confirm_wait(sg_runtime *rt, int64_t wait_ms) {
  int64_t until = sg_mono_ms() + wait_ms;
  while (!atomic_load(&rt->edge_verified) && rt->load_stamp.present) {
    if (rt->cfg.edge_confirm) rt->cfg.edge_confirm(rt->cfg.edge_confirm_ctx);
    sg_edge_stamp s;
    if (sg_edge_stamp_get(rt->edge, &s) == 0) confirm(rt, &s);
    if (atomic_load(&rt->edge_verified) || sg_mono_ms() >= until) break;
    struct timespec ts = {0, 50 * 1000000L};
    nanosleep(&ts, NULL);
  }
  return atomic_load(&rt->edge_verified) ? 0 : -1;
}

/* Why the edge as read (stamp s, revision rev) must not be applied over what this runtime
 * serves, or NULL; *full: read every record (a new epoch, or the first stamp). */
static const char *hold_reason(const sg_runtime *rt, const sg__rt_snapshot *cur,
                               const sg_edge_stamp *s, uint64_t rev, bool *full) {
  bool have = cur && !cur->unloaded;
  *full = false;
  if (rt->stamp.present) {
    if (!s->present) return "the edge lost its guard stamp";
    if (s->epoch < rt->stamp.epoch) return "older guard epoch";
    if (s->epoch > rt->stamp.epoch) {
      if (s->heartbeat_ms == 0) return "the control plane is rewriting the edge";
      *full = true;
      return NULL;
    }
    if (s->heartbeat_ms < rt->stamp.heartbeat_ms) return "older guard heartbeat";
  } else if (s->present) {
    /* The first stamp this runtime sees: everything is read again under it. */
    if (s->heartbeat_ms == 0) return "the control plane is rewriting the edge";
    *full = true;
    return NULL;
  }
  /* Never a lower revision without a new epoch: an emptied edge (revision 0 or gone) or
   * one restored from an older copy keeps the snapshot that was current. */
  if (have && rev < cur->revision)
    return rev == 0 ? "edge revision gone" : "edge revision went back";
  return NULL;
}

int sg__rt_edge_load(sg_runtime *rt, const sg__rt_snapshot *cur, bool retry,
                     sg__rt_snapshot **out) {
  sg_edge_stamp s, after;
  uint64_t rev;
  *out = NULL;
  if (sg_edge_stamp_get(rt->edge, &s) || sg_edge_revision(rt->edge, &rev)) return -1;
  bool full;
  const char *why = hold_reason(rt, cur, &s, rev, &full);
  /* An edge that reads as empty may be one that cannot be reached at all (a directory
   * moved away): that is unavailable, not behind. */
  if (why && (!s.present || rev == 0) && sg_edge_check(rt->edge)) return -1;
  log_hold(rt, why, &s, rev);
  atomic_store(&rt->edge_behind, why != NULL);
  if (why) return 1;
  confirm(rt, &s);
  if (sg_edge_stamp_cmp(&s, &rt->stamp) > 0 && atomic_load(&rt->edge_verified)) {
    rt->stamp = s;
    stamp_keep(rt);
  }
  if (cur && !cur->unloaded && !full && !retry && rev == cur->revision) return 2;
  if (full) sg__records_invalidate(rt->records);
  sg__rt_snapshot *next;
  if (sg__snapshot_load(rt->edge, rt->state, cur, &rt->records, &next)) return -1;
  /* The stamp again: an edge that went back while the records were read shows an older
   * one, and what was read (possibly mixed) is dropped. */
  if (s.present && (sg_edge_stamp_get(rt->edge, &after) || !after.present ||
                    after.epoch != s.epoch || after.heartbeat_ms < s.heartbeat_ms)) {
    int e2 = errno;
    sg__snapshot_free(next);
    sg__records_invalidate(rt->records);
    log_hold(rt, "the edge changed epoch or went back during the load", &s, rev);
    errno = e2;
    return 1;
  }
  /* A runtime that never held a guarded snapshot starts unconfirmed: the stamp it loaded
   * under may be an old copy's. Unless it is exactly the stamp this runtime accepted last
   * before a restart: then the edge is the one it last found confirmed, or newer (forward
   * writes only; an edge put back in time would carry an older stamp). */
  if (s.present && !rt->loaded_once)
    atomic_store(&rt->edge_verified, rt->saved.present && sg_edge_stamp_cmp(&s, &rt->saved) == 0);
  if (!s.present && !rt->stamp.present) atomic_store(&rt->edge_verified, true);
  rt->load_stamp = s;
  if (s.present && (full || atomic_load(&rt->edge_verified)) &&
      sg_edge_stamp_cmp(&s, &rt->stamp) > 0)
    rt->stamp = s;
  if (atomic_load(&rt->edge_verified)) stamp_keep(rt);
  rt->loaded_once = true;
  /* With the control plane in this process, ask its guard now rather than wait a beat. */
  if (s.present && !atomic_load(&rt->edge_verified) && rt->cfg.edge_confirm &&
      rt->cfg.edge_confirm(rt->cfg.edge_confirm_ctx) == 0 &&
      sg_edge_stamp_get(rt->edge, &after) == 0)
    confirm(rt, &after);
  *out = next;
  return 0;
}

/* ---- presence (docs/EDGE.md "Runtime records") -------------------------------------
 * The loader announces this process to the edge: a random id for its lifetime, the
 * artifact formats this build reads, refreshed every SG_EDGE_RUNTIME_BEAT_S seconds, so
 * the control plane recompiles into a newer format only once every live runtime reads it.
 * A failed write is retried at the next beat; the record outlives three missed beats. */
static void presence_id(char out[SG_EDGE_MAX_ID + 1]) {
  uint8_t r[12];
  randombytes_buf(r, sizeof r);
  char hex[25];
  sg_hex(r, sizeof r, hex);
  snprintf(out, SG_EDGE_MAX_ID + 1, "rt_%s", hex);
}

static void presence_beat(sg_runtime *rt, const char *id, bool *failing) {
  sg_edge_runtime_rec r = {.heartbeat_ms = sg_now_ms(), .ttl_s = SG_EDGE_RUNTIME_TTL_S};
  snprintf(r.id, sizeof r.id, "%s", id);
  snprintf(r.version, sizeof r.version, "%s", sg_version());
  for (uint32_t v = 1; v < 64; v++)
    if (sg_artifact_format_readable(v)) r.formats |= (uint64_t)1 << v;
  char *json = NULL;
  size_t len = 0;
  int rc = sg_edge_runtime_encode(&r, &json, &len);
  if (rc == 0) rc = sg_edge_runtime_put(rt->edge, id, json, len, r.ttl_s);
  free(json);
  if (rc && !*failing)
    fprintf(stderr,
            "{\"level\":\"warn\",\"msg\":\"runtime record not written\","
            "\"runtimeId\":\"%s\",\"detail\":\"%s\"}\n",
            id, strerror(errno));
  *failing = rc != 0;
}

void *sg__rt_loader_main(void *arg) {
  sg_runtime *rt = arg;
  int64_t last_flush = sg_mono_ms(), last_retry = sg_mono_ms(), last_prune = 0;
  /* A shared state is reconciled twice a second: a runtime learns what the others served
   * at most a second after they served it (their flush, then its own), which bounds a
   * fleet's quota overshoot to about a second of its traffic. */
  sg_rt_state_stats stats;
  sg_rt_state_stats_get(rt->state, &stats);
  const int64_t flush_ms = stats.shared ? 500 : 1000;
  bool failing = false, presence_failing = false;
  char presence[SG_EDGE_MAX_ID + 1];
  presence_id(presence);
  presence_beat(rt, presence, &presence_failing);
  int64_t last_beat = sg_mono_ms();
  /* A list whose artifact is missing or damaged is retried on its own, every second at
   * first and less often while it stays bad (reading and hashing a large artifact is not
   * free); a new edge revision reloads at once. */
  int64_t retry_ms = 1000;
  /* An edge that signs its changes (a directory: inotify) wakes the loader at once, so an
   * activation does not wait for the next poll; the poll period still bounds every wait.
   * The workers' stop eventfd ends the wait on a stop. */
  bool watching = true;
  /* Some artifact is still to be settled onto huge pages: the next turn does not wait. */
  bool settling = false;
  pthread_mutex_lock(&rt->stop_mu);
  while (!atomic_load(&rt->stopping)) {
    int w = -1;
    int wait_ms = settling ? 0 : (int)rt->cfg.poll_ms;
    if (watching) {
      pthread_mutex_unlock(&rt->stop_mu);
      w = sg_edge_wait(rt->edge, rt->wake_fd, wait_ms);
      if (w && errno == ENOTSUP) watching = false; /* no signs of change (Redis) */
      pthread_mutex_lock(&rt->stop_mu);
    }
    /* No watch (Redis), or it could not be made (an edge folder not there yet, no inotify
     * instance left): the poll period alone; the watch is tried again next time. */
    if (w && !atomic_load(&rt->stopping)) {
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      ts.tv_nsec += (long)wait_ms * 1000000L;
      while (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
      }
      pthread_cond_timedwait(&rt->stop_cv, &rt->stop_mu, &ts);
    }
    if (atomic_load(&rt->stopping)) break;
    pthread_mutex_unlock(&rt->stop_mu);

    /* The loader is the only writer of rcu.cur, so it may read it without entering. */
    sg__rt_snapshot *cur = atomic_load(&rt->rcu.cur);
    int64_t now = sg_mono_ms();
    /* A placeholder (the edge store was unreadable at start) is retried every period. */
    bool retry = (cur->missing_artifact && now - last_retry >= retry_ms) || cur->unloaded;
    if (retry) last_retry = now;
    sg__rt_snapshot *next;
    int rc = sg__rt_edge_load(rt, cur, retry, &next);
    bool synced = rc >= 0;
    if (rc == 0) {
      if (!retry)
        retry_ms = 1000;
      else if (!cur->unloaded && retry_ms < (cur->fetch_failed ? 4000 : 30000))
        retry_ms *= 2; /* a fetch that failed (Redis blinked) is worth retrying sooner */
      sg__snapshot_free(sg__rcu_publish(&rt->rcu, next));
      if (!next->missing_artifact && now - last_prune >= CACHE_PRUNE_MS) {
        last_prune = now;
        prune_cache(rt, next);
      }
    } else if (rc < 0 && !failing) {
      /* Once per failure spell, not every poll period. */
      fprintf(stderr, "{\"error\":\"edge reload failed: %s\"}\n", strerror(errno));
    }
    failing = !synced;
    if (synced) atomic_store(&rt->edge_synced_ms, now);
    if (now - last_beat >= SG_EDGE_RUNTIME_BEAT_S * 1000) {
      last_beat = now;
      presence_beat(rt, presence, &presence_failing);
    }
    /* The loader is the only one that frees snapshots: what rcu.cur holds stays open. */
    settling = settle_step(atomic_load(&rt->rcu.cur));
    sg__rt_log_flush();
    if (now - last_flush >= flush_ms) {
      last_flush = now;
      if (sg_rt_state_flush(rt->state, sg_now_s()))
        fprintf(stderr, "{\"error\":\"quota flush failed: %s\"}\n", strerror(errno));
    }
    pthread_mutex_lock(&rt->stop_mu);
  }
  pthread_mutex_unlock(&rt->stop_mu);
  /* A clean stop stops counting at once rather than when the record expires. */
  sg_edge_runtime_delete(rt->edge, presence);
  return NULL;
}
