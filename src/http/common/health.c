/* The probe answers shared by every listener (see health.h). */
#include "http/common/health.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char sg_health_live_body[] = "{\"status\":\"ok\"}";
const size_t sg_health_live_len = sizeof sg_health_live_body - 1;

bool sg_health_method_ok(const char *method) {
  return strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
}

/* Appends to out[cap] at *o; false (and *o unchanged) when it does not fit. */
__attribute__((format(printf, 4, 5))) static bool put(char *out, size_t cap, size_t *o,
                                                      const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int w = vsnprintf(out + *o, cap - *o, fmt, ap);
  va_end(ap);
  if (w < 0 || (size_t)w >= cap - *o) return false;
  *o += (size_t)w;
  return true;
}

unsigned sg_health_ready_body(bool ready, const sg_health_check *checks, size_t n,
                              const char *extra, char *out, size_t cap, size_t *len) {
  const char *status = ready ? "ready" : "not_ready";
  size_t o = 0;
  bool ok = put(out, cap, &o, "{\"status\":\"%s\",\"checks\":{", status);
  for (size_t i = 0; ok && i < n; i++)
    ok = put(out, cap, &o, "%s\"%s\":\"%s\"", i ? "," : "", checks[i].name, checks[i].value);
  if (ok) ok = put(out, cap, &o, "}%s%s}", extra ? "," : "", extra ? extra : "");
  if (!ok) {
    o = 0;
    if (!put(out, cap, &o, "{\"status\":\"%s\"}", status) && cap) out[0] = '\0';
  }
  *len = o;
  return ready ? 200u : 503u;
}
