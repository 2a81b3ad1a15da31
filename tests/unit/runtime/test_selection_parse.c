/* Selection body validation (src/runtime/selection_parse.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "runtime/rt.h"

#define OK_BODY                                                                                    \
  "{\"key\":\"pk_x\",\"selectionId\":\"123E4567-e89b-12d3-a456-426614174000\","                    \
  "\"queryRequestId\":\"req_1\",\"listId\":\"lst_1\",\"itemId\":\"itm_1\",\"position\":3,"         \
  "\"query\":\"an\",\"extra\":{\"ignored\":true}}"

static const char *parse_bad_field(const char *body) {
  static char field[64];
  sg__selection s;
  sg_err e = sg__selection_parse(body, strlen(body), &s);
  assert_int_equal(e, SG_E_OK);
  snprintf(field, sizeof field, "%s", s.bad_field ? s.bad_field : "");
  sg__selection_free(&s);
  return field;
}

static void test_valid(void **state) {
  sg__selection s;
  assert_int_equal(sg__selection_parse(OK_BODY, strlen(OK_BODY), &s), SG_E_OK);
  assert_null(s.bad_field);
  assert_string_equal(s.key, "pk_x");
  assert_int_equal(s.key_len, 4);
  assert_string_equal(s.selection_id, "123e4567-e89b-12d3-a456-426614174000");
  assert_string_equal(s.list_id, "lst_1");
  assert_string_equal(s.item_id, "itm_1");
  assert_string_equal(s.query_request_id, "req_1");
  assert_string_equal(s.query, "an");
  assert_int_equal(s.position, 3);
  sg__selection_free(&s);
}

static void test_position(void **state) {
#define FMT                                                                                        \
  "{\"key\":\"k\",\"selectionId\":\"123e4567-e89b-12d3-a456-426614174000\","                       \
  "\"queryRequestId\":\"r\",\"listId\":\"l\",\"itemId\":\"i\"%s}"
  const char *bad[] = {"",
                       ",\"position\":0",
                       ",\"position\":-1",
                       ",\"position\":1.5",
                       ",\"position\":1.0",
                       ",\"position\":\"1\"",
                       ",\"position\":null",
                       ",\"position\":99999999999",
                       NULL};
  char body[512];
  for (int i = 0; bad[i]; i++) {
    snprintf(body, sizeof body, FMT, bad[i]);
    assert_string_equal(parse_bad_field(body), "position");
  }
  snprintf(body, sizeof body, FMT, ",\"position\":1");
  assert_string_equal(parse_bad_field(body), "");
}

static void test_fields(void **state) {
  assert_string_equal(parse_bad_field("{\"key\":\"k\"}"), "selectionId");
  assert_string_equal(parse_bad_field("{\"selectionId\":\"not-a-uuid\"}"), "selectionId");
  assert_string_equal(parse_bad_field("{\"selectionId\":\"123e4567e89b12d3a456426614174000\"}"),
                      "selectionId");
  assert_string_equal(parse_bad_field("{\"selectionId\":\"123e4567-e89b-12d3-a456-42661417400g\"}"),
                      "selectionId");
  assert_string_equal(parse_bad_field("{\"selectionId\":\"123e4567-e89b-12d3-a456-426614174000\","
                                      "\"queryRequestId\":\"\"}"),
                      "queryRequestId");
  assert_string_equal(parse_bad_field("{\"selectionId\":\"123e4567-e89b-12d3-a456-426614174000\","
                                      "\"queryRequestId\":\"r\",\"listId\":5}"),
                      "listId");
  assert_string_equal(parse_bad_field("{\"selectionId\":\"123e4567-e89b-12d3-a456-426614174000\","
                                      "\"queryRequestId\":\"r\",\"listId\":\"l\",\"itemId\":[]}"),
                      "itemId");
  assert_string_equal(parse_bad_field("{\"selectionId\":\"123e4567-e89b-12d3-a456-426614174000\","
                                      "\"queryRequestId\":\"r\",\"listId\":\"l\",\"itemId\":\"i\","
                                      "\"position\":1,\"query\":7}"),
                      "query");
  /* A missing key is not a field error: the handler answers invalid_key. */
  sg__selection s;
  assert_int_equal(sg__selection_parse("{\"key\":5}", 9, &s), SG_E_OK);
  assert_null(s.key);
  sg__selection_free(&s);
}

static void test_not_object(void **state) {
  const char *bad[] = {"", "[]", "\"x\"", "{", "null", "{\"a\":1,\"a\":2}", NULL};
  for (int i = 0; bad[i]; i++) {
    sg__selection s;
    assert_int_equal(sg__selection_parse(bad[i], strlen(bad[i]), &s), SG_E_INVALID_REQUEST);
    sg__selection_free(&s);
  }
  static char big[SG__SELECTION_MAX_BODY + 2];
  memset(big, ' ', sizeof big - 1);
  sg__selection s;
  assert_int_equal(sg__selection_parse(big, sizeof big - 1, &s), SG_E_PAYLOAD_TOO_LARGE);
  sg__selection_free(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_valid),
      cmocka_unit_test(test_position),
      cmocka_unit_test(test_fields),
      cmocka_unit_test(test_not_object),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
