/* A throwaway Redis for unit tests (redis_server.h). */
#include "common/redis_server.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool sg_test_redis_start(sg_test_redis *r) {
  if (system("command -v redis-server >/dev/null 2>&1") != 0) return false;
  snprintf(r->dir, sizeof r->dir, "/tmp/sg-redis-XXXXXX");
  assert_non_null(mkdtemp(r->dir));
  char cmd[256];
  snprintf(cmd, sizeof cmd, "scripts/redis.sh start %s/srv", r->dir);
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  assert_non_null(fgets(r->url, sizeof r->url, p));
  assert_int_equal(pclose(p), 0);
  r->url[strcspn(r->url, "\n")] = '\0';
  assert_int_equal(sscanf(r->url, "redis://127.0.0.1:%d", &r->port), 1);
  return true;
}

void sg_test_redis_pause(sg_test_redis *r) {
  char cmd[256];
  /* SHUTDOWN with the append-only file fsync'd on every write loses nothing. */
  snprintf(cmd, sizeof cmd, "redis-cli -p %d shutdown nosave >/dev/null 2>&1", r->port);
  (void)system(cmd);
  for (int i = 0; i < 100; i++) {
    snprintf(cmd, sizeof cmd, "redis-cli -p %d ping >/dev/null 2>&1", r->port);
    if (system(cmd) != 0) return;
    usleep(50 * 1000);
  }
  fail_msg("redis did not stop");
}

void sg_test_redis_resume(sg_test_redis *r) {
  char cmd[256];
  /* redis.sh reuses the port and data of a stopped server's directory. */
  snprintf(cmd, sizeof cmd, "scripts/redis.sh start %s/srv >/dev/null", r->dir);
  assert_int_equal(system(cmd), 0);
  for (int i = 0; i < 100; i++) {
    snprintf(cmd, sizeof cmd, "redis-cli -p %d ping 2>/dev/null | grep -q PONG", r->port);
    if (system(cmd) == 0) return;
    usleep(50 * 1000);
  }
  fail_msg("redis did not restart");
}

void sg_test_redis_cli(const sg_test_redis *r, const char *args, char *out, int cap) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "redis-cli -p %d %s", r->port, args);
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  out[0] = '\0';
  if (!fgets(out, cap, p)) out[0] = '\0';
  char rest[256];
  while (fgets(rest, sizeof rest, p)) {}
  pclose(p);
  out[strcspn(out, "\n")] = '\0';
}

void sg_test_redis_stop(sg_test_redis *r) {
  char cmd[256];
  snprintf(cmd, sizeof cmd, "scripts/redis.sh stop %s/srv; rm -rf %s", r->dir, r->dir);
  (void)system(cmd);
}
