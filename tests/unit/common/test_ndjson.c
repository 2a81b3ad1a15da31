/* Unit tests of the NDJSON line splitter (src/common/ndjson.c): lines across chunk
 * boundaries, CRLF, blank lines, the line cap, a last line without a newline, stopping. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "common/ndjson.h"

/* What the callback saw, as "index:text" or "index:TOO_LONG" joined by '|'. */
typedef struct {
  char out[4096];
  int stop_at; /* index whose callback returns 7 (-1: never) */
} seen;

static int record(void *ctx, size_t index, const char *line, size_t n, bool too_long) {
  seen *s = ctx;
  char one[256];
  if (too_long)
    snprintf(one, sizeof one, "%zu:TOO_LONG|", index);
  else
    snprintf(one, sizeof one, "%zu:%.*s|", index, (int)n, line);
  strncat(s->out, one, sizeof s->out - strlen(s->out) - 1);
  return (int)index == s->stop_at ? 7 : 0;
}

/* Feeds text in pieces of `step` bytes (0: all at once) and returns what was seen. */
static const char *split(const char *text, size_t step, size_t max_line, seen *s) {
  memset(s, 0, sizeof *s);
  s->stop_at = -1;
  sg_ndjson p;
  sg_ndjson_init(&p, max_line, record, s);
  size_t n = strlen(text);
  if (!step) step = n ? n : 1;
  for (size_t off = 0; off < n; off += step)
    sg_ndjson_feed(&p, text + off, n - off < step ? n - off : step);
  sg_ndjson_finish(&p);
  sg_ndjson_free(&p);
  return s->out;
}

static void test_every_chunking_gives_the_same_lines(void **state) {
  const char *text = "{\"a\":1}\n\n  \t\n{\"b\":2}\r\n{\"c\":3}";
  const char *want = "0:{\"a\":1}|3:{\"b\":2}|4:{\"c\":3}|";
  seen s;
  for (size_t step = 0; step <= strlen(text); step++)
    assert_string_equal(split(text, step, 64, &s), want);
}

static void test_line_cap(void **state) {
  seen s;
  /* Exactly the cap passes, also with a CR before the newline; one more byte does not. */
  for (size_t step = 0; step < 12; step++) {
    assert_string_equal(split("12345\n123456\n12345\r\nok\n", step, 5, &s),
                        "0:12345|1:TOO_LONG|2:12345|3:ok|");
    assert_string_equal(split("ok\n1234567890123", step, 5, &s), "0:ok|1:TOO_LONG|");
    assert_string_equal(split("123456\r\nx", step, 5, &s), "0:TOO_LONG|1:x|");
  }
}

static void test_empty_and_stop(void **state) {
  seen s;
  assert_string_equal(split("", 0, 8, &s), "");
  assert_string_equal(split("\n\n", 0, 8, &s), "");
  memset(&s, 0, sizeof s);
  s.stop_at = 1;
  sg_ndjson p;
  sg_ndjson_init(&p, 8, record, &s);
  assert_int_equal(sg_ndjson_feed(&p, "a\nb\nc\n", 6), 7);
  assert_int_equal(sg_ndjson_feed(&p, "d\n", 2), 7);
  assert_int_equal(sg_ndjson_finish(&p), 7);
  assert_string_equal(s.out, "0:a|1:b|");
  assert_int_equal(sg_ndjson_lines(&p), 2);
  sg_ndjson_free(&p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_chunking_gives_the_same_lines),
      cmocka_unit_test(test_line_cap),
      cmocka_unit_test(test_empty_and_stop),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
