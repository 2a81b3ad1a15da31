/*
 * Snapshots: the whole edge store decoded into read-only tables.
 *
 * Built by the loader thread (never on a request thread), published through sg__rcu,
 * and freed once no reader can hold it. The loader keeps the decoded records between
 * builds (sg__rt_records) and re-reads only those changed since the last revision. Everything a
 * request needs is precomputed here: a key's validity (key, application, workspace, list,
 * cross-workspace subscription), canonical origins, the bootstrap body and its ETag, the artifact
 * of each published list (read into the process's own memory and verified against its contentHash,
 * never mapped from the shared file). Artifacts are shared between consecutive snapshots by content
 * hash (refcounted), so a reload that does not change a list does not reopen its artifact.
 */
#include <errno.h>
#include <jansson.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/util.h"
#include "compiler/format.h"
#include "edge/records.h"
#include "runtime/rt.h"
#include "state/state.h"

/* ---------------------------------------------------------------- arena ---------- */

typedef struct block {
  struct block *next;
  size_t used, cap;
  char data[];
} block;

static void *arena_alloc(void **arena, size_t n) {
  n = (n + 15) & ~(size_t)15;
  block *b = *arena;
  if (!b || b->cap - b->used < n) {
    size_t cap = n > 65536 ? n : 65536;
    block *nb = malloc(sizeof *nb + cap);
    if (!nb) return NULL;
    nb->next = b;
    nb->used = 0;
    nb->cap = cap;
    *arena = b = nb;
  }
  void *p = b->data + b->used;
  b->used += n;
  return p;
}

static char *arena_strdup(void **arena, const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s);
  char *p = arena_alloc(arena, n + 1);
  if (p) memcpy(p, s, n + 1);
  return p;
}

static void arena_free(void *arena) {
  for (block *b = arena; b;) {
    block *n = b->next;
    free(b);
    b = n;
  }
}

/* ---------------------------------------------------------------- loading -------- */

typedef struct {
  char *id;
  bool active;
} ws_rec;

typedef struct {
  json_t **v;
  char **ids;
  size_t n, cap;
} recs;

/* Appends (id, o) to r, taking o. */
static int recs_push(recs *r, const char *id, json_t *o) {
  if (r->n == r->cap) {
    size_t nc = r->cap ? r->cap * 2 : 64;
    json_t **nv = realloc(r->v, nc * sizeof *nv);
    if (!nv) goto oom;
    r->v = nv;
    char **ni = realloc(r->ids, nc * sizeof *ni);
    if (!ni) goto oom;
    r->ids = ni;
    r->cap = nc;
  }
  r->ids[r->n] = strdup(id);
  if (!r->ids[r->n]) goto oom;
  r->v[r->n++] = o;
  return 0;
oom:
  json_decref(o);
  return -1;
}

/* A record's JSON object, or NULL: an unreadable record is as good as absent. */
static json_t *decode(const char *json, size_t len) {
  json_t *o = json_loadb(json, len, 0, NULL);
  if (!json_is_object(o)) {
    json_decref(o);
    return NULL;
  }
  return o;
}

static int collect(const char *id, const char *json, size_t len, void *ctx) {
  json_t *o = decode(json, len);
  return o ? recs_push(ctx, id, o) : 0;
}

static void recs_free(recs *r) {
  for (size_t i = 0; i < r->n; i++) {
    json_decref(r->v[i]);
    free(r->ids[i]);
  }
  free(r->v);
  free(r->ids);
  memset(r, 0, sizeof *r);
}

/* The index of id in r (sorted by id, as sg_edge_foreach delivers them), or where it
 * would go. */
static size_t recs_find(const recs *r, const char *id, bool *found) {
  size_t lo = 0, hi = r->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = strcmp(r->ids[mid], id);
    if (c == 0) {
      *found = true;
      return mid;
    }
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  *found = false;
  return lo;
}

/* The decoded records the last snapshot was built from, kept by the loader so that a new
 * revision re-reads only the records that changed (sg_edge_changes_since). */
struct sg__rt_records {
  recs r[SG_EDGE__KINDS];
  uint64_t revision;
  bool valid;
  sg_edge *edge; /* during an update */
};

void sg__records_free(sg__rt_records *c) {
  if (!c) return;
  for (int k = 0; k < SG_EDGE__KINDS; k++) recs_free(&c->r[k]);
  free(c);
}

void sg__records_invalidate(sg__rt_records *c) {
  if (c) c->valid = false;
}

/* sg_edge_change_cb: replaces, adds or drops one record of the cache. */
static int apply_change(sg_edge_kind k, const char *id, uint64_t rev, void *ctx) {
  (void)rev;
  sg__rt_records *c = ctx;
  recs *r = &c->r[k];
  char *json = NULL;
  size_t len = 0;
  json_t *o = NULL;
  if (sg_edge_get(c->edge, k, id, &json, &len) == 0)
    o = decode(json, len);
  else if (errno != ENOENT)
    return -1;
  free(json);
  bool found;
  size_t at = recs_find(r, id, &found);
  if (found && o) {
    json_decref(r->v[at]);
    r->v[at] = o;
  } else if (found) {
    json_decref(r->v[at]);
    free(r->ids[at]);
    memmove(&r->v[at], &r->v[at + 1], (r->n - at - 1) * sizeof *r->v);
    memmove(&r->ids[at], &r->ids[at + 1], (r->n - at - 1) * sizeof *r->ids);
    r->n--;
  } else if (o) {
    /* Appended, then moved into its sorted place. */
    size_t n = r->n;
    if (recs_push(r, id, o)) return -1;
    json_t *v = r->v[n];
    char *nid = r->ids[n];
    memmove(&r->v[at + 1], &r->v[at], (n - at) * sizeof *r->v);
    memmove(&r->ids[at + 1], &r->ids[at], (n - at) * sizeof *r->ids);
    r->v[at] = v;
    r->ids[at] = nid;
  }
  return 0;
}

/* Brings the cache to the edge store's current revision: only the records changed since
 * the cache's revision when the change log reaches back that far, else all of them. */
static int records_update(sg_edge *e, sg__rt_records *c) {
  c->edge = e;
  uint64_t upto;
  int rc = c->valid ? sg_edge_changes_since(e, c->revision, apply_change, c, &upto) : -1;
  c->edge = NULL;
  if (rc == 0) {
    c->revision = upto;
    return 0;
  }
  /* A full read. The revision first: records read after it are at least that new, and
   * the next update re-reads whatever changed after it (reading a record twice is
   * harmless). */
  c->valid = false;
  for (int k = 0; k < SG_EDGE__KINDS; k++) recs_free(&c->r[k]);
  if (sg_edge_revision(e, &c->revision)) return -1;
  for (int k = 0; k < SG_EDGE__KINDS; k++)
    if (sg_edge_foreach(e, (sg_edge_kind)k, collect, &c->r[k])) return -1;
  c->valid = true;
  return 0;
}

static int cmp_list(const void *a, const void *b) {
  return strcmp(((const sg__rt_list *)a)->id, ((const sg__rt_list *)b)->id);
}
static int cmp_app(const void *a, const void *b) {
  return strcmp(((const sg__rt_app *)a)->id, ((const sg__rt_app *)b)->id);
}
static int cmp_ws(const void *a, const void *b) {
  return strcmp(((const ws_rec *)a)->id, ((const ws_rec *)b)->id);
}
static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static sg__rt_list *find_list(sg__rt_snapshot *s, const char *id) {
  sg__rt_list k = {.id = (char *)id};
  return id ? bsearch(&k, s->lists, s->n_lists, sizeof k, cmp_list) : NULL;
}
static sg__rt_app *find_app(sg__rt_snapshot *s, const char *id) {
  sg__rt_app k = {.id = (char *)id};
  return id ? bsearch(&k, s->apps, s->n_apps, sizeof k, cmp_app) : NULL;
}

static const sg__rt_list *find_prev_list(const sg__rt_snapshot *prev, const char *id) {
  sg__rt_list k = {.id = (char *)id};
  return id ? bsearch(&k, prev->lists, prev->n_lists, sizeof k, cmp_list) : NULL;
}

static void art_release(sg__rt_art *a) {
  if (a && atomic_fetch_sub(&a->refs, 1) == 1) {
    sg_artifact_close(a->a);
    free(a);
  }
}

/* The shared artifact of hash: from this snapshot, the previous one, or opened now. NULL
 * when it cannot be had; *transient then says whether trying again may help (the fetch
 * failed) rather than the edge store lacking it or holding bytes that are no artifact. */
static sg__rt_art *art_acquire(sg_edge *e, sg__rt_snapshot *s, const sg__rt_snapshot *prev,
                               const char *hash, bool *transient) {
  *transient = false;
  for (size_t i = 0; i < s->n_arts; i++)
    if (strcmp(s->arts[i]->hash, hash) == 0) return s->arts[i];
  sg__rt_art *a = NULL;
  for (size_t i = 0; prev && i < prev->n_arts; i++)
    if (strcmp(prev->arts[i]->hash, hash) == 0) {
      a = prev->arts[i];
      atomic_fetch_add(&a->refs, 1);
      break;
    }
  if (!a) {
    sg_artifact *art;
    /* Read into sealed memory of our own and checked against its contentHash: a damaged or
     * truncated file answers artifact_unavailable and can never fault the process. */
    if (sg_edge_artifact_load(e, hash, &art)) {
      /* Absent, damaged or no artifact: the edge store's answer. Anything else (I/O, a
       * remote store unreachable mid-fetch) may pass: the runtime is not ready until a
       * first snapshot had none of those. */
      if (errno != ENOENT && errno != EBADMSG && errno != EINVAL)
        *transient = s->fetch_failed = true;
      /* EINVAL: no artifact of a format this build opens (docs/ARTIFACT.md, "Format
       * versions"): say which formats it does open, the operator's first question. */
      if (errno != ENOENT)
        fprintf(stderr,
                "{\"level\":\"error\",\"msg\":\"artifact unusable\",\"contentHash\":\"%s\","
                "\"detail\":\"%s\",\"formatsRead\":[%u,%u]}\n",
                hash,
                errno == EBADMSG  ? "content does not match its hash"
                : errno == EINVAL ? "not an artifact of a format this build reads"
                                  : strerror(errno),
                SG__ART_VERSION_PREV, SG__ART_VERSION);
      return NULL;
    }
    a = calloc(1, sizeof *a);
    if (!a) {
      sg_artifact_close(art);
      return NULL;
    }
    atomic_init(&a->refs, 1);
    a->a = art;
    if (sg_edge_artifact_stat(e, hash, &a->bytes)) a->bytes = 0;
    snprintf(a->hash, sizeof a->hash, "%s", hash);
  }
  s->arts[s->n_arts++] = a;
  return a;
}

static int build_list(sg_edge *e, sg__rt_snapshot *s, const sg__rt_snapshot *prev, json_t *o,
                      const char *file_id, sg__rt_list *l) {
  sg_edge_list_rec rec;
  if (sg_edge_list_decode(o, file_id, &rec)) return 1;
  l->archived = rec.archived;
  l->id = arena_strdup(&s->arena, rec.id);
  l->workspace_id = arena_strdup(&s->arena, rec.workspace_id);
  l->visibility = rec.visibility == SG_EDGE_VIS_PUBLIC   ? SG__VIS_PUBLIC
                  : rec.visibility == SG_EDGE_VIS_SHARED ? SG__VIS_SHARED
                                                         : SG__VIS_PRIVATE;
  l->min_query_chars = rec.min_query_chars;
  l->typo = rec.typo;
  const char *hash = rec.content_hash;
  if (hash) l->content_hash = arena_strdup(&s->arena, hash);
  l->published = hash && !l->archived;
  if (l->published) {
    bool transient, unused;
    l->art = art_acquire(e, s, prev, hash, &transient);
    if (!l->art) s->missing_artifact = true;
    /* A list moves to a new version only once its artifact is here: when fetching it
     * failed, the version this runtime already serves stays (with its hash in the
     * bootstrap and the request ids), and the loader retries the new one. An artifact
     * the edge store lacks or holds damaged answers artifact_unavailable, as it must. */
    const sg__rt_list *old = transient && prev ? find_prev_list(prev, l->id) : NULL;
    if (old && old->art && old->content_hash && strcmp(old->content_hash, hash) != 0 &&
        (l->art = art_acquire(e, s, prev, old->content_hash, &unused)))
      hash = l->content_hash = arena_strdup(&s->arena, old->content_hash);
  }

  /* Prebuilt bootstrap body and its ETag. */
  const char *dflt = rec.default_locale;
  const json_t *sup = rec.supported_locales;
  sg_buf b;
  sg_buf_init(&b, 0);
  int rc = sg_buf_puts(&b, "{\"list\":{\"id\":");
  rc = rc || sg_buf_json_str(&b, l->id, strlen(l->id));
  rc = rc || sg_buf_puts(&b, "},\"activeVersionHash\":");
  rc = rc || (l->published ? sg_buf_json_str(&b, hash, strlen(hash)) : sg_buf_puts(&b, "null"));
  rc = rc || sg_buf_printf(&b,
                           ",\"queryPolicy\":{\"minQueryChars\":%d,\"debounceMs\":%d,"
                           "\"typoTolerance\":{\"enabled\":%s,\"minCharsOneTypo\":%d,"
                           "\"minCharsTwoTypos\":%d}}",
                           rec.min_query_chars, rec.debounce_ms, l->typo.enabled ? "true" : "false",
                           l->typo.min_one, l->typo.min_two);
  rc = rc || sg_buf_puts(&b, ",\"localePolicy\":{\"defaultLocale\":");
  rc = rc || sg_buf_json_str(&b, dflt, strlen(dflt));
  rc = rc || sg_buf_puts(&b, ",\"supportedLocales\":[");
  size_t nsup = 0;
  if (sup) {
    size_t i;
    const json_t *v;
    json_array_foreach(sup, i, v) {
      if (!json_is_string(v)) continue;
      rc = rc || (nsup++ ? sg_buf_putc(&b, ',') : 0);
      rc = rc || sg_buf_json_str(&b, json_string_value(v), json_string_length(v));
    }
  }
  if (nsup == 0) rc = rc || sg_buf_json_str(&b, dflt, strlen(dflt));
  rc = rc || sg_buf_puts(&b, "]}}");
  if (!rc) {
    l->bootstrap = arena_alloc(&s->arena, b.len + 1);
    if (l->bootstrap) memcpy(l->bootstrap, b.data, b.len + 1);
    l->bootstrap_len = b.len;
    uint8_t d[32];
    sg_sha256(b.data, b.len, d);
    l->bootstrap_etag[0] = '"';
    sg_hex(d, 16, l->bootstrap_etag + 1);
    strcpy(l->bootstrap_etag + 33, "\"");
  }
  sg_buf_free(&b);
  /* The id as a JSON literal, for the query body. */
  sg_buf_init(&b, 0);
  rc = rc || sg_buf_json_str(&b, l->id, strlen(l->id));
  if (!rc) l->id_json = arena_strdup(&s->arena, b.data);
  sg_buf_free(&b);
  return (rc || !l->id || !l->bootstrap || !l->id_json) ? -1 : 0;
}

static bool hex_digest(const char *hex, uint8_t out[32]) {
  if (strlen(hex) != 64) return false;
  size_t bl;
  return sodium_hex2bin(out, 32, hex, 64, NULL, &bl, NULL) == 0 && bl == 32;
}

int sg__snapshot_load(sg_edge *e, sg_rt_state *st, const sg__rt_snapshot *prev,
                      sg__rt_records **cache, sg__rt_snapshot **out) {
  if (!*cache && !(*cache = calloc(1, sizeof **cache))) return -1;
  sg__rt_snapshot *s = calloc(1, sizeof *s);
  if (!s) return -1;
  recs *r = (*cache)->r;
  ws_rec *ws = NULL;
  char **subs = NULL;
  size_t n_subs = 0;
  int rc = -1;
  if (records_update(e, *cache)) goto done;
  s->revision = (*cache)->revision;

  /* Workspaces. */
  recs *rw = &r[SG_EDGE_WORKSPACE];
  ws = calloc(rw->n + 1, sizeof *ws);
  if (!ws) goto done;
  for (size_t i = 0; i < rw->n; i++) {
    sg_edge_workspace_rec w;
    sg_edge_workspace_decode(rw->v[i], rw->ids[i], &w);
    ws[i].id = (char *)w.id;
    ws[i].active = w.active;
  }
  qsort(ws, rw->n, sizeof *ws, cmp_ws);

  /* Active subscriptions as "workspaceId\x01listId". */
  recs *rs = &r[SG_EDGE_SUBSCRIPTION];
  subs = calloc(rs->n + 1, sizeof *subs);
  if (!subs) goto done;
  for (size_t i = 0; i < rs->n; i++) {
    sg_edge_subscription_rec sr;
    if (sg_edge_subscription_decode(rs->v[i], &sr) || !sr.active) continue;
    const char *w = sr.workspace_id, *l = sr.list_id;
    size_t n = strlen(w) + strlen(l) + 2;
    char *k = arena_alloc(&s->arena, n);
    if (!k) goto done;
    snprintf(k, n, "%s\x01%s", w, l);
    subs[n_subs++] = k;
  }
  qsort(subs, n_subs, sizeof *subs, cmp_str);

  /* Apps. */
  recs *ra = &r[SG_EDGE_APP];
  s->apps = calloc(ra->n + 1, sizeof *s->apps);
  if (!s->apps) goto done;
  for (size_t i = 0; i < ra->n; i++) {
    sg__rt_app *a = &s->apps[s->n_apps];
    sg_edge_app_rec ar;
    if (sg_edge_app_decode(ra->v[i], ra->ids[i], &ar)) continue;
    a->id = arena_strdup(&s->arena, ar.id);
    a->workspace_id = arena_strdup(&s->arena, ar.workspace_id);
    a->active = ar.active;
    a->limited = ar.limited;
    a->monthly_quota = ar.monthly_quota;
    if (!a->id) goto done;
    a->slot = sg_rt_state_quota_slot(st, a->id);
    if (!a->slot) goto done;
    s->n_apps++;
  }
  qsort(s->apps, s->n_apps, sizeof *s->apps, cmp_app);

  /* Lists (and their artifacts). */
  recs *rl = &r[SG_EDGE_LIST];
  s->lists = calloc(rl->n + 1, sizeof *s->lists);
  s->arts = calloc(rl->n + 1, sizeof *s->arts);
  if (!s->lists || !s->arts) goto done;
  for (size_t i = 0; i < rl->n; i++) {
    int b = build_list(e, s, prev, rl->v[i], rl->ids[i], &s->lists[s->n_lists]);
    if (b < 0) goto done;
    if (b == 0) s->n_lists++;
  }
  qsort(s->lists, s->n_lists, sizeof *s->lists, cmp_list);
  s->ever_complete = !s->fetch_failed || (prev && prev->ever_complete);

  /* Signing keys (public halves, for token verification). */
  recs *rk = &r[SG_EDGE_SIGNING_KEY];
  s->signing_keys = calloc(rk->n + 1, sizeof *s->signing_keys);
  if (!s->signing_keys) goto done;
  for (size_t i = 0; i < rk->n; i++) {
    sg_edge_signing_key_rec kr;
    sg__rt_signing_key *sk = &s->signing_keys[s->n_signing_keys];
    if (sg_edge_signing_key_decode(rk->v[i], &kr)) continue;
    memcpy(sk->public_key, kr.public_key, sizeof sk->public_key);
    if (!(sk->kid = arena_strdup(&s->arena, kr.kid))) goto done;
    s->n_signing_keys++;
  }

  /* Publishable keys. */
  recs *rp = &r[SG_EDGE_KEY];
  size_t cap = 16;
  while (cap < rp->n * 2) cap *= 2;
  s->keys = calloc(cap, sizeof *s->keys);
  if (!s->keys) goto done;
  s->key_mask = cap - 1;
  for (size_t i = 0; i < rp->n; i++) {
    sg_edge_key_rec kr;
    sg_edge_key_decode(rp->v[i], &kr);
    uint8_t d[32];
    if (!hex_digest(rp->ids[i], d)) continue;
    uint64_t h;
    memcpy(&h, d, sizeof h);
    size_t at = (size_t)h & s->key_mask;
    while (s->keys[at].used) at = (at + 1) & s->key_mask;
    sg__rt_key *k = &s->keys[at];
    k->used = true;
    memcpy(k->digest, d, 32);
    k->id = arena_strdup(&s->arena, kr.id);
    k->app = find_app(s, kr.application_id);
    k->list = find_list(s, kr.list_id);
    const json_t *origins = kr.origins;
    size_t no = origins ? json_array_size(origins) : 0;
    k->any_origin = no == 0;
    k->origins = arena_alloc(&s->arena, (no + 1) * sizeof *k->origins);
    if (!k->id || !k->origins) goto done;
    for (size_t j = 0; j < no; j++) {
      const json_t *v = json_array_get(origins, j);
      char canon[SG__ORIGIN_MAX + 1];
      if (!json_is_string(v) || sg__origin_canon(json_string_value(v), json_string_length(v), true,
                                                 canon, sizeof canon) < 0)
        continue;
      if (!(k->origins[k->n_origins] = arena_strdup(&s->arena, canon))) goto done;
      k->n_origins++;
    }
    /* Validity: every record on the chain exists and is active. */
    bool ok = kr.active && k->app && k->app->active && k->list && k->app->workspace_id;
    if (ok) {
      ws_rec wk = {.id = k->app->workspace_id};
      ws_rec *w = bsearch(&wk, ws, rw->n, sizeof wk, cmp_ws);
      ok = w && w->active;
    }
    if (ok && k->list->workspace_id) {
      /* The list's owner workspace, when known, must be active too. */
      ws_rec wk = {.id = k->list->workspace_id};
      ws_rec *w = bsearch(&wk, ws, rw->n, sizeof wk, cmp_ws);
      ok = !w || w->active;
    }
    if (ok &&
        (!k->list->workspace_id || strcmp(k->list->workspace_id, k->app->workspace_id) != 0)) {
      /* Another workspace's list: only shared, and only under an active subscription. */
      char key[2 * SG_EDGE_MAX_ID + 8];
      snprintf(key, sizeof key, "%s\x01%s", k->app->workspace_id, k->list->id);
      const char *kp = key;
      ok = k->list->visibility == SG__VIS_SHARED &&
           bsearch(&kp, subs, n_subs, sizeof *subs, cmp_str) != NULL;
    }
    k->valid = ok;
  }
  rc = 0;
done:
  free(ws);
  free(subs);
  if (rc) {
    sg__snapshot_free(s);
    return -1;
  }
  *out = s;
  return 0;
}

void sg__snapshot_free(sg__rt_snapshot *s) {
  if (!s) return;
  for (size_t i = 0; i < s->n_arts; i++) art_release(s->arts[i]);
  free(s->arts);
  free(s->keys);
  free(s->lists);
  free(s->apps);
  free(s->signing_keys);
  arena_free(s->arena);
  free(s);
}

const sg__rt_key *sg__snapshot_key(const sg__rt_snapshot *s, const uint8_t digest[32]) {
  uint64_t h;
  memcpy(&h, digest, sizeof h);
  for (size_t at = (size_t)h & s->key_mask;; at = (at + 1) & s->key_mask) {
    const sg__rt_key *k = &s->keys[at];
    if (!k->used) return NULL;
    if (memcmp(k->digest, digest, 32) == 0) return k;
  }
}
