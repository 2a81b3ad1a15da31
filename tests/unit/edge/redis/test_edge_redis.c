/*
 * Tests of the Redis edge backend's own behaviour (src/edge/redis) on a throwaway Redis
 * (skipped when redis-server is missing, except under CI=true): racing writers, an
 * artifact never seen half-written, the trimmed change log, the local artifact cache,
 * and Redis going away and coming back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/redis_server.h"
#include "common/redisx.h"
#include "common/util.h"
#include "edge/artifact_fixture.h"
#include "edge/edge.h"
#include "edge/seq_race.h"
#include "search/artifact.h"

static sg_test_redis srv;

static int group_setup(void **state) {
  (void)state;
  if (!sg_test_redis_start(&srv)) {
    if (getenv("CI")) fail_msg("redis-server is missing; run scripts/deps.sh");
  }
  return 0;
}

static int group_teardown(void **state) {
  (void)state;
  if (srv.port) sg_test_redis_stop(&srv);
  return 0;
}

typedef struct {
  char url[256];
  char prefix[32];
  sg_edge *e;
} fixture;

/* Each test has its own key prefix (a fresh store) and the given URL options. */
static fixture *open_store(const char *options) {
  if (!srv.port) skip();
  fixture *f = calloc(1, sizeof *f);
  assert_non_null(f);
  uint8_t r[4];
  sg_random_bytes(r, sizeof r);
  char hex[9];
  sg_hex(r, sizeof r, hex);
  snprintf(f->prefix, sizeof f->prefix, "t%s", hex);
  snprintf(f->url, sizeof f->url, "%s/0?prefix=%s%s%s", srv.url, f->prefix, options ? "&" : "",
           options ? options : "");
  assert_int_equal(sg_edge_open(f->url, &f->e), 0);
  return f;
}

static void close_store(fixture *f) {
  sg_edge_close(f->e);
  free(f);
}

static long long cli_int(const char *args) {
  char out[256];
  sg_test_redis_cli(&srv, args, out, sizeof out);
  return atoll(out);
}

/* sg_edge_update with the sequence of ctx ({seq}), as the outbox writes. */
static int build_seq(void *ctx, char **json, size_t *len, uint64_t *seq) {
  const int *s = ctx;
  char buf[32];
  *len = (size_t)snprintf(buf, sizeof buf, "{\"seq\":%d}", *s);
  *json = strdup(buf);
  *seq = (uint64_t)*s;
  return *json ? 0 : -1;
}

/* Two processes race sg_edge_update and sg_edge_put_if_newer on one record with
 * interleaved sequences; a reader never sees it go backwards and it ends at the highest. */
static void test_racing_writers_never_go_backwards(void **state) {
  (void)state;
  fixture *f = open_store(NULL);
  enum { N = 200 };
  pid_t pids[2];
  for (int w = 0; w < 2; w++) {
    pids[w] = fork();
    assert_true(pids[w] >= 0);
    if (pids[w] == 0) {
      sg_edge *e;
      if (sg_edge_open(f->url, &e)) _exit(2);
      for (int i = 1 + w; i <= N; i += 2) {
        /* Each writer also retries an older sequence, as a slow writer would. */
        int older = i > 4 ? i - 3 : 1;
        int rc = w == 0 ? sg_edge_update(e, SG_EDGE_LIST, "lst_race", build_seq, &i, NULL)
                        : sg_edge_put_if_newer(e, SG_EDGE_LIST, "lst_race", "{\"seq\":0}", 9,
                                               (uint64_t)i, NULL);
        if (rc < 0) _exit(3);
        if (w == 1 && i > 4 &&
            sg_edge_put_if_newer(e, SG_EDGE_LIST, "lst_race", "{\"seq\":-1}", 10, (uint64_t)older,
                                 NULL) < 0)
          _exit(4);
      }
      sg_edge_close(e);
      _exit(0);
    }
  }
  /* The writer of odd sequences writes {"seq":i}, the other a fixed body: the reader
   * checks the stored sequence through the odd writer's bodies and that no refused older
   * write ({"seq":-1}) ever lands after a newer one. */
  sg_test_watch_seq(f->e, SG_EDGE_LIST, "lst_race", pids);
  char key[128];
  snprintf(key, sizeof key, "HGET %s:edge:seq:lists lst_race", f->prefix);
  assert_int_equal(cli_int(key), N);
  close_store(f);
}

/* A writer killed between its chunks and its manifest leaves an artifact no reader can
 * see, which sweeping removes; and a reader racing a writer sees the artifact only whole. */
static void test_half_written_artifact_invisible(void **state) {
  (void)state;
  fixture *f = open_store("chunk=65536");
  sg_buf a;
  char hash[72];
  sg_test_artifact(4000, 7, &a, hash);
  assert_true(a.len > 3 * 65536); /* several chunks */
  const char *hex = hash + 7;

  /* The chunks of a write that never finished: present, announced, no manifest. */
  char cmd[512];
  snprintf(cmd, sizeof cmd, "HSET %s:edge:artw %s '%lld 2'", f->prefix, hex,
           (long long)sg_now_s() - 7200);
  assert_int_equal(cli_int(cmd), 1);
  for (int i = 0; i < 2; i++) {
    snprintf(cmd, sizeof cmd, "SET %s:edge:art:%s:%d partial", f->prefix, hex, i);
    sg_test_redis_cli(&srv, cmd, (char[64]){0}, 64);
  }
  sg_artifact *art;
  assert_int_equal(sg_edge_artifact_stat(f->e, hash, NULL), -1);
  assert_int_equal(errno, ENOENT);
  assert_int_equal(sg_edge_artifact_load(f->e, hash, &art), -1);
  assert_int_equal(errno, ENOENT);
  /* Sweeping removes them once old enough, not before. */
  size_t removed = 9;
  assert_int_equal(sg_edge_sweep_temp(f->e, 3 * 3600, &removed), 0);
  assert_int_equal(removed, 0);
  assert_int_equal(sg_edge_sweep_temp(f->e, 3600, &removed), 0);
  assert_int_equal(removed, 1);
  snprintf(cmd, sizeof cmd, "EXISTS %s:edge:art:%s:0 %s:edge:art:%s:1", f->prefix, hex, f->prefix,
           hex);
  assert_int_equal(cli_int(cmd), 0);

  /* A reader polling while another process writes: once stat sees it, load succeeds. */
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    sg_edge *e;
    if (sg_edge_open(f->url, &e)) _exit(2);
    int rc = sg_edge_put_artifact(e, hash, a.data, a.len);
    sg_edge_close(e);
    _exit(rc ? 3 : 0);
  }
  int loads = 0;
  for (;;) {
    int st;
    bool done = waitpid(pid, &st, WNOHANG) == pid;
    if (sg_edge_artifact_stat(f->e, hash, NULL) == 0) {
      assert_int_equal(sg_edge_artifact_load(f->e, hash, &art), 0);
      assert_int_equal(sg_artifact_item_count(art), 4000);
      sg_artifact_close(art);
      loads++;
    } else {
      assert_int_equal(errno, ENOENT);
    }
    if (done) {
      assert_true(WIFEXITED(st));
      assert_int_equal(WEXITSTATUS(st), 0);
      break;
    }
  }
  assert_int_equal(sg_edge_artifact_stat(f->e, hash, NULL), 0);
  snprintf(cmd, sizeof cmd, "HLEN %s:edge:artw", f->prefix);
  assert_int_equal(cli_int(cmd), 0); /* the finished write is no longer announced */
  /* Deleted: manifest and every chunk. */
  assert_int_equal(sg_edge_delete_artifact(f->e, hash), 0);
  snprintf(cmd, sizeof cmd, "EXISTS %s:edge:art:%s %s:edge:art:%s:0 %s:edge:art:%s:3", f->prefix,
           hex, f->prefix, hex, f->prefix, hex);
  assert_int_equal(cli_int(cmd), 0);
  /* A chunk lost under a stored manifest: the next put writes it again. */
  assert_int_equal(sg_edge_put_artifact(f->e, hash, a.data, a.len), 0);
  snprintf(cmd, sizeof cmd, "DEL %s:edge:art:%s:1", f->prefix, hex);
  assert_int_equal(cli_int(cmd), 1);
  assert_int_equal(sg_edge_artifact_load(f->e, hash, &art), -1);
  assert_int_equal(errno, EBADMSG);
  assert_int_equal(sg_edge_put_artifact(f->e, hash, a.data, a.len), 0);
  assert_int_equal(sg_edge_artifact_load(f->e, hash, &art), 0);
  sg_artifact_close(art);
  sg_buf_free(&a);
  close_store(f);
}

typedef struct {
  int n;
  uint64_t first, last;
} counted;

static int count_change(sg_edge_kind k, const char *id, uint64_t rev, void *ctx) {
  (void)k;
  (void)id;
  counted *c = ctx;
  if (!c->n) c->first = rev;
  c->last = rev;
  c->n++;
  return 0;
}

/* The change log keeps the newest `changelog` entries: a reader further behind is told
 * to reload everything, a recent one gets exactly what changed. */
static void test_too_old_after_trimming(void **state) {
  (void)state;
  fixture *f = open_store("changelog=16");
  uint64_t r0, mid = 0, upto;
  assert_int_equal(sg_edge_revision(f->e, &r0), 0);
  assert_int_equal(r0, 0);
  for (int i = 0; i < 40; i++) {
    char id[16];
    snprintf(id, sizeof id, "wsp_%d", i % 5);
    assert_int_equal(sg_edge_put(f->e, SG_EDGE_WORKSPACE, id, "{}", 2, NULL), 0);
    if (i == 29) assert_int_equal(sg_edge_revision(f->e, &mid), 0);
  }
  counted c = {0};
  assert_int_equal(sg_edge_changes_since(f->e, r0, count_change, &c, &upto), SG_EDGE_TOO_OLD);
  assert_int_equal(upto, 40);
  assert_int_equal(sg_edge_changes_since(f->e, 23, count_change, &c, &upto), SG_EDGE_TOO_OLD);
  memset(&c, 0, sizeof c);
  assert_int_equal(sg_edge_changes_since(f->e, 24, count_change, &c, &upto), 0);
  assert_int_equal(c.n, 16);
  memset(&c, 0, sizeof c);
  assert_int_equal(sg_edge_changes_since(f->e, mid, count_change, &c, &upto), 0);
  assert_int_equal(c.n, 10);
  assert_int_equal(c.first, mid + 1);
  assert_int_equal(c.last, 40);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "ZCARD %s:edge:changes", f->prefix);
  assert_int_equal(cli_int(cmd), 16);
  /* A hole in the log (an entry removed by hand): reload everything. */
  snprintf(cmd, sizeof cmd, "ZREMRANGEBYSCORE %s:edge:changes 35 35", f->prefix);
  assert_int_equal(cli_int(cmd), 1);
  assert_int_equal(sg_edge_changes_since(f->e, mid, count_change, &c, &upto), SG_EDGE_TOO_OLD);
  close_store(f);
}

/* Artifacts fetched into the cache are used from it, checked against the hash each time
 * (a damaged copy is fetched again), also while Redis is down; records are not readable
 * then, and everything works again once Redis is back, on the same handle. */
static void test_cache_and_outage(void **state) {
  (void)state;
  fixture *f = open_store(NULL);
  char cache[64];
  snprintf(cache, sizeof cache, "/tmp/sg-edge-cache-XXXXXX");
  assert_non_null(mkdtemp(cache));
  char dir[128];
  snprintf(dir, sizeof dir, "%s/artifacts", cache);
  assert_int_equal(sg_edge_set_cache_dir(f->e, dir), 0);
  sg_buf a;
  char hash[72];
  sg_test_artifact(500, 11, &a, hash);
  assert_int_equal(sg_edge_put_artifact(f->e, hash, a.data, a.len), 0);
  assert_int_equal(sg_edge_put(f->e, SG_EDGE_LIST, "lst_1", "{}", 2, NULL), 0);
  sg_artifact *art;
  assert_int_equal(sg_edge_artifact_load(f->e, hash, &art), 0);
  sg_artifact_close(art);
  char path[256];
  snprintf(path, sizeof path, "%s/%s.sga", dir, hash + 7);
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  assert_int_equal((size_t)st.st_size, a.len);

  /* Damaged in place: fetched again. */
  FILE *fp = fopen(path, "r+b");
  assert_non_null(fp);
  fseek(fp, 100, SEEK_SET);
  fputc('X', fp);
  fclose(fp);
  assert_int_equal(sg_edge_artifact_load(f->e, hash, &art), 0);
  sg_artifact_close(art);
  char *got;
  size_t len;
  assert_int_equal(sg_read_file(path, a.len + 1, &got, &len), 0);
  assert_memory_equal(got, a.data, a.len);
  free(got);

  sg_test_redis_pause(&srv);
  uint64_t rev;
  int64_t t0 = sg_mono_ms();
  assert_int_equal(sg_edge_revision(f->e, &rev), -1);
  assert_int_equal(sg_edge_check(f->e), -1);
  assert_true(sg_mono_ms() - t0 < 3000);                        /* fails fast, never hangs */
  assert_int_equal(sg_edge_artifact_load(f->e, hash, &art), 0); /* from the cache */
  sg_artifact_close(art);
  sg_test_redis_resume(&srv);
  /* Reconnects (within the backoff) and sees what was written before. */
  int rc = -1;
  for (int i = 0; i < 100 && rc != 0; i++) {
    rc = sg_edge_revision(f->e, &rev);
    if (rc) usleep(50 * 1000);
  }
  assert_int_equal(rc, 0);
  assert_int_equal(rev, 1);
  assert_int_equal(sg_edge_check(f->e), 0);
  assert_int_equal(sg_edge_put(f->e, SG_EDGE_LIST, "lst_2", "{}", 2, &rev), 0);
  assert_int_equal(rev, 2);

  /* Pruning keeps what is named and what is recent; old temp files go. */
  sg_buf b;
  char hash_b[72];
  sg_test_artifact(300, 12, &b, hash_b);
  assert_int_equal(sg_edge_put_artifact(f->e, hash_b, b.data, b.len), 0);
  assert_int_equal(sg_edge_artifact_load(f->e, hash_b, &art), 0);
  sg_artifact_close(art);
  char path_b[256], tmp[300];
  snprintf(path_b, sizeof path_b, "%s/%s.sga", dir, hash_b + 7);
  snprintf(tmp, sizeof tmp, "%s.tmp-0123", path);
  assert_int_equal(sg_write_file_atomic(tmp, "x", 1), 0);
  const char *keep[] = {hash_b};
  size_t removed = 9;
  assert_int_equal(sg_edge_cache_prune(f->e, keep, 1, 60, &removed), 0);
  assert_int_equal(removed, 0); /* all recent */
  struct timespec old[2] = {{.tv_sec = time(NULL) - 3600}, {.tv_sec = time(NULL) - 3600}};
  assert_int_equal(utimensat(AT_FDCWD, path, old, 0), 0);
  assert_int_equal(utimensat(AT_FDCWD, path_b, old, 0), 0);
  assert_int_equal(utimensat(AT_FDCWD, tmp, old, 0), 0);
  assert_int_equal(sg_edge_cache_prune(f->e, keep, 1, 60, &removed), 0);
  assert_int_equal(removed, 2);
  assert_int_equal(stat(path, &st), -1);
  assert_int_equal(stat(tmp, &st), -1);
  assert_int_equal(stat(path_b, &st), 0);
  sg_buf_free(&b);

  char cmd[160];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache);
  assert_int_equal(system(cmd), 0);
  sg_buf_free(&a);
  close_store(f);
}

/* An artifact of several chunks, each of several pipelined pieces (the last chunk and the
 * last piece shorter): fetched whole into memory and checked; the cached copy is used next
 * time; a truncated cached copy is refused (never mapped, never a crash) and fetched
 * again; a chunk rewritten in Redis is refused (EBADMSG) and leaves no artifact. */
static void test_pipelined_fetch(void **state) {
  (void)state;
  fixture *f = open_store("chunk=1500000");
  char cache[64];
  snprintf(cache, sizeof cache, "/tmp/sg-edge-cache-XXXXXX");
  assert_non_null(mkdtemp(cache));
  char dir[128];
  snprintf(dir, sizeof dir, "%s/artifacts", cache);
  assert_int_equal(sg_edge_set_cache_dir(f->e, dir), 0);
  sg_buf a;
  char hash[72];
  sg_test_artifact(40000, 21, &a, hash);
  assert_true(a.len > 3 * 1500000u && a.len % 1500000u != 0);
  assert_int_equal(sg_edge_put_artifact(f->e, hash, a.data, a.len), 0);
  sg_artifact *art;
  assert_int_equal(sg_edge_artifact_load(f->e, hash, &art), 0);
  size_t n;
  const void *bytes = sg_artifact_bytes(art, &n);
  assert_int_equal(n, a.len);
  assert_memory_equal(bytes, a.data, a.len);
  sg_artifact_close(art);
  char path[256];
  snprintf(path, sizeof path, "%s/%s.sga", dir, hash + 7);
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  assert_int_equal((size_t)st.st_size, a.len);

  /* Truncated in place: refused, fetched again, the cache repaired. */
  assert_int_equal(truncate(path, (off_t)(a.len / 2)), 0);
  assert_int_equal(sg_edge_artifact_load(f->e, hash, &art), 0);
  sg_artifact_close(art);
  assert_int_equal(stat(path, &st), 0);
  assert_int_equal((size_t)st.st_size, a.len);

  /* Without a cache: a chunk changed in Redis at the same length is refused. */
  fixture *g = open_store("chunk=1500000");
  assert_int_equal(sg_edge_put_artifact(g->e, hash, a.data, a.len), 0);
  char args[256], out[64];
  snprintf(args, sizeof args, "SETRANGE %s:edge:art:%s:1 10 XXXX", g->prefix, hash + 7);
  sg_test_redis_cli(&srv, args, out, sizeof out);
  assert_int_equal(sg_edge_artifact_load(g->e, hash, &art), -1);
  assert_int_equal(errno, EBADMSG);
  assert_null(art);
  /* The handle still works after the refused fetch. */
  uint64_t rev;
  assert_int_equal(sg_edge_revision(g->e, &rev), 0);
  close_store(g);

  char cmd[160];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache);
  assert_int_equal(system(cmd), 0);
  sg_buf_free(&a);
  close_store(f);
}

static void test_bad_urls(void **state) {
  (void)state;
  sg_edge *e;
  assert_int_equal(sg_edge_open("rediss://127.0.0.1:6379", &e), -1);
  assert_int_equal(errno, ENOTSUP);
  assert_int_equal(sg_edge_open("redis://127.0.0.1:6379?bogus=1", &e), -1);
  assert_int_equal(errno, EINVAL);
  /* Down at open: not an error (a runtime may start before Redis); calls fail. */
  assert_int_equal(sg_edge_open("redis://127.0.0.1:1", &e), 0);
  uint64_t rev;
  assert_int_equal(sg_edge_revision(e, &rev), -1);
  sg_edge_close(e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_racing_writers_never_go_backwards),
      cmocka_unit_test(test_half_written_artifact_invisible),
      cmocka_unit_test(test_too_old_after_trimming),
      cmocka_unit_test(test_cache_and_outage),
      cmocka_unit_test(test_pipelined_fetch),
      cmocka_unit_test(test_bad_urls),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
