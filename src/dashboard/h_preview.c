/*
 * The list page's live preview (docs/DASHBOARD.md, docs/DECISIONS.md "Dashboard preview
 * without a publishable key"):
 *
 *   GET /dashboard/api/lists/{listId}/preview?q=&locale=&limit=
 *
 * answers what the runtime's GET /v1/query answers for the list's active version
 * ({items, list: {id}, requestId[, code, message]}, each item with its highlight), for
 * any list the signed-in member can read, private ones included, with no publishable key
 * and no access token. It reads the active version's artifact from the edge store the
 * control plane publishes to, with the list's current query policy (minimum query
 * characters, typo tolerance). A preview is not a visitor's query: it is not counted
 * against the application's quota and records no selection.
 *
 * Previews run on the artifact worker pool (dashboard.h), never on a connection thread:
 * loading an artifact reads and hashes all of it. The last few artifacts previewed stay
 * loaded, keyed by content hash, in a small LRU (SG__PREVIEW_CACHE_ENTRIES artifacts and
 * SG__PREVIEW_CACHE_BYTES, internal.h), so typing in a preview, or switching between a
 * few lists, loads each once; a republish names a new content hash and the next preview
 * loads that one, while the old one ages out. An entry is reference counted: one evicted
 * while a preview still queries it is closed when that preview ends.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "compiler/normalize.h"
#include "compiler/typo.h"
#include "dashboard/internal.h"
#include "edge/edge.h"
#include "search/artifact.h"

#define Q_MAX_CP 255            /* the runtime's cap (src/runtime/h_query.c) */
#define NORM_MAX (Q_MAX_CP * 8) /* normalisation never grows a code point past this */
#define HL_PAIRS 16

struct sg__preview_entry {
  char hash[80];
  sg_artifact *a;
  size_t bytes;
  unsigned refs; /* the cache's own (while cached) plus one per preview using it */
  uint64_t used; /* preview_tick at the last use */
};

/* Drops one reference (under preview_mu); the last one closes the artifact. */
static void entry_unref(struct sg__preview_entry *e) {
  if (--e->refs) return;
  sg_artifact_close(e->a);
  free(e);
}

/* Takes entry i out of the cache (under preview_mu). */
static void cache_evict(struct sg__dashboard *dd, size_t i) {
  struct sg__preview_entry *e = dd->preview[i];
  dd->preview[i] = NULL;
  dd->preview_bytes -= e->bytes;
  entry_unref(e);
}

/* The cached entry for hash with a reference taken (under preview_mu), or NULL. */
static struct sg__preview_entry *cache_find(struct sg__dashboard *dd, const char *hash) {
  for (size_t i = 0; i < SG__PREVIEW_CACHE_ENTRIES; i++) {
    struct sg__preview_entry *e = dd->preview[i];
    if (e && strcmp(e->hash, hash) == 0) {
      e->refs++;
      e->used = ++dd->preview_tick;
      return e;
    }
  }
  return NULL;
}

/* Adds e (one reference, the caller's) to the cache and evicts the least recently used
 * entries past the bounds, never e itself (under preview_mu). */
static void cache_insert(struct sg__dashboard *dd, struct sg__preview_entry *e) {
  e->refs++;
  e->used = ++dd->preview_tick;
  dd->preview_bytes += e->bytes;
  for (;;) {
    size_t n = 0, lru = SG__PREVIEW_CACHE_ENTRIES, free_slot = SG__PREVIEW_CACHE_ENTRIES;
    for (size_t i = 0; i < SG__PREVIEW_CACHE_ENTRIES; i++) {
      if (!dd->preview[i]) {
        free_slot = i;
        continue;
      }
      n++;
      if (lru == SG__PREVIEW_CACHE_ENTRIES || dd->preview[i]->used < dd->preview[lru]->used)
        lru = i;
    }
    bool over = dd->preview_bytes > SG__PREVIEW_CACHE_BYTES && n > 0;
    if (free_slot < SG__PREVIEW_CACHE_ENTRIES && !over) {
      dd->preview[free_slot] = e;
      return;
    }
    cache_evict(dd, lru);
  }
}

void sg__preview_cache_free(struct sg__dashboard *dd) {
  for (size_t i = 0; i < SG__PREVIEW_CACHE_ENTRIES; i++)
    if (dd->preview[i]) cache_evict(dd, i);
}

/* The artifact named content_hash, loaded and verified, with a reference the caller
 * gives back with preview_release. NULL when the edge has none. The load runs outside
 * the lock, so previews of cached artifacts never wait for it; two previews that miss
 * the same hash at once may both load it, and the second copy is dropped. */
static struct sg__preview_entry *preview_acquire(sg_control *c, const char *content_hash) {
  struct sg__dashboard *dd = sg__dash(c);
  if (!c->cfg.edge || strlen(content_hash) >= sizeof dd->preview[0]->hash) return NULL;
  pthread_mutex_lock(&dd->preview_mu);
  struct sg__preview_entry *e = cache_find(dd, content_hash);
  pthread_mutex_unlock(&dd->preview_mu);
  if (e) return e;
  sg_artifact *a = NULL;
  if (sg_edge_artifact_load(c->cfg.edge, content_hash, &a) != 0) return NULL;
  e = calloc(1, sizeof *e);
  if (!e) {
    sg_artifact_close(a);
    return NULL;
  }
  snprintf(e->hash, sizeof e->hash, "%s", content_hash);
  e->a = a;
  e->bytes = sg_artifact_size(a);
  e->refs = 1;
  pthread_mutex_lock(&dd->preview_mu);
  struct sg__preview_entry *other = cache_find(dd, content_hash);
  if (other) {
    entry_unref(e);
    e = other;
  } else {
    cache_insert(dd, e);
  }
  pthread_mutex_unlock(&dd->preview_mu);
  return e;
}

static void preview_release(sg_control *c, struct sg__preview_entry *e) {
  pthread_mutex_lock(&sg__dash(c)->preview_mu);
  entry_unref(e);
  pthread_mutex_unlock(&sg__dash(c)->preview_mu);
}

/* The list's typo policy and minimum query length, as the runtime reads them from the
 * list record (absent members keep the defaults). */
static void policy_of(const json_t *list, sg_typo_policy *typo, int64_t *min_chars) {
  const json_t *qp = json_object_get(list, "queryPolicy");
  const json_t *t = json_object_get(qp, "typoTolerance");
  *typo = SG_TYPO_POLICY_DEFAULT;
  *min_chars = 1;
  if (json_is_integer(json_object_get(qp, "minQueryChars")))
    *min_chars = json_integer_value(json_object_get(qp, "minQueryChars"));
  if (json_is_boolean(json_object_get(t, "enabled")))
    typo->enabled = json_is_true(json_object_get(t, "enabled"));
  if (json_is_integer(json_object_get(t, "minCharsOneTypo")))
    typo->min_one = (int)json_integer_value(json_object_get(t, "minCharsOneTypo"));
  if (json_is_integer(json_object_get(t, "minCharsTwoTypos")))
    typo->min_two = (int)json_integer_value(json_object_get(t, "minCharsTwoTypos"));
}

/* One returned item as JSON, with its highlight (pairs of UTF-16 offsets). */
static json_t *item_json(const sg_fragment *f, const char *nq, size_t nlen) {
  json_t *o = json_loadb(f->json, f->len, 0, NULL);
  if (!o) return NULL;
  json_t *hl = json_array();
  static _Thread_local char dv[8192];
  long dl = sg_fragment_display_value(f, dv, sizeof dv);
  uint32_t pairs[2 * HL_PAIRS];
  long np =
      dl >= 0 ? sg_typo_highlight(dv, (size_t)dl, nq, nlen, f->edits, f->tier, pairs, HL_PAIRS) : 0;
  for (long j = 0; j < np; j++)
    json_array_append_new(
        hl, json_pack("[I,I]", (json_int_t)pairs[2 * j], (json_int_t)pairs[2 * j + 1]));
  json_object_set_new(o, "highlight", hl);
  return o;
}

static void invalid_query(sg_req *req, sg_resp *resp, const char *field, const char *why) {
  json_t *f = NULL;
  sg_field_error(&f, field, why);
  sg_resp_invalid_fields(resp, req, f);
}

void sg__dh_preview(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp) {
  const char *q = sg_req_query(req, "q"), *locale = sg_req_query(req, "locale");
  const char *lim = sg_req_query(req, "limit");
  int64_t limit = SG_BUCKET_ITEMS;
  if (!q || !sg_utf8_valid(q, strlen(q))) {
    invalid_query(req, resp, "q", "is required: the text typed, in UTF-8");
    return;
  }
  if (sg_utf8_count(q, strlen(q)) > Q_MAX_CP) {
    sg_resp_error(resp, req, SG_E_QUERY_TOO_LONG, NULL, NULL);
    return;
  }
  if (lim && sg_parse_i64(lim, 1, SG_BUCKET_ITEMS, &limit)) {
    invalid_query(req, resp, "limit", "must be an integer from 1 to 10");
    return;
  }
  if (locale && (!*locale || strlen(locale) > 35)) locale = NULL;

  json_t *list = NULL, *version = NULL;
  sg_err e = sg_store_list_get(c->cfg.store, d->m.workspace_id, req->params[0], &list);
  if (e != SG_E_OK) {
    sg__store_error(req, resp, e);
    return;
  }
  const json_t *avn = json_object_get(list, "activeVersionNumber");
  if (!json_is_integer(avn)) {
    json_decref(list);
    sg_resp_error(resp, req, SG_E_LIST_NOT_PUBLISHED, NULL,
                  "Nothing is served from this list yet: publish a version first.");
    return;
  }
  e = sg_store_version_get(c->cfg.store, d->m.workspace_id, req->params[0], json_integer_value(avn),
                           &version);
  const char *hash = json_string_value(json_object_get(version, "contentHash"));
  if (e != SG_E_OK || !hash) {
    json_decref(list);
    json_decref(version);
    sg_resp_error(resp, req, e == SG_E_OK ? SG_E_ARTIFACT_UNAVAILABLE : e, NULL, NULL);
    return;
  }
  sg_typo_policy typo;
  int64_t min_chars;
  policy_of(list, &typo, &min_chars);
  json_decref(list);

  char nq[NORM_MAX + 1];
  long nlen = sg_normalize_into(q, strlen(q), nq, sizeof nq);
  if (nlen < 0) {
    json_decref(version);
    sg_resp_error(resp, req, nlen == -2 ? SG_E_QUERY_TOO_LONG : SG_E_INVALID_REQUEST, NULL, NULL);
    return;
  }
  size_t ncp = sg_utf8_count(nq, (size_t)nlen);
  json_t *items = json_array();
  json_t *body = json_pack(
      "{s:o,s:{s:s},s:I,s:s}", "items", items, "list", "id", req->params[0], "versionNumber",
      (json_int_t)json_integer_value(json_object_get(version, "versionNumber")), "requestId",
      req->request_id);
  if ((int64_t)ncp < min_chars) {
    json_object_set_new(body, "code", json_string(sg_err_code(SG_E_QUERY_TOO_SHORT)));
    json_object_set_new(body, "message", json_string(sg_err_message(SG_E_QUERY_TOO_SHORT)));
  } else {
    struct sg__preview_entry *pe = preview_acquire(c, hash);
    if (!pe) {
      json_decref(version);
      json_decref(body);
      sg_resp_error(resp, req, SG_E_ARTIFACT_UNAVAILABLE, NULL, NULL);
      return;
    }
    const sg_artifact *a = pe->a;
    const char *tag = NULL;
    int loc = sg_artifact_resolve_locale(a, locale, &tag);
    sg_query_result res;
    res.n = 0;
    sg_artifact_query_k(a, loc, nq, (size_t)nlen, sg_typo_budget(&typo, ncp), &res);
    if (res.n > (size_t)limit) res.n = (size_t)limit;
    for (size_t i = 0; i < res.n; i++) {
      json_t *it = item_json(&res.items[i], nq, (size_t)nlen);
      if (it) json_array_append_new(items, it);
    }
    json_object_set_new(body, "locale", json_string(tag ? tag : ""));
    preview_release(c, pe); /* tag points into the artifact: released after its copy */
  }
  json_decref(version);
  sg_resp_json(resp, 200, body);
}
