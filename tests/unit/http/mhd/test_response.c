/* Unit tests of the control-plane error body and response helpers (src/http/mhd/response.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http/mhd/http.h"

static const char *header(const sg_resp *r, const char *name) {
  for (size_t i = 0; i < r->nheaders; i++)
    if (strcasecmp(r->hname[i], name) == 0) return r->hvalue[i];
  return NULL;
}

static void resp_init(sg_resp *r) {
  memset(r, 0, sizeof *r);
  sg_buf_init(&r->body, 0);
}

static void resp_free(sg_resp *r) {
  sg_buf_free(&r->body);
  for (size_t i = 0; i < r->nheaders; i++) {
    free(r->hname[i]);
    free(r->hvalue[i]);
  }
}

static void test_every_error_has_the_full_body(void **state) {
  (void)state;
  sg_req req;
  memset(&req, 0, sizeof req);
  snprintf(req.request_id, sizeof req.request_id, "req_\"odd\\id");
  for (int e = 1; e < SG_E__COUNT; e++) {
    sg_resp r;
    resp_init(&r);
    sg_resp_error(&r, &req, (sg_err)e, NULL, NULL);
    assert_int_equal(r.status, sg_err_status((sg_err)e));
    json_t *b = json_loads(r.body.data, 0, NULL);
    assert_non_null(b);
    assert_int_equal(json_object_size(b), 6);
    assert_string_equal(json_string_value(json_object_get(b, "code")), sg_err_code((sg_err)e));
    assert_string_equal(json_string_value(json_object_get(b, "requestId")), req.request_id);
    assert_true(json_is_string(json_object_get(b, "message")));
    assert_true(json_is_string(json_object_get(b, "docsUrl")));
    assert_true(json_string_length(json_object_get(b, "remediation")) > 0);
    json_t *d = json_object_get(b, "details");
    assert_true(json_is_object(d));
    const char *reason = sg_err_reason((sg_err)e);
    if (reason)
      assert_string_equal(json_string_value(json_object_get(d, "reason")), reason);
    else
      assert_int_equal(json_object_size(d), 0);
    if (e == SG_E_INVALID_KEY)
      assert_string_equal(header(&r, "WWW-Authenticate"), "Bearer");
    else
      assert_null(header(&r, "WWW-Authenticate"));
    if (e == SG_E_RATE_LIMITED) assert_string_equal(header(&r, "retry-after"), "60");
    json_decref(b);
    resp_free(&r);
  }
}

static void test_invalid_fields(void **state) {
  (void)state;
  sg_req req;
  memset(&req, 0, sizeof req);
  snprintf(req.request_id, sizeof req.request_id, "r1");
  json_t *f = NULL;
  sg_field_error(&f, "limit", "must be an integer from 1 to 100");
  sg_field_error(&f, "cursor", "malformed");
  sg_resp r;
  resp_init(&r);
  sg_resp_invalid_fields(&r, &req, f);
  assert_int_equal(r.status, 400);
  json_t *b = json_loads(r.body.data, 0, NULL);
  json_t *fields = json_object_get(json_object_get(b, "details"), "fields");
  assert_int_equal(json_array_size(fields), 2);
  assert_string_equal(json_string_value(json_object_get(json_array_get(fields, 0), "path")),
                      "limit");
  assert_string_equal(json_string_value(json_object_get(json_array_get(fields, 1), "path")),
                      "cursor");
  json_decref(b);
  resp_free(&r);
  /* No fields at all still gives an (empty) array, never a missing member. */
  resp_init(&r);
  sg_resp_invalid_fields(&r, &req, NULL);
  b = json_loads(r.body.data, 0, NULL);
  assert_true(json_is_array(json_object_get(json_object_get(b, "details"), "fields")));
  json_decref(b);
  resp_free(&r);
}

static void test_too_large_states_the_limit(void **state) {
  (void)state;
  static const struct {
    uint64_t limit;
    const char *says;
  } cases[] = {{1u << 20, "at most 1 MiB."},
               {1000, "at most 1000 bytes."},
               {(1u << 20) + 1, "at most 1048577 bytes."}};
  sg_req req;
  memset(&req, 0, sizeof req);
  snprintf(req.request_id, sizeof req.request_id, "r1");
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    sg_resp r;
    resp_init(&r);
    sg_resp_too_large(&r, &req, cases[i].limit);
    assert_int_equal(r.status, 413);
    json_t *b = json_loads(r.body.data, 0, NULL);
    json_t *d = json_object_get(b, "details");
    assert_string_equal(json_string_value(json_object_get(d, "reason")), "payload_too_large");
    assert_int_equal(json_integer_value(json_object_get(d, "limitBytes")), cases[i].limit);
    assert_non_null(strstr(json_string_value(json_object_get(b, "message")), cases[i].says));
    json_decref(b);
    resp_free(&r);
  }
}

static void test_header_cap(void **state) {
  (void)state;
  sg_resp r;
  resp_init(&r);
  for (int i = 0; i < SG_HTTP_MAX_HEADERS + 5; i++) sg_resp_header(&r, "X-A", "v");
  assert_int_equal(r.nheaders, SG_HTTP_MAX_HEADERS);
  resp_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_error_has_the_full_body),
      cmocka_unit_test(test_invalid_fields),
      cmocka_unit_test(test_too_large_states_the_limit),
      cmocka_unit_test(test_header_cap),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
