/*
 * Origin allow-lists of publishable keys.
 *
 * An entry is "scheme://host[:port]" (compared case-insensitively; the rules of a
 * well-formed entry are in common/origin.h), or the same with one leading "*." label in
 * the host, which matches one or more labels in its place:
 * with scheme https, host "*.example.org" matches the origins of hosts "a.example.org"
 * and "a.b.example.org" but not "example.org", nor any http origin. A request Origin must be a
 * plain "scheme://host[:port]"; anything else ("null", paths, userinfo) is not allowed.
 */
#include <string.h>

#include "common/origin.h"
#include "runtime/rt.h"

long sg__origin_canon(const char *in, size_t len, bool allow_wildcard, char *out, size_t outsz) {
  return sg_origin_canon(in, len, allow_wildcard, out, outsz, NULL);
}

bool sg__origin_allowed(char *const *entries, size_t n, const char *origin, size_t len) {
  if (n == 0) return false;
  char o[SG__ORIGIN_MAX + 1];
  long ol = sg__origin_canon(origin, len, false, o, sizeof o);
  if (ol < 0) return false;
  const char *ohost = strstr(o, "://") + 3;
  for (size_t i = 0; i < n; i++) {
    const char *e = entries[i];
    const char *ehost = strstr(e, "://") + 3;
    if (ehost[0] != '*') {
      if (strcmp(e, o) == 0) return true;
      continue;
    }
    /* Wildcard: same scheme, and the request host ends with ".<rest>" after at least
     * one non-empty label. */
    size_t scheme_len = (size_t)(ehost - e);
    if ((size_t)(ohost - o) != scheme_len || memcmp(e, o, scheme_len) != 0) continue;
    const char *rest = ehost + 1; /* ".example.org[:port]" */
    size_t rl = strlen(rest), hl = strlen(ohost);
    if (hl <= rl || strcmp(ohost + hl - rl, rest) != 0) continue;
    if (ohost[0] == '.' || ohost[hl - rl - 1] == '.') continue; /* empty label */
    if (memchr(ohost, ':', hl - rl) || memchr(ohost, '[', hl - rl)) continue;
    return true;
  }
  return false;
}
