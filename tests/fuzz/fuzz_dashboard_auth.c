/* libFuzzer target: the dashboard's parsers of untrusted bytes (the Cookie header's
 * sg_session, emails, the password rule, the X-CSRF-Token compare) must accept or reject
 * any input without crashing or reading out of bounds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dashboard/auth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  if (!s) return 0;
  memcpy(s, data, size);
  s[size] = '\0';
  uint8_t digest[32];
  if (sg_session_from_header(s, digest) == 0 && !strstr(s, "sg_session=")) __builtin_trap();
  char out[256];
  if (sg_email_normalize(s, out) == 0) {
    if (strlen(out) != strlen(s) || strlen(out) > 254 || !strchr(out, '@')) __builtin_trap();
    for (const char *p = out; *p; p++)
      if (*p >= 'A' && *p <= 'Z') __builtin_trap();
  }
  (void)sg_password_problem((const char *)data, size);
  static const uint8_t secret[32];
  memset(digest, 0, sizeof digest);
  if (sg_csrf_valid(secret, digest, s)) {
    char want[44];
    sg_csrf_token(secret, digest, want);
    if (strcmp(want, s) != 0) __builtin_trap();
  }
  free(s);
  return 0;
}
