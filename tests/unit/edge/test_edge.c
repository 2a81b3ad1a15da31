/*
 * Unit tests of the edge interface (src/edge/edge.h) that hold for every backend.
 *
 * The backend comes from SUGGESTD_TEST_EDGE (a spec as `--edge` takes it); without it
 * every test runs twice: on a fresh temporary directory, then on a throwaway Redis
 * (skipped when redis-server is missing, except under CI=true). Record ids carry a random
 * prefix per test, so a shared backend (one Redis database) can run them too; revisions
 * are compared relative to the revision a test starts at. Tests of one backend's own
 * layout live under its folder (tests/unit/edge/dir, tests/unit/edge/redis).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/redis_server.h"
#include "common/util.h"
#include "edge/artifact_fixture.h"
#include "edge/edge.h"
#include "edge/edge_fixture.h"
#include "edge/seq_race.h"
#include "search/artifact.h"

/* The backend under test: a spec, or NULL for a fresh directory per test. */
static const char *g_spec;

typedef sgt_edge_fixture fixture;

static int setup(void **state) {
  *state = sgt_edge_fixture_new(g_spec, "edge-test");
  return 0;
}

static int teardown(void **state) { return sgt_edge_fixture_free(*state); }

static void id_of(const fixture *f, const char *name, char *out, size_t outsz) {
  snprintf(out, outsz, "%s%s", f->prefix, name);
}

static void assert_record(sg_edge *e, sg_edge_kind k, const char *id, const char *want) {
  char *json = NULL;
  size_t len;
  if (!want) {
    assert_int_equal(sg_edge_get(e, k, id, &json, &len), -1);
    assert_int_equal(errno, ENOENT);
    return;
  }
  assert_int_equal(sg_edge_get(e, k, id, &json, &len), 0);
  assert_string_equal(json, want);
  free(json);
}

static void test_put_if_newer(void **state) {
  fixture *f = *state;
  sg_edge *e = f->e;
  char id[64];
  id_of(f, "lst", id, sizeof id);
  uint64_t r0, r1, r2;
  assert_int_equal(sg_edge_revision(e, &r0), 0);
  assert_int_equal(sg_edge_put_if_newer(e, SG_EDGE_LIST, id, "{\"v\":5}", 7, 5, &r1), 0);
  assert_true(r1 > r0);
  /* Older: refused, nothing written, no bump, the current revision answered. */
  assert_int_equal(sg_edge_put_if_newer(e, SG_EDGE_LIST, id, "{\"v\":3}", 7, 3, &r2),
                   SG_EDGE_STALE);
  assert_int_equal(r2, r1);
  assert_record(e, SG_EDGE_LIST, id, "{\"v\":5}");
  /* Equal: a retry of the same sequence goes through. Newer: written. */
  assert_int_equal(sg_edge_put_if_newer(e, SG_EDGE_LIST, id, "{\"w\":5}", 7, 5, &r2), 0);
  assert_true(r2 > r1);
  assert_record(e, SG_EDGE_LIST, id, "{\"w\":5}");
  assert_int_equal(sg_edge_put_if_newer(e, SG_EDGE_LIST, id, "{\"v\":7}", 7, 7, NULL), 0);
  assert_record(e, SG_EDGE_LIST, id, "{\"v\":7}");
  /* Deletes follow the same rule, and a delete is remembered: an older put cannot
   * bring the record back. */
  assert_int_equal(sg_edge_delete_if_newer(e, SG_EDGE_LIST, id, 6, NULL), SG_EDGE_STALE);
  assert_record(e, SG_EDGE_LIST, id, "{\"v\":7}");
  assert_int_equal(sg_edge_delete_if_newer(e, SG_EDGE_LIST, id, 8, &r1), 0);
  assert_record(e, SG_EDGE_LIST, id, NULL);
  assert_int_equal(sg_edge_put_if_newer(e, SG_EDGE_LIST, id, "{\"v\":7}", 7, 7, NULL),
                   SG_EDGE_STALE);
  assert_record(e, SG_EDGE_LIST, id, NULL);
  /* Deleting an absent record: no bump. */
  assert_int_equal(sg_edge_delete_if_newer(e, SG_EDGE_LIST, id, 9, &r2), 0);
  assert_int_equal(r2, r1);
  assert_int_equal(sg_edge_put_if_newer(e, SG_EDGE_LIST, id, "{\"v\":10}", 8, 10, NULL), 0);
  assert_record(e, SG_EDGE_LIST, id, "{\"v\":10}");
  /* Arguments. */
  assert_int_equal(sg_edge_put_if_newer(e, SG_EDGE_LIST, "../x", "{}", 2, 1, NULL), -1);
  assert_int_equal(errno, EINVAL);
  assert_int_equal(sg_edge_put_if_newer(e, SG_EDGE_LIST, id, "{}", 2, UINT64_MAX, NULL), -1);
  assert_int_equal(errno, EINVAL);
  assert_int_equal(sg_edge_delete_if_newer(e, SG_EDGE__KINDS, id, 1, NULL), -1);
}

/* sg_edge_update's build callback with a sequence: ctx is {answer, sequence}. */
static int build_seq(void *ctx, char **json, size_t *len, uint64_t *seq) {
  const int *what = ctx;
  if (what[0] == 0) {
    char buf[32];
    *len = (size_t)snprintf(buf, sizeof buf, "{\"seq\":%d}", what[1]);
    *json = strdup(buf);
  }
  *seq = (uint64_t)what[1];
  return what[0];
}

static void test_update_with_sequence(void **state) {
  fixture *f = *state;
  sg_edge *e = f->e;
  char id[64];
  id_of(f, "sub", id, sizeof id);
  uint64_t r1, r2;
  int what[2] = {0, 5};
  assert_int_equal(sg_edge_update(e, SG_EDGE_SUBSCRIPTION, id, build_seq, what, &r1), 0);
  what[1] = 4;
  assert_int_equal(sg_edge_update(e, SG_EDGE_SUBSCRIPTION, id, build_seq, what, &r2),
                   SG_EDGE_STALE);
  assert_int_equal(r2, r1);
  assert_record(e, SG_EDGE_SUBSCRIPTION, id, "{\"seq\":5}");
  what[0] = 1; /* an older delete is refused too */
  assert_int_equal(sg_edge_update(e, SG_EDGE_SUBSCRIPTION, id, build_seq, what, NULL),
                   SG_EDGE_STALE);
  assert_record(e, SG_EDGE_SUBSCRIPTION, id, "{\"seq\":5}");
  what[1] = 6;
  assert_int_equal(sg_edge_update(e, SG_EDGE_SUBSCRIPTION, id, build_seq, what, NULL), 0);
  assert_record(e, SG_EDGE_SUBSCRIPTION, id, NULL);
}

/* Two processes write one record with interleaved sequences (one the odd, the other the
 * even ones, each ascending) while this one watches: the stored sequence never goes
 * backwards and ends at the highest. */
static void test_two_writers_never_go_backwards(void **state) {
  fixture *f = *state;
  char id[64];
  id_of(f, "app", id, sizeof id);
  enum { N = 150 };
  pid_t pids[2];
  for (int w = 0; w < 2; w++) {
    pids[w] = fork();
    assert_true(pids[w] >= 0);
    if (pids[w] == 0) {
      const char *spec = g_spec;
      char p[300];
      if (!spec) snprintf(p, sizeof p, "%s/edge", f->root), spec = p;
      sg_edge *e;
      if (sg_edge_open(spec, &e)) _exit(2);
      /* The even writer starts late, so both orders of arrival happen. */
      for (int i = 1 + w; i <= N; i += 2) {
        char json[32];
        int n = snprintf(json, sizeof json, "{\"seq\":%d}", i);
        int rc = sg_edge_put_if_newer(e, SG_EDGE_APP, id, json, (size_t)n, (uint64_t)i, NULL);
        if (rc < 0) _exit(3);
      }
      sg_edge_close(e);
      _exit(0);
    }
  }
  sg_test_watch_seq(f->e, SG_EDGE_APP, id, pids);
  char want[32];
  snprintf(want, sizeof want, "{\"seq\":%d}", N);
  assert_record(f->e, SG_EDGE_APP, id, want);
}

typedef struct {
  const char *prefix;
  char seen[16][SG_EDGE_MAX_ID + 16];
  sg_edge_kind kinds[16];
  uint64_t revs[16];
  int n, others;
} changes;

static int on_change(sg_edge_kind k, const char *id, uint64_t rev, void *ctx) {
  changes *c = ctx;
  if (strncmp(id, c->prefix, strlen(c->prefix)) != 0) {
    c->others++; /* another test's writes on a shared backend */
    return 0;
  }
  if (c->n < 16) {
    snprintf(c->seen[c->n], sizeof c->seen[c->n], "%s", id + strlen(c->prefix));
    c->kinds[c->n] = k;
    c->revs[c->n] = rev;
  }
  c->n++;
  return 0;
}

static void test_changes_since(void **state) {
  fixture *f = *state;
  sg_edge *e = f->e;
  char a[64], b[64];
  id_of(f, "a", a, sizeof a);
  id_of(f, "b", b, sizeof b);
  uint64_t r0, upto;
  assert_int_equal(sg_edge_revision(e, &r0), 0);
  assert_int_equal(sg_edge_put(e, SG_EDGE_LIST, a, "{}", 2, NULL), 0);
  assert_int_equal(sg_edge_put_if_newer(e, SG_EDGE_KEY, b, "{}", 2, 1, NULL), 0);
  assert_int_equal(sg_edge_delete(e, SG_EDGE_LIST, a, NULL), 0);

  changes c = {.prefix = f->prefix};
  assert_int_equal(sg_edge_changes_since(e, r0, on_change, &c, &upto), 0);
  assert_int_equal(c.n, 3);
  assert_string_equal(c.seen[0], "a");
  assert_int_equal(c.kinds[0], SG_EDGE_LIST);
  assert_string_equal(c.seen[1], "b");
  assert_int_equal(c.kinds[1], SG_EDGE_KEY);
  assert_string_equal(c.seen[2], "a");
  assert_true(c.revs[0] < c.revs[1] && c.revs[1] < c.revs[2]);
  assert_true(upto >= r0 + 2);
  /* Nothing since the last revision read. */
  memset(&c, 0, sizeof c);
  c.prefix = f->prefix;
  assert_int_equal(sg_edge_changes_since(e, upto, on_change, &c, &upto), 0);
  assert_int_equal(c.n, 0);
  /* A revision the store never reached (another store, or one reset): reload all. */
  assert_int_equal(sg_edge_changes_since(e, upto + 5, on_change, &c, &upto), SG_EDGE_TOO_OLD);
  /* Arguments. */
  assert_int_equal(sg_edge_changes_since(e, 0, NULL, &c, &upto), -1);
  assert_int_equal(errno, EINVAL);
}

/* The log is bounded: after many writes a reader that far behind is told to reload,
 * and a recent one still gets exactly what changed. */
static void test_changes_compacted(void **state) {
  fixture *f = *state;
  sg_edge *e = f->e;
  char id[SG_EDGE_MAX_ID + 1];
  uint64_t r0, mid = 0, upto;
  assert_int_equal(sg_edge_revision(e, &r0), 0);
  for (int i = 0; i < 1200; i++) {
    /* Long ids make the log grow fast. */
    snprintf(id, sizeof id, "%s%0100d", f->prefix, i % 7);
    assert_int_equal(sg_edge_put(e, SG_EDGE_WORKSPACE, id, "{}", 2, NULL), 0);
    if (i == 1189) assert_int_equal(sg_edge_revision(e, &mid), 0);
  }
  changes c = {.prefix = f->prefix};
  assert_int_equal(sg_edge_changes_since(e, mid, on_change, &c, &upto), 0);
  assert_int_equal(c.n + c.others, (int)(upto - mid));
  assert_true(c.n >= 10);
  memset(&c, 0, sizeof c);
  c.prefix = f->prefix;
  if (f->root[0]) /* the directory backend keeps 128 KiB of log at most */
    assert_int_equal(sg_edge_changes_since(e, r0 + 1, on_change, &c, &upto), SG_EDGE_TOO_OLD);
}

typedef struct {
  const char *hex;
  int found;
  int64_t written_at;
} find_art;

static int on_artifact(const char *hex, int64_t written_at, void *ctx) {
  find_art *fa = ctx;
  assert_int_equal(strlen(hex), 64);
  if (strcmp(hex, fa->hex) == 0) fa->found++, fa->written_at = written_at;
  return 0;
}

/* Artifacts: stored by content hash, idempotent, listed, loaded (checked against the
 * hash), deleted; they never bump the revision. */
static void test_artifacts(void **state) {
  fixture *f = *state;
  sg_edge *e = f->e;
  sg_buf a;
  char hash[72];
  /* The salt differs per run, so a shared backend starts without this artifact. */
  uint32_t salt;
  sg_random_bytes(&salt, sizeof salt);
  sg_test_artifact(3000, salt, &a, hash);
  uint64_t r0, r1, size = 0;
  assert_int_equal(sg_edge_revision(e, &r0), 0);
  assert_int_equal(sg_edge_artifact_stat(e, hash, &size), -1);
  assert_int_equal(errno, ENOENT);
  assert_int_equal(sg_edge_put_artifact(e, hash, a.data, a.len), 0);
  assert_int_equal(sg_edge_put_artifact(e, hash + 7, a.data, a.len), 0); /* idempotent */
  assert_int_equal(sg_edge_artifact_stat(e, hash, &size), 0);
  assert_int_equal(size, a.len);
  assert_int_equal(sg_edge_revision(e, &r1), 0);
  assert_int_equal(r1, r0); /* artifacts do not bump */
  find_art fa = {.hex = hash + 7};
  assert_int_equal(sg_edge_artifacts(e, on_artifact, &fa), 0);
  assert_int_equal(fa.found, 1);
  assert_true(fa.written_at > 0);
  sg_artifact *art;
  assert_int_equal(sg_edge_artifact_load(e, hash, &art), 0);
  assert_int_equal(sg_artifact_item_count(art), 3000);
  sg_artifact_close(art);
  /* Bytes that are no artifact: stored (content-addressed) but refused on load. */
  char junk[72];
  sg_sha256_tagged("junk", 4, junk);
  assert_int_equal(sg_edge_put_artifact(e, junk, "junk", 4), 0);
  assert_int_equal(sg_edge_artifact_load(e, junk, &art), -1);
  assert_int_equal(errno, EINVAL);
  assert_int_equal(sg_edge_delete_artifact(e, junk), 0);
  /* Deleted: gone from stat, load and the listing; a second delete answers ENOENT. */
  assert_int_equal(sg_edge_delete_artifact(e, hash), 0);
  assert_int_equal(sg_edge_artifact_stat(e, hash, NULL), -1);
  assert_int_equal(errno, ENOENT);
  assert_int_equal(sg_edge_artifact_load(e, hash, &art), -1);
  assert_int_equal(errno, ENOENT);
  assert_int_equal(sg_edge_delete_artifact(e, hash), -1);
  assert_int_equal(errno, ENOENT);
  fa.found = 0;
  assert_int_equal(sg_edge_artifacts(e, on_artifact, &fa), 0);
  assert_int_equal(fa.found, 0);
  /* Arguments. */
  assert_int_equal(sg_edge_put_artifact(e, "sha256:xyz", a.data, a.len), -1);
  assert_int_equal(errno, EINVAL);
  sg_buf_free(&a);
}

/* The artifact cache goes through the backend (a directory store keeps none: its
 * artifacts are files already): whatever is pruned, the artifact still loads. */
static void test_artifact_cache(void **state) {
  fixture *f = *state;
  sg_edge *e = f->e;
  char cache[] = "/tmp/sg-edge-cache-XXXXXX";
  assert_non_null(mkdtemp(cache));
  char dir[300];
  snprintf(dir, sizeof dir, "%s/artifacts", cache);
  assert_int_equal(sg_edge_set_cache_dir(e, ""), -1);
  assert_int_equal(errno, EINVAL);
  assert_int_equal(sg_edge_set_cache_dir(e, dir), 0);
  sg_buf a;
  char hash[72];
  uint32_t salt;
  sg_random_bytes(&salt, sizeof salt);
  sg_test_artifact(100, salt, &a, hash);
  assert_int_equal(sg_edge_put_artifact(e, hash, a.data, a.len), 0);
  sg_artifact *art;
  assert_int_equal(sg_edge_artifact_load(e, hash, &art), 0);
  sg_artifact_close(art);
  size_t removed = 99;
  const char *keep[] = {hash};
  assert_int_equal(sg_edge_cache_prune(e, keep, 1, 0, &removed), 0);
  assert_int_equal(removed, 0); /* kept */
  assert_int_equal(sg_edge_cache_prune(e, NULL, 0, 0, &removed), 0);
  assert_true(removed <= 1);
  assert_int_equal(sg_edge_artifact_load(e, hash, &art), 0);
  assert_int_equal(sg_artifact_item_count(art), 100);
  sg_artifact_close(art);
  assert_int_equal(sg_edge_cache_prune(e, NULL, 1, 0, &removed), -1);
  assert_int_equal(errno, EINVAL);
  assert_int_equal(sg_edge_check(e), 0);
  assert_int_equal(sg_edge_delete_artifact(e, hash), 0);
  sg_buf_free(&a);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache);
  assert_int_equal(system(cmd), 0);
}

/* Records: get, foreach in id order, delete. */
typedef struct {
  const char *prefix;
  char seen[512];
} ids_seen;

static int collect_ids(const char *id, const char *json, size_t len, void *ctx) {
  ids_seen *s = ctx;
  assert_int_equal(strlen(json), len);
  size_t pn = strlen(s->prefix);
  if (strncmp(id, s->prefix, pn) == 0 && strlen(s->seen) + strlen(id) < sizeof s->seen - 2) {
    strcat(s->seen, id + pn + 1);
    strcat(s->seen, ",");
  }
  return 0;
}

static void test_records(void **state) {
  fixture *f = *state;
  sg_edge *e = f->e;
  char a[64], b[64], c[64];
  id_of(f, "rb", a, sizeof a);
  id_of(f, "ra", b, sizeof b);
  id_of(f, "rc", c, sizeof c);
  uint64_t r0, r1;
  assert_int_equal(sg_edge_revision(e, &r0), 0);
  assert_int_equal(sg_edge_put(e, SG_EDGE_SIGNING_KEY, a, "{\"k\":1}", 7, &r1), 0);
  assert_true(r1 > r0);
  assert_int_equal(sg_edge_put(e, SG_EDGE_SIGNING_KEY, b, "{}", 2, NULL), 0);
  assert_int_equal(sg_edge_put(e, SG_EDGE_SIGNING_KEY, c, "{}", 2, NULL), 0);
  assert_record(e, SG_EDGE_SIGNING_KEY, a, "{\"k\":1}");
  assert_record(e, SG_EDGE_WORKSPACE, a, NULL); /* kinds are separate */
  ids_seen seen = {.prefix = f->prefix};
  assert_int_equal(sg_edge_foreach(e, SG_EDGE_SIGNING_KEY, collect_ids, &seen), 0);
  assert_string_equal(seen.seen, "a,b,c,");
  assert_int_equal(sg_edge_delete(e, SG_EDGE_SIGNING_KEY, a, NULL), 0);
  assert_int_equal(sg_edge_delete(e, SG_EDGE_SIGNING_KEY, a, NULL), -1);
  assert_int_equal(errno, ENOENT);
  seen.seen[0] = '\0';
  assert_int_equal(sg_edge_foreach(e, SG_EDGE_SIGNING_KEY, collect_ids, &seen), 0);
  assert_string_equal(seen.seen, "a,c,");
  assert_int_equal(sg_edge_check(e), 0);
  assert_int_equal(sg_edge_delete(e, SG_EDGE_SIGNING_KEY, b, NULL), 0);
  assert_int_equal(sg_edge_delete(e, SG_EDGE_SIGNING_KEY, c, NULL), 0);
}

/* The guard stamp (docs/EDGE.md, "The staleness guard"): a conditional heartbeat that
 * refuses a stamp other than the one checked, an unconditional write that only moves
 * forward, and a revision that can be raised (never lowered) without a change-log entry. */
static void test_stamp_and_raise(void **state) {
  fixture *f = *state;
  sg_edge *e = f->e;
  sg_edge_stamp cur;
  assert_int_equal(sg_edge_stamp_get(e, &cur), 0);
  /* A shared backend may hold a stamp already: start above it. */
  uint64_t ep = (cur.present ? cur.epoch : 0) + 1;
  sg_edge_stamp open = {true, ep, 0, 0}, done = {true, ep, 1700000000000, 7};
  assert_int_equal(sg_edge_stamp_put(e, NULL, &open), 0);
  assert_int_equal(sg_edge_stamp_get(e, &cur), 0);
  assert_true(cur.present);
  assert_int_equal(cur.epoch, ep);
  assert_int_equal(cur.heartbeat_ms, 0);
  /* Not above what is stored: refused. */
  assert_int_equal(sg_edge_stamp_put(e, NULL, &open), SG_EDGE_STALE);
  /* A heartbeat conditional on a stamp that is not the stored one: refused. */
  sg_edge_stamp wrong = {true, ep, 5, 0};
  assert_int_equal(sg_edge_stamp_put(e, &wrong, &done), SG_EDGE_STALE);
  assert_int_equal(sg_edge_stamp_put(e, &open, &done), 0);
  assert_int_equal(sg_edge_stamp_get(e, &cur), 0);
  assert_int_equal(cur.heartbeat_ms, 1700000000000);
  assert_int_equal(cur.revision, 7);
  /* An older epoch never replaces a newer one. */
  sg_edge_stamp older = {true, ep - 1, 1800000000000, 9};
  assert_int_equal(sg_edge_stamp_put(e, NULL, &older), SG_EDGE_STALE);
  sg_edge_stamp later = {true, ep + 1, 0, 0};
  assert_int_equal(sg_edge_stamp_put(e, NULL, &later), 0);
  assert_int_equal(sg_edge_stamp_put(e, &done, &done), SG_EDGE_STALE);

  /* Raising the revision: never down, and a reader behind it must reload everything. */
  uint64_t r0, r1, upto;
  char a[64];
  id_of(f, "a", a, sizeof a);
  assert_int_equal(sg_edge_put(e, SG_EDGE_LIST, a, "{}", 2, &r0), 0);
  assert_int_equal(sg_edge_raise_revision(e, r0 + 10, &r1), 0);
  assert_int_equal(r1, r0 + 10);
  assert_int_equal(sg_edge_raise_revision(e, r0, &r1), 0);
  assert_int_equal(r1, r0 + 10);
  assert_int_equal(sg_edge_revision(e, &r1), 0);
  assert_int_equal(r1, r0 + 10);
  changes c = {.prefix = f->prefix};
  assert_int_equal(sg_edge_changes_since(e, r0, on_change, &c, &upto), SG_EDGE_TOO_OLD);
  /* Text form. */
  char text[72];
  sg_edge_stamp p;
  assert_int_equal(sg_edge_stamp_format(&done, text), 0);
  char want[72];
  snprintf(want, sizeof want, "%llu 1700000000000 7", (unsigned long long)ep);
  assert_string_equal(text, want);
  assert_int_equal(sg_edge_stamp_parse(text, strlen(text), &p), 0);
  assert_int_equal(sg_edge_stamp_cmp(&p, &done), 0);
  assert_int_equal(sg_edge_stamp_parse("1 2", 3, &p), -1);
  assert_int_equal(sg_edge_stamp_parse("1 2 3 4", 7, &p), -1);
  assert_int_equal(sg_edge_stamp_parse("1 -2 3", 6, &p), -1);
  assert_int_equal(sg_edge_stamp_parse("x 2 3", 5, &p), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_put_if_newer, setup, teardown),
      cmocka_unit_test_setup_teardown(test_update_with_sequence, setup, teardown),
      cmocka_unit_test_setup_teardown(test_two_writers_never_go_backwards, setup, teardown),
      cmocka_unit_test_setup_teardown(test_changes_since, setup, teardown),
      cmocka_unit_test_setup_teardown(test_changes_compacted, setup, teardown),
      cmocka_unit_test_setup_teardown(test_artifacts, setup, teardown),
      cmocka_unit_test_setup_teardown(test_artifact_cache, setup, teardown),
      cmocka_unit_test_setup_teardown(test_records, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stamp_and_raise, setup, teardown),
  };
  const char *env = getenv("SUGGESTD_TEST_EDGE");
  if (env && *env) {
    g_spec = env;
    return cmocka_run_group_tests(tests, NULL, NULL);
  }
  int failed = cmocka_run_group_tests_name("edge on a directory", tests, NULL, NULL);
  sg_test_redis srv = {0};
  if (!sg_test_redis_start(&srv)) {
    if (getenv("CI")) {
      fprintf(stderr, "redis-server is missing; run scripts/deps.sh\n");
      return 1;
    }
    fprintf(stderr, "redis-server is missing: the Redis edge tests are skipped\n");
    return failed;
  }
  g_spec = srv.url;
  failed += cmocka_run_group_tests_name("edge on Redis", tests, NULL, NULL);
  sg_test_redis_stop(&srv);
  return failed;
}
