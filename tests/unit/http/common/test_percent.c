/* Unit tests of the percent-decoding rule shared by both listeners
 * (src/http/common/percent.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "common/util.h"
#include "http/common/percent.h"

/* Decodes s by rule into a buffer of cap bytes; the result or NULL. */
static const char *dec(const char *s, sg_http_pct_rule rule, size_t cap) {
  static char out[256];
  size_t n = 0;
  assert_true(cap < sizeof out);
  memset(out, 'X', sizeof out);
  if (sg_http_percent_decode(s, strlen(s), rule, out, cap, &n) != SG_E_OK) return NULL;
  assert_true(n <= cap);
  out[n] = '\0';
  return out;
}

static void test_well_formed(void **state) {
  (void)state;
  assert_string_equal(dec("", SG_HTTP_PCT_PATH, 10), "");
  assert_string_equal(dec("/v1/query", SG_HTTP_PCT_PATH, 100), "/v1/query");
  assert_string_equal(dec("/%41%62/c", SG_HTTP_PCT_PATH, 100), "/Ab/c");
  assert_string_equal(dec("caf%C3%A9", SG_HTTP_PCT_QUERY, 100), "caf\xc3\xa9");
  assert_string_equal(dec("%E2%82%AC%F0%9F%98%80", SG_HTTP_PCT_QUERY, 100),
                      "\xe2\x82\xac\xf0\x9f\x98\x80");
  assert_string_equal(dec("100%25", SG_HTTP_PCT_QUERY, 100), "100%");
  /* Raw UTF-8 passes as it is. */
  assert_string_equal(dec("Z\xc3\xbcrich", SG_HTTP_PCT_PATH, 100), "Z\xc3\xbcrich");
}

static void test_plus_only_in_query(void **state) {
  (void)state;
  assert_string_equal(dec("a+b", SG_HTTP_PCT_PATH, 100), "a+b");
  assert_string_equal(dec("a+b", SG_HTTP_PCT_QUERY, 100), "a b");
  /* An escaped '+' is a plus in both. */
  assert_string_equal(dec("a%2Bb", SG_HTTP_PCT_QUERY, 100), "a+b");
  assert_string_equal(dec("a%2bb", SG_HTTP_PCT_PATH, 100), "a+b");
  assert_string_equal(dec("+", SG_HTTP_PCT_QUERY, 100), " ");
}

static void test_malformed_escapes(void **state) {
  (void)state;
  static const char *const bad[] = {"%",    "%4",   "a%",   "ab%4", "%zz", "%4z", "%z4",
                                    "%%41", "%+41", "% 41", "%-1",  "%0x", "x%g0"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_null(dec(bad[i], SG_HTTP_PCT_PATH, 100));
    assert_null(dec(bad[i], SG_HTTP_PCT_QUERY, 100));
  }
}

static void test_nul_refused(void **state) {
  (void)state;
  assert_null(dec("%00", SG_HTTP_PCT_PATH, 100));
  assert_null(dec("%00", SG_HTTP_PCT_QUERY, 100));
  assert_null(dec("lst_X%00junk", SG_HTTP_PCT_PATH, 100));
  assert_null(dec("1%00", SG_HTTP_PCT_QUERY, 100));
  /* A raw NUL inside the given length is refused too. */
  size_t n;
  char out[8];
  assert_int_equal(sg_http_percent_decode("a\0b", 3, SG_HTTP_PCT_QUERY, out, sizeof out, &n),
                   SG_E_INVALID_REQUEST);
}

static void test_invalid_utf8_refused(void **state) {
  (void)state;
  static const char *const bad[] = {
      "%C3%28",       /* a lead byte without its continuation */
      "%C3",          /* cut short */
      "%A9",          /* a lone continuation byte */
      "%C0%AF",       /* overlong '/' */
      "%ED%A0%80",    /* a UTF-16 surrogate */
      "%F4%90%80%80", /* past U+10FFFF */
      "%FF%FE",       /* never in UTF-8 */
      "ok\xc3\x28",   /* raw invalid bytes */
      "%E2%82",       /* a 3-byte character cut short */
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_null(dec(bad[i], SG_HTTP_PCT_PATH, 100));
    assert_null(dec(bad[i], SG_HTTP_PCT_QUERY, 100));
  }
}

/* A path's segments are split on its literal '/' only: an escaped one is refused there
 * (either case of hex), so "/v1%2Fbootstrap" can never become the route "/v1/bootstrap".
 * In a query argument, and in a piece already checked, it is an ordinary '/'. */
static void test_encoded_slash_refused_in_paths_only(void **state) {
  (void)state;
  static const char *const bad[] = {
      "/v1%2Fbootstrap", "/dashboard%2fapi%2Fsession", "/api/v1/lists%2Flst_1", "%2F", "/a/%2f/b",
      "/%2F%2F"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_null(dec(bad[i], SG_HTTP_PCT_PATH, 100));
    assert_non_null(dec(bad[i], SG_HTTP_PCT_QUERY, 100));
    assert_non_null(dec(bad[i], SG_HTTP_PCT_CHECKED, 100));
  }
  assert_string_equal(dec("a%2Fb%2fc", SG_HTTP_PCT_QUERY, 100), "a/b/c");
  assert_string_equal(dec("/v1%2Fx+y", SG_HTTP_PCT_CHECKED, 100), "/v1/x+y");
  /* Other escapes of ASCII still decode in a path, and an overlong '/' stays refused
   * as invalid UTF-8. */
  assert_string_equal(dec("/v1/q%75ery%2E", SG_HTTP_PCT_PATH, 100), "/v1/query.");
  assert_null(dec("/a%C0%AFb", SG_HTTP_PCT_PATH, 100));
}

static void test_error_is_invalid_request(void **state) {
  (void)state;
  size_t n = 77;
  char out[8];
  assert_int_equal(sg_http_percent_decode("%zz", 3, SG_HTTP_PCT_PATH, out, sizeof out, &n),
                   SG_E_INVALID_REQUEST);
  assert_int_equal(n, 77); /* untouched on failure */
  assert_int_equal(sg_err_status(SG_E_INVALID_REQUEST), 400);
}

static void test_bounded_output(void **state) {
  (void)state;
  /* Exactly cap bytes fit; one more is refused, and nothing is written past cap (the
   * guard byte after it survives). */
  char out[8];
  size_t n;
  memset(out, 'G', sizeof out);
  assert_int_equal(sg_http_percent_decode("abc%41", 6, SG_HTTP_PCT_PATH, out, 4, &n), SG_E_OK);
  assert_int_equal(n, 4);
  assert_memory_equal(out, "abcAG", 5);
  memset(out, 'G', sizeof out);
  assert_int_equal(sg_http_percent_decode("abc%41e", 7, SG_HTTP_PCT_PATH, out, 4, &n),
                   SG_E_INVALID_REQUEST);
  assert_int_equal(out[4], 'G');
  assert_int_equal(sg_http_percent_decode("a", 1, SG_HTTP_PCT_PATH, out, 0, &n),
                   SG_E_INVALID_REQUEST);
  assert_int_equal(sg_http_percent_decode("", 0, SG_HTTP_PCT_PATH, out, 0, &n), SG_E_OK);
  assert_int_equal(n, 0);
}

static void test_in_place(void **state) {
  (void)state;
  char s[] = "a%20b+c%E2%82%AC";
  size_t n;
  assert_int_equal(sg_http_percent_decode(s, strlen(s), SG_HTTP_PCT_QUERY, s, strlen(s), &n),
                   SG_E_OK);
  assert_int_equal(n, 8);
  assert_memory_equal(s, "a b c\xe2\x82\xac", 8);
}

/* The rule byte by byte, as written before the decoder copied runs (percent.h): the
 * reference the decoder is compared with below. */
static int ref_hex(unsigned char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  ch |= 0x20;
  return ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
}
static sg_err ref_decode(const char *s, size_t n, sg_http_pct_rule rule, char *out, size_t cap,
                         size_t *out_len) {
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    if (o == cap) return SG_E_INVALID_REQUEST;
    char ch = s[i];
    if (ch == '%') {
      if (n - i < 3) return SG_E_INVALID_REQUEST;
      int hi = ref_hex((unsigned char)s[i + 1]), lo = ref_hex((unsigned char)s[i + 2]);
      if (hi < 0 || lo < 0) return SG_E_INVALID_REQUEST;
      ch = (char)(hi << 4 | lo);
      i += 2;
      if (ch == '/' && rule == SG_HTTP_PCT_PATH) return SG_E_INVALID_REQUEST;
    } else if (ch == '+' && rule == SG_HTTP_PCT_QUERY) {
      ch = ' ';
    }
    out[o++] = ch;
  }
  if (!sg_utf8_valid(out, o)) return SG_E_INVALID_REQUEST;
  *out_len = o;
  return SG_E_OK;
}

/* Random inputs of 0..40 bytes drawn mostly from plain letters with '%' escapes (good and
 * broken), '+', '/', NUL, raw UTF-8 and stray high bytes at every offset, so that runs end
 * inside and across the decoder's eight-byte steps; decoded by each rule, into another
 * buffer and in place, with every cap from 0 to past the length. Same verdict and bytes
 * as the reference. */
static void test_same_as_byte_by_byte(void **state) {
  (void)state;
  static const char *const pieces[] = {"a",   "b",      "Z",   "0",        "%41",      "%2F",
                                       "%2f", "%C3%A9", "%c3", "%00",      "%zz",      "%",
                                       "%4",  "+",      "/",   "\xc3\xa9", "\xe2\x82", "\xff",
                                       "~",   ".",      "%20", "abcdefgh", "%E2%82%AC"};
  const size_t np = sizeof pieces / sizeof *pieces;
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (int t = 0; t < 20000; t++) {
    char in[128];
    size_t n = 0;
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    size_t k = x % 12;
    for (size_t j = 0; j < k; j++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      /* three times out of four a plain letter, so that long plain runs occur */
      const char *p = x % 4 ? "q" : pieces[(x >> 8) % np];
      size_t pl = strcmp(p, "%00") == 0 ? 3 : strlen(p);
      if (n + pl > 40) break;
      memcpy(in + n, p, pl);
      n += pl;
    }
    for (int rule = SG_HTTP_PCT_PATH; rule <= SG_HTTP_PCT_CHECKED; rule++) {
      for (size_t cap = 0; cap <= n + 1; cap++) {
        char want[128], got[128];
        size_t wl = 0, gl = 0;
        sg_err we = ref_decode(in, n, (sg_http_pct_rule)rule, want, cap, &wl);
        sg_err ge = sg_http_percent_decode(in, n, (sg_http_pct_rule)rule, got, cap, &gl);
        assert_int_equal(ge, we);
        if (ge == SG_E_OK) {
          assert_int_equal(gl, wl);
          assert_memory_equal(got, want, gl);
        }
        /* in place: the buffer is the input, so the cap is at most its length */
        size_t icap = cap < n ? cap : n;
        we = ref_decode(in, n, (sg_http_pct_rule)rule, want, icap, &wl);
        memcpy(got, in, n);
        ge = sg_http_percent_decode(got, n, (sg_http_pct_rule)rule, got, icap, &gl);
        assert_int_equal(ge, we);
        if (ge == SG_E_OK) {
          assert_int_equal(gl, wl);
          assert_memory_equal(got, want, gl);
        }
      }
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_well_formed),
      cmocka_unit_test(test_plus_only_in_query),
      cmocka_unit_test(test_malformed_escapes),
      cmocka_unit_test(test_nul_refused),
      cmocka_unit_test(test_invalid_utf8_refused),
      cmocka_unit_test(test_error_is_invalid_request),
      cmocka_unit_test(test_bounded_output),
      cmocka_unit_test(test_in_place),
      cmocka_unit_test(test_encoded_slash_refused_in_paths_only),
      cmocka_unit_test(test_same_as_byte_by_byte),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
