#include "common/origin.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static long refuse(const char **why, const char *reason) {
  if (why) *why = reason;
  return -1;
}

/* Generic second levels under which registries hand out names (co.uk, com.au, or.jp). */
static bool generic_second_level(const char *s, size_t n) {
  static const char *const words[] = {"ac",  "co",   "com",  "edu", "gen", "go",  "gob", "gouv",
                                      "gov", "govt", "info", "ltd", "me",  "mil", "ne",  "net",
                                      "nic", "nom",  "or",   "org", "plc", "sch", "web"};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
    if (strlen(words[i]) == n && strncasecmp(words[i], s, n) == 0) return true;
  return false;
}

/* Checks a DNS name (or IPv4 address) host[0..n); counts its labels. */
static bool dns_name(const char *h, size_t n, size_t *labels) {
  if (n == 0 || n > 253) return false;
  *labels = 0;
  for (size_t i = 0; i <= n;) {
    size_t j = i;
    while (j < n && h[j] != '.') {
      char c = h[j];
      if (!isalnum((unsigned char)c) && c != '-' && c != '_') return false;
      j++;
    }
    size_t ll = j - i;
    if (ll == 0 || ll > 63 || h[i] == '-' || h[j - 1] == '-') return false;
    (*labels)++;
    i = j + 1;
  }
  return true;
}

/* A wildcard's rest: at least two labels, not all digits at the end (an IP address),
 * not a two-label public suffix of the pattern "<generic>.<cc>". */
static bool wildcard_rest_ok(const char *h, size_t n, size_t labels) {
  if (labels < 2) return false;
  const char *last = memrchr(h, '.', n) + 1;
  size_t tl = (size_t)(h + n - last);
  bool numeric = true;
  for (size_t i = 0; i < tl; i++) numeric = numeric && isdigit((unsigned char)last[i]);
  if (numeric) return false;
  if (labels == 2 && tl == 2 && generic_second_level(h, (size_t)(last - 1 - h))) return false;
  return true;
}

long sg_origin_canon(const char *in, size_t len, bool allow_wildcard, char *out, size_t outsz,
                     const char **why) {
  if (len > 0 && in[len - 1] == '/') len--; /* "https://a.example/" is the same origin */
  if (len == 0 || len > SG_ORIGIN_MAX) return refuse(why, "empty or too long");
  const char *p = in, *end = in + len;
  unsigned default_port;
  if (len > 7 && strncasecmp(p, "http://", 7) == 0) {
    p += 7;
    default_port = 80;
  } else if (len > 8 && strncasecmp(p, "https://", 8) == 0) {
    p += 8;
    default_port = 443;
  } else {
    return refuse(why, "the scheme must be http or https");
  }
  size_t scheme_len = (size_t)(p - in);
  bool wildcard = false;
  if (end - p >= 2 && p[0] == '*' && p[1] == '.') {
    if (!allow_wildcard) return refuse(why, "no wildcard here");
    wildcard = true;
    p += 2;
  }
  /* The host runs to the port's ':' (after a bracketed IPv6 address) or the end. */
  const char *host = p, *host_end;
  if (p < end && *p == '[') {
    const char *rb = memchr(p, ']', (size_t)(end - p));
    if (!rb || wildcard) return refuse(why, "bad IPv6 address");
    char v6[64];
    struct in6_addr a;
    size_t vl = (size_t)(rb - p - 1);
    if (vl == 0 || vl >= sizeof v6) return refuse(why, "bad IPv6 address");
    for (size_t i = 0; i < vl; i++) /* no zone ids, nothing inet_pton would stop at */
      if (!isxdigit((unsigned char)p[1 + i]) && p[1 + i] != ':' && p[1 + i] != '.')
        return refuse(why, "bad IPv6 address");
    memcpy(v6, p + 1, vl);
    v6[vl] = '\0';
    if (inet_pton(AF_INET6, v6, &a) != 1) return refuse(why, "bad IPv6 address");
    host_end = rb + 1;
  } else {
    host_end = p;
    while (host_end < end && *host_end != ':') {
      char c = *host_end;
      if (c == '/' || c == '?' || c == '#' || c == '@')
        return refuse(why, "an origin has no path, query, fragment or userinfo");
      host_end++;
    }
    size_t labels;
    if (!dns_name(host, (size_t)(host_end - host), &labels)) return refuse(why, "bad host name");
    if (wildcard && !wildcard_rest_ok(host, (size_t)(host_end - host), labels))
      return refuse(why, "a wildcard must stand below a registrable domain (not *.com, *.co.uk)");
  }
  unsigned port = default_port;
  if (host_end < end) {
    if (*host_end != ':' || host_end + 1 == end || end - host_end > 6)
      return refuse(why, "an origin has no path, query, fragment or userinfo");
    port = 0;
    for (const char *d = host_end + 1; d < end; d++) {
      if (!isdigit((unsigned char)*d)) return refuse(why, "the port must be 1-65535");
      port = port * 10 + (unsigned)(*d - '0');
    }
    if (port < 1 || port > 65535) return refuse(why, "the port must be 1-65535");
  }
  char buf[SG_ORIGIN_MAX + 16];
  int n = snprintf(buf, sizeof buf, "%.*s%s%.*s", (int)scheme_len, in, wildcard ? "*." : "",
                   (int)(host_end - host), host);
  if (n > 0 && port != default_port) n += snprintf(buf + n, sizeof buf - (size_t)n, ":%u", port);
  if (n <= 0 || (size_t)n >= outsz || (size_t)n >= sizeof buf) return refuse(why, "too long");
  for (int i = 0; i < n; i++) out[i] = (char)tolower((unsigned char)buf[i]);
  out[n] = '\0';
  return n;
}
