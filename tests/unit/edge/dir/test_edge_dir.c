/* Unit tests of the directory edge store (src/edge). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "edge/edge.h"

static char root[256];

/* The store's directory (setup opens <root>/edge): the edge API does not expose it. */
static const char *edge_path(void) {
  static char p[300];
  snprintf(p, sizeof p, "%s/edge", root);
  return p;
}

static int setup(void **state) {
  snprintf(root, sizeof root, "/tmp/sg-edge-test-XXXXXX");
  assert_non_null(mkdtemp(root));
  sg_edge *e;
  char p[300];
  snprintf(p, sizeof p, "%s/edge", root);
  assert_int_equal(sg_edge_open(p, &e), 0);
  *state = e;
  return 0;
}

static int teardown(void **state) {
  sg_edge_close(*state);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  return system(cmd) == 0 ? 0 : -1;
}

typedef struct {
  char ids[16][SG_EDGE_MAX_ID + 1];
  char json[16][128];
  int n;
} collected;

static int collect(const char *id, const char *json, size_t len, void *ctx) {
  collected *c = ctx;
  assert_true(c->n < 16);
  assert_int_equal(strlen(json), len);
  snprintf(c->ids[c->n], sizeof c->ids[0], "%s", id);
  snprintf(c->json[c->n], sizeof c->json[0], "%s", json);
  c->n++;
  return 0;
}

static void test_put_get_delete_foreach(void **state) {
  sg_edge *e = *state;
  uint64_t rev = 99;
  assert_int_equal(sg_edge_revision(e, &rev), 0);
  assert_int_equal(rev, 0);

  uint64_t r1, r2, r3;
  assert_int_equal(sg_edge_put(e, SG_EDGE_LIST, "lst_b", "{\"id\":\"lst_b\"}", 14, &r1), 0);
  assert_int_equal(sg_edge_put(e, SG_EDGE_LIST, "lst_a", "{\"id\":\"lst_a\"}", 14, &r2), 0);
  assert_int_equal(r1, 1);
  assert_int_equal(r2, 2);
  /* Replace keeps one record. */
  assert_int_equal(sg_edge_put(e, SG_EDGE_LIST, "lst_b", "{\"id\":\"lst_b\",\"v\":2}", 20, &r3), 0);
  assert_int_equal(r3, 3);
  assert_int_equal(sg_edge_put(e, SG_EDGE_APP, "app_1", "{}", 2, NULL), 0);

  collected c = {0};
  assert_int_equal(sg_edge_foreach(e, SG_EDGE_LIST, collect, &c), 0);
  assert_int_equal(c.n, 2);
  assert_string_equal(c.ids[0], "lst_a");
  assert_string_equal(c.ids[1], "lst_b");
  assert_string_equal(c.json[1], "{\"id\":\"lst_b\",\"v\":2}");

  char *json;
  size_t len;
  assert_int_equal(sg_edge_get(e, SG_EDGE_LIST, "lst_a", &json, &len), 0);
  assert_int_equal(len, 14);
  assert_string_equal(json, "{\"id\":\"lst_a\"}");
  free(json);

  assert_int_equal(sg_edge_delete(e, SG_EDGE_LIST, "lst_a", &r1), 0);
  assert_int_equal(r1, 5);
  errno = 0;
  assert_int_equal(sg_edge_delete(e, SG_EDGE_LIST, "lst_a", &r1), -1);
  assert_int_equal(errno, ENOENT);
  assert_int_equal(sg_edge_get(e, SG_EDGE_LIST, "lst_a", &json, &len), -1);
  assert_int_equal(errno, ENOENT);
  assert_int_equal(sg_edge_revision(e, &rev), 0);
  assert_int_equal(rev, 5);

  memset(&c, 0, sizeof c);
  assert_int_equal(sg_edge_foreach(e, SG_EDGE_LIST, collect, &c), 0);
  assert_int_equal(c.n, 1);

  /* A reopened handle sees the same state. */
  sg_edge *e2;
  assert_int_equal(sg_edge_open(edge_path(), &e2), 0);
  assert_int_equal(sg_edge_revision(e2, &rev), 0);
  assert_int_equal(rev, 5);
  sg_edge_close(e2);
}

static int stop_early(const char *id, const char *json, size_t len, void *ctx) {
  (*(int *)ctx)++;
  return 7;
}

static void test_foreach_skips_temp_and_stops(void **state) {
  sg_edge *e = *state;
  assert_int_equal(sg_edge_put(e, SG_EDGE_KEY, "aa", "{}", 2, NULL), 0);
  assert_int_equal(sg_edge_put(e, SG_EDGE_KEY, "bb", "{}", 2, NULL), 0);
  char p[512];
  snprintf(p, sizeof p, "%s/keys/cc.json.tmp-0123", edge_path());
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  fputs("{", f);
  fclose(f);
  snprintf(p, sizeof p, "%s/keys/not valid.json", edge_path());
  f = fopen(p, "w");
  fclose(f);
  collected c = {0};
  assert_int_equal(sg_edge_foreach(e, SG_EDGE_KEY, collect, &c), 0);
  assert_int_equal(c.n, 2);
  int calls = 0;
  assert_int_equal(sg_edge_foreach(e, SG_EDGE_KEY, stop_early, &calls), 7);
  assert_int_equal(calls, 1);
}

static void test_hostile_ids(void **state) {
  sg_edge *e = *state;
  const char *bad[] = {"", "..", "../x", "a/b", "a.b", "a b", "é", "x\n", NULL};
  for (int i = 0; bad[i]; i++) {
    errno = 0;
    assert_int_equal(sg_edge_put(e, SG_EDGE_LIST, bad[i], "{}", 2, NULL), -1);
    assert_int_equal(errno, EINVAL);
    assert_int_equal(sg_edge_delete(e, SG_EDGE_LIST, bad[i], NULL), -1);
  }
  assert_int_equal(sg_edge_put(e, SG_EDGE_LIST, NULL, "{}", 2, NULL), -1);
  char longid[SG_EDGE_MAX_ID + 2];
  memset(longid, 'a', sizeof longid - 1);
  longid[sizeof longid - 1] = '\0';
  assert_int_equal(sg_edge_put(e, SG_EDGE_LIST, longid, "{}", 2, NULL), -1);
  longid[SG_EDGE_MAX_ID] = '\0';
  assert_int_equal(sg_edge_put(e, SG_EDGE_LIST, longid, "{}", 2, NULL), 0);
  assert_int_equal(sg_edge_put(e, SG_EDGE__KINDS, "x", "{}", 2, NULL), -1);
  /* Oversized record. */
  char *big = calloc(1, SG_EDGE_MAX_RECORD + 1);
  assert_int_equal(sg_edge_put(e, SG_EDGE_LIST, "big", big, SG_EDGE_MAX_RECORD + 1, NULL), -1);
  assert_int_equal(errno, EFBIG);
  free(big);
  /* Bad hashes. */
  sg_artifact *a;
  assert_int_equal(sg_edge_artifact_stat(e, "sha256:../../etc/passwd", NULL), -1);
  assert_int_equal(errno, EINVAL);
  assert_int_equal(sg_edge_artifact_load(e, "sha256:ABCDEF", &a), -1);
  assert_int_equal(errno, EINVAL);
  assert_int_equal(sg_edge_put_artifact(e, "md5:00", "x", 1), -1);
  /* Redis over TLS is not in this build. */
  sg_edge *r;
  assert_int_equal(sg_edge_open("rediss://localhost", &r), -1);
  assert_int_equal(errno, ENOTSUP);
}

/* sg_edge_update's build callback: ctx says what to answer (0 write, 1 delete, -1 fail). */
static int build_cb(void *ctx, char **json, size_t *len, uint64_t *seq) {
  int what = *(int *)ctx;
  (void)seq;
  if (what == 0) {
    *json = strdup("{\"v\":2}");
    *len = strlen(*json);
  }
  return what;
}

static void test_update_under_lock(void **state) {
  sg_edge *e = *state;
  uint64_t r0, r1, r2;
  int what = 0;
  assert_int_equal(sg_edge_update(e, SG_EDGE_APP, "app_1", build_cb, &what, &r0), 0);
  char *json;
  size_t len;
  assert_int_equal(sg_edge_get(e, SG_EDGE_APP, "app_1", &json, &len), 0);
  assert_string_equal(json, "{\"v\":2}");
  free(json);
  /* A failing build writes nothing and bumps nothing. */
  what = -1;
  assert_int_equal(sg_edge_update(e, SG_EDGE_APP, "app_1", build_cb, &what, &r1), -1);
  assert_int_equal(sg_edge_revision(e, &r1), 0);
  assert_int_equal(r1, r0);
  /* Delete, then delete again: an absent record is not an error and bumps nothing. */
  what = 1;
  assert_int_equal(sg_edge_update(e, SG_EDGE_APP, "app_1", build_cb, &what, &r1), 0);
  assert_true(r1 > r0);
  assert_int_equal(sg_edge_get(e, SG_EDGE_APP, "app_1", &json, &len), -1);
  assert_int_equal(sg_edge_update(e, SG_EDGE_APP, "app_1", build_cb, &what, &r2), 0);
  assert_int_equal(r2, r1);
  assert_int_equal(sg_edge_update(e, SG_EDGE_APP, "../x", build_cb, &what, &r2), -1);
}

static int n_artifacts;

static int count_artifact(const char *hex, int64_t written_at, void *ctx) {
  assert_int_equal(strlen(hex), 64);
  assert_true(written_at > 0);
  (*(int *)ctx)++;
  return 0;
}

static void test_artifacts(void **state) {
  sg_edge *e = *state;
  const char data[] = "artifact bytes";
  char hash[72];
  sg_sha256_tagged(data, sizeof data, hash);
  assert_int_equal(sg_edge_put_artifact(e, hash, data, sizeof data), 0);
  assert_int_equal(sg_edge_put_artifact(e, hash + 7, data, sizeof data), 0); /* idempotent */
  char p1[512];
  uint64_t size = 0;
  assert_int_equal(sg_edge_artifact_stat(e, hash, &size), 0);
  assert_int_equal(size, sizeof data);
  assert_int_equal(sg_edge_artifact_stat(e, hash + 7, NULL), 0);
  snprintf(p1, sizeof p1, "%s/artifacts/%s.sga", edge_path(), hash + 7);
  char *got;
  size_t len;
  assert_int_equal(sg_read_file(p1, 1024, &got, &len), 0);
  assert_int_equal(len, sizeof data);
  assert_memory_equal(got, data, len);
  free(got);
  uint64_t rev;
  assert_int_equal(sg_edge_revision(e, &rev), 0);
  assert_int_equal(rev, 0); /* artifacts do not bump */

  /* Damaged in place at the same size: the next put repairs it. */
  FILE *f = fopen(p1, "r+b");
  assert_non_null(f);
  assert_int_equal(fputc('X', f), 'X');
  fclose(f);
  assert_int_equal(sg_edge_put_artifact(e, hash, data, sizeof data), 0);
  assert_int_equal(sg_read_file(p1, 1024, &got, &len), 0);
  assert_memory_equal(got, data, sizeof data);
  free(got);

  /* Listing and deletion (garbage collection); temp files are not artifacts. */
  char tmp[600];
  snprintf(tmp, sizeof tmp, "%s.tmp-abc", p1);
  assert_int_equal(sg_write_file_atomic(tmp, "t", 1), 0);
  assert_int_equal(sg_edge_artifacts(e, count_artifact, &n_artifacts), 0);
  assert_int_equal(n_artifacts, 1);
  assert_int_equal(sg_edge_delete_artifact(e, hash), 0);
  assert_int_equal(sg_edge_delete_artifact(e, hash), -1);
  assert_int_equal(errno, ENOENT);
  sg_artifact *a;
  assert_int_equal(sg_edge_artifact_stat(e, hash, NULL), -1);
  assert_int_equal(errno, ENOENT);
  assert_int_equal(sg_edge_artifact_load(e, hash, &a), -1);
  assert_int_equal(errno, ENOENT);
  n_artifacts = 0;
  assert_int_equal(sg_edge_artifacts(e, count_artifact, &n_artifacts), 0);
  assert_int_equal(n_artifacts, 0);
  assert_int_equal(sg_edge_delete_artifact(e, "sha256:../x"), -1);

  /* The temp file of an unfinished write goes once it is old enough, not before. */
  size_t swept = 9;
  assert_int_equal(sg_edge_sweep_temp(e, 3600, &swept), 0);
  assert_int_equal(swept, 0);
  struct timespec old[2] = {{.tv_sec = time(NULL) - 7200}, {.tv_sec = time(NULL) - 7200}};
  assert_int_equal(utimensat(AT_FDCWD, tmp, old, 0), 0);
  assert_int_equal(sg_edge_sweep_temp(e, 3600, &swept), 0);
  assert_int_equal(swept, 1);
  assert_int_equal(access(tmp, F_OK), -1);
}

static int count_change(sg_edge_kind k, const char *id, uint64_t rev, void *ctx) {
  (*(int *)ctx)++;
  return 0;
}

/* The change log file: a hand-bumped REVISION (no entry), a torn last line and a damaged
 * line are all answered safely. */
static void test_change_log_file(void **state) {
  sg_edge *e = *state;
  uint64_t upto;
  int n = 0;
  assert_int_equal(sg_edge_put(e, SG_EDGE_LIST, "a", "{}", 2, NULL), 0);
  assert_int_equal(sg_edge_put(e, SG_EDGE_LIST, "b", "{}", 2, NULL), 0);
  assert_int_equal(sg_edge_changes_since(e, 0, count_change, &n, &upto), 0);
  assert_int_equal(n, 2);
  char p[512];
  snprintf(p, sizeof p, "%s/CHANGES", edge_path());
  /* A torn last line (its writer died mid-append) is ignored. */
  FILE *f = fopen(p, "a");
  assert_non_null(f);
  fputs("3 lists c", f);
  fclose(f);
  n = 0;
  assert_int_equal(sg_edge_changes_since(e, 1, count_change, &n, &upto), 0);
  assert_int_equal(n, 1);
  /* The next write cuts the torn line instead of gluing its entry to it. */
  assert_int_equal(sg_edge_put(e, SG_EDGE_LIST, "c", "{}", 2, NULL), 0);
  n = 0;
  assert_int_equal(sg_edge_changes_since(e, 1, count_change, &n, &upto), 0);
  assert_int_equal(n, 2);
  assert_int_equal(upto, 3);
  /* REVISION moved without an entry: reload everything. */
  snprintf(p, sizeof p, "%s/REVISION", edge_path());
  assert_int_equal(sg_write_file_atomic(p, "4\n", 2), 0);
  assert_int_equal(sg_edge_changes_since(e, 1, count_change, &n, &upto), SG_EDGE_TOO_OLD);
  assert_int_equal(upto, 4);
  /* A damaged line. */
  snprintf(p, sizeof p, "%s/CHANGES", edge_path());
  assert_int_equal(sg_write_file_atomic(p, "base 0\n1 lists a\nxx\n3 lists b\n", 30), 0);
  assert_int_equal(sg_edge_changes_since(e, 0, count_change, &n, &upto), SG_EDGE_TOO_OLD);
  /* No log at all (a store from before it existed): only "nothing changed" is known. */
  assert_int_equal(unlink(p), 0);
  assert_int_equal(sg_edge_changes_since(e, 4, count_change, &n, &upto), 0);
  assert_int_equal(sg_edge_changes_since(e, 3, count_change, &n, &upto), SG_EDGE_TOO_OLD);
  /* The next write starts a new log at the revision before it. */
  assert_int_equal(sg_edge_put(e, SG_EDGE_LIST, "d", "{}", 2, NULL), 0);
  n = 0;
  assert_int_equal(sg_edge_changes_since(e, 4, count_change, &n, &upto), 0);
  assert_int_equal(n, 1);
  assert_int_equal(upto, 5);
}

static void test_key_digest(void **state) {
  char d[65];
  sg_edge_key_digest("abc", 3, d);
  assert_string_equal(d, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  assert_true(sg_edge_id_valid(d));
}

/* Two processes each write N records through their own handle; the revisions each
 * sees are strictly increasing, all distinct, and the final revision counts every write. */
static void test_concurrent_writers(void **state) {
  sg_edge *e = *state;
  enum { N = 60 };
  int fds[2][2];
  pid_t pids[2];
  for (int c = 0; c < 2; c++) {
    assert_int_equal(pipe(fds[c]), 0);
    pids[c] = fork();
    assert_true(pids[c] >= 0);
    if (pids[c] == 0) {
      close(fds[c][0]);
      sg_edge *ce;
      if (sg_edge_open(edge_path(), &ce)) _exit(2);
      for (int i = 0; i < N; i++) {
        char id[32];
        uint64_t r;
        snprintf(id, sizeof id, "w%d_%d", c, i);
        if (sg_edge_put(ce, SG_EDGE_WORKSPACE, id, "{}", 2, &r)) _exit(3);
        if (write(fds[c][1], &r, sizeof r) != sizeof r) _exit(4);
      }
      sg_edge_close(ce);
      _exit(0);
    }
    close(fds[c][1]);
  }
  static uint8_t seen[2 * N + 1];
  memset(seen, 0, sizeof seen);
  for (int c = 0; c < 2; c++) {
    uint64_t prev = 0, r;
    int got = 0;
    while (read(fds[c][0], &r, sizeof r) == sizeof r) {
      assert_true(r > prev);
      assert_true(r <= 2 * N);
      assert_int_equal(seen[r], 0);
      seen[r] = 1;
      prev = r;
      got++;
    }
    close(fds[c][0]);
    assert_int_equal(got, N);
    int st;
    assert_int_equal(waitpid(pids[c], &st, 0), pids[c]);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  uint64_t rev;
  assert_int_equal(sg_edge_revision(e, &rev), 0);
  assert_int_equal(rev, 2 * N);
}

/* The readiness probe: a usable store passes; a folder moved away, a store root that is
 * gone, or a revision that does not parse each fail, and the store passes again once
 * repaired. */
static void test_check(void **state) {
  sg_edge *e = *state;
  char edge[300], lists[320], away[330], rev[320];
  snprintf(edge, sizeof edge, "%s/edge", root);
  snprintf(lists, sizeof lists, "%s/lists", edge);
  snprintf(away, sizeof away, "%s/lists.away", edge);
  snprintf(rev, sizeof rev, "%s/REVISION", edge);
  assert_int_equal(sg_edge_check(e), 0);
  assert_int_equal(rename(lists, away), 0);
  assert_int_equal(sg_edge_check(e), -1);
  assert_int_equal(rename(away, lists), 0);
  assert_int_equal(sg_edge_check(e), 0);

  char root_away[300];
  snprintf(root_away, sizeof root_away, "%s/edge.away", root);
  assert_int_equal(rename(edge, root_away), 0);
  assert_int_equal(sg_edge_check(e), -1);
  assert_int_equal(rename(root_away, edge), 0);

  FILE *f = fopen(rev, "w");
  assert_non_null(f);
  fputs("garbage\n", f);
  fclose(f);
  assert_int_equal(sg_edge_check(e), -1);
  f = fopen(rev, "w");
  fputs("7\n", f);
  fclose(f);
  assert_int_equal(sg_edge_check(e), 0);
}

static int64_t mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* sg_edge_wait: a write through another handle (another process, in production) ends the
 * wait at once; without one the wait lasts its timeout; a readable stop descriptor ends it;
 * an edge root moved away and back is watched again. */
static void test_wait_for_changes(void **state) {
  sg_edge *e = *state, *w;
  assert_int_equal(sg_edge_open(edge_path(), &w), 0);
  static const char ws[] = "{\"id\":\"wsp_1\",\"status\":\"active\"}";
  assert_int_equal(sg_edge_wait(w, -1, 0), 0); /* makes the watch */
  int64_t t0 = mono_ms();
  assert_int_equal(sg_edge_wait(w, -1, 150), 0);
  assert_true(mono_ms() - t0 >= 140); /* nothing changed: the whole timeout */
  for (int round = 0; round < 3; round++) {
    assert_int_equal(sg_edge_put(e, SG_EDGE_WORKSPACE, "wsp_1", ws, sizeof ws - 1, NULL), 0);
    t0 = mono_ms();
    assert_int_equal(sg_edge_wait(w, -1, 20000), 0);
    assert_true(mono_ms() - t0 < 10000);
  }
  /* Drained: the next wait sleeps again. */
  t0 = mono_ms();
  assert_int_equal(sg_edge_wait(w, -1, 150), 0);
  assert_true(mono_ms() - t0 >= 140);
  /* A stop descriptor that is readable ends the wait. */
  int pfd[2];
  assert_int_equal(pipe(pfd), 0);
  assert_int_equal(write(pfd[1], "x", 1), 1);
  t0 = mono_ms();
  assert_int_equal(sg_edge_wait(w, pfd[0], 20000), 0);
  assert_true(mono_ms() - t0 < 10000);
  close(pfd[0]);
  close(pfd[1]);
  /* The root moved away and back: the watch is made again and sees the next write. */
  char away[300];
  snprintf(away, sizeof away, "%s/edge.away", root);
  assert_int_equal(rename(edge_path(), away), 0);
  assert_int_equal(sg_edge_wait(w, -1, 1000), 0); /* sees the move, drops the watch */
  assert_int_equal(rename(away, edge_path()), 0);
  assert_int_equal(sg_edge_wait(w, -1, 0), 0); /* watches the root again */
  assert_int_equal(sg_edge_put(e, SG_EDGE_WORKSPACE, "wsp_1", ws, sizeof ws - 1, NULL), 0);
  t0 = mono_ms();
  assert_int_equal(sg_edge_wait(w, -1, 20000), 0);
  assert_true(mono_ms() - t0 < 10000);
  /* Bad arguments. */
  errno = 0;
  assert_int_equal(sg_edge_wait(w, -1, -1), -1);
  assert_int_equal(errno, EINVAL);
  sg_edge_close(w);
}

int main(void) {
  if (sg_init()) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_check, setup, teardown),
      cmocka_unit_test_setup_teardown(test_put_get_delete_foreach, setup, teardown),
      cmocka_unit_test_setup_teardown(test_foreach_skips_temp_and_stops, setup, teardown),
      cmocka_unit_test_setup_teardown(test_hostile_ids, setup, teardown),
      cmocka_unit_test_setup_teardown(test_artifacts, setup, teardown),
      cmocka_unit_test_setup_teardown(test_update_under_lock, setup, teardown),
      cmocka_unit_test_setup_teardown(test_change_log_file, setup, teardown),
      cmocka_unit_test(test_key_digest),
      cmocka_unit_test_setup_teardown(test_concurrent_writers, setup, teardown),
      cmocka_unit_test_setup_teardown(test_wait_for_changes, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
