/* Unit tests of the one error table (src/common/error.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "common/error.h"

static void test_every_row_is_complete(void **state) {
  (void)state;
  for (int e = 0; e < SG_E__COUNT; e++) {
    int st = sg_err_status((sg_err)e);
    assert_true(st >= 200 && st <= 599);
    assert_non_null(sg_err_code((sg_err)e));
    assert_true(strlen(sg_err_code((sg_err)e)) > 0);
    assert_non_null(sg_err_message((sg_err)e));
    assert_true(strlen(sg_err_message((sg_err)e)) > 0);
    assert_non_null(sg_err_name((sg_err)e));
    /* Codes are snake_case: clients switch on them. */
    for (const char *p = sg_err_code((sg_err)e); *p; p++)
      assert_true((*p >= 'a' && *p <= 'z') || *p == '_');
  }
}

static void test_spec_statuses(void **state) {
  (void)state;
  /* docs/DESIGN.md §4.3: the control-plane statuses. */
  assert_int_equal(sg_err_status(SG_E_INVALID_KEY), 401);
  assert_string_equal(sg_err_code(SG_E_INVALID_KEY), "invalid_key");
  assert_int_equal(sg_err_status(SG_E_INVALID_LIST), 404);
  assert_string_equal(sg_err_code(SG_E_INVALID_LIST), "invalid_list");
  assert_int_equal(sg_err_status(SG_E_INVALID_REQUEST), 400);
  assert_int_equal(sg_err_status(SG_E_PRECONDITION_FAILED), 412);
  assert_string_equal(sg_err_code(SG_E_PRECONDITION_FAILED), "invalid_request");
  assert_string_equal(sg_err_reason(SG_E_PRECONDITION_FAILED), "precondition_failed");
  assert_int_equal(sg_err_status(SG_E_IDEMPOTENCY_KEY_REUSED), 422);
  assert_string_equal(sg_err_reason(SG_E_IDEMPOTENCY_KEY_REUSED), "idempotency_key_reused");
  assert_int_equal(sg_err_status(SG_E_IDEMPOTENCY_KEY_IN_FLIGHT), 409);
  assert_string_equal(sg_err_reason(SG_E_IDEMPOTENCY_KEY_IN_FLIGHT), "idempotency_key_in_flight");
  assert_int_equal(sg_err_status(SG_E_RATE_LIMITED), 429);
  assert_string_equal(sg_err_code(SG_E_RATE_LIMITED), "rate_limited");
  assert_int_equal(sg_err_status(SG_E_TOKEN_MINTING_UNAVAILABLE), 503);
  assert_string_equal(sg_err_code(SG_E_TOKEN_MINTING_UNAVAILABLE), "internal_error");
  assert_string_equal(sg_err_reason(SG_E_TOKEN_MINTING_UNAVAILABLE), "token_minting_unavailable");
  assert_null(sg_err_reason(SG_E_INVALID_KEY));
  /* Runtime table. */
  assert_int_equal(sg_err_status(SG_E_QUERY_TOO_SHORT), 200);
  assert_int_equal(sg_err_status(SG_E_QUERY_TOO_LONG), 400);
  assert_int_equal(sg_err_status(SG_E_ORIGIN_NOT_ALLOWED), 403);
  assert_int_equal(sg_err_status(SG_E_QUOTA_EXCEEDED), 200);
}

static void test_out_of_range_is_internal(void **state) {
  (void)state;
  assert_string_equal(sg_err_code((sg_err)-1), "internal_error");
  assert_int_equal(sg_err_status((sg_err)SG_E__COUNT), 500);
  assert_int_equal(sg_err_status((sg_err)100000), 500);
  assert_string_equal(sg_err_name(SG_E_OK), "OK");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_row_is_complete),
      cmocka_unit_test(test_spec_statuses),
      cmocka_unit_test(test_out_of_range_is_internal),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
