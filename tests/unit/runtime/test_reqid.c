/* requestId derivation: deterministic, and sensitive to each input (src/runtime/reqid.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "common/util.h"
#include "runtime/rt.h"

static void rid(const char *k, const char *q, const char *loc, const char *h, char out[37]) {
  sg__reqid_derive(k, strlen(k), q, strlen(q), loc, h, 10, out, NULL);
}

static void test_deterministic(void **state) {
  char a[37], b[37];
  rid("pk_1", "an", "en", "sha256:00", a);
  rid("pk_1", "an", "en", "sha256:00", b);
  assert_string_equal(a, b);
  assert_int_equal(strlen(a), SG__REQID_LEN);
  assert_memory_equal(a, "req_", 4);
  for (int i = 4; i < SG__REQID_LEN; i++) assert_non_null(strchr("0123456789abcdef", a[i]));
}

static void test_each_input_counts(void **state) {
  char base[37], o[37];
  rid("pk_1", "an", "en", "sha256:00", base);
  rid("pk_2", "an", "en", "sha256:00", o);
  assert_string_not_equal(base, o);
  rid("pk_1", "and", "en", "sha256:00", o);
  assert_string_not_equal(base, o);
  rid("pk_1", "an", "fr", "sha256:00", o);
  assert_string_not_equal(base, o);
  rid("pk_1", "an", "en", "sha256:01", o);
  assert_string_not_equal(base, o);
  /* The limit counts (docs/DESIGN.md §3.2); each value gives its own id. */
  char l1[37], l2[37];
  sg__reqid_derive("pk_1", 4, "an", 2, "en", "sha256:00", 1, l1, NULL);
  sg__reqid_derive("pk_1", 4, "an", 2, "en", "sha256:00", 2, l2, NULL);
  assert_string_not_equal(base, l1);
  assert_string_not_equal(l1, l2);
  /* The separators keep the fields apart. */
  char x[37], y[37];
  rid("pk_1a", "n", "en", "h", x);
  rid("pk_1", "an", "en", "h", y);
  assert_string_not_equal(x, y);
}

/* within (docs/DESIGN.md §3.5): absent, the id is the one calls without it always had
 * (pinned); given, each value its own id, apart from every limit. */
static void test_within(void **state) {
  char base[37], none[37], w1[37], w2[37], wl[37];
  uint8_t t0[16], t1[16];
  rid("pk_1", "an", "en", "sha256:00", base);
  assert_string_equal(base, "req_6d5cb9d5915f280a1878555eb7cd1178");
  sg__reqid_derive_within("pk_1", 4, "an", 2, "en", "sha256:00", 10, NULL, 0, none, t0);
  assert_string_equal(base, none);
  const char *a = "itm_AAAAAAAAAAAAAAAAAAAAAA", *b = "itm_AAAAAAAAAAAAAAAAAAAAAB";
  sg__reqid_derive_within("pk_1", 4, "an", 2, "en", "sha256:00", 10, a, 26, w1, t1);
  sg__reqid_derive_within("pk_1", 4, "an", 2, "en", "sha256:00", 10, b, 26, w2, NULL);
  sg__reqid_derive_within("pk_1", 4, "an", 2, "en", "sha256:00", 3, a, 26, wl, NULL);
  assert_string_not_equal(base, w1);
  assert_string_not_equal(w1, w2);
  assert_string_not_equal(w1, wl);
  assert_memory_not_equal(t0, t1, 16); /* the ETag's tag moves with it */
}

static void test_random(void **state) {
  char a[37], b[37];
  sg__reqid_random(a);
  sg__reqid_random(b);
  assert_string_not_equal(a, b);
  assert_int_equal(strlen(a), SG__REQID_LEN);
}

int main(void) {
  if (sg_init()) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_deterministic),
      cmocka_unit_test(test_each_input_counts),
      cmocka_unit_test(test_within),
      cmocka_unit_test(test_random),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
