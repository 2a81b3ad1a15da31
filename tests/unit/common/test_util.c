/* Unit tests of the small helpers (src/common/util.c): UTF-8 validation, checked integer
 * parsing, ids, digests, time formatting and the test clock offset. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

#define VALID(lit) assert_true(sg_utf8_valid(lit, sizeof(lit) - 1))
#define INVALID(lit) assert_false(sg_utf8_valid(lit, sizeof(lit) - 1))

static void test_utf8_valid(void **state) {
  (void)state;
  VALID("");
  VALID("plain ascii ~");
  VALID("\xc2\x80");         /* U+0080, smallest 2-byte */
  VALID("\xdf\xbf");         /* U+07FF */
  VALID("\xe0\xa0\x80");     /* U+0800, smallest 3-byte */
  VALID("\xed\x9f\xbf");     /* U+D7FF, just below the surrogates */
  VALID("\xee\x80\x80");     /* U+E000, just above them */
  VALID("\xef\xbf\xbf");     /* U+FFFF */
  VALID("\xf0\x90\x80\x80"); /* U+10000, smallest 4-byte */
  VALID("\xf4\x8f\xbf\xbf"); /* U+10FFFF, the last code point */
  VALID("S\xc3\xa3o Paulo \xf0\x9f\x98\x80");
}

static void test_utf8_overlongs(void **state) {
  (void)state;
  INVALID("\xc0\x80"); /* overlong NUL */
  INVALID("\xc0\xaf"); /* overlong '/' */
  INVALID("\xc1\xbf");
  INVALID("\xe0\x80\x80");
  INVALID("\xe0\x9f\xbf"); /* overlong U+07FF */
  INVALID("\xf0\x80\x80\x80");
  INVALID("\xf0\x8f\xbf\xbf"); /* overlong U+FFFF */
}

static void test_utf8_surrogates_and_range(void **state) {
  (void)state;
  INVALID("\xed\xa0\x80");             /* U+D800 */
  INVALID("\xed\xbf\xbf");             /* U+DFFF */
  INVALID("\xed\xa0\xbd\xed\xb8\x80"); /* CESU-8 pair */
  INVALID("\xf4\x90\x80\x80");         /* U+110000 */
  INVALID("\xf5\x80\x80\x80");
  INVALID("\xf8\x88\x80\x80\x80"); /* 5-byte form */
  INVALID("\xfc\x84\x80\x80\x80\x80");
  INVALID("\xfe");
  INVALID("\xff");
}

static void test_utf8_truncated_and_stray(void **state) {
  (void)state;
  INVALID("\xc3");
  INVALID("abc\xc3");
  INVALID("\xe2\x82");
  INVALID("\xf0\x9f\x98");
  INVALID("\x80"); /* stray continuation */
  INVALID("a\xbf"
          "b");
  INVALID("\xc3\x28"); /* lead byte followed by ASCII */
  INVALID("\xe2\x28\xa1");
  INVALID("\xf0\x28\x8c\x28");
  /* Truncation by the length argument, not by the string. */
  assert_false(sg_utf8_valid("\xc3\xa9", 1));
  assert_true(sg_utf8_valid("\xc3\xa9", 2));
}

static void test_utf8_nul(void **state) {
  (void)state;
  INVALID("\0");
  INVALID("a\0b");
  INVALID("abc\0");
  assert_true(sg_utf8_valid("a\0b", 1)); /* the NUL lies outside the range checked */
}

static void test_utf8_count(void **state) {
  (void)state;
  assert_int_equal(sg_utf8_count("", 0), 0);
  assert_int_equal(sg_utf8_count("abc", 3), 3);
  assert_int_equal(sg_utf8_count("\xc3\xa9t\xc3\xa9", 5), 3);
  assert_int_equal(sg_utf8_count("\xf0\x9f\x98\x80\xe2\x82\xac", 7), 2);
}

static int64_t parsed(const char *s, int64_t lo, int64_t hi, int *rc) {
  int64_t v = 12345;
  *rc = sg_parse_i64(s, lo, hi, &v);
  return v;
}

static void test_parse_i64(void **state) {
  (void)state;
  int rc;
  assert_int_equal(parsed("0", 0, 10, &rc), 0);
  assert_int_equal(rc, 0);
  assert_int_equal(parsed("10", 0, 10, &rc), 10);
  assert_int_equal(rc, 0);
  assert_int_equal(parsed("-5", -10, 10, &rc), -5);
  assert_int_equal(rc, 0);
  assert_int_equal(parsed("007", 0, 10, &rc), 7);
  assert_int_equal(rc, 0);
  /* Bounds: both ends inclusive, one past either end refused, output untouched. */
  assert_int_equal(parsed("1", 1, 100, &rc), 1);
  assert_int_equal(rc, 0);
  assert_int_equal(parsed("100", 1, 100, &rc), 100);
  assert_int_equal(rc, 0);
  assert_int_equal(parsed("0", 1, 100, &rc), 12345);
  assert_int_equal(rc, -1);
  assert_int_equal(parsed("101", 1, 100, &rc), 12345);
  assert_int_equal(rc, -1);
  assert_int_equal(parsed("-1", 0, 100, &rc), 12345);
  assert_int_equal(rc, -1);
  /* Extremes of int64. */
  assert_true(parsed("9223372036854775807", INT64_MIN, INT64_MAX, &rc) == INT64_MAX);
  assert_int_equal(rc, 0);
  assert_true(parsed("-9223372036854775808", INT64_MIN, INT64_MAX, &rc) == INT64_MIN);
  assert_int_equal(rc, 0);
  /* Overflow in every shape. */
  static const char *const overflow[] = {"9223372036854775808",
                                         "-9223372036854775809",
                                         "18446744073709551615",
                                         "18446744073709551616",
                                         "99999999999999999999999999",
                                         "-99999999999999999999999",
                                         NULL};
  for (const char *const *p = overflow; *p; p++) {
    parsed(*p, INT64_MIN, INT64_MAX, &rc);
    assert_int_equal(rc, -1);
  }
  /* Not a whole decimal integer. */
  static const char *const junk[] = {"",
                                     "-",
                                     "+1",
                                     " 1",
                                     "1 ",
                                     "1a",
                                     "abc",
                                     "0x10",
                                     "1e3",
                                     "1.0",
                                     "--1",
                                     "1-",
                                     "\xd9\xa1" /* Arabic-Indic 1 */,
                                     NULL};
  for (const char *const *p = junk; *p; p++) {
    parsed(*p, INT64_MIN, INT64_MAX, &rc);
    assert_int_equal(rc, -1);
  }
  int64_t v;
  assert_int_equal(sg_parse_i64(NULL, 0, 1, &v), -1);
}

/* sg_udec against snprintf at every power of ten, its neighbours, the extremes and every
 * value below 1000. */
static void test_udec(void **state) {
  (void)state;
  uint64_t vs[64];
  size_t n = 0;
  vs[n++] = 0;
  vs[n++] = UINT64_MAX;
  for (uint64_t p = 1; n + 3 <= sizeof vs / sizeof *vs; p *= 10) {
    vs[n++] = p - 1;
    vs[n++] = p;
    vs[n++] = p + 1;
    if (p > UINT64_MAX / 10) break;
  }
  for (size_t i = 0; i < n; i++) {
    char want[32], got[32];
    int wl = snprintf(want, sizeof want, "%llu", (unsigned long long)vs[i]);
    memset(got, 'x', sizeof got);
    size_t gl = sg_udec(vs[i], got);
    assert_int_equal(gl, (size_t)wl);
    assert_memory_equal(got, want, gl);
    assert_int_equal(got[gl], 'x'); /* nothing written past it */
  }
  /* every value of the one- and two-digit fast cases and past them */
  for (uint64_t v = 0; v < 1000; v++) {
    char want[32], got[32];
    int wl = snprintf(want, sizeof want, "%llu", (unsigned long long)v);
    memset(got, 'x', sizeof got);
    size_t gl = sg_udec(v, got);
    assert_int_equal(gl, (size_t)wl);
    assert_memory_equal(got, want, gl);
    assert_int_equal(got[gl], 'x');
  }
}

static void test_random_id(void **state) {
  (void)state;
  char a[40], b[40];
  sg_random_id("lst_", a, sizeof a);
  sg_random_id("lst_", b, sizeof b);
  assert_int_equal(strlen(a), 4 + 22);
  assert_memory_equal(a, "lst_", 4);
  assert_string_not_equal(a, b);
  for (const char *p = a + 4; *p; p++)
    assert_true((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'));
  char small[10] = "untouched";
  sg_random_id("lst_", small, sizeof small); /* too small: empty, never overflowed */
  assert_string_equal(small, "");
}

static void test_digests(void **state) {
  (void)state;
  char out[72];
  sg_sha256_tagged("abc", 3, out);
  assert_string_equal(out,
                      "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  char hex[9];
  sg_hex("\x00\xff\x10\xab", 4, hex);
  assert_string_equal(hex, "00ff10ab");
  assert_true(sg_ct_equal("abcd", "abcd", 4));
  assert_false(sg_ct_equal("abcd", "abce", 4));
}

static void test_rfc3339_and_clock_offset(void **state) {
  (void)state;
  char buf[32];
  sg_rfc3339(0, buf);
  assert_string_equal(buf, "1970-01-01T00:00:00Z");
  sg_rfc3339(1700000000, buf);
  assert_string_equal(buf, "2023-11-14T22:13:20Z");
  setenv("SUGGESTD_CLOCK_OFFSET", "0", 1);
  assert_int_equal(sg_init(), 0);
  int64_t base = sg_now_s();
  setenv("SUGGESTD_CLOCK_OFFSET", "86400", 1);
  assert_int_equal(sg_init(), 0);
  int64_t shifted = sg_now_s();
  assert_true(shifted - base >= 86400 && shifted - base <= 86402);
  setenv("SUGGESTD_CLOCK_OFFSET", "-3600", 1);
  assert_int_equal(sg_init(), 0);
  assert_true(base - sg_now_s() >= 3598 && base - sg_now_s() <= 3600);
  setenv("SUGGESTD_CLOCK_OFFSET", "0", 1);
  assert_int_equal(sg_init(), 0);
  unsetenv("SUGGESTD_CLOCK_OFFSET");
  /* Monotonic time never goes backwards. */
  int64_t m1 = sg_mono_ms(), m2 = sg_mono_ms();
  assert_true(m2 >= m1);
}

/* sg_utf8_valid skips ASCII eight bytes at a time: a NUL, a stray byte, a valid
 * multi-byte character and a truncated one at every offset of a long string, against
 * the byte-at-a-time verdict. */
static void test_utf8_every_offset(void **state) {
  (void)state;
  char s[48];
  for (size_t len = 1; len <= sizeof s; len++) {
    for (size_t at = 0; at < len; at++) {
      memset(s, 'a', sizeof s);
      s[at] = '\0';
      assert_false(sg_utf8_valid(s, len));
      assert_true(sg_utf8_valid(s, at)); /* the NUL just outside the range checked */
      s[at] = (char)0xff;
      assert_false(sg_utf8_valid(s, len));
      s[at] = (char)0x80; /* a continuation byte without a lead */
      assert_false(sg_utf8_valid(s, len));
      s[at] = (char)0xc3; /* a lead: valid with its continuation, else truncated */
      if (at + 1 < len) {
        s[at + 1] = (char)0xa9;
        assert_true(sg_utf8_valid(s, len));
        s[at + 1] = '\0';
        assert_false(sg_utf8_valid(s, len));
      } else {
        assert_false(sg_utf8_valid(s, len));
      }
    }
    memset(s, 'a', sizeof s);
    s[len - 1] = 0x7f;
    assert_true(sg_utf8_valid(s, len));
  }
}

/* Every byte value hexes to its two digits. */
static void test_hex_every_byte(void **state) {
  (void)state;
  unsigned char b[256];
  char out[513], want[3];
  for (int i = 0; i < 256; i++) b[i] = (unsigned char)i;
  sg_hex(b, sizeof b, out);
  assert_int_equal(strlen(out), 512);
  for (int i = 0; i < 256; i++) {
    snprintf(want, sizeof want, "%02x", i);
    assert_memory_equal(out + 2 * i, want, 2);
  }
}

/* The SWAR word tests against their byte-by-byte meaning, on random words that have the
 * byte looked for (or one just beside it) at random places. */
static void test_swar(void **state) {
  (void)state;
  uint64_t x = 88172645463325252ull;
  static const unsigned char cs[] = {0, 1, 0x20, 0x21, '"', '#', '%', '+', '\\', 0x7f, 0x80, 128};
  for (int t = 0; t < 200000; t++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    unsigned char c = cs[x % sizeof cs];
    unsigned char b[8];
    uint64_t y = x * 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < 8; i++) {
      unsigned r = (unsigned)(y >> (8 * i)) & 0xff;
      b[i] = r < 40   ? c
             : r < 60 ? (unsigned char)(c + 1)
             : r < 80 ? (unsigned char)(c - 1)
                      : (unsigned char)(r * 7);
    }
    uint64_t w;
    memcpy(&w, b, 8);
    bool zero = false, eq = false, below = false, high = false;
    for (int i = 0; i < 8; i++) {
      zero |= b[i] == 0;
      eq |= b[i] == c;
      below |= b[i] < c;
      high |= b[i] >= 0x80;
    }
    assert_int_equal(sg_swar_zero(w) != 0, zero);
    assert_int_equal(sg_swar_eq(w, c) != 0, eq);
    if (c <= 128) assert_int_equal(sg_swar_below(w, c) != 0, below);
    assert_int_equal(sg_swar_high(w) != 0, high);
  }
}

int main(void) {
  assert_int_equal(sg_init(), 0);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_swar),
      cmocka_unit_test(test_utf8_valid),
      cmocka_unit_test(test_utf8_overlongs),
      cmocka_unit_test(test_utf8_surrogates_and_range),
      cmocka_unit_test(test_utf8_truncated_and_stray),
      cmocka_unit_test(test_utf8_nul),
      cmocka_unit_test(test_utf8_count),
      cmocka_unit_test(test_utf8_every_offset),
      cmocka_unit_test(test_hex_every_byte),
      cmocka_unit_test(test_parse_i64),
      cmocka_unit_test(test_udec),
      cmocka_unit_test(test_random_id),
      cmocka_unit_test(test_digests),
      cmocka_unit_test(test_rfc3339_and_clock_offset),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
