/*
 * The publish pipeline and its background worker.
 *
 *   queued --validate fails--> draft (validationErrors; nothing served changes)
 *   queued --compile, write artifact (temp+fsync+rename)--> staged
 *   staged --one store transaction--> active (previous active -> superseded)
 *   then the list's edge record is rewritten: the runtime switches on that write.
 *   queued|staged --internal error / too many attempts--> failed
 *
 * Every version has its row from the moment it is allocated, so the versions table is
 * the work queue: a version that is queued or staged is unfinished business, whoever
 * created it. At start the worker resumes all of them (a crash mid-publish leaves the
 * previous version active and served; the interrupted one is finished on restart), and
 * rewrites every edge record the store marks dirty (a change whose edge write failed or
 * never happened: see edge_sync.h), then keeps doing so every second.
 *
 * Only one pipeline run per list at a time: an in-process per-list lock (a synchronous
 * publish waits for it; see versions_create.c). Across processes a run first claims its
 * version with a lease in the store (an attempt is counted only on a claim), a renewer
 * thread extends the leases this process holds every third of their duration, and a
 * dead process's lease runs out so another process finishes its version. The worker
 * picks versions round-robin across workspaces, and an older async version of a list
 * with a newer one waiting is superseded without a compile (coalescing). The store's
 * conditional transitions keep things safe whatever happens: a version is staged once and
 * activated once, and an older version never replaces a newer active one. See
 * docs/PUBLISHING.md.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/arena.h"
#include "common/metrics.h"
#include "common/util.h"
#include "compiler/compiler.h"
#include "control/internal.h"
#include "edge/edge.h"

/* The largest list a publish accepts (a compile-time default; no flag sets it). A
 * bigger one becomes a draft with a too_many_items validation error. */
#ifndef SG_PUBLISH_MAX_ITEMS
#define SG_PUBLISH_MAX_ITEMS 5000000
#endif
/* A version whose pipeline was started this many times without resolving (the process
 * died each time) is marked failed instead of being retried for ever. */
#define MAX_ATTEMPTS 5
/* Items read per store call while loading a snapshot. */
#define LOAD_CHUNK 10000
/* The worker also wakes on its own this often, to rewrite edge records whose write failed
 * (the edge outbox); while the edge keeps failing it retries less often, up to this. */
#define WORKER_TICK_MS 1000
#define SYNC_BACKOFF_MAX_MS 4000
/* How often the worker truncates the store's WAL (when no reader is in the way). */
#define CHECKPOINT_MS 5000
/* How often a request waiting for another process's run of its version looks again. */
#define LEASE_POLL_MS 50
/* Versions the worker runs before it looks at its doorbell again. */
#define WORKER_RUNS_PER_WAKE 64

/* ---- per-list locks -------------------------------------------------------------------- */

typedef struct list_lock {
  struct list_lock *next;
  char list_id[64];
  bool busy;
  int refs; /* holders + waiters; the entry is freed when it drops to 0 */
} list_lock;

struct sg__publisher {
  pthread_mutex_t mu;          /* guards everything below */
  pthread_cond_t freed;        /* broadcast when a list lock is released */
  pthread_cond_t wake;         /* the worker's doorbell */
  pthread_cond_t wake_renewer; /* rung at stop */
  list_lock *locks;
  bool kick, stop, started, renewing, listening, guarding, recompiling;
  int held; /* runs holding a store lease now: the renewer works only while > 0 */
  pthread_t thread, renewer, listener, guard, recompiler;
};

static void deadline_in(struct timespec *ts, int64_t ms) {
  clock_gettime(CLOCK_REALTIME, ts);
  ts->tv_sec += ms / 1000;
  ts->tv_nsec += (long)(ms % 1000) * 1000000L;
  if (ts->tv_nsec >= 1000000000L) {
    ts->tv_sec++;
    ts->tv_nsec -= 1000000000L;
  }
}

/* Unlinks and frees e when nobody holds or waits for it. Call with p->mu held. */
static void lock_drop(struct sg__publisher *p, list_lock *e) {
  if (--e->refs > 0) return;
  for (list_lock **pp = &p->locks; *pp; pp = &(*pp)->next)
    if (*pp == e) {
      *pp = e->next;
      break;
    }
  free(e);
}

/* Takes list_id's publish lock, waiting at most wait_ms (negative: for ever). Returns 0,
 * 1 on timeout, -1 on OOM. */
static int lock_list(struct sg__publisher *p, const char *list_id, int64_t wait_ms) {
  struct timespec until;
  if (wait_ms >= 0) deadline_in(&until, wait_ms);
  pthread_mutex_lock(&p->mu);
  list_lock *e = p->locks;
  while (e && strcmp(e->list_id, list_id) != 0) e = e->next;
  if (!e) {
    if (!(e = calloc(1, sizeof *e))) {
      pthread_mutex_unlock(&p->mu);
      return -1;
    }
    snprintf(e->list_id, sizeof e->list_id, "%s", list_id);
    e->next = p->locks;
    p->locks = e;
  }
  e->refs++;
  while (e->busy) {
    int rc = wait_ms >= 0 ? pthread_cond_timedwait(&p->freed, &p->mu, &until)
                          : pthread_cond_wait(&p->freed, &p->mu);
    if (rc == ETIMEDOUT && e->busy) {
      lock_drop(p, e);
      pthread_mutex_unlock(&p->mu);
      return 1;
    }
  }
  e->busy = true;
  pthread_mutex_unlock(&p->mu);
  return 0;
}

/* Releases list_id's publish lock and rings the worker (it may have skipped work). */
static void unlock_list(struct sg__publisher *p, const char *list_id) {
  pthread_mutex_lock(&p->mu);
  for (list_lock *e = p->locks; e; e = e->next)
    if (strcmp(e->list_id, list_id) == 0) {
      e->busy = false;
      lock_drop(p, e);
      break;
    }
  pthread_cond_broadcast(&p->freed);
  p->kick = true;
  pthread_cond_signal(&p->wake);
  pthread_mutex_unlock(&p->mu);
}

/* ---- loading a snapshot into compiler input ------------------------------------------------ */

/* Compiler input for one version: the item structs in one malloc'd array, every string
 * and small array in the arena. Both are released by loader_free. */
typedef struct {
  sg_arena ar;
  sg_compile_item *items;
  size_t n, cap;
} loader;

static void loader_free(loader *l) {
  sg_arena_free(&l->ar);
  free(l->items);
  memset(l, 0, sizeof *l);
}

/* Copies a JSON array of strings into the arena. An empty array gives a non-NULL
 * pointer with *n = 0 ("explicitly none", which the compiler tells from "absent"). */
static int load_aliases(loader *l, const json_t *arr, const char *const **out, size_t *n) {
  size_t k = json_array_size(arr);
  const char **a = sg_arena_alloc(&l->ar, (k ? k : 1) * sizeof *a);
  if (!a) return -1;
  for (size_t i = 0; i < k; i++) {
    const json_t *s = json_array_get(arr, i);
    if (!json_is_string(s)) return -1;
    if (!(a[i] = sg_arena_strndup(&l->ar, json_string_value(s), json_string_length(s)))) return -1;
  }
  *out = a;
  *n = k;
  return 0;
}

static int load_locales(loader *l, const json_t *obj, sg_compile_item *it) {
  size_t k = json_object_size(obj);
  sg_item_locale *ls = sg_arena_alloc(&l->ar, (k ? k : 1) * sizeof *ls);
  if (!ls) return -1;
  size_t i = 0;
  const char *tag;
  json_t *v;
  json_object_foreach((json_t *)obj, tag, v) {
    sg_item_locale *x = &ls[i++];
    memset(x, 0, sizeof *x);
    if (!(x->locale = sg_arena_strdup(&l->ar, tag))) return -1;
    const json_t *dv = json_object_get(v, "displayValue");
    if (json_is_string(dv) && !(x->display_value = sg_arena_strdup(&l->ar, json_string_value(dv))))
      return -1;
    const json_t *al = json_object_get(v, "aliases");
    if (json_is_array(al) && load_aliases(l, al, &x->aliases, &x->n_aliases)) return -1;
    const json_t *ds = json_object_get(v, "description");
    if (json_is_string(ds) && !(x->description = sg_arena_strdup(&l->ar, json_string_value(ds))))
      return -1;
  }
  it->locales = ls;
  it->n_locales = i;
  return 0;
}

/* Store callback: appends one row as an sg_compile_item. Returns non-zero on OOM or a
 * corrupt stored JSON column (which stops the walk). */
static int load_row(const sg_store_item_row *row, void *ctx) {
  loader *l = ctx;
  if (l->n == l->cap) {
    size_t nc = l->cap ? l->cap * 2 : 1024;
    sg_compile_item *p = realloc(l->items, nc * sizeof *p);
    if (!p) return -1;
    l->items = p;
    l->cap = nc;
  }
  sg_compile_item *it = &l->items[l->n];
  memset(it, 0, sizeof *it);
  if (!(it->id = sg_arena_strdup(&l->ar, row->id)) ||
      !(it->value = sg_arena_strdup(&l->ar, row->value)) ||
      !(it->display_value = sg_arena_strdup(&l->ar, row->display_value)))
    return -1;
  if (row->parent_id && !(it->parent_id = sg_arena_strdup(&l->ar, row->parent_id))) return -1;
  if (row->description && !(it->description = sg_arena_strdup(&l->ar, row->description))) return -1;
  it->rank = row->rank;
  int bad = 0;
  if (row->aliases_json) {
    json_t *a = json_loads(row->aliases_json, 0, NULL);
    bad = !json_is_array(a) || load_aliases(l, a, &it->aliases, &it->n_aliases);
    json_decref(a);
  }
  if (!bad && row->locales_json) {
    json_t *o = json_loads(row->locales_json, 0, NULL);
    bad = !json_is_object(o) || load_locales(l, o, it);
    json_decref(o);
  }
  if (bad) return -1;
  l->n++;
  return 0;
}

/* Streams the version's snapshot from the store in chunks into l. Returns 0 or -1. */
static int load_snapshot(sg_control *c, const sg_version_job *job, loader *l) {
  if (job->item_count) {
    l->items = malloc(job->item_count * sizeof *l->items);
    if (!l->items) return -1;
    l->cap = job->item_count;
  }
  int64_t after = 0;
  for (;;) {
    size_t got = 0;
    int64_t last = after;
    if (sg_store_snapshot_items(c->cfg.store, job->list_id, job->snapshot_seq, after, LOAD_CHUNK,
                                load_row, l, &last, &got) != SG_E_OK)
      return -1;
    if (got < LOAD_CHUNK) break;
    after = last;
  }
  return 0;
}

/* The version's synonym sets (docs/DESIGN.md §3.4), as its snapshot holds them, into the arena:
 * {"type":"equivalent"|"oneWay", "input"?, "phrases":[…]} as validated by the PUT. Returns
 * 0 or -1 (the store cannot be read, or a stored set is not of that shape). */
static int load_synonyms(sg_control *c, const sg_version_job *job, loader *l, sg_synonym_set **out,
                         size_t *n) {
  json_t *arr = NULL;
  *out = NULL;
  *n = 0;
  if (sg_store_snapshot_synonyms(c->cfg.store, job->list_id, job->snapshot_seq, &arr) != SG_E_OK)
    return -1;
  size_t k = json_array_size(arr);
  sg_synonym_set *sets = sg_arena_alloc(&l->ar, (k ? k : 1) * sizeof *sets);
  int rc = sets ? 0 : -1;
  for (size_t i = 0; i < k && rc == 0; i++) {
    const json_t *set = json_array_get(arr, i);
    const json_t *ph = json_object_get(set, "phrases");
    const json_t *in = json_object_get(set, "input");
    const char *type = json_string_value(json_object_get(set, "type"));
    bool one_way = type && strcmp(type, "oneWay") == 0;
    sets[i] = (sg_synonym_set){NULL, NULL, 0};
    if (!type || !json_is_array(ph) || (one_way && !json_is_string(in)) ||
        load_aliases(l, ph, &sets[i].phrases, &sets[i].n_phrases) ||
        (one_way && !(sets[i].input = sg_arena_strdup(&l->ar, json_string_value(in)))))
      rc = -1;
  }
  json_decref(arr);
  if (rc == 0) {
    *out = sets;
    *n = k;
  }
  return rc;
}

/* ---- the pipeline -----------------------------------------------------------------------------
 */

static void log_version(const char *level, const char *msg, const sg_version_job *job,
                        const char *detail) {
  fprintf(stderr,
          "{\"level\":\"%s\",\"msg\":\"%s\",\"list\":\"%s\",\"version\":%lld,\"detail\":\"%s\"}\n",
          level, msg, job->list_id, (long long)job->number, detail ? detail : "");
}

/* The validation errors in the API's shape [{itemId, path, reason, message}]. */
static json_t *errors_json(const sg_validation_errors *errs) {
  json_t *arr = json_array();
  for (size_t i = 0; i < errs->n; i++) {
    const sg_validation_error *x = &errs->v[i];
    json_array_append_new(arr, json_pack("{s:o,s:s,s:s,s:s}", "itemId",
                                         x->item_id ? json_string(x->item_id) : json_null(), "path",
                                         x->path, "reason", x->reason, "message", x->message));
  }
  return arr;
}

/* Fills opts from the version's locale policy; the strings point into job. */
static int job_opts(const sg_version_job *job, const char **locs, size_t max,
                    sg_compile_opts *opts) {
  const json_t *lp = job->locale_policy;
  const char *def = json_string_value(json_object_get(lp, "defaultLocale"));
  const json_t *sup = json_object_get(lp, "supportedLocales");
  if (!def || !json_is_array(sup) || json_array_size(sup) > max) return -1;
  size_t n = 0;
  for (size_t i = 0; i < json_array_size(sup); i++)
    if (json_is_string(json_array_get(sup, i)))
      locs[n++] = json_string_value(json_array_get(sup, i));
  *opts = (sg_compile_opts){def, locs, n, SG_PUBLISH_MAX_ITEMS};
  return 0;
}

/* queued -> draft | staged | failed. Returns 0 when the version left "queued" as
 * expected (draft or staged), -1 when it failed. */
static int validate_and_compile(sg_control *c, sg_version_job *job) {
  const char *locs[64];
  sg_compile_opts opts;
  if (job_opts(job, locs, 64, &opts)) {
    sg_store_version_set_failed(c->cfg.store, job->list_id, job->number, "bad_locale_policy");
    return -1;
  }
  if (job->item_count > SG_PUBLISH_MAX_ITEMS) {
    /* Refused before loading anything; same error sg_validate would give. */
    char msg[128];
    snprintf(msg, sizeof msg, "the list has %llu items; the limit is %d",
             (unsigned long long)job->item_count, SG_PUBLISH_MAX_ITEMS);
    json_t *errs = json_pack("[{s:n,s:s,s:s,s:s}]", "itemId", "path", "items", "reason",
                             "too_many_items", "message", msg);
    sg_store_version_set_draft(c->cfg.store, job->list_id, job->number, errs);
    json_decref(errs);
    return 0;
  }
  loader l = {SG_ARENA_INIT, NULL, 0, 0};
  const char *why = NULL;
  sg_validation_errors errs = {0};
  sg_buf art;
  sg_buf_init(&art, 0);
  if (load_snapshot(c, job, &l)) {
    why = "snapshot_unreadable";
    goto failed;
  }
  sg_synonym_set *syn;
  size_t n_syn;
  if (load_synonyms(c, job, &l, &syn, &n_syn)) {
    why = "snapshot_unreadable";
    goto failed;
  }
  long nerr = sg_validate(l.items, l.n, &opts, &errs);
  if (nerr < 0) {
    why = "out_of_memory";
    goto failed;
  }
  if (nerr > 0) {
    json_t *ej = errors_json(&errs);
    sg_store_version_set_draft(c->cfg.store, job->list_id, job->number, ej);
    json_decref(ej);
    sg_validation_errors_free(&errs);
    loader_free(&l);
    return 0;
  }
  if (sg_compile_synonyms(l.items, l.n, &opts, syn, n_syn, &art)) {
    why = "compile_failed";
    goto failed;
  }
  loader_free(&l);
  char hash[72];
  sg_sha256_tagged(art.data, art.len, hash);
  /* Durable before the store names it: temp file, fsync, rename, fsync dir, and the
   * store's own copy committed when it keeps one (PostgreSQL), so a staged version always
   * has both. Artifact collection waits until the store names it. */
  sg__artifact_gc_hold(c);
  if (sg_edge_put_artifact(c->cfg.edge, hash, art.data, art.len) ||
      (sg_store_keeps_artifacts(c->cfg.store) &&
       sg_store_artifact_put(c->cfg.store, hash, art.data, art.len) != SG_E_OK)) {
    sg__artifact_gc_release(c);
    why = SG__WHY_ARTIFACT_WRITE;
    goto failed;
  }
  sg_buf_free(&art);
  sg_err staged = sg_store_version_set_staged(c->cfg.store, job->list_id, job->number, hash);
  sg__artifact_gc_release(c);
  if (staged != SG_E_OK) return -1;
  snprintf(job->content_hash, sizeof job->content_hash, "%s", hash);
  snprintf(job->state, sizeof job->state, "%s", SG_VERSION_STAGED);
  return 0;
failed:
  log_version("error", "publish failed", job, why);
  sg_store_version_set_failed(c->cfg.store, job->list_id, job->number, why);
  sg_validation_errors_free(&errs);
  sg_buf_free(&art);
  loader_free(&l);
  return -1;
}

/* True when the staged version's artifact is present in the edge store. */
static bool artifact_present(sg_control *c, const char *hash) {
  return sg_edge_artifact_stat(c->cfg.edge, hash, NULL) == 0;
}

/* Rows per pruning transaction: short, so requests are not held up. */
#define PRUNE_CHUNK 10000

/* Deletes item history that no unresolved version of the list can read any more (edits,
 * deletes and imports leave ended rows behind for the snapshots taken before them). */
static void prune_history(sg_control *c, const char *list_id) {
  size_t n = 0;
  do {
    if (sg_store_items_prune(c->cfg.store, list_id, PRUNE_CHUNK, &n) != SG_E_OK) return;
  } while (n == PRUNE_CHUNK);
}

static int64_t lease_ms(const sg_control *c) {
  return (int64_t)(c->cfg.publish_lease_s ? c->cfg.publish_lease_s : 30) * 1000;
}

static void held_add(struct sg__publisher *p, int d) {
  pthread_mutex_lock(&p->mu);
  p->held += d;
  pthread_mutex_unlock(&p->mu);
}

/* The pipeline for one version, with its list's lock held. Returns 1 when another
 * process holds the version's lease (it is running it). */
static int run_locked(sg_control *c, const char *list_id, int64_t number) {
  sg_version_job job;
  held_add(c->pub, 1); /* before the claim, so the renewer cannot miss the new lease */
  sg_err e = sg_store_version_claim(c->cfg.store, list_id, number, lease_ms(c), &job);
  if (e != SG_E_OK) {
    held_add(c->pub, -1);
    return e == SG_E_NOT_FOUND ? 0 : e == SG_E_PUBLISH_IN_PROGRESS ? 1 : -1;
  }
  int rc = 0;
  bool queued = strcmp(job.state, SG_VERSION_QUEUED) == 0;
  bool staged = strcmp(job.state, SG_VERSION_STAGED) == 0;
  if (!queued && !staged) { /* resolved by an earlier run, or coalesced by this claim */
    if (strcmp(job.state, SG_VERSION_SUPERSEDED) == 0 && !job.content_hash[0])
      log_version("info", "publish coalesced", &job, "a newer version of the list is queued");
    /* Resolved by another process's run, whose edge write may not have landed yet: a
     * request must not answer "active" before the runtime can see it, so it writes the
     * list's record itself when the store still marks it dirty (the write is rebuilt
     * from the store under the edge's rule, so it never goes backwards). */
    if (strcmp(job.state, SG_VERSION_ACTIVE) == 0) json_decref(sg__edge_sync_list(c, list_id));
    goto done;
  }
  char attempt[32];
  snprintf(attempt, sizeof attempt, "attempt %d", job.attempts);
  log_version("info", "publish claimed", &job, attempt);
  /* For suggestd_publish_duration_seconds: the state this run left the version in. */
  int64_t t0 = sg_mono_ms();
  const char *result = "failed";
  if (job.attempts > MAX_ATTEMPTS) {
    log_version("error", "publish abandoned", &job, "too_many_attempts");
    sg_store_version_set_failed(c->cfg.store, list_id, number, "too_many_attempts");
    goto observe;
  }
  if (queued) {
    if (validate_and_compile(c, &job)) {
      rc = -1;
      goto observe;
    }
    if (strcmp(job.state, SG_VERSION_STAGED) != 0) { /* draft */
      result = "draft";
      goto observe;
    }
  } else if (!artifact_present(c, job.content_hash)) {
    /* Only a resumed staged version gets here; its artifact was fsynced before the row
     * said staged, so a missing file means someone removed it. */
    log_version("error", "staged artifact missing", &job, job.content_hash);
    sg_store_version_set_failed(c->cfg.store, list_id, number, "artifact_missing");
    rc = -1;
    goto observe;
  }
  bool activated = false;
  json_t *list = NULL;
  e = sg_store_version_activate(c->cfg.store, job.workspace_id, list_id, number, &activated, &list);
  if (e != SG_E_OK) {
    rc = e == SG_E_PRECONDITION_FAILED ? 0 : -1;
    if (!rc) result = "other";
    goto observe;
  }
  /* The runtime switches when the list's edge record changes. The activation marked it
   * dirty in its transaction, so a failed write here is retried by the reconciler. */
  if (activated) json_decref(sg__edge_sync_list(c, list_id));
  json_decref(list);
  result = activated ? "active" : "other";
observe:
  sg_metrics_publish(result, (sg_mono_ms() - t0) * 1000);
done:
  sg_store_version_release(c->cfg.store, list_id, number);
  held_add(c->pub, -1);
  sg_store_job_clear(&job);
  prune_history(c, list_id);
  return rc;
}

/* run_locked, and while another process holds the version's lease, again every
 * LEASE_POLL_MS until `until` (sg_mono_ms): that run resolves it, or its process dies and
 * the lease frees. Returns run_locked's last answer. */
static int run_waiting(sg_control *c, const char *list_id, int64_t number, int64_t until) {
  int rc = run_locked(c, list_id, number);
  while (rc == 1 && sg_mono_ms() < until) {
    struct timespec ts = {0, LEASE_POLL_MS * 1000000L};
    nanosleep(&ts, NULL);
    rc = run_locked(c, list_id, number);
  }
  return rc;
}

int sg__publish_run(sg_control *c, const char *list_id, int64_t number, int64_t wait_ms) {
  int64_t until = sg_mono_ms() + (wait_ms > 0 ? wait_ms : 0);
  int l = lock_list(c->pub, list_id, wait_ms);
  if (l) return l > 0 ? 1 : -1;
  /* Versions of one list resolve in number order: older unresolved ones first. Otherwise
   * a newer version that took the lock first would become active, and the older one,
   * whose synchronous publish is still waiting, could only go straight to superseded
   * (a 200 may only answer active or draft). An older async version is coalesced (it is
   * superseded at its claim) rather than compiled. Another process's run of a version
   * (its lease) is waited for by a request, up to its deadline, so the order holds across
   * processes too; the worker (wait_ms < 0) does not wait and moves on. */
  sg_version_ref older[16];
  size_t n = 0;
  int rc = 0;
  if (sg_store_versions_pending(c->cfg.store, list_id, number, older, 16, &n) == SG_E_OK)
    for (size_t i = 0; i < n && rc != 1; i++) rc = run_waiting(c, list_id, older[i].number, until);
  /* 1: another process still runs it, or an older version (never overtaken: the worker
   * comes back to this one later, a request answers 202). */
  if (rc != 1) rc = run_waiting(c, list_id, number, until);
  unlock_list(c->pub, list_id);
  return rc;
}

/* ---- the worker ------------------------------------------------------------------------------ */

static bool stopping(struct sg__publisher *p) {
  pthread_mutex_lock(&p->mu);
  bool s = p->stop;
  pthread_mutex_unlock(&p->mu);
  return s;
}

/* Rewrites the edge records the store marks dirty (edge_sync.h): every tick while the
 * edge takes the writes, backing off up to SYNC_BACKOFF_MAX_MS while it fails. */
static void reconcile_edge(sg_control *c, int64_t *next_ms, int64_t *backoff_ms) {
  int64_t now = sg_mono_ms();
  if (now < *next_ms) return;
  int failed = sg_edge_sync_pending(c->cfg.store, c->cfg.edge);
  if (failed == 0) {
    *backoff_ms = 0;
    *next_ms = 0;
    return;
  }
  *backoff_ms = *backoff_ms ? *backoff_ms * 2 : WORKER_TICK_MS;
  if (*backoff_ms > SYNC_BACKOFF_MAX_MS) *backoff_ms = SYNC_BACKOFF_MAX_MS;
  *next_ms = now + *backoff_ms;
}

static void *worker(void *arg) {
  sg_control *c = arg;
  struct sg__publisher *p = c->pub;
  int64_t next_sync = 0, backoff = 0, next_checkpoint = 0;
  /* No head start for a synchronous publish's own request: if a worker (of any process)
   * claims its version first, the request waits for that run (sg__publish_run), and a
   * version whose request died is resumed at once. */
  int64_t fresh_s = 0;
  char last_ws[64] = "";
  for (;;) {
    pthread_mutex_lock(&p->mu);
    if (!p->kick && !p->stop) {
      struct timespec until;
      deadline_in(&until, WORKER_TICK_MS);
      pthread_cond_timedwait(&p->wake, &p->mu, &until);
    }
    p->kick = false;
    bool stop = p->stop;
    pthread_mutex_unlock(&p->mu);
    if (stop) break;
    reconcile_edge(c, &next_sync, &backoff);
    sg__artifact_gc_run(c);
    if (sg_mono_ms() >= next_checkpoint) {
      /* Keeps the WAL small after bursts of writes (docs/IMPORT.md). */
      sg_store_checkpoint(c->cfg.store);
      next_checkpoint = sg_mono_ms() + CHECKPOINT_MS;
    }
    /* Round-robin across workspaces: after a run, the next pick starts after that
     * run's workspace. A bounded number of runs per wake, so a version that keeps
     * coming back (a store error) cannot spin the worker. */
    for (int i = 0; i < WORKER_RUNS_PER_WAKE && !stopping(p); i++) {
      sg_version_ref ref;
      bool found = false;
      if (sg_store_version_next(c->cfg.store, last_ws, fresh_s, &ref, &found) != SG_E_OK || !found)
        break;
      snprintf(last_ws, sizeof last_ws, "%s", ref.workspace_id);
      if (sg__publish_run(c, ref.list_id, ref.number, -1) == 1) {
        /* Waiting on another process's run: look again at the next tick rather than spin
         * (the unlock above rang the doorbell). */
        pthread_mutex_lock(&p->mu);
        p->kick = false;
        pthread_mutex_unlock(&p->mu);
        break;
      }
    }
  }
  return NULL;
}

/* Renews this process's leases every third of their duration while it holds any, so a
 * compile longer than the lease keeps its version; a dead process stops renewing. */
static void *renewer(void *arg) {
  sg_control *c = arg;
  struct sg__publisher *p = c->pub;
  int64_t every = lease_ms(c) / 3;
  pthread_mutex_lock(&p->mu);
  while (!p->stop) {
    struct timespec until;
    deadline_in(&until, every);
    pthread_cond_timedwait(&p->wake_renewer, &p->mu, &until);
    if (p->stop || p->held <= 0) continue;
    pthread_mutex_unlock(&p->mu);
    sg_store_version_leases_renew(c->cfg.store, lease_ms(c));
    pthread_mutex_lock(&p->mu);
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

/* The edge guard (edge_guard.h), on a thread of its own so that a long compile on the
 * worker never delays a heartbeat or a rewrite: a tick every GUARD_TICK_MS. */
#define GUARD_TICK_MS 1000
static void *guard(void *arg) {
  sg_control *c = arg;
  struct sg__publisher *p = c->pub;
  pthread_mutex_lock(&p->mu);
  while (!p->stop) {
    pthread_mutex_unlock(&p->mu);
    pthread_mutex_lock(&c->guard_mu);
    sg_edge_guard_tick(c->cfg.store, c->cfg.edge, &c->guard);
    pthread_mutex_unlock(&c->guard_mu);
    pthread_mutex_lock(&p->mu);
    if (p->stop) break;
    struct timespec until;
    deadline_in(&until, GUARD_TICK_MS);
    pthread_cond_timedwait(&p->wake_renewer, &p->mu, &until);
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

/* The background recompile (recompile.c), on a thread of its own: reading an artifact's
 * format or a scan of the active versions never delays a publish or a heartbeat. */
#define RECOMPILE_TICK_MS 1000
static void *recompiler(void *arg) {
  sg_control *c = arg;
  struct sg__publisher *p = c->pub;
  pthread_mutex_lock(&p->mu);
  while (!p->stop) {
    pthread_mutex_unlock(&p->mu);
    sg__recompile_tick(c);
    pthread_mutex_lock(&p->mu);
    if (p->stop) break;
    struct timespec until;
    deadline_in(&until, RECOMPILE_TICK_MS);
    pthread_cond_timedwait(&p->wake_renewer, &p->mu, &until);
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

/* With a store that announces publish work (PostgreSQL's NOTIFY, sent when any process
 * creates or releases a version), rings the worker's doorbell at once instead of at its
 * next tick. The wait is short so that stop is prompt. */
static void *listener(void *arg) {
  sg_control *c = arg;
  struct sg__publisher *p = c->pub;
  while (!stopping(p)) {
    sg_err e = sg_store_wait_work(c->cfg.store, 500);
    if (e == SG_E_OK) {
      sg__publish_kick(c);
    } else if (e != SG_E_NOT_FOUND) {
      /* The database is away: the worker's own tick keeps polling meanwhile. */
      struct timespec ts = {.tv_sec = 0, .tv_nsec = 500000000L};
      nanosleep(&ts, NULL);
    }
  }
  return NULL;
}

int sg__publish_start(sg_control *c) {
  struct sg__publisher *p = calloc(1, sizeof *p);
  if (!p) return -1;
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->freed, NULL);
  pthread_cond_init(&p->wake, NULL);
  pthread_cond_init(&p->wake_renewer, NULL);
  p->kick = true; /* resume what a previous process left unresolved */
  c->pub = p;
  if (sg__artifact_gc_init(c)) return -1;
  if (pthread_create(&p->thread, NULL, worker, c) != 0) return -1;
  p->started = true;
  if (pthread_create(&p->renewer, NULL, renewer, c) != 0) return -1;
  p->renewing = true;
  if (pthread_create(&p->guard, NULL, guard, c) != 0) return -1;
  p->guarding = true;
  if (sg__recompile_init(c)) return -1;
  if (c->cfg.recompile_per_minute > 0) {
    if (pthread_create(&p->recompiler, NULL, recompiler, c) != 0) return -1;
    p->recompiling = true;
  }
  if (sg_store_announces_work(c->cfg.store)) {
    if (pthread_create(&p->listener, NULL, listener, c) != 0) return -1;
    p->listening = true;
  }
  return 0;
}

void sg__publish_kick(sg_control *c) {
  struct sg__publisher *p = c->pub;
  pthread_mutex_lock(&p->mu);
  p->kick = true;
  pthread_cond_signal(&p->wake);
  pthread_mutex_unlock(&p->mu);
}

void sg__publish_stop(sg_control *c) {
  struct sg__publisher *p = c ? c->pub : NULL;
  if (!p) return;
  if (p->started) {
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_signal(&p->wake);
    pthread_cond_broadcast(&p->wake_renewer);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, NULL);
    if (p->renewing) pthread_join(p->renewer, NULL);
    if (p->guarding) pthread_join(p->guard, NULL);
    if (p->recompiling) pthread_join(p->recompiler, NULL);
    if (p->listening) pthread_join(p->listener, NULL);
  }
  /* Every lock is released by now: the HTTP listener stopped before the worker. */
  while (p->locks) {
    list_lock *e = p->locks;
    p->locks = e->next;
    free(e);
  }
  pthread_cond_destroy(&p->wake);
  pthread_cond_destroy(&p->wake_renewer);
  pthread_cond_destroy(&p->freed);
  pthread_mutex_destroy(&p->mu);
  free(p);
  c->pub = NULL;
  sg__artifact_gc_free(c);
  sg__recompile_free(c);
}
