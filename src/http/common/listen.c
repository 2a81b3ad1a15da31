/* The listen-address grammar shared by every listener (see listen.h). */
#include "http/common/listen.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/util.h"

#define GRAMMAR "want host:port, [v6]:port or :port"

static int bad(const char *s, const char *why, char *err, size_t errsz) {
  snprintf(err, errsz, "bad listen address '%.200s': %s (" GRAMMAR ")", s, why);
  return -1;
}

int sg_listen_parse(const char *s, sg_listen_addr *out, char *err, size_t errsz) {
  memset(out, 0, sizeof *out);
  const char *colon;
  size_t hl;
  const char *h = s;
  if (s[0] == '[') {
    const char *end = strchr(s, ']');
    if (!end) return bad(s, "unclosed '['", err, errsz);
    if (end[1] != ':') return bad(s, "missing port", err, errsz);
    h = s + 1;
    hl = (size_t)(end - h);
    colon = end + 1;
    out->v6 = true;
  } else {
    colon = strchr(s, ':');
    if (!colon) return bad(s, "missing port", err, errsz);
    if (strchr(colon + 1, ':')) return bad(s, "an IPv6 address needs brackets", err, errsz);
    hl = (size_t)(colon - s);
  }
  if (hl >= sizeof out->host) return bad(s, "host too long", err, errsz);
  memcpy(out->host, h, hl);
  out->host[hl] = '\0';
  int64_t p;
  if (sg_parse_i64(colon + 1, 0, 65535, &p)) return bad(s, "port must be 0-65535", err, errsz);
  out->port = (unsigned)p;

  struct sockaddr_in *v4 = (struct sockaddr_in *)&out->sa;
  struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&out->sa;
  if (out->v6) {
    if (inet_pton(AF_INET6, out->host, &v6->sin6_addr) != 1)
      return bad(s, "not a numeric IPv6 address", err, errsz);
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons((uint16_t)p);
    out->sa_len = sizeof *v6;
    return 0;
  }
  if (hl == 0) snprintf(out->host, sizeof out->host, "0.0.0.0");
  if (strcmp(out->host, "localhost") == 0) snprintf(out->host, sizeof out->host, "127.0.0.1");
  if (inet_pton(AF_INET, out->host, &v4->sin_addr) != 1)
    return bad(s, "host must be a numeric address or localhost", err, errsz);
  v4->sin_family = AF_INET;
  v4->sin_port = htons((uint16_t)p);
  out->sa_len = sizeof *v4;
  return 0;
}
