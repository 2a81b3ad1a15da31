/*
 * The shared state's entry points (state/state.h): the one place a spec is routed to a
 * backend, and the opens of its writer and reader.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "state/internal.h"

int sg_state_backend_of(const char *spec, sg_state_backend *out) {
  if (!spec || !*spec) {
    errno = EINVAL;
    return -1;
  }
  if (strncmp(spec, "rediss://", 9) == 0) {
    errno = ENOTSUP; /* hiredis 0.14 as built here has no TLS */
    return -1;
  }
  if (out) *out = strncmp(spec, "redis://", 8) == 0 ? SG_STATE_REDIS : SG_STATE_LOCAL;
  return 0;
}

/* A Redis URL's options (?prefix=…, ?chunk=…) are the edge store's: the state always
 * lives under the default prefix (docs/RUNTIME.md), for writers and readers alike. */
static const char *server_part(const char *spec, char *buf, size_t n) {
  const char *q = strchr(spec, '?');
  if (!q) return spec;
  if ((size_t)(q - spec) >= n) return NULL;
  snprintf(buf, n, "%.*s", (int)(q - spec), spec);
  return buf;
}

int sg_rt_state_open(const char *spec, uint32_t selection_rate, sg_rt_state **out) {
  sg_state_backend b;
  char buf[2048];
  if (!out || sg_state_backend_of(spec, &b)) {
    if (!out) errno = EINVAL;
    return -1;
  }
  if (b == SG_STATE_REDIS && !(spec = server_part(spec, buf, sizeof buf))) {
    errno = EINVAL;
    return -1;
  }
  return b == SG_STATE_REDIS ? sg__rt_state_redis_open(spec, selection_rate, out)
                             : sg__rt_state_local_open(spec, selection_rate, out);
}

int sg_state_reader_open(const char *spec, int timeout_ms, sg_state_reader **out) {
  sg_state_backend b;
  char buf[2048];
  if (!out || timeout_ms <= 0 || sg_state_backend_of(spec, &b)) {
    if (!out || timeout_ms <= 0) errno = EINVAL;
    return -1;
  }
  if (b == SG_STATE_REDIS && !(spec = server_part(spec, buf, sizeof buf))) {
    errno = EINVAL;
    return -1;
  }
  return b == SG_STATE_REDIS ? sg__state_redis_reader_open(spec, timeout_ms, out)
                             : sg__state_local_reader_open(spec, out);
}

void sg__state_month_text(int64_t unix_s, char out[40]) {
  time_t t = (time_t)unix_s;
  struct tm tm;
  gmtime_r(&t, &tm);
  snprintf(out, 40, "%04d-%02d", tm.tm_year + 1900, tm.tm_mon + 1);
}

void sg__state_day_text(int64_t unix_s, char out[40]) {
  time_t t = (time_t)unix_s;
  struct tm tm;
  gmtime_r(&t, &tm);
  snprintf(out, 40, "%04d-%02d-%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
}
