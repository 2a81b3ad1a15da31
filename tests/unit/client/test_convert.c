/* Unit tests of the import file converter (src/client/convert.c): detection, the JSON
 * array splitter and the CSV reader, fed one byte at a time and whole, source lines, and
 * the errors that name a line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "client/convert.h"

/* Converts `in` whole and one byte at a time; both must agree. Returns the NDJSON (static). */
static const char *convert(sg_convert *c, sg_import_format fmt, const sg_csv_map *m, const char *in,
                           int *rc) {
  static char whole[4096];
  sg_convert one;
  sg_buf a, b;
  sg_buf_init(&a, 0);
  sg_buf_init(&b, 0);
  sg_convert_init(c, fmt, m);
  int ra = sg_convert_feed(c, in, strlen(in), &a);
  if (!ra) ra = sg_convert_finish(c, &a);
  sg_convert_init(&one, fmt, m);
  int rb = 0;
  size_t n = strlen(in);
  for (size_t i = 0; i < n && !rb; i++) rb = sg_convert_feed(&one, in + i, 1, &b);
  if (!rb) rb = sg_convert_finish(&one, &b);
  assert_int_equal(ra, rb);
  assert_string_equal(c->err, one.err);
  assert_int_equal(a.len, b.len);
  if (a.len) assert_memory_equal(a.data, b.data, a.len);
  snprintf(whole, sizeof whole, "%.*s", (int)a.len, a.data ? a.data : "");
  *rc = ra;
  sg_buf_free(&a);
  sg_buf_free(&b);
  sg_convert_free(&one);
  return whole;
}

static void test_detect(void **state) {
  (void)state;
  assert_int_equal(sg_convert_detect("x.ndjson", "[", 1), SG_FMT_NDJSON);
  assert_int_equal(sg_convert_detect("x.jsonl", "", 0), SG_FMT_NDJSON);
  assert_int_equal(sg_convert_detect("x.CSV", "{", 1), SG_FMT_CSV);
  assert_int_equal(sg_convert_detect(NULL, "\xEF\xBB\xBF \n [", 7), SG_FMT_JSON);
  assert_int_equal(sg_convert_detect("items", "{\"value\":1}", 11), SG_FMT_NDJSON);
  assert_int_equal(sg_convert_detect("items.json", "", 0), SG_FMT_JSON);
  assert_int_equal(sg_convert_detect("items", "value,rank", 10), SG_FMT_CSV);
  sg_import_format f;
  char d = ',';
  assert_int_equal(sg_convert_parse_format("tsv", &f, &d), 0);
  assert_int_equal(f, SG_FMT_CSV);
  assert_int_equal(d, '\t');
  assert_int_equal(sg_convert_parse_format("xml", &f, &d), -1);
}

static void test_json_array(void **state) {
  (void)state;
  sg_convert c;
  int rc;
  const char *out = convert(&c, SG_FMT_JSON, NULL,
                            "[\n {\"value\": \"a,]\\\"}\",\n  \"x\": [1, {\"y\": 2}]},\n\n"
                            " {\"value\": \"b\"}\n]\n",
                            &rc);
  assert_int_equal(rc, 0);
  assert_string_equal(out,
                      "{\"value\": \"a,]\\\"}\",   \"x\": [1, {\"y\": 2}]}\n{\"value\": \"b\"} \n");
  assert_int_equal(sg_convert_source_line(&c, 0), 2);
  assert_int_equal(sg_convert_source_line(&c, 1), 5);
  assert_int_equal(sg_convert_source_line(&c, 2), 0);
  sg_convert_free(&c);
}

static void test_json_errors(void **state) {
  (void)state;
  static const struct {
    const char *in, *err;
  } cases[] = {
      {"{\"value\":1}", "line 1: a JSON import must be an array"},
      {"[{\"value\":1},]", "line 1: a comma before ]"},
      {"[,", "line 1: an empty element"},
      {"[1]\n x", "line 2: data after the end"},
      {"[\"a\nb\"]", "line 1: a line break inside a JSON string"},
      {"[{\"v\":1}\n", "line 2: the JSON array is not closed"},
      {"", "line 1: the file is empty"},
      {"[}]", "line 1: an unbalanced }"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    sg_convert c;
    int rc;
    convert(&c, SG_FMT_JSON, NULL, cases[i].in, &rc);
    assert_int_equal(rc, -1);
    if (strncmp(c.err, cases[i].err, strlen(cases[i].err)) != 0)
      fail_msg("%s → %s", cases[i].in, c.err);
    sg_convert_free(&c);
  }
}

static void test_csv(void **state) {
  (void)state;
  sg_convert c;
  int rc;
  const char *out = convert(&c, SG_FMT_CSV, NULL,
                            "\xEF\xBB\xBFpopulation,value,rank,aliases\r\n"
                            "1,\"Paris, \"\"FR\"\"\",12,a|b||c\r\n"
                            "\r\n"
                            "2,\"two\nlines\",x,\r\n"
                            "3,last,,",
                            &rc);
  assert_int_equal(rc, 0);
  assert_string_equal(
      out, "{\"value\":\"Paris, \\\"FR\\\"\",\"rank\":12,\"aliases\":[\"a\",\"b\",\"c\"]}\n"
           "{\"value\":\"two\\nlines\",\"rank\":\"x\"}\n"
           "{\"value\":\"last\"}\n");
  assert_int_equal(sg_convert_source_line(&c, 0), 2);
  assert_int_equal(sg_convert_source_line(&c, 1), 4);
  assert_int_equal(sg_convert_source_line(&c, 2), 6);
  char unused[64];
  sg_convert_unused_columns(&c, unused, sizeof unused);
  assert_string_equal(unused, "population");
  sg_convert_free(&c);
}

static void test_csv_mapping_and_errors(void **state) {
  (void)state;
  sg_convert c;
  int rc;
  sg_csv_map m = {.value = "name", .display_value = "label", .delimiter = '\t'};
  const char *out = convert(&c, SG_FMT_CSV, &m, "label\tname\nLyon\tlyon\n", &rc);
  assert_int_equal(rc, 0);
  assert_string_equal(out, "{\"value\":\"lyon\",\"displayValue\":\"Lyon\"}\n");
  sg_convert_free(&c);
  static const struct {
    const char *in, *err;
  } cases[] = {
      {"name\nx\n", "line 1: the CSV header has no 'value' column"},
      {"value,rank\na\n", "line 2: 1 fields, but the header has 2"},
      {"value\n\"open\nstill", "line 2: a quoted CSV field is never closed"},
      {"value\n\"a\"b\n", "line 2: text after a closing quote"},
      {"value\na\"b\n", "line 2: a quote inside an unquoted field"},
      {"", "line 1: the CSV file has no header row"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    convert(&c, SG_FMT_CSV, NULL, cases[i].in, &rc);
    assert_int_equal(rc, -1);
    if (strncmp(c.err, cases[i].err, strlen(cases[i].err)) != 0)
      fail_msg("%s → %s", cases[i].in, c.err);
    sg_convert_free(&c);
  }
  sg_csv_map bad = {.rank = "score"};
  convert(&c, SG_FMT_CSV, &bad, "value\nx\n", &rc);
  assert_int_equal(rc, -1);
  assert_string_equal(c.err, "line 1: the CSV header has no column 'score'");
  sg_convert_free(&c);
}

/* The description column: by its own name, or mapped; empty cells mean none. */
static void test_csv_description(void **state) {
  (void)state;
  sg_convert c;
  int rc;
  const char *out = convert(&c, SG_FMT_CSV, NULL,
                            "value,description\n"
                            "Paris,\"Texas, United States\"\n"
                            "Lyon,\n",
                            &rc);
  assert_int_equal(rc, 0);
  assert_string_equal(out, "{\"value\":\"Paris\",\"description\":\"Texas, United States\"}\n"
                           "{\"value\":\"Lyon\"}\n");
  char unused[64];
  sg_convert_unused_columns(&c, unused, sizeof unused);
  assert_string_equal(unused, "");
  sg_convert_free(&c);
  sg_csv_map m = {.description = "subtitle"};
  out = convert(&c, SG_FMT_CSV, &m, "subtitle,value\nFrance,Paris\n", &rc);
  assert_int_equal(rc, 0);
  assert_string_equal(out, "{\"value\":\"Paris\",\"description\":\"France\"}\n");
  sg_convert_free(&c);
}

static void test_ndjson_passes_through(void **state) {
  (void)state;
  sg_convert c;
  int rc;
  const char *out = convert(&c, SG_FMT_NDJSON, NULL, "{\"value\":1}\n\n{\"value\":2}\n", &rc);
  assert_int_equal(rc, 0);
  assert_string_equal(out, "{\"value\":1}\n\n{\"value\":2}\n");
  assert_int_equal(sg_convert_source_line(&c, 2), 3);
  sg_convert_free(&c);
}

/* Feeds a generated CSV in 64 KiB chunks; returns the number of NDJSON lines. */
static int64_t convert_big(sg_convert *c, int64_t rows, bool blank_between) {
  sg_convert_init(c, SG_FMT_CSV, NULL);
  sg_buf in, out;
  sg_buf_init(&in, 0);
  sg_buf_init(&out, 0);
  int64_t n = 0;
  assert_int_equal(sg_buf_puts(&in, "value\n"), 0);
  for (int64_t i = 0; i < rows; i++) {
    assert_int_equal(sg_buf_printf(&in, "v%lld\n%s", (long long)i, blank_between ? "\n" : ""), 0);
    if (in.len > 65536 || i == rows - 1) {
      assert_int_equal(sg_convert_feed(c, in.data, in.len, &out), 0);
      for (size_t k = 0; k < out.len; k++) n += out.data[k] == '\n';
      sg_buf_reset(&in);
      sg_buf_reset(&out);
    }
  }
  assert_int_equal(sg_convert_finish(c, &out), 0);
  sg_buf_free(&in);
  sg_buf_free(&out);
  return n;
}

/* The line map is runs: one for a plain file however long; one per item when every
 * record is followed by a blank line, up to SG_CONVERT_MAX_RUNS, after which the lines of
 * later items are unknown (0) and the problems name them by item number. */
static void test_line_map_is_bounded(void **state) {
  (void)state;
  sg_convert c;
  assert_int_equal(convert_big(&c, 500000, false), 500000);
  assert_int_equal(c.nruns, 1);
  assert_int_equal(sg_convert_source_line(&c, 0), 2);
  assert_int_equal(sg_convert_source_line(&c, 499999), 500001);
  assert_int_equal(sg_convert_source_line(&c, 500000), 0);
  sg_convert_free(&c);

  int64_t rows = (int64_t)SG_CONVERT_MAX_RUNS + 1000;
  assert_int_equal(convert_big(&c, rows, true), rows);
  assert_int_equal(c.nruns, SG_CONVERT_MAX_RUNS);
  assert_true(c.capruns <= SG_CONVERT_MAX_RUNS);
  assert_int_equal(sg_convert_source_line(&c, 0), 2);
  assert_int_equal(sg_convert_source_line(&c, 1), 4);
  int64_t last = (int64_t)SG_CONVERT_MAX_RUNS - 1;
  assert_int_equal(sg_convert_source_line(&c, last), 2 + 2 * last);
  assert_int_equal(sg_convert_source_line(&c, last + 1), 0);
  json_t *d = json_pack("{s:[{s:s,s:s},{s:s,s:s}]}", "fields", "path", "lines[1].rank", "reason",
                        "bad", "path", "lines[262200]", "reason", "malformed JSON");
  char want[64];
  snprintf(want, sizeof want, "item %d: malformed JSON", 262201);
  json_t *p = sg_convert_problems(&c, d);
  assert_int_equal(json_array_size(p), 2);
  assert_string_equal(json_string_value(json_array_get(p, 0)), "line 4: rank: bad");
  assert_string_equal(json_string_value(json_array_get(p, 1)), want);
  json_decref(p);
  json_decref(d);
  sg_convert_free(&c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_detect),
      cmocka_unit_test(test_json_array),
      cmocka_unit_test(test_json_errors),
      cmocka_unit_test(test_csv),
      cmocka_unit_test(test_csv_mapping_and_errors),
      cmocka_unit_test(test_csv_description),
      cmocka_unit_test(test_ndjson_passes_through),
      cmocka_unit_test(test_line_map_is_bounded),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
