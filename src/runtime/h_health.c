/* GET /healthz: liveness of the runtime listener. */
#include "runtime/rt.h"

void sg__h_health(sg__rt_req *r) {
  static const char body[] = "{\"status\":\"ok\"}";
  sg__rt_respond(r, 200, body, sizeof body - 1, NULL);
}
