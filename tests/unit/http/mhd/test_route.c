/* Unit tests of the route tables both control-listener routers use
 * (src/http/mhd/route.c): pattern matching with captured parameters, and a request's
 * row, its 405 with the Allow header, or its 404. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "http/mhd/route.h"

static void resp_free(sg_resp *r) {
  sg_buf_free(&r->body);
  for (size_t i = 0; i < r->nheaders; i++) {
    free(r->hname[i]);
    free(r->hvalue[i]);
  }
  memset(r, 0, sizeof *r);
}

static const char *header(const sg_resp *r, const char *name) {
  for (size_t i = 0; i < r->nheaders; i++)
    if (strcmp(r->hname[i], name) == 0) return r->hvalue[i];
  return NULL;
}

static void test_match_captures_segments(void **state) {
  (void)state;
  sg_req req = {0};
  char scratch[128];
  assert_true(sg__route_match("/api/v1/lists/{}/items/{}", "/api/v1/lists/lst_1/items/itm_2",
                              scratch, sizeof scratch, &req));
  assert_int_equal(req.nparams, 2);
  assert_string_equal(req.params[0], "lst_1");
  assert_string_equal(req.params[1], "itm_2");
  assert_true(sg__route_match("/api/v1/lists", "/api/v1/lists", scratch, sizeof scratch, &req));
  assert_int_equal(req.nparams, 0);
}

static void test_match_refuses(void **state) {
  (void)state;
  sg_req req = {0};
  char scratch[32];
  /* A trailing slash, a missing or an extra segment, an empty parameter, another word. */
  assert_false(sg__route_match("/api/v1/lists", "/api/v1/lists/", scratch, sizeof scratch, &req));
  assert_false(sg__route_match("/api/v1/lists/{}", "/api/v1/lists", scratch, sizeof scratch, &req));
  assert_false(sg__route_match("/a/{}", "/a/b/c", scratch, sizeof scratch, &req));
  assert_false(sg__route_match("/a/{}/b", "/a//b", scratch, sizeof scratch, &req));
  assert_false(sg__route_match("/a/bc", "/a/bd", scratch, sizeof scratch, &req));
  assert_false(sg__route_match("/a/bc", "/a/b", scratch, sizeof scratch, &req));
  /* More parameters than a request holds. */
  assert_false(sg__route_match("/{}/{}/{}/{}/{}", "/a/b/c/d/e", scratch, sizeof scratch, &req));
  /* A path longer than the scratch copy. */
  char scratch4[4];
  assert_false(sg__route_match("/{}", "/abcd", scratch4, sizeof scratch4, &req));
}

typedef struct {
  const char *method;
  const char *pattern;
  int id;
} row;

static const row table[] = {
    {"GET", "/lists", 1},      {"POST", "/lists", 2}, {"GET", "/lists/{}", 3},
    {"PATCH", "/lists/{}", 4}, {NULL, NULL, 0},
};

static void test_find_row_405_404(void **state) {
  (void)state;
  sg_req req = {.method = "PATCH", .path = "/lists/lst_9", .request_id = "req_1"};
  sg_resp resp = {0};
  const row *r = sg__route_find(&req, &resp, table, sizeof table[0]);
  assert_non_null(r);
  assert_int_equal(r->id, 4);
  assert_int_equal(req.nparams, 1);
  assert_string_equal(req.params[0], "lst_9");
  assert_string_equal(req.route, "/lists/{}");
  assert_int_equal(resp.status, 0);

  req = (sg_req){.method = "DELETE", .path = "/lists/lst_9", .request_id = "req_2"};
  assert_null(sg__route_find(&req, &resp, table, sizeof table[0]));
  assert_int_equal(resp.status, 405);
  assert_string_equal(header(&resp, "Allow"), "GET, PATCH");
  assert_string_equal(req.route, "/lists/{}"); /* the 405 is counted on the path's route */
  resp_free(&resp);

  req = (sg_req){.method = "GET", .path = "/nowhere", .request_id = "req_3"};
  assert_null(sg__route_find(&req, &resp, table, sizeof table[0]));
  assert_int_equal(resp.status, 404);
  assert_null(header(&resp, "Allow"));
  assert_null(req.route);
  resp_free(&resp);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_match_captures_segments),
      cmocka_unit_test(test_match_refuses),
      cmocka_unit_test(test_find_row_405_404),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
