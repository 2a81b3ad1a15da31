/*
 * The client's address behind trusted reverse proxies (--trusted-proxies CIDR,...).
 *
 * A request whose TCP peer is in the trusted set names its client in `Forwarded` (RFC
 * 7239, the for= parameter of each element) or, when that header is absent,
 * `X-Forwarded-For`. Each proxy appends the address it received the request from, so
 * the list reads client, proxy1, proxy2, ... and only its right end was written by a
 * trusted proxy. The client is the right-most hop that is not itself trusted; the hops
 * left of it were written by whoever sent the request and are ignored. A peer outside
 * the set is the client whatever its headers say, so no one else can choose the address
 * the per-IP limits and the access log see.
 *
 * Headers are hostile input: a hop that is not an address (unknown, an obfuscated
 * identifier, garbage) ends the walk and the last address read (a trusted proxy's) is
 * the client; an over-long or malformed header is read only as far as it parses. No
 * call allocates except sg_trusted_proxies_parse.
 */
#ifndef SG_HTTP_COMMON_FORWARDED_H
#define SG_HTTP_COMMON_FORWARDED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most CIDRs in one --trusted-proxies value, and the most hops read from a header. */
#define SG_TRUSTED_PROXIES_MAX 64
#define SG_FORWARDED_MAX_HOPS 64

/* An address as 16 bytes: IPv6 as is, IPv4 as the mapped ::ffff:a.b.c.d. */
typedef struct {
  uint8_t b[16];
} sg_ip;

typedef struct {
  sg_ip net;     /* the network, host bits cleared */
  unsigned bits; /* prefix length over the 16 bytes (IPv4 /n is 96 + n) */
} sg_cidr;

typedef struct {
  sg_cidr v[SG_TRUSTED_PROXIES_MAX];
  size_t n; /* 0: no proxy is trusted (the default) */
} sg_trusted_proxies;

/* Parses "10.0.0.0/8,192.168.1.7,::1/128" (a bare address is one host; spaces around
 * commas allowed; NULL or "" gives the empty set). Returns 0, or -1 with a message in
 * err naming the bad entry. */
int sg_trusted_proxies_parse(const char *spec, sg_trusted_proxies *out, char *err, size_t errsz);

bool sg_trusted_proxies_contains(const sg_trusted_proxies *t, const sg_ip *a);

/* Parses a literal IPv4 or IPv6 address (no brackets, no port) of len bytes. */
bool sg_ip_parse(const char *s, size_t len, sg_ip *out);

/* Writes a as text (IPv4 for a mapped address) into out (at least 46 bytes). */
void sg_ip_format(const sg_ip *a, char *out, size_t outsz);

/* The client address of a request from peer, given the concatenated values of its
 * Forwarded and X-Forwarded-For headers (NULL when absent): peer itself unless peer is
 * trusted and a header names another hop (see the top of this file). */
sg_ip sg_forwarded_client(const sg_trusted_proxies *t, const sg_ip *peer, const char *forwarded,
                          const char *xff);

#endif
