/* GET /healthz: liveness of the runtime listener (the rule: http/common/health.h). */
#include "http/common/health.h"
#include "runtime/rt.h"

void sg__h_health(sg__rt_req *r) {
  sg__rt_respond(r, 200, sg_health_live_body, sg_health_live_len, NULL);
}
