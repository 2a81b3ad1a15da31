/* The x-request-id rule shared by both listeners (see request_id.h). */
#include "http/common/request_id.h"

#include <stddef.h>

bool sg_http_request_id_ok(const char *s) {
  size_t n = 0;
  for (; s[n]; n++) {
    unsigned char c = (unsigned char)s[n];
    if (n >= SG_HTTP_REQUEST_ID_MAX || c < 0x21 || c > 0x7e || c == '"' || c == '\\') return false;
  }
  return n > 0;
}
