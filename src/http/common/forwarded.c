/*
 * The client address behind trusted proxies: the --trusted-proxies set, and the walk
 * over Forwarded / X-Forwarded-For hops (the rules: forwarded.h).
 */
#include "http/common/forwarded.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ---- addresses and the trusted set ------------------------------------------------- */

bool sg_ip_parse(const char *s, size_t len, sg_ip *out) {
  char tmp[INET6_ADDRSTRLEN + 1];
  if (len == 0 || len >= sizeof tmp) return false;
  memcpy(tmp, s, len);
  tmp[len] = '\0';
  if (memchr(s, ':', len)) return inet_pton(AF_INET6, tmp, out->b) == 1;
  uint8_t v4[4];
  if (inet_pton(AF_INET, tmp, v4) != 1) return false;
  memset(out->b, 0, 10);
  out->b[10] = out->b[11] = 0xff;
  memcpy(out->b + 12, v4, 4);
  return true;
}

static bool is_v4(const sg_ip *a) {
  static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return memcmp(a->b, prefix, 12) == 0;
}

void sg_ip_format(const sg_ip *a, char *out, size_t outsz) {
  if (outsz == 0) return;
  const char *r = is_v4(a) ? inet_ntop(AF_INET, a->b + 12, out, (socklen_t)outsz)
                           : inet_ntop(AF_INET6, a->b, out, (socklen_t)outsz);
  if (!r) snprintf(out, outsz, "unknown");
}

static bool in_cidr(const sg_cidr *c, const sg_ip *a) {
  unsigned full = c->bits / 8, rest = c->bits % 8;
  if (memcmp(c->net.b, a->b, full) != 0) return false;
  if (rest == 0) return true;
  uint8_t mask = (uint8_t)(0xffu << (8 - rest));
  return (a->b[full] & mask) == c->net.b[full];
}

bool sg_trusted_proxies_contains(const sg_trusted_proxies *t, const sg_ip *a) {
  for (size_t i = 0; t && i < t->n; i++)
    if (in_cidr(&t->v[i], a)) return true;
  return false;
}

static int parse_cidr(const char *s, size_t len, sg_cidr *out) {
  const char *slash = memchr(s, '/', len);
  size_t alen = slash ? (size_t)(slash - s) : len;
  if (!sg_ip_parse(s, alen, &out->net)) return -1;
  bool v4 = memchr(s, ':', alen) == NULL;
  unsigned max = v4 ? 32 : 128, bits = max;
  if (slash) {
    const char *p = slash + 1, *end = s + len;
    if (p == end || end - p > 3) return -1;
    bits = 0;
    for (; p < end; p++) {
      if (*p < '0' || *p > '9') return -1;
      bits = bits * 10 + (unsigned)(*p - '0');
    }
    if (bits > max) return -1;
  }
  out->bits = v4 ? 96 + bits : bits;
  /* Host bits are cleared, so 10.1.2.3/8 means 10.0.0.0/8. */
  for (unsigned i = 0; i < 16; i++) {
    unsigned keep = out->bits > i * 8 ? out->bits - i * 8 : 0;
    if (keep < 8) out->net.b[i] &= (uint8_t)(keep ? 0xffu << (8 - keep) : 0);
  }
  return 0;
}

int sg_trusted_proxies_parse(const char *spec, sg_trusted_proxies *out, char *err, size_t errsz) {
  out->n = 0;
  if (!spec) return 0;
  const char *p = spec;
  while (*p) {
    while (*p == ' ' || *p == '\t') p++;
    size_t n = strcspn(p, ",");
    size_t m = n;
    while (m && (p[m - 1] == ' ' || p[m - 1] == '\t')) m--;
    if (m) {
      if (out->n == SG_TRUSTED_PROXIES_MAX) {
        snprintf(err, errsz, "--trusted-proxies: at most %d entries", SG_TRUSTED_PROXIES_MAX);
        return -1;
      }
      if (parse_cidr(p, m, &out->v[out->n]) != 0) {
        snprintf(err, errsz,
                 "--trusted-proxies: '%.*s' is not an address or CIDR (e.g. 10.0.0.0/8, ::1)",
                 (int)(m > 64 ? 64 : m), p);
        return -1;
      }
      out->n++;
    }
    p += n;
    if (*p == ',') p++;
  }
  return 0;
}

/* ---- hops ---------------------------------------------------------------------------- */

/* The hops read from a header, the last SG_FORWARDED_MAX_HOPS of them (the right end is
 * the part trusted proxies wrote). ok[i] is false for a hop that is not an address. */
typedef struct {
  sg_ip ip[SG_FORWARDED_MAX_HOPS];
  bool ok[SG_FORWARDED_MAX_HOPS];
  size_t n; /* hops seen */
} hops;

static void hop_add(hops *h, const sg_ip *ip, bool ok) {
  size_t i = h->n % SG_FORWARDED_MAX_HOPS;
  if (ok) h->ip[i] = *ip;
  h->ok[i] = ok;
  h->n++;
}

/* A node as proxies write it: an IPv4 address with an optional :port, an IPv6 address,
 * or "[IPv6]" with an optional :port. */
static bool parse_node(const char *s, size_t len, sg_ip *out) {
  if (len && s[0] == '[') {
    const char *close = memchr(s, ']', len);
    if (!close) return false;
    size_t rest = len - (size_t)(close - s) - 1;
    if (rest == 1 || (rest && close[1] != ':')) return false;
    for (size_t i = 2; i <= rest; i++)
      if (close[i] < '0' || close[i] > '9') return false;
    size_t alen = (size_t)(close - s - 1);
    return memchr(s + 1, ':', alen) && sg_ip_parse(s + 1, alen, out);
  }
  const char *colon = memchr(s, ':', len);
  if (colon && !memchr(colon + 1, ':', len - (size_t)(colon - s) - 1)) {
    /* Exactly one ':': IPv4 with a port. */
    for (const char *p = colon + 1; p < s + len; p++)
      if (*p < '0' || *p > '9') return false;
    return colon + 1 < s + len && sg_ip_parse(s, (size_t)(colon - s), out);
  }
  return sg_ip_parse(s, len, out);
}

static void trim(const char **s, size_t *len) {
  while (*len && (**s == ' ' || **s == '\t')) (*s)++, (*len)--;
  while (*len && ((*s)[*len - 1] == ' ' || (*s)[*len - 1] == '\t')) (*len)--;
}

/* X-Forwarded-For: addresses separated by commas (a quoted one is unquoted). */
static void read_xff(const char *v, hops *h) {
  while (*v) {
    size_t n = strcspn(v, ",");
    const char *s = v;
    size_t len = n;
    trim(&s, &len);
    if (len >= 2 && s[0] == '"' && s[len - 1] == '"') s++, len -= 2;
    sg_ip ip;
    if (len) hop_add(h, &ip, parse_node(s, len, &ip));
    v += n;
    if (*v == ',') v++;
  }
}

/* Forwarded (RFC 7239): elements separated by commas, each pairs separated by ';', a
 * value a token or a quoted string (in which ',' and ';' do not separate). An element's
 * hop is its for= node; an element without one is not an address. */
static void read_forwarded(const char *v, hops *h) {
  const char *p = v;
  while (*p) {
    bool have_for = false, ok = false;
    sg_ip ip;
    /* One element: pairs until ',' or the end. */
    for (;;) {
      while (*p == ' ' || *p == '\t') p++;
      const char *key = p;
      while (*p && *p != '=' && *p != ';' && *p != ',') p++;
      size_t klen = (size_t)(p - key);
      trim(&key, &klen);
      char val[64];
      size_t vlen = 0;
      bool val_ok = false;
      if (*p == '=') {
        p++;
        val_ok = true;
        if (*p == '"') {
          p++;
          while (*p && *p != '"') {
            if (*p == '\\' && p[1]) p++;
            if (vlen < sizeof val) val[vlen] = *p;
            vlen++;
            p++;
          }
          if (*p == '"')
            p++;
          else
            val_ok = false; /* unterminated */
        } else {
          while (*p && *p != ';' && *p != ',' && *p != ' ' && *p != '\t') {
            if (vlen < sizeof val) val[vlen] = *p;
            vlen++;
            p++;
          }
        }
        while (*p == ' ' || *p == '\t') p++;
        if (vlen > sizeof val) val_ok = false;
      }
      if (klen == 3 && strncasecmp(key, "for", 3) == 0) {
        /* A second for= in one element is malformed: the element is not an address. */
        ok = !have_for && val_ok && parse_node(val, vlen, &ip);
        have_for = true;
      }
      if (*p == ';') {
        p++;
        continue;
      }
      /* ',' or the end, or stray bytes (skipped to the next ','). */
      while (*p && *p != ',') p++;
      break;
    }
    hop_add(h, &ip, have_for && ok);
    if (*p == ',') p++;
  }
}

sg_ip sg_forwarded_client(const sg_trusted_proxies *t, const sg_ip *peer, const char *forwarded,
                          const char *xff) {
  if (!t || t->n == 0 || !sg_trusted_proxies_contains(t, peer)) return *peer;
  hops h = {.n = 0};
  if (forwarded && *forwarded)
    read_forwarded(forwarded, &h);
  else if (xff && *xff)
    read_xff(xff, &h);
  size_t kept = h.n < SG_FORWARDED_MAX_HOPS ? h.n : SG_FORWARDED_MAX_HOPS;
  sg_ip client = *peer;
  for (size_t k = 0; k < kept; k++) {
    size_t i = (h.n - 1 - k) % SG_FORWARDED_MAX_HOPS;
    if (!h.ok[i]) break; /* not an address: the proxy that wrote it is the client */
    client = h.ip[i];
    if (!sg_trusted_proxies_contains(t, &client)) break;
  }
  return client;
}
