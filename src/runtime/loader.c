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

#include "common/util.h"
#include "runtime/server.h"
#include "runtime/state.h"

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

void *sg__rt_loader_main(void *arg) {
  sg_runtime *rt = arg;
  int64_t last_flush = sg_mono_ms(), last_retry = sg_mono_ms(), last_prune = 0;
  /* A shared state is reconciled twice a second: a runtime learns what the others served
   * at most a second after they served it (their flush, then its own), which bounds a
   * fleet's quota overshoot to about a second of its traffic. */
  sg_rt_state_stats stats;
  sg_rt_state_stats_get(rt->state, &stats);
  const int64_t flush_ms = stats.shared ? 500 : 1000;
  bool failing = false;
  /* A list whose artifact is missing or damaged is retried on its own, every second at
   * first and less often while it stays bad (reading and hashing a large artifact is not
   * free); a new edge revision reloads at once. */
  int64_t retry_ms = 1000;
  pthread_mutex_lock(&rt->stop_mu);
  while (!atomic_load(&rt->stopping)) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += (long)rt->cfg.poll_ms * 1000000L;
    while (ts.tv_nsec >= 1000000000L) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&rt->stop_cv, &rt->stop_mu, &ts);
    if (atomic_load(&rt->stopping)) break;
    pthread_mutex_unlock(&rt->stop_mu);

    /* The loader is the only writer of rcu.cur, so it may read it without entering. */
    sg__rt_snapshot *cur = atomic_load(&rt->rcu.cur);
    uint64_t rev;
    int64_t now = sg_mono_ms();
    /* A placeholder (the edge store was unreadable at start) is retried every period. */
    bool retry = (cur->missing_artifact && now - last_retry >= retry_ms) || cur->unloaded;
    bool synced = sg_edge_revision(rt->edge, &rev) == 0;
    if (synced && (rev != cur->revision || retry)) {
      sg__rt_snapshot *next;
      if (retry) last_retry = now;
      if (!retry)
        retry_ms = 1000;
      else if (!cur->unloaded && retry_ms < (cur->fetch_failed ? 4000 : 30000))
        retry_ms *= 2; /* a fetch that failed (Redis blinked) is worth retrying sooner */
      if (sg__snapshot_load(rt->edge, rt->state, cur, &rt->records, &next) == 0) {
        sg__snapshot_free(sg__rcu_publish(&rt->rcu, next));
        if (!next->missing_artifact && now - last_prune >= CACHE_PRUNE_MS) {
          last_prune = now;
          prune_cache(rt, next);
        }
      } else {
        synced = false;
        /* Once per failure spell, not every poll period. */
        if (!failing) fprintf(stderr, "{\"error\":\"edge reload failed: %s\"}\n", strerror(errno));
      }
    }
    failing = !synced;
    if (synced) atomic_store(&rt->edge_synced_ms, now);
    sg__rt_log_flush();
    if (now - last_flush >= flush_ms) {
      last_flush = now;
      if (sg_rt_state_flush(rt->state, sg_now_s()))
        fprintf(stderr, "{\"error\":\"quota flush failed: %s\"}\n", strerror(errno));
    }
    pthread_mutex_lock(&rt->stop_mu);
  }
  pthread_mutex_unlock(&rt->stop_mu);
  return NULL;
}
