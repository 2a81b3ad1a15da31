/* GET /healthz: liveness of the runtime listener. */
#include "runtime/rt.h"

enum MHD_Result sg__h_health(sg__rt_req *r) {
  static const char body[] = "{\"status\":\"ok\"}";
  return sg__rt_respond(r, MHD_HTTP_OK, body, sizeof body - 1, NULL);
}
