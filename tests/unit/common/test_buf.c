/* Unit tests of the capped buffer (src/common/buf.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/buf.h"

static void test_append_and_nul_termination(void **state) {
  (void)state;
  sg_buf b;
  sg_buf_init(&b, 0);
  assert_int_equal(sg_buf_puts(&b, "abc"), 0);
  assert_int_equal(sg_buf_putc(&b, 'd'), 0);
  assert_int_equal(sg_buf_append(&b, "e\0f", 3), 0);
  assert_int_equal(b.len, 7);
  assert_memory_equal(b.data, "abcde\0f", 8); /* includes the terminating NUL */
  sg_buf_reset(&b);
  assert_int_equal(b.len, 0);
  assert_string_equal(b.data, "");
  assert_int_equal(sg_buf_append(&b, NULL, 0), 0);
  sg_buf_free(&b);
  assert_null(b.data);
}

static void test_cap_enforced(void **state) {
  (void)state;
  sg_buf b;
  sg_buf_init(&b, 10);
  assert_int_equal(sg_buf_puts(&b, "0123456789"), 0); /* exactly at the cap */
  assert_int_equal(sg_buf_putc(&b, 'x'), -1);
  assert_int_equal(b.len, 10);
  assert_string_equal(b.data, "0123456789"); /* unchanged by the failed append */
  sg_buf_reset(&b);
  assert_int_equal(sg_buf_puts(&b, "01234"), 0);
  assert_int_equal(sg_buf_puts(&b, "567890"), -1); /* would pass the cap: all or nothing */
  assert_string_equal(b.data, "01234");
  assert_int_equal(sg_buf_printf(&b, "%s", "abcdef"), -1);
  assert_string_equal(b.data, "01234");
  /* A long printf that would pass the cap (over the 256-byte fast path). */
  sg_buf big;
  sg_buf_init(&big, 300);
  char s[400];
  memset(s, 'z', sizeof s - 1);
  s[sizeof s - 1] = '\0';
  assert_int_equal(sg_buf_printf(&big, "%s", s), -1);
  assert_int_equal(big.len, 0);
  assert_int_equal(sg_buf_printf(&big, "%.290s", s), 0);
  assert_int_equal(big.len, 290);
  assert_int_equal(strlen(big.data), 290);
  /* Reserve refuses sizes that would overflow len + extra. */
  assert_int_equal(sg_buf_reserve(&big, SIZE_MAX), -1);
  /* A JSON string that does not fit leaves the buffer as it was (no half literal). */
  assert_int_equal(sg_buf_json_str(&b, "abcdefgh", 8), -1);
  assert_int_equal(b.len, 5);
  assert_string_equal(b.data, "01234");
  assert_int_equal(sg_buf_json_str(&b, "a\nb", 3), -1); /* 6 bytes, 5 left */
  assert_string_equal(b.data, "01234");
  assert_int_equal(sg_buf_json_str(&b, "ab", 2), 0); /* 4 bytes fit */
  assert_string_equal(b.data, "01234\"ab\"");
  sg_buf_free(&big);
  sg_buf_free(&b);
}

static void test_printf_long(void **state) {
  (void)state;
  sg_buf b;
  sg_buf_init(&b, 0);
  char s[1000];
  memset(s, 'q', sizeof s - 1);
  s[sizeof s - 1] = '\0';
  assert_int_equal(sg_buf_printf(&b, "<%s|%d>", s, 42), 0);
  assert_int_equal(b.len, 999 + 5);
  assert_int_equal(b.data[0], '<');
  assert_string_equal(b.data + 1000, "|42>");
  sg_buf_free(&b);
}

static void check_json(const char *in, size_t n, const char *want) {
  sg_buf b;
  sg_buf_init(&b, 0);
  assert_int_equal(sg_buf_json_str(&b, in, n), 0);
  assert_string_equal(b.data, want);
  /* What we emit must parse back to the input. */
  json_t *v = json_loadb(b.data, b.len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
  assert_non_null(v);
  assert_int_equal(json_string_length(v), n);
  assert_memory_equal(json_string_value(v), in, n);
  json_decref(v);
  sg_buf_free(&b);
}

static void test_json_escaping(void **state) {
  (void)state;
  check_json("", 0, "\"\"");
  check_json("plain", 5, "\"plain\"");
  check_json("a\"b\\c", 5, "\"a\\\"b\\\\c\"");
  check_json("\n\r\t\b\f", 5, "\"\\n\\r\\t\\b\\f\"");
  check_json("\x01\x1f", 2, "\"\\u0001\\u001f\"");
  check_json("a\0b", 3, "\"a\\u0000b\"");
  check_json("caf\xc3\xa9 \xe2\x82\xac", 9, "\"caf\xc3\xa9 \xe2\x82\xac\""); /* UTF-8 as is */
  check_json("/</script>", 10, "\"/</script>\"");
  check_json("\x7f", 1, "\"\x7f\"");
}

static void test_steal(void **state) {
  (void)state;
  sg_buf b;
  sg_buf_init(&b, 0);
  size_t n = 99;
  char *p = sg_buf_steal(&b, &n); /* empty buffer still gives a valid string */
  assert_non_null(p);
  assert_int_equal(n, 0);
  assert_string_equal(p, "");
  free(p);
  sg_buf_puts(&b, "hello");
  p = sg_buf_steal(&b, &n);
  assert_string_equal(p, "hello");
  assert_int_equal(n, 5);
  assert_null(b.data);
  assert_int_equal(b.len, 0);
  free(p);
  sg_buf_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_append_and_nul_termination),
      cmocka_unit_test(test_cap_enforced),
      cmocka_unit_test(test_printf_long),
      cmocka_unit_test(test_json_escaping),
      cmocka_unit_test(test_steal),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
