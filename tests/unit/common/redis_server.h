/*
 * A real, throwaway Redis for unit tests (scripts/redis.sh starts it): its own directory
 * and port, which can be stopped and started again on the same port and data.
 */
#ifndef SG_TEST_REDIS_SERVER_H
#define SG_TEST_REDIS_SERVER_H

#include <stdbool.h>

typedef struct {
  char dir[64];
  char url[64];
  int port;
} sg_test_redis;

/* Starts one. False when redis-server is not installed (the caller skips, or fails
 * under CI=true); a failure to start otherwise fails the test. */
bool sg_test_redis_start(sg_test_redis *r);
/* Stops it, keeping its data (the append-only file). */
void sg_test_redis_pause(sg_test_redis *r);
/* Starts it again on the same port and data. */
void sg_test_redis_resume(sg_test_redis *r);
/* Runs a redis-cli command against it and returns the first line of its output. */
void sg_test_redis_cli(const sg_test_redis *r, const char *args, char *out, int cap);
/* Stops it and removes its directory. */
void sg_test_redis_stop(sg_test_redis *r);

#endif
