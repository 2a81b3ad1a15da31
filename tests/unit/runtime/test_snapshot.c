/* The runtime's snapshot loader (src/runtime/snapshot.c): incremental reloads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pthread.h>
#include <sodium.h>

#include "common/redis_server.h"
#include "common/util.h"
#include "edge/artifact_fixture.h"
#include "edge/edge.h"
#include "runtime/rt.h"
#include "state/state.h"

static void put(sg_edge *e, sg_edge_kind k, const char *id, const char *json) {
  assert_int_equal(sg_edge_put(e, k, id, json, strlen(json), NULL), 0);
}

static bool key_valid(const sg__rt_snapshot *s, const char *key) {
  uint8_t d[32];
  sg_sha256(key, strlen(key), d);
  const sg__rt_key *k = sg__snapshot_key(s, d);
  return k && k->valid;
}

static void test_reload_reads_only_changes(void **state) {
  (void)state;
  char dir[] = "/tmp/sg-snapshot-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char p[128];
  snprintf(p, sizeof p, "%s/edge", dir);
  sg_edge *e;
  assert_int_equal(sg_edge_open(p, &e), 0);
  snprintf(p, sizeof p, "%s/state", dir);
  sg_rt_state *q;
  assert_int_equal(sg_rt_state_open(p, 600, &q), 0);

  char digest[65];
  sg_edge_key_digest("pk_test", 7, digest);
  put(e, SG_EDGE_WORKSPACE, "wsp_1", "{\"id\":\"wsp_1\",\"status\":\"active\"}");
  put(e, SG_EDGE_APP, "app_1",
      "{\"id\":\"app_1\",\"workspaceId\":\"wsp_1\",\"status\":\"active\",\"monthlyQuota\":null}");
  put(e, SG_EDGE_LIST, "lst_1",
      "{\"id\":\"lst_1\",\"workspaceId\":\"wsp_1\",\"status\":\"active\","
      "\"visibility\":\"private\",\"activeContentHash\":null}");
  put(e, SG_EDGE_KEY, digest,
      "{\"id\":\"pk_1\",\"applicationId\":\"app_1\",\"listId\":\"lst_1\",\"status\":\"active\"}");

  sg__rt_records *cache = NULL;
  sg__rt_snapshot *s1, *s2, *s3;
  assert_int_equal(sg__snapshot_load(e, q, NULL, &cache, &s1), 0);
  assert_true(key_valid(s1, "pk_test"));
  assert_int_equal(s1->n_lists, 1);

  /* The workspace file changes behind the store's back (no revision, no change log):
   * an incremental reload does not read it again, a full one would. */
  char wp[160];
  snprintf(wp, sizeof wp, "%s/edge/workspaces/wsp_1.json", dir);
  const char *disabled = "{\"id\":\"wsp_1\",\"status\":\"disabled\"}";
  assert_int_equal(sg_write_file_atomic(wp, disabled, strlen(disabled)), 0);
  /* A logged change: a second list, and the first one archived. */
  put(e, SG_EDGE_LIST, "lst_0",
      "{\"id\":\"lst_0\",\"workspaceId\":\"wsp_1\",\"status\":\"active\"}");
  put(e, SG_EDGE_LIST, "lst_1",
      "{\"id\":\"lst_1\",\"workspaceId\":\"wsp_1\",\"status\":\"archived\"}");
  assert_int_equal(sg__snapshot_load(e, q, s1, &cache, &s2), 0);
  assert_true(s2->revision > s1->revision);
  assert_int_equal(s2->n_lists, 2);
  assert_string_equal(s2->lists[0]->id, "lst_0");
  assert_true(s2->lists[1]->archived);
  assert_true(key_valid(s2, "pk_test")); /* the workspace was not re-read */
  sg__snapshot_free(s1);                 /* as the loader does: s2 replaced it */

  /* A deleted record leaves the snapshot; then a cache that is ahead of the store (the
   * store was replaced) falls back to a full read, which sees the workspace. */
  assert_int_equal(sg_edge_delete(e, SG_EDGE_APP, "app_1", NULL), 0);
  assert_int_equal(sg__snapshot_load(e, q, s2, &cache, &s3), 0);
  assert_int_equal(s3->n_apps, 0);
  assert_false(key_valid(s3, "pk_test"));
  sg__snapshot_free(s3);
  sg__snapshot_free(s2);
  put(e, SG_EDGE_APP, "app_1",
      "{\"id\":\"app_1\",\"workspaceId\":\"wsp_1\",\"status\":\"active\",\"monthlyQuota\":null}");
  sg_edge_close(e);
  char cmd[512];
  snprintf(cmd, sizeof cmd,
           "mv %s/edge %s/old && mkdir %s/edge && cp -r %s/old/* %s/edge/ && "
           "rm %s/edge/CHANGES && echo 1 > %s/edge/REVISION",
           dir, dir, dir, dir, dir, dir, dir);
  assert_int_equal(system(cmd), 0);
  snprintf(p, sizeof p, "%s/edge", dir);
  assert_int_equal(sg_edge_open(p, &e), 0);
  assert_int_equal(sg__snapshot_load(e, q, NULL, &cache, &s2), 0);
  assert_int_equal(s2->revision, 1);
  assert_int_equal(s2->n_apps, 1);
  assert_false(key_valid(s2, "pk_test")); /* the disabled workspace is seen now */

  sg__snapshot_free(s2);
  sg__records_free(cache);
  sg_rt_state_close(q);
  sg_edge_close(e);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

/* ---- incremental builds against full ones ------------------------------------------
 * A random walk over a small universe of records (workspaces, applications, lists, keys,
 * subscriptions, signing keys): after each step the incrementally built snapshot must
 * answer exactly as one built from scratch from the same records. */

enum { N_WS = 3, N_APP = 5, N_LIST = 10, N_KEY = 16, N_SUB = 4, N_SIG = 2 };

typedef struct {
  uint64_t s;
  char hash[2][72]; /* two artifacts in the edge store */
} walk;

static unsigned rnd(walk *w, unsigned n) {
  w->s ^= w->s << 13;
  w->s ^= w->s >> 7;
  w->s ^= w->s << 17;
  return (unsigned)(w->s % n);
}

static void key_name(unsigned i, char out[16]) { snprintf(out, 16, "pk_walk_%u", i); }

/* One random change: a record written (new or changed) or deleted. */
static void step(walk *w, sg_edge *e) {
  char id[80], json[1024], hex[65];
  unsigned kind = rnd(w, 12), del = rnd(w, 6) == 0;
  if (kind < 1) { /* workspace: activated, disabled */
    snprintf(id, sizeof id, "wsp_%u", rnd(w, N_WS));
    snprintf(json, sizeof json, "{\"id\":\"%s\",\"status\":\"%s\"}", id,
             rnd(w, 3) ? "active" : "disabled");
    if (del)
      sg_edge_delete(e, SG_EDGE_WORKSPACE, id, NULL);
    else
      put(e, SG_EDGE_WORKSPACE, id, json);
  } else if (kind < 3) { /* application: moved, disabled, quota */
    snprintf(id, sizeof id, "app_%u", rnd(w, N_APP));
    unsigned ws = rnd(w, N_WS + 1);
    char wsf[48] = "";
    if (ws < N_WS) snprintf(wsf, sizeof wsf, "\"workspaceId\":\"wsp_%u\",", ws);
    snprintf(json, sizeof json, "{\"id\":\"%s\",%s\"status\":\"%s\",\"monthlyQuota\":%s}", id, wsf,
             rnd(w, 4) ? "active" : "disabled", rnd(w, 2) ? "null" : "1000");
    if (del)
      sg_edge_delete(e, SG_EDGE_APP, id, NULL);
    else
      put(e, SG_EDGE_APP, id, json);
  } else if (kind < 6) { /* list: visibility flips, archived, versions, a missing artifact */
    snprintf(id, sizeof id, "lst_%u", rnd(w, N_LIST));
    static const char *const vis[] = {"private", "public", "shared"};
    unsigned h = rnd(w, 4);
    char hash[96];
    if (h < 2)
      snprintf(hash, sizeof hash, "\"%s\"", w->hash[h]);
    else if (h == 2)
      snprintf(hash, sizeof hash, "\"sha256:%064d\"", 7); /* not in the edge store */
    else
      snprintf(hash, sizeof hash, "null");
    snprintf(json, sizeof json,
             "{\"id\":\"%s\",\"workspaceId\":\"wsp_%u\",\"status\":\"%s\",\"visibility\":\"%s\","
             "\"activeContentHash\":%s,\"queryPolicy\":{\"minQueryChars\":%u}}",
             id, rnd(w, N_WS), rnd(w, 5) ? "active" : "archived", vis[rnd(w, 3)], hash,
             1 + rnd(w, 3));
    if (del)
      sg_edge_delete(e, SG_EDGE_LIST, id, NULL);
    else
      put(e, SG_EDGE_LIST, id, json);
  } else if (kind < 9) { /* key: created, revoked, moved, origins */
    char name[16];
    unsigned k = rnd(w, N_KEY);
    key_name(k, name);
    sg_edge_key_digest(name, strlen(name), hex);
    static const char *const origins[] = {"", ",\"origins\":[]",
                                          ",\"origins\":[\"https://a.example\"]",
                                          ",\"origins\":[\"https://*.b.example\",\"bad\"]"};
    snprintf(json, sizeof json,
             "{\"id\":\"pk_%u\",\"applicationId\":\"app_%u\",\"listId\":\"lst_%u\","
             "\"status\":\"%s\"%s}",
             k, rnd(w, N_APP + 1), rnd(w, N_LIST + 1), rnd(w, 4) ? "active" : "revoked",
             origins[rnd(w, 4)]);
    if (del)
      sg_edge_delete(e, SG_EDGE_KEY, hex, NULL);
    else
      put(e, SG_EDGE_KEY, hex, json);
  } else if (kind < 11) { /* subscription to another workspace's list */
    snprintf(id, sizeof id, "sub_%u", rnd(w, N_SUB));
    snprintf(json, sizeof json,
             "{\"id\":\"%s\",\"workspaceId\":\"wsp_%u\",\"listId\":\"lst_%u\",\"status\":\"%s\"}",
             id, rnd(w, N_WS), rnd(w, N_LIST), rnd(w, 3) ? "active" : "cancelled");
    if (del)
      sg_edge_delete(e, SG_EDGE_SUBSCRIPTION, id, NULL);
    else
      put(e, SG_EDGE_SUBSCRIPTION, id, json);
  } else { /* signing key */
    unsigned k = rnd(w, N_SIG);
    snprintf(id, sizeof id, "kid_%u", k);
    uint8_t pk[32];
    for (size_t i = 0; i < sizeof pk; i++) pk[i] = (uint8_t)rnd(w, 256);
    char b64[64];
    sodium_bin2base64(b64, sizeof b64, pk, sizeof pk, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    snprintf(json, sizeof json, "{\"kid\":\"%s\",\"publicKey\":\"%s\"}", id, b64);
    if (del)
      sg_edge_delete(e, SG_EDGE_SIGNING_KEY, id, NULL);
    else
      put(e, SG_EDGE_SIGNING_KEY, id, json);
  }
}

static void str_eq(const char *a, const char *b) {
  if (!a || !b)
    assert_true(a == b);
  else
    assert_string_equal(a, b);
}

/* The list entry of id in s, by the snapshot's own table (NULL when absent). */
static const sg__rt_list *list_of(const sg__rt_snapshot *s, const char *id) {
  for (size_t i = 0; i < s->n_lists; i++)
    if (strcmp(s->lists[i]->id, id) == 0) return s->lists[i];
  return NULL;
}

static const sg__rt_app *app_of(const sg__rt_snapshot *s, const char *id) {
  for (size_t i = 0; i < s->n_apps; i++)
    if (strcmp(s->apps[i]->id, id) == 0) return s->apps[i];
  return NULL;
}

/* a (incremental) answers as b (full): keys, lists, applications, signing keys. */
static void same_answers(const sg__rt_snapshot *a, const sg__rt_snapshot *b) {
  assert_int_equal(a->revision, b->revision);
  assert_int_equal(a->missing_artifact, b->missing_artifact);
  assert_int_equal(a->fetch_failed, b->fetch_failed);
  assert_int_equal(a->n_lists, b->n_lists);
  for (size_t i = 0; i < a->n_lists; i++) {
    const sg__rt_list *x = a->lists[i], *y = b->lists[i];
    assert_string_equal(x->id, y->id);
    if (i) assert_true(strcmp(a->lists[i - 1]->id, x->id) < 0);
    str_eq(x->workspace_id, y->workspace_id);
    assert_int_equal(x->visibility, y->visibility);
    assert_int_equal(x->archived, y->archived);
    assert_int_equal(x->published, y->published);
    assert_int_equal(x->min_query_chars, y->min_query_chars);
    str_eq(x->content_hash, y->content_hash);
    assert_int_equal(x->art != NULL, y->art != NULL);
    if (x->art) assert_string_equal(x->art->hash, y->art->hash);
    assert_string_equal(x->bootstrap, y->bootstrap);
    assert_string_equal(x->bootstrap_etag, y->bootstrap_etag);
    assert_string_equal(x->id_json, y->id_json);
  }
  assert_int_equal(a->n_apps, b->n_apps);
  for (size_t i = 0; i < a->n_apps; i++) {
    const sg__rt_app *x = a->apps[i], *y = b->apps[i];
    assert_string_equal(x->id, y->id);
    str_eq(x->workspace_id, y->workspace_id);
    assert_int_equal(x->active, y->active);
    assert_int_equal(x->limited, y->limited);
    assert_int_equal(x->monthly_quota, y->monthly_quota);
    assert_ptr_equal(x->slot, y->slot);
  }
  assert_int_equal(a->n_signing_keys, b->n_signing_keys);
  for (size_t i = 0; i < a->n_signing_keys; i++) {
    assert_string_equal(a->signing_keys[i].kid, b->signing_keys[i].kid);
    assert_memory_equal(a->signing_keys[i].public_key, b->signing_keys[i].public_key, 32);
  }
  assert_int_equal(a->n_arts, b->n_arts);
  for (size_t i = 0; i < a->n_arts; i++) {
    bool found = false;
    for (size_t j = 0; j < b->n_arts; j++) found |= strcmp(a->arts[i]->hash, b->arts[j]->hash) == 0;
    assert_true(found);
  }
  size_t n_keys = 0;
  for (size_t i = 0; i <= a->key_mask; i++) n_keys += a->keys[i] != NULL;
  size_t n_keys_b = 0;
  for (size_t i = 0; i <= b->key_mask; i++) n_keys_b += b->keys[i] != NULL;
  assert_int_equal(n_keys, n_keys_b);
  for (unsigned i = 0; i < N_KEY; i++) {
    char name[16];
    key_name(i, name);
    uint8_t d[32];
    sg_sha256(name, strlen(name), d);
    const sg__rt_key *x = sg__snapshot_key(a, d), *y = sg__snapshot_key(b, d);
    assert_int_equal(x != NULL, y != NULL);
    if (!x) continue;
    assert_string_equal(x->id, y->id);
    assert_int_equal(x->valid, y->valid);
    assert_int_equal(x->any_origin, y->any_origin);
    assert_int_equal(x->n_origins, y->n_origins);
    for (size_t j = 0; j < x->n_origins; j++) assert_string_equal(x->origins[j], y->origins[j]);
    /* The key points into its own snapshot's entries, never at a retired one. */
    assert_int_equal(x->list != NULL, y->list != NULL);
    if (x->list) assert_ptr_equal(x->list, list_of(a, y->list->id));
    assert_int_equal(x->app != NULL, y->app != NULL);
    if (x->app) assert_ptr_equal(x->app, app_of(a, y->app->id));
  }
}

typedef struct {
  char dir[32];
  sg_edge *e;
  sg_rt_state *q;
  walk w;
} walk_fixture;

/* A walk on a directory edge, or on a Redis edge at url (its own prefix). */
static void walk_open_at(walk_fixture *f, uint64_t seed, const char *url) {
  snprintf(f->dir, sizeof f->dir, "/tmp/sg-walk-XXXXXX");
  assert_non_null(mkdtemp(f->dir));
  char p[256];
  if (url) {
    snprintf(p, sizeof p, "%s/0?prefix=walk%llu", url, (unsigned long long)seed);
    assert_int_equal(sg_edge_open(p, &f->e), 0);
    snprintf(p, sizeof p, "%s/cache", f->dir);
    assert_int_equal(sg_edge_set_cache_dir(f->e, p), 0);
  } else {
    snprintf(p, sizeof p, "%s/edge", f->dir);
    assert_int_equal(sg_edge_open(p, &f->e), 0);
  }
  snprintf(p, sizeof p, "%s/state", f->dir);
  assert_int_equal(sg_rt_state_open(p, 600, &f->q), 0);
  f->w.s = seed;
  for (unsigned i = 0; i < 2; i++) {
    sg_buf a;
    sg_test_artifact(50 + i, (unsigned)seed + i, &a, f->w.hash[i]);
    assert_int_equal(sg_edge_put_artifact(f->e, f->w.hash[i], a.data, a.len), 0);
    sg_buf_free(&a);
  }
}

static void walk_open(walk_fixture *f, uint64_t seed) { walk_open_at(f, seed, NULL); }

static void walk_close(walk_fixture *f) {
  sg_rt_state_close(f->q);
  sg_edge_close(f->e);
  char cmd[96];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
  assert_int_equal(system(cmd), 0);
}

static void walk_compare(const uint64_t *seeds, size_t n_seeds, int steps, const char *url) {
  for (size_t si = 0; si < n_seeds; si++) {
    walk_fixture f;
    walk_open_at(&f, seeds[si], url);
    sg__rt_records *cache = NULL;
    sg__rt_snapshot *cur = NULL;
    assert_int_equal(sg__snapshot_load(f.e, f.q, NULL, &cache, &cur), 0);
    size_t shared = 0;
    for (int i = 0; i < steps; i++) {
      unsigned n = 1 + rnd(&f.w, 3);
      for (unsigned j = 0; j < n; j++) step(&f.w, f.e);
      sg__rt_snapshot *next, *full;
      /* Now and then a full read in the middle of the walk (an epoch change). */
      if (i % 61 == 60) sg__records_invalidate(cache);
      assert_int_equal(sg__snapshot_load(f.e, f.q, cur, &cache, &next), 0);
      sg__rt_records *fresh = NULL;
      assert_int_equal(sg__snapshot_load(f.e, f.q, NULL, &fresh, &full), 0);
      same_answers(next, full);
      sg__snapshot_free(full);
      sg__records_free(fresh);
      /* Entries the changes did not touch are the previous snapshot's own. */
      for (size_t k = 0; k < next->n_lists; k++) {
        const sg__rt_list *p = list_of(cur, next->lists[k]->id);
        shared += p == next->lists[k];
      }
      sg__snapshot_free(cur);
      cur = next;
    }
    assert_true(shared > 0);
    sg__snapshot_free(cur);
    sg__records_free(cache);
    walk_close(&f);
  }
}

static void test_incremental_matches_full(void **state) {
  (void)state;
  static const uint64_t seeds[] = {0x9e3779b97f4a7c15ULL, 42, 0xdeadbeefcafeULL};
  walk_compare(seeds, 3, 150, NULL);
}

/* The same on a Redis edge (its change log is a sorted set, its records hashes). */
static sg_test_redis srv;

static void test_incremental_matches_full_redis(void **state) {
  (void)state;
  if (!srv.port) skip();
  static const uint64_t seeds[] = {77};
  walk_compare(seeds, 1, 120, srv.url);
}

static int group_setup(void **state) {
  (void)state;
  if (!sg_test_redis_start(&srv) && getenv("CI"))
    fail_msg("redis-server is missing; run scripts/deps.sh");
  return 0;
}

static int group_teardown(void **state) {
  (void)state;
  if (srv.port) sg_test_redis_stop(&srv);
  return 0;
}

/* A change to one list rebuilds that list and its keys, and nothing else. */
static void test_change_rebuilds_only_what_it_touches(void **state) {
  (void)state;
  walk_fixture f;
  walk_open(&f, 7);
  put(f.e, SG_EDGE_WORKSPACE, "wsp_0", "{\"id\":\"wsp_0\",\"status\":\"active\"}");
  put(f.e, SG_EDGE_APP, "app_0",
      "{\"id\":\"app_0\",\"workspaceId\":\"wsp_0\",\"status\":\"active\",\"monthlyQuota\":null}");
  char json[256], hex[65], name[16];
  for (unsigned i = 0; i < 8; i++) {
    snprintf(json, sizeof json,
             "{\"id\":\"lst_%u\",\"workspaceId\":\"wsp_0\",\"status\":\"active\","
             "\"visibility\":\"public\",\"activeContentHash\":\"%s\"}",
             i, f.w.hash[i % 2]);
    char id[16];
    snprintf(id, sizeof id, "lst_%u", i);
    put(f.e, SG_EDGE_LIST, id, json);
    key_name(i, name);
    sg_edge_key_digest(name, strlen(name), hex);
    snprintf(json, sizeof json,
             "{\"id\":\"pk_%u\",\"applicationId\":\"app_0\",\"listId\":\"lst_%u\","
             "\"status\":\"active\"}",
             i, i);
    put(f.e, SG_EDGE_KEY, hex, json);
  }
  sg__rt_records *cache = NULL;
  sg__rt_snapshot *s1, *s2;
  assert_int_equal(sg__snapshot_load(f.e, f.q, NULL, &cache, &s1), 0);
  assert_int_equal(s1->n_lists, 8);
  assert_int_equal(s1->n_arts, 2);
  /* lst_3 made private (a PATCH of its visibility). */
  snprintf(json, sizeof json,
           "{\"id\":\"lst_3\",\"workspaceId\":\"wsp_0\",\"status\":\"active\","
           "\"visibility\":\"private\",\"activeContentHash\":\"%s\"}",
           f.w.hash[1]);
  put(f.e, SG_EDGE_LIST, "lst_3", json);
  assert_int_equal(sg__snapshot_load(f.e, f.q, s1, &cache, &s2), 0);
  for (size_t i = 0; i < 8; i++) {
    if (i == 3) {
      assert_ptr_not_equal(s2->lists[i], s1->lists[i]);
      assert_int_equal(s2->lists[i]->visibility, SG__VIS_PRIVATE);
      assert_ptr_equal(s2->lists[i]->art, s1->lists[i]->art); /* same version: not reopened */
    } else {
      assert_ptr_equal(s2->lists[i], s1->lists[i]);
    }
    key_name((unsigned)i, name);
    uint8_t d[32];
    sg_sha256(name, strlen(name), d);
    const sg__rt_key *k1 = sg__snapshot_key(s1, d), *k2 = sg__snapshot_key(s2, d);
    assert_non_null(k2);
    assert_true(k2->valid);
    assert_ptr_equal(k2->list, s2->lists[i]);
    if (i == 3)
      assert_ptr_not_equal(k1, k2);
    else
      assert_ptr_equal(k1, k2);
  }
  assert_ptr_equal(s2->apps[0], s1->apps[0]);
  /* The workspace disabled: every key of it answers invalid, the lists stay. */
  put(f.e, SG_EDGE_WORKSPACE, "wsp_0", "{\"id\":\"wsp_0\",\"status\":\"disabled\"}");
  sg__snapshot_free(s1);
  assert_int_equal(sg__snapshot_load(f.e, f.q, s2, &cache, &s1), 0);
  for (unsigned i = 0; i < 8; i++) {
    key_name(i, name);
    uint8_t d[32];
    sg_sha256(name, strlen(name), d);
    assert_false(sg__snapshot_key(s1, d)->valid);
    assert_ptr_equal(s1->lists[i], s2->lists[i]);
  }
  sg__snapshot_free(s2);
  sg__snapshot_free(s1);
  sg__records_free(cache);
  walk_close(&f);
}

/* A list whose new version cannot be fetched (an I/O error, not an absent artifact) keeps
 * serving the version it had, without reopening it, until the new one can be had. */
static void test_failed_fetch_keeps_the_served_version(void **state) {
  (void)state;
  walk_fixture f;
  walk_open(&f, 99);
  char json[512];
  snprintf(json, sizeof json,
           "{\"id\":\"lst_0\",\"workspaceId\":\"wsp_0\",\"status\":\"active\","
           "\"visibility\":\"public\",\"activeContentHash\":\"%s\"}",
           f.w.hash[0]);
  put(f.e, SG_EDGE_LIST, "lst_0", json);
  sg__rt_records *cache = NULL;
  sg__rt_snapshot *s1, *s2, *s3;
  assert_int_equal(sg__snapshot_load(f.e, f.q, NULL, &cache, &s1), 0);
  assert_non_null(s1->lists[0]->art);
  assert_false(s1->missing_artifact);

  /* A third artifact whose file cannot be opened (a link to itself: ELOOP, an I/O error
   * rather than an absent or damaged artifact). */
  sg_buf a;
  char h3[72], p[256];
  sg_test_artifact(70, 3, &a, h3);
  snprintf(p, sizeof p, "%s/edge/artifacts/%s.sga", f.dir, h3 + 7);
  assert_int_equal(symlink(p, p), 0);
  snprintf(json, sizeof json,
           "{\"id\":\"lst_0\",\"workspaceId\":\"wsp_0\",\"status\":\"active\","
           "\"visibility\":\"public\",\"activeContentHash\":\"%s\"}",
           h3);
  put(f.e, SG_EDGE_LIST, "lst_0", json);
  assert_int_equal(sg__snapshot_load(f.e, f.q, s1, &cache, &s2), 0);
  assert_true(s2->missing_artifact);
  assert_true(s2->fetch_failed);
  assert_ptr_equal(s2->lists[0]->art, s1->lists[0]->art);
  assert_string_equal(s2->lists[0]->content_hash, f.w.hash[0]);
  assert_non_null(strstr(s2->lists[0]->bootstrap, f.w.hash[0]));
  sg__snapshot_free(s1);

  /* The artifact arrives: the next build (a retry, no new revision) moves to it. */
  assert_int_equal(unlink(p), 0);
  assert_int_equal(sg_edge_put_artifact(f.e, h3, a.data, a.len), 0);
  sg_buf_free(&a);
  assert_int_equal(sg__snapshot_load(f.e, f.q, s2, &cache, &s3), 0);
  assert_false(s3->missing_artifact);
  assert_false(s3->fetch_failed);
  assert_string_equal(s3->lists[0]->content_hash, h3);
  assert_string_equal(s3->lists[0]->art->hash, h3);
  assert_int_equal(s3->n_arts, 1);
  sg__snapshot_free(s2);
  sg__snapshot_free(s3);
  sg__records_free(cache);
  walk_close(&f);
}

/* Every artifact a snapshot names is held by one of its lists: the loader moves them onto
 * huge pages and the metrics and the cache pruning read them, after the snapshot they
 * came from (and what it retired) is freed. A full read that drops the last list of an
 * artifact used to name it still (ASan: a use after free in the loader). */
static bool arts_held(const sg__rt_snapshot *s) {
  for (size_t i = 0; i < s->n_arts; i++) {
    bool held = false;
    for (size_t j = 0; j < s->n_lists && !held; j++) held = s->lists[j]->art == s->arts[i];
    if (!held) return false;
  }
  return true;
}

static void test_snapshot_names_only_the_artifacts_it_serves(void **state) {
  (void)state;
  walk_fixture f;
  walk_open(&f, 7);
  char json[512];
  for (int i = 0; i < 2; i++) {
    snprintf(json, sizeof json,
             "{\"id\":\"lst_%d\",\"workspaceId\":\"wsp_0\",\"status\":\"active\","
             "\"visibility\":\"public\",\"activeContentHash\":\"%s\"}",
             i, f.w.hash[i]);
    put(f.e, SG_EDGE_LIST, i ? "lst_1" : "lst_0", json);
  }
  sg__rt_records *cache = NULL;
  sg__rt_snapshot *s1, *s2, *s3;
  assert_int_equal(sg__snapshot_load(f.e, f.q, NULL, &cache, &s1), 0);
  assert_int_equal(s1->n_arts, 2);
  assert_true(arts_held(s1));
  /* lst_1 archived, read by a full read (the cache invalidated, as after an edge that
   * went back), then by an incremental one (lst_0 archived). */
  put(f.e, SG_EDGE_LIST, "lst_1",
      "{\"id\":\"lst_1\",\"workspaceId\":\"wsp_0\",\"status\":\"archived\"}");
  sg__records_invalidate(cache);
  assert_int_equal(sg__snapshot_load(f.e, f.q, s1, &cache, &s2), 0);
  assert_int_equal(s2->n_arts, 1);
  assert_true(arts_held(s2));
  sg__snapshot_free(s1); /* as the loader does; frees what s2's build retired */
  assert_string_equal(s2->arts[0]->hash, f.w.hash[0]);
  assert_int_equal(sg_artifact_size(s2->arts[0]->a), (size_t)s2->arts[0]->bytes);
  put(f.e, SG_EDGE_LIST, "lst_0",
      "{\"id\":\"lst_0\",\"workspaceId\":\"wsp_0\",\"status\":\"archived\"}");
  assert_int_equal(sg__snapshot_load(f.e, f.q, s2, &cache, &s3), 0);
  assert_int_equal(s3->n_arts, 0);
  sg__snapshot_free(s2);
  sg__snapshot_free(s3);
  sg__records_free(cache);
  walk_close(&f);
}

/* Readers on other threads look keys up and follow them into their lists and apps while
 * the loader applies changes, publishes and frees: what a change retires is freed only
 * once no reader can hold it (run under ASan and ThreadSanitizer). */
typedef struct {
  sg__rcu *rcu;
  atomic_bool stop;
  _Atomic long seen;
} reader_ctx;

static void *reader(void *arg) {
  reader_ctx *r = arg;
  long seen = 0;
  while (!atomic_load(&r->stop)) {
    const sg__rt_snapshot *s = sg__rcu_enter(r->rcu);
    for (unsigned i = 0; i < N_KEY; i++) {
      char name[16];
      key_name(i, name);
      uint8_t d[32];
      sg_sha256(name, strlen(name), d);
      const sg__rt_key *k = sg__snapshot_key(s, d);
      if (!k) continue;
      size_t n = strlen(k->id);
      if (k->list) n += k->list->bootstrap_len + strlen(k->list->id_json);
      if (k->list && k->list->art) n += (size_t)k->list->art->bytes;
      if (k->app) n += strlen(k->app->id);
      for (size_t j = 0; j < k->n_origins; j++) n += strlen(k->origins[j]);
      seen += n > 0;
    }
    for (size_t i = 0; i < s->n_signing_keys; i++) seen += s->signing_keys[i].kid[0] != 0;
    sg__rcu_leave(r->rcu);
  }
  atomic_fetch_add(&r->seen, seen);
  return NULL;
}

static void test_readers_during_changes(void **state) {
  (void)state;
  walk_fixture f;
  walk_open(&f, 1234567);
  for (int i = 0; i < 60; i++) step(&f.w, f.e);
  sg__rt_records *cache = NULL;
  sg__rt_snapshot *first;
  assert_int_equal(sg__snapshot_load(f.e, f.q, NULL, &cache, &first), 0);
  sg__rcu rcu;
  sg__rcu_init(&rcu, first);
  reader_ctx r = {.rcu = &rcu};
  atomic_init(&r.stop, false);
  atomic_init(&r.seen, 0);
  pthread_t th[3];
  for (int i = 0; i < 3; i++) assert_int_equal(pthread_create(&th[i], NULL, reader, &r), 0);
  for (int i = 0; i < 300; i++) {
    step(&f.w, f.e);
    if (i % 101 == 100) sg__records_invalidate(cache);
    sg__rt_snapshot *cur = atomic_load(&rcu.cur), *next;
    assert_int_equal(sg__snapshot_load(f.e, f.q, cur, &cache, &next), 0);
    sg__snapshot_free(sg__rcu_publish(&rcu, next));
  }
  atomic_store(&r.stop, true);
  for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
  assert_true(atomic_load(&r.seen) > 0);
  sg__snapshot_free(atomic_load(&rcu.cur));
  sg__records_free(cache);
  walk_close(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reload_reads_only_changes),
      cmocka_unit_test(test_incremental_matches_full),
      cmocka_unit_test(test_incremental_matches_full_redis),
      cmocka_unit_test(test_change_rebuilds_only_what_it_touches),
      cmocka_unit_test(test_failed_fetch_keeps_the_served_version),
      cmocka_unit_test(test_snapshot_names_only_the_artifacts_it_serves),
      cmocka_unit_test(test_readers_during_changes),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
