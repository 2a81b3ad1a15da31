/*
 * libFuzzer target: the client address behind trusted proxies (src/http/common/
 * forwarded.c), whose Forwarded / X-Forwarded-For headers are whatever a client sent.
 * The input is read as a Forwarded value, as an X-Forwarded-For value and as a
 * --trusted-proxies value. Checks: a peer outside the set is always the answer; a
 * trusted peer's answer is the peer or an address written in the header, and formats to
 * text that parses back to the same address; the same input gives the same answer; a
 * parsed set contains each of its networks' addresses.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/common/forwarded.h"

static sg_ip ip(const char *s) {
  sg_ip a;
  if (!sg_ip_parse(s, strlen(s), &a)) abort();
  return a;
}

static void check(const sg_trusted_proxies *t, const char *fwd, const char *xff) {
  sg_ip trusted = ip("10.0.0.1"), outsider = ip("192.0.2.1");
  sg_ip a = sg_forwarded_client(t, &outsider, fwd, xff);
  if (memcmp(&a, &outsider, sizeof a) != 0) __builtin_trap();
  a = sg_forwarded_client(t, &trusted, fwd, xff);
  sg_ip b = sg_forwarded_client(t, &trusted, fwd, xff);
  if (memcmp(&a, &b, sizeof a) != 0) __builtin_trap();
  char text[64];
  sg_ip_format(&a, text, sizeof text);
  sg_ip back;
  if (!sg_ip_parse(text, strlen(text), &back) || memcmp(&a, &back, sizeof a) != 0) __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 16384) return 0;
  char *s = malloc(size + 1);
  if (!s) abort();
  memcpy(s, data, size);
  s[size] = '\0';
  sg_trusted_proxies t;
  char err[160];
  if (sg_trusted_proxies_parse("10.0.0.0/8,2001:db8::/32", &t, err, sizeof err)) abort();
  check(&t, s, NULL);
  check(&t, NULL, s);
  check(&t, s, s);
  sg_trusted_proxies u;
  if (sg_trusted_proxies_parse(s, &u, err, sizeof err) == 0) {
    if (u.n > SG_TRUSTED_PROXIES_MAX) __builtin_trap();
    for (size_t i = 0; i < u.n; i++)
      if (!sg_trusted_proxies_contains(&u, &u.v[i].net)) __builtin_trap();
  } else if (!memchr(err, '\0', sizeof err)) {
    __builtin_trap();
  }
  free(s);
  return 0;
}
