/*
 * sg_rt_state_open: picks the backend of the runtime's shared state (runtime/state.h).
 */
#include "runtime/state.h"

#include <errno.h>
#include <string.h>

int sg_rt_state_open(const char *spec, uint32_t selection_rate, sg_rt_state **out) {
  if (!spec || !*spec || !out) {
    errno = EINVAL;
    return -1;
  }
  if (strncmp(spec, "rediss://", 9) == 0) {
    errno = ENOTSUP; /* hiredis 0.14 as built here has no TLS */
    return -1;
  }
  if (strncmp(spec, "redis://", 8) == 0) return sg__rt_state_redis_open(spec, selection_rate, out);
  return sg__rt_state_local_open(spec, selection_rate, out);
}
