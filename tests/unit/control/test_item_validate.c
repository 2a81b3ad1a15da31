/* Unit tests of item body validation (src/control/item_validate.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "control/internal.h"

/* Validates the JSON text; returns the result and leaves the field errors in *fields. */
static json_t *check(const char *text, json_t **fields) {
  json_t *body = json_loads(text, 0, NULL);
  assert_non_null(body);
  *fields = NULL;
  json_t *out = sg__item_validate(body, fields);
  json_decref(body);
  return out;
}

/* True when fields holds an error for path. */
static bool has_path(const json_t *fields, const char *path) {
  size_t i;
  const json_t *f;
  json_array_foreach(fields, i, f) if (strcmp(json_string_value(json_object_get(f, "path")),
                                              path) == 0) return true;
  return false;
}

static void expect_error(const char *text, const char *path) {
  json_t *fields;
  json_t *out = check(text, &fields);
  if (out || !has_path(fields, path)) {
    char *d = fields ? json_dumps(fields, 0) : NULL;
    fail_msg("%s: expected an error at %s, got %s", text, path, d ? d : "none");
  }
  json_decref(fields);
}

static void test_defaults(void **state) {
  json_t *fields;
  json_t *out = check("{\"value\":\"Paris\"}", &fields);
  assert_non_null(out);
  assert_null(fields);
  assert_string_equal(json_string_value(json_object_get(out, "displayValue")), "Paris");
  assert_int_equal(json_array_size(json_object_get(out, "aliases")), 0);
  assert_int_equal(json_integer_value(json_object_get(out, "rank")), 0);
  assert_true(json_is_null(json_object_get(out, "parentId")));
  assert_int_equal(json_object_size(json_object_get(out, "locales")), 0);
  assert_int_equal(json_integer_value(json_object_get(out, "displayOrder")), 0);
  json_decref(out);

  /* null means absent. */
  out = check("{\"value\":\"a\",\"displayValue\":null,\"aliases\":null,\"rank\":null,"
              "\"parentId\":null,\"locales\":null,\"displayOrder\":null}",
              &fields);
  assert_non_null(out);
  assert_string_equal(json_string_value(json_object_get(out, "displayValue")), "a");
  json_decref(out);
}

static void test_full(void **state) {
  json_t *fields;
  json_t *out = check("{\"value\":\"Paris\",\"displayValue\":\"P\",\"aliases\":[\"x\",\"y\"],"
                      "\"rank\":-4,\"parentId\":\"itm_1\",\"displayOrder\":9,"
                      "\"locales\":{\"fr\":{\"displayValue\":\"Pa\",\"aliases\":[]},"
                      "\"zh-Hant-TW\":{}}}",
                      &fields);
  assert_non_null(out);
  assert_int_equal(json_integer_value(json_object_get(out, "rank")), -4);
  assert_string_equal(json_string_value(json_object_get(out, "parentId")), "itm_1");
  json_t *loc = json_object_get(out, "locales");
  assert_int_equal(json_object_size(loc), 2);
  assert_string_equal(
      json_string_value(json_object_get(json_object_get(loc, "fr"), "displayValue")), "Pa");
  json_decref(out);
}

static void test_errors(void **state) {
  expect_error("{}", "value");
  expect_error("{\"value\":\"\"}", "value");
  expect_error("{\"value\":7}", "value");
  expect_error("{\"value\":\"a\",\"extra\":1}", "extra");
  expect_error("{\"value\":\"a\",\"displayValue\":\"\"}", "displayValue");
  expect_error("{\"value\":\"a\",\"aliases\":{}}", "aliases");
  expect_error("{\"value\":\"a\",\"aliases\":[\"\"]}", "aliases[0]");
  expect_error("{\"value\":\"a\",\"rank\":1.0}", "rank");
  expect_error("{\"value\":\"a\",\"rank\":9007199254740992}", "rank");
  expect_error("{\"value\":\"a\",\"displayOrder\":2147483648}", "displayOrder");
  expect_error("{\"value\":\"a\",\"parentId\":\"\"}", "parentId");
  expect_error("{\"value\":\"a\",\"parentId\":[]}", "parentId");
  expect_error("{\"value\":\"a\",\"locales\":\"fr\"}", "locales");
  expect_error("{\"value\":\"a\",\"locales\":{\"f\":{}}}", "locales.f");
  expect_error("{\"value\":\"a\",\"locales\":{\"fr_FR\":{}}}", "locales.fr_FR");
  expect_error("{\"value\":\"a\",\"locales\":{\"fr\":{\"x\":1}}}", "locales.fr.x");
  expect_error("{\"value\":\"a\",\"locales\":{\"fr\":{\"aliases\":\"x\"}}}", "locales.fr.aliases");
  expect_error("{\"value\":\"a\",\"locales\":{\"en\":{},\"EN\":{}}}", "locales.EN");
}

static void test_sizes(void **state) {
  char big[1100];
  /* value: 1024 bytes pass, 1025 fail (bytes, not characters). */
  memset(big, 'v', 1024);
  big[1024] = '\0';
  char body[1300];
  snprintf(body, sizeof body, "{\"value\":\"%s\"}", big);
  json_t *fields;
  json_t *out = check(body, &fields);
  assert_non_null(out);
  json_decref(out);
  snprintf(body, sizeof body, "{\"value\":\"%sv\"}", big);
  expect_error(body, "value");
  /* 171 three-byte characters = 513 bytes: over the displayValue cap. */
  char dv[600] = "";
  for (int i = 0; i < 171; i++) strcat(dv, "\xe2\x82\xac");
  snprintf(body, sizeof body, "{\"value\":\"a\",\"displayValue\":\"%s\"}", dv);
  expect_error(body, "displayValue");
  /* 33 aliases. */
  char al[400] = "[";
  for (int i = 0; i < 33; i++) strcat(al, i ? ",\"a\"" : "\"a\"");
  strcat(al, "]");
  snprintf(body, sizeof body, "{\"value\":\"a\",\"aliases\":%s}", al);
  expect_error(body, "aliases");
}

static void test_bcp47(void **state) {
  assert_true(sg__bcp47_valid("en"));
  assert_true(sg__bcp47_valid("fr-CA"));
  assert_true(sg__bcp47_valid("zh-Hant-TW"));
  assert_true(sg__bcp47_valid("es-419"));
  assert_false(sg__bcp47_valid("e"));
  assert_false(sg__bcp47_valid("1n"));
  assert_false(sg__bcp47_valid("en-"));
  assert_false(sg__bcp47_valid("en--US"));
  assert_false(sg__bcp47_valid("en_US"));
  assert_false(sg__bcp47_valid("en-abcdefghi"));
}

/* description: optional, 1–200 code points (not bytes) of valid UTF-8, also per locale;
 * null (or absence) gives null, an empty string is refused. */
static void test_description(void **state) {
  (void)state;
  json_t *fields;
  json_t *out = check("{\"value\":\"a\"}", &fields);
  assert_non_null(out);
  assert_true(json_is_null(json_object_get(out, "description")));
  json_decref(out);
  out = check("{\"value\":\"a\",\"description\":null}", &fields);
  assert_non_null(out);
  assert_true(json_is_null(json_object_get(out, "description")));
  json_decref(out);

  /* 200 three-byte code points (600 bytes) pass; 201 do not, nor does 201 ASCII. */
  char body[4096];
  char text[1024];
  text[0] = '\0';
  for (int i = 0; i < 200; i++) strcat(text, "\xe2\x82\xac");
  snprintf(body, sizeof body,
           "{\"value\":\"a\",\"description\":\"%s\",\"locales\":{\"fr\":{\"description\":\"%s\"}}}",
           text, text);
  out = check(body, &fields);
  assert_non_null(out);
  assert_null(fields);
  assert_int_equal(json_string_length(json_object_get(out, "description")), 600);
  assert_string_equal(json_string_value(json_object_get(
                          json_object_get(json_object_get(out, "locales"), "fr"), "description")),
                      text);
  json_decref(out);
  strcat(text, "\xe2\x82\xac");
  snprintf(body, sizeof body, "{\"value\":\"a\",\"description\":\"%s\"}", text);
  expect_error(body, "description");
  snprintf(body, sizeof body, "{\"value\":\"a\",\"locales\":{\"fr\":{\"description\":\"%s\"}}}",
           text);
  expect_error(body, "locales.fr.description");
  memset(text, 'x', 201);
  text[201] = '\0';
  snprintf(body, sizeof body, "{\"value\":\"a\",\"description\":\"%s\"}", text);
  expect_error(body, "description");

  expect_error("{\"value\":\"a\",\"description\":\"\"}", "description");
  expect_error("{\"value\":\"a\",\"description\":7}", "description");
  expect_error("{\"value\":\"a\",\"description\":[\"x\"]}", "description");
  expect_error("{\"value\":\"a\",\"locales\":{\"fr\":{\"description\":\"\"}}}",
               "locales.fr.description");
  expect_error("{\"value\":\"a\",\"locales\":{\"fr\":{\"description\":false}}}",
               "locales.fr.description");
  /* Unknown fields next to it are still refused. */
  expect_error("{\"value\":\"a\",\"description\":\"x\",\"subtitle\":\"y\"}", "subtitle");
  expect_error("{\"value\":\"a\",\"locales\":{\"fr\":{\"descr\":\"y\"}}}", "locales.fr.descr");

  /* Invalid UTF-8 reaching the validator by another road than the JSON parser (which
   * refuses it) is still refused. */
  json_t *b = json_object();
  json_object_set_new(b, "value", json_string("a"));
  json_object_set_new(b, "description", json_stringn_nocheck("\xc3\x28", 2));
  fields = NULL;
  out = sg__item_validate(b, &fields);
  assert_null(out);
  assert_true(has_path(fields, "description"));
  json_decref(fields);
  json_decref(b);
}

int main(void) {
  if (sg_init()) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_defaults), cmocka_unit_test(test_full),
      cmocka_unit_test(test_errors),   cmocka_unit_test(test_sizes),
      cmocka_unit_test(test_bcp47),    cmocka_unit_test(test_description),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
