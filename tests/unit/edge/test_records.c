/* The edge record codec (src/edge/records.c): what writers store and the runtime reads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edge/records.h"

static json_t *parse(const char *s) {
  json_t *o = json_loads(s, 0, NULL);
  assert_non_null(o);
  return o;
}

static void test_list_round_trip(void **state) {
  (void)state;
  json_t *src = parse("{\"id\":\"lst_1\",\"name\":\"Cities\",\"workspaceId\":\"wsp_1\","
                      "\"visibility\":\"shared\",\"status\":\"active\",\"etag\":\"x\","
                      "\"queryPolicy\":{\"minQueryChars\":2,\"debounceMs\":90,"
                      "\"typoTolerance\":{\"enabled\":false,\"minCharsOneTypo\":5,"
                      "\"minCharsTwoTypos\":9}},"
                      "\"localePolicy\":{\"defaultLocale\":\"fr\",\"supportedLocales\":[\"fr\"]},"
                      "\"activeVersionNumber\":3,\"activeContentHash\":\"sha256:ab\"}");
  char *json;
  size_t len;
  assert_int_equal(sg_edge_record_encode(SG_EDGE_LIST, src, 0, &json, &len), 0);
  /* Only what the runtime serves: the name and the ETag stay in the control plane. */
  assert_null(strstr(json, "Cities"));
  assert_null(strstr(json, "etag"));
  json_t *o = parse(json);
  sg_edge_list_rec r;
  assert_int_equal(sg_edge_list_decode(o, "other", &r), 0);
  assert_string_equal(r.id, "lst_1");
  assert_string_equal(r.workspace_id, "wsp_1");
  assert_int_equal(r.visibility, SG_EDGE_VIS_SHARED);
  assert_false(r.archived);
  assert_string_equal(r.content_hash, "sha256:ab");
  assert_int_equal(r.min_query_chars, 2);
  assert_int_equal(r.debounce_ms, 90);
  assert_false(r.typo.enabled);
  assert_int_equal(r.typo.min_one, 5);
  assert_int_equal(r.typo.min_two, 9);
  assert_string_equal(r.default_locale, "fr");
  assert_int_equal(json_array_size(r.supported_locales), 1);
  json_decref(o);
  free(json);
  json_decref(src);
}

static void test_list_defaults_and_refusals(void **state) {
  (void)state;
  json_t *o = parse("{\"visibility\":\"weird\",\"queryPolicy\":{\"minQueryChars\":99,"
                    "\"debounceMs\":-4,\"typoTolerance\":{\"minCharsOneTypo\":9,"
                    "\"minCharsTwoTypos\":3}}}");
  sg_edge_list_rec r;
  assert_int_equal(sg_edge_list_decode(o, "lst_f", &r), 0);
  assert_string_equal(r.id, "lst_f");
  assert_int_equal(r.visibility, SG_EDGE_VIS_PRIVATE);
  assert_int_equal(r.min_query_chars, 32);
  assert_int_equal(r.debounce_ms, 0);
  assert_true(r.typo.enabled && r.typo.min_one == 4 && r.typo.min_two == 8);
  assert_string_equal(r.default_locale, "en");
  assert_null(r.content_hash);
  json_decref(o);
  o = parse("{\"id\":\"lst_2\",\"status\":\"deleted\"}");
  assert_int_equal(sg_edge_list_decode(o, "lst_2", &r), 1);
  json_decref(o);
}

static void test_signing_keys(void **state) {
  (void)state;
  /* 32 zero bytes, base64url without padding. */
  const char *pk = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
  char src_text[256];
  snprintf(src_text, sizeof src_text,
           "{\"kid\":\"k1\",\"alg\":\"EdDSA\",\"publicKey\":\"%s\",\"retiredAtUnix\":1000}", pk);
  json_t *src = parse(src_text);
  char *json;
  size_t len;
  /* Retired within the keep window: kept, without the retirement time. */
  assert_int_equal(sg_edge_record_encode(SG_EDGE_SIGNING_KEY, src, 1000 + 60, &json, &len), 0);
  assert_null(strstr(json, "retiredAtUnix"));
  json_t *o = parse(json);
  sg_edge_signing_key_rec r;
  assert_int_equal(sg_edge_signing_key_decode(o, &r), 0);
  assert_string_equal(r.kid, "k1");
  json_decref(o);
  free(json);
  /* Past it: the record leaves the edge. */
  assert_int_equal(sg_edge_record_encode(SG_EDGE_SIGNING_KEY, src,
                                         1000 + SG_EDGE_SIGNING_KEY_KEEP_S + 1, &json, &len),
                   1);
  json_decref(src);
  o = parse("{\"kid\":\"k2\",\"publicKey\":\"c2hvcnQ\"}");
  assert_int_equal(sg_edge_signing_key_decode(o, &r), 1);
  json_decref(o);
}

static void test_other_kinds(void **state) {
  (void)state;
  json_t *o = parse("{\"id\":\"pk_1\",\"applicationId\":\"app_1\",\"listId\":\"lst_1\","
                    "\"origins\":[\"https://a.example\"],\"status\":\"revoked\"}");
  sg_edge_key_rec k;
  assert_int_equal(sg_edge_key_decode(o, &k), 0);
  assert_string_equal(k.application_id, "app_1");
  assert_false(k.active);
  assert_int_equal(json_array_size(k.origins), 1);
  json_decref(o);
  o = parse("{\"workspaceId\":\"wsp_1\",\"status\":\"active\",\"monthlyQuota\":500}");
  sg_edge_app_rec a;
  assert_int_equal(sg_edge_app_decode(o, "app_9", &a), 0);
  assert_string_equal(a.id, "app_9");
  assert_true(a.active && a.limited && a.monthly_quota == 500);
  assert_int_equal(sg_edge_app_decode(o, "../x", &a), 1); /* names a quota counter */
  json_decref(o);
  o = parse("{\"workspaceId\":\"wsp_1\",\"status\":\"active\"}");
  sg_edge_subscription_rec sr;
  assert_int_equal(sg_edge_subscription_decode(o, &sr), 1); /* no list */
  json_decref(o);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_list_round_trip),
      cmocka_unit_test(test_list_defaults_and_refusals),
      cmocka_unit_test(test_signing_keys),
      cmocka_unit_test(test_other_kinds),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
