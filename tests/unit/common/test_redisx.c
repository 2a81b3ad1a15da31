/*
 * Unit tests of src/common/redisx.c: Redis URL parsing, and commands, scripts and
 * reconnecting on a throwaway Redis (skipped when redis-server is missing, except under
 * CI=true).
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
#include <unistd.h>

#include "common/redis_server.h"
#include "common/redisx.h"

static void test_parse(void **state) {
  (void)state;
  sg_redisx_url u;
  char err[256];
  assert_int_equal(sg_redisx_parse("redis://127.0.0.1:6390/3", &u, err, sizeof err), 0);
  assert_string_equal(u.server.host, "127.0.0.1");
  assert_int_equal(u.server.port, 6390);
  assert_int_equal(u.server.db, 3);
  assert_string_equal(u.prefix, "sg");
  assert_int_equal(u.chunk_bytes, 32u << 20);
  assert_int_equal(sg_redisx_parse("redis://localhost", &u, err, sizeof err), 0);
  assert_string_equal(u.server.host, "localhost");
  assert_int_equal(u.server.port, 6379);
  assert_int_equal(u.server.db, 0);
  assert_int_equal(sg_redisx_parse("redis://:secret@[::1]:7000/?prefix=t1.a&chunk=65536"
                                   "&changelog=20",
                                   &u, err, sizeof err),
                   0);
  assert_string_equal(u.server.host, "::1");
  assert_int_equal(u.server.port, 7000);
  assert_string_equal(u.server.password, "secret");
  assert_string_equal(u.server.user, "");
  assert_string_equal(u.prefix, "t1.a");
  assert_int_equal(u.chunk_bytes, 65536);
  assert_int_equal(u.changelog, 20);
  assert_int_equal(sg_redisx_parse("redis://bob:pw@h:1", &u, err, sizeof err), 0);
  assert_string_equal(u.server.user, "bob");
  assert_string_equal(u.server.password, "pw");

  const char *bad[] = {
      "rediss://h:6379",
      "http://h",
      "redis://",
      "redis://h:0",
      "redis://h:65536",
      "redis://h:x",
      "redis://h/16",
      "redis://h/-1",
      "redis://h?x=1",
      "redis://h?prefix=",
      "redis://h?prefix=a:b",
      "redis://h?chunk=1",
      "redis://[::1",
      "redis://h/0?prefix",
      "redis://h?changelog=99999999999",
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    err[0] = '\0';
    if (sg_redisx_parse(bad[i], &u, err, sizeof err) != -1) fail_msg("accepted %s", bad[i]);
    assert_true(err[0] != '\0');
  }
  assert_int_equal(sg_redisx_parse("rediss://h", &u, err, sizeof err), -1);
  assert_non_null(strstr(err, "TLS"));
  /* The password never appears in a message. */
  assert_int_equal(sg_redisx_parse("redis://:hunter2@h:99999", &u, err, sizeof err), -1);
  assert_null(strstr(err, "hunter2"));
  assert_true(sg_redisx_is_url("redis://x"));
  assert_true(sg_redisx_is_url("rediss://x"));
  assert_false(sg_redisx_is_url("/var/lib/edge"));
}

static sg_redisx_script incr_by = {
    .src = "return redis.call('INCRBY', KEYS[1], ARGV[1])",
};

static void test_live(void **state) {
  (void)state;
  sg_test_redis srv = {0};
  if (!sg_test_redis_start(&srv)) {
    if (getenv("CI")) fail_msg("redis-server is missing; run scripts/deps.sh");
    skip();
  }
  const char *url = srv.url;
  sg_redisx_url u;
  char err[256];
  assert_int_equal(sg_redisx_parse(url, &u, err, sizeof err), 0);
  sg_redisx *r;
  assert_int_equal(sg_redisx_open(&u, 2000, false, &r), 0);
  assert_true(sg_redisx_up(r));
  char key[128];
  snprintf(key, sizeof key, "%s:test:redisx:%d", u.prefix, (int)getpid());
  redisReply *rep = sg_redisx_cmd(r, "DEL %s", key);
  assert_non_null(rep);
  freeReplyObject(rep);
  const char *args[] = {key, "5"};
  rep = sg_redisx_eval(r, &incr_by, 1, 2, args, NULL);
  assert_non_null(rep);
  assert_int_equal(rep->type, REDIS_REPLY_INTEGER);
  assert_int_equal(rep->integer, 5);
  freeReplyObject(rep);
  assert_int_equal(strlen(incr_by.sha), 40);
  /* A server that forgot the script (SCRIPT FLUSH, a restart) gets its source again. */
  rep = sg_redisx_cmd(r, "SCRIPT FLUSH");
  assert_non_null(rep);
  freeReplyObject(rep);
  rep = sg_redisx_eval(r, &incr_by, 1, 2, args, NULL);
  assert_non_null(rep);
  assert_int_equal(rep->integer, 10);
  freeReplyObject(rep);
  /* A connection the server drops is replaced by the next command. */
  rep = sg_redisx_cmd(r, "CLIENT KILL TYPE normal SKIPME no");
  if (rep) freeReplyObject(rep);
  rep = sg_redisx_cmd(r, "GET %s", key);
  if (!rep) rep = sg_redisx_cmd(r, "GET %s", key);
  assert_non_null(rep);
  assert_string_equal(rep->str, "10");
  freeReplyObject(rep);
  rep = sg_redisx_cmd(r, "DEL %s", key);
  freeReplyObject(rep);
  sg_redisx_close(r);

  /* Nobody listens: open fails, or (lazy) succeeds and commands fail fast. */
  sg_redisx_url dead = u;
  dead.server.port = 1;
  assert_int_equal(sg_redisx_open(&dead, 500, false, &r), -1);
  assert_int_equal(sg_redisx_open(&dead, 500, true, &r), 0);
  assert_false(sg_redisx_up(r));
  assert_null(sg_redisx_cmd(r, "PING"));
  assert_int_equal(errno, ECONNREFUSED);
  sg_redisx_close(r);
  sg_test_redis_stop(&srv);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse),
      cmocka_unit_test(test_live),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
