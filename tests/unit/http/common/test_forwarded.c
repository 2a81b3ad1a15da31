/* Unit tests of the client address behind trusted proxies (src/http/common/forwarded.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "http/common/forwarded.h"

static sg_trusted_proxies tp(const char *spec) {
  sg_trusted_proxies t;
  char err[160];
  assert_int_equal(sg_trusted_proxies_parse(spec, &t, err, sizeof err), 0);
  return t;
}

/* The client of a request from peer with these headers, as text. */
static const char *client(const char *spec, const char *peer, const char *fwd, const char *xff) {
  static char out[64];
  sg_trusted_proxies t = tp(spec);
  sg_ip p;
  assert_true(sg_ip_parse(peer, strlen(peer), &p));
  sg_ip c = sg_forwarded_client(&t, &p, fwd, xff);
  sg_ip_format(&c, out, sizeof out);
  return out;
}

static void test_parse_set(void **state) {
  (void)state;
  sg_trusted_proxies t;
  char err[160];
  assert_int_equal(
      sg_trusted_proxies_parse("10.0.0.0/8, 192.168.1.7 ,::1/128,,", &t, err, sizeof err), 0);
  assert_int_equal(t.n, 3);
  assert_int_equal(sg_trusted_proxies_parse("", &t, err, sizeof err), 0);
  assert_int_equal(t.n, 0);
  assert_int_equal(sg_trusted_proxies_parse(NULL, &t, err, sizeof err), 0);
  assert_int_equal(t.n, 0);
  const char *bad[] = {"10.0.0.0/33", "::/129",     "10.0.0/8",      "10.0.0.0/",   "10.0.0.0/8x",
                       "localhost",   "1.2.3.4/-1", "10.0.0.0/0008", "fe80::1%eth0"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_int_equal(sg_trusted_proxies_parse(bad[i], &t, err, sizeof err), -1);
    assert_non_null(strstr(err, "--trusted-proxies"));
  }
  char many[2048] = "";
  for (int i = 0; i <= SG_TRUSTED_PROXIES_MAX; i++) strcat(many, "10.0.0.1,");
  assert_int_equal(sg_trusted_proxies_parse(many, &t, err, sizeof err), -1);
}

static void test_contains(void **state) {
  (void)state;
  sg_trusted_proxies t = tp("10.1.2.3/8,192.168.1.7,2001:db8::/32,172.16.0.0/12");
  const char *in[] = {"10.0.0.0", "10.255.255.255", "192.168.1.7", "2001:db8::1", "172.31.9.9"};
  const char *out[] = {"11.0.0.0", "192.168.1.8", "2001:db9::1", "172.32.0.0", "::ffff:9.0.0.0"};
  for (size_t i = 0; i < 5; i++) {
    sg_ip a;
    assert_true(sg_ip_parse(in[i], strlen(in[i]), &a));
    assert_true(sg_trusted_proxies_contains(&t, &a));
    assert_true(sg_ip_parse(out[i], strlen(out[i]), &a));
    assert_false(sg_trusted_proxies_contains(&t, &a));
  }
  sg_trusted_proxies all = tp("0.0.0.0/0");
  sg_ip a;
  assert_true(sg_ip_parse("8.8.8.8", 7, &a));
  assert_true(sg_trusted_proxies_contains(&all, &a));
  assert_true(sg_ip_parse("::1", 3, &a));
  assert_false(sg_trusted_proxies_contains(&all, &a)); /* IPv4's /0 is not IPv6's */
}

static void test_untrusted_peer_ignores_headers(void **state) {
  (void)state;
  assert_string_equal(client("", "127.0.0.1", NULL, "203.0.113.9"), "127.0.0.1");
  assert_string_equal(client("10.0.0.0/8", "127.0.0.1", NULL, "203.0.113.9"), "127.0.0.1");
  assert_string_equal(client("10.0.0.0/8", "127.0.0.1", "for=203.0.113.9", NULL), "127.0.0.1");
}

static void test_xff_rightmost_untrusted(void **state) {
  (void)state;
  const char *T = "127.0.0.1/32,10.0.0.0/8";
  assert_string_equal(client(T, "127.0.0.1", NULL, "203.0.113.9"), "203.0.113.9");
  /* The left part is whatever the client sent: a spoofed hop is ignored. */
  assert_string_equal(client(T, "127.0.0.1", NULL, "1.1.1.1, 203.0.113.9"), "203.0.113.9");
  /* Trusted hops on the right are skipped. */
  assert_string_equal(client(T, "127.0.0.1", NULL, "1.1.1.1,203.0.113.9, 10.0.0.5,10.0.0.6"),
                      "203.0.113.9");
  /* Every hop trusted: the left-most. */
  assert_string_equal(client(T, "127.0.0.1", NULL, "10.0.0.7, 10.0.0.6"), "10.0.0.7");
  /* Ports, brackets and quotes as proxies write them. */
  assert_string_equal(client(T, "127.0.0.1", NULL, "203.0.113.9:4711"), "203.0.113.9");
  assert_string_equal(client(T, "127.0.0.1", NULL, "[2001:db8::17]:4711"), "2001:db8::17");
  assert_string_equal(client(T, "127.0.0.1", NULL, "2001:db8::17"), "2001:db8::17");
  assert_string_equal(client(T, "127.0.0.1", NULL, "\"203.0.113.9\""), "203.0.113.9");
  /* Absent or empty: the peer. */
  assert_string_equal(client(T, "127.0.0.1", NULL, NULL), "127.0.0.1");
  assert_string_equal(client(T, "127.0.0.1", NULL, ""), "127.0.0.1");
  assert_string_equal(client(T, "127.0.0.1", NULL, " , "), "127.0.0.1");
}

static void test_xff_garbage_stops_at_proxy(void **state) {
  (void)state;
  const char *T = "127.0.0.1/32,10.0.0.0/8";
  /* A hop that is not an address: the trusted proxy right of it is the client. */
  assert_string_equal(client(T, "127.0.0.1", NULL, "203.0.113.9, unknown, 10.0.0.5"), "10.0.0.5");
  assert_string_equal(client(T, "127.0.0.1", NULL, "garbage"), "127.0.0.1");
  const char *bad[] = {"1.2.3.4:", "1.2.3.4:x", "[::1",   "[::1]x",      "[1.2.3.4]", "1.2.3.4.5",
                       "::1::2",   "01.2.3.4",  "[::1]:", "1.2.3.4:5:6", "\"",        "a\"b"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_string_equal(client(T, "127.0.0.1", NULL, bad[i]), "127.0.0.1");
}

static void test_forwarded(void **state) {
  (void)state;
  const char *T = "127.0.0.1/32,10.0.0.0/8";
  assert_string_equal(client(T, "127.0.0.1", "for=192.0.2.60;proto=http;by=203.0.113.43", NULL),
                      "192.0.2.60");
  assert_string_equal(client(T, "127.0.0.1", "For=\"[2001:db8:cafe::17]:4711\"", NULL),
                      "2001:db8:cafe::17");
  assert_string_equal(client(T, "127.0.0.1", "for=1.1.1.1, for=192.0.2.60, for=10.0.0.2", NULL),
                      "192.0.2.60");
  /* Quoted separators do not split. */
  assert_string_equal(client(T, "127.0.0.1", "for=192.0.2.60;x=\"a,b;c\", for=10.0.0.2", NULL),
                      "192.0.2.60");
  /* Forwarded wins over X-Forwarded-For. */
  assert_string_equal(client(T, "127.0.0.1", "for=192.0.2.60", "198.51.100.1"), "192.0.2.60");
  /* unknown, obfuscated, no for=, two for=, unterminated: not an address. */
  assert_string_equal(client(T, "127.0.0.1", "for=192.0.2.60, for=unknown", NULL), "127.0.0.1");
  assert_string_equal(client(T, "127.0.0.1", "for=192.0.2.60, for=_hidden", NULL), "127.0.0.1");
  assert_string_equal(client(T, "127.0.0.1", "for=192.0.2.60, by=10.0.0.1", NULL), "127.0.0.1");
  assert_string_equal(client(T, "127.0.0.1", "for=192.0.2.60;for=192.0.2.61", NULL), "127.0.0.1");
  assert_string_equal(client(T, "127.0.0.1", "for=\"192.0.2.60", NULL), "127.0.0.1");
  assert_string_equal(client(T, "127.0.0.1", "for=192.0.2.60, for=10.0.0.9, for=nonsense", NULL),
                      "127.0.0.1");
}

static void test_many_hops(void **state) {
  (void)state;
  /* More hops than are kept: the right end decides. */
  char big[8192] = "";
  for (int i = 0; i < 200; i++) strcat(big, "1.1.1.1,");
  strcat(big, "203.0.113.9");
  assert_string_equal(client("127.0.0.1", "127.0.0.1", NULL, big), "203.0.113.9");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_set),
      cmocka_unit_test(test_contains),
      cmocka_unit_test(test_untrusted_peer_ignores_headers),
      cmocka_unit_test(test_xff_rightmost_untrusted),
      cmocka_unit_test(test_xff_garbage_stops_at_proxy),
      cmocka_unit_test(test_forwarded),
      cmocka_unit_test(test_many_hops),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
