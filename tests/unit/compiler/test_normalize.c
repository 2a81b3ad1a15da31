/* Normalisation of docs/DESIGN.md §3: NFKC, full case folding, marks stripped,
 * non-letter/number runs -> one space, trimmed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compiler/normalize.h"

static void expect(const char *in, const char *want) {
  char out[256];
  long n = sg_normalize_into(in, strlen(in), out, sizeof out);
  if (n < 0 || strcmp(out, want) != 0)
    fail_msg("normalize(%s) = %s (%ld), want %s", in, n >= 0 ? out : "", n, want);
  assert_int_equal((size_t)n, strlen(want));
  char *h;
  size_t hl;
  assert_int_equal(sg_normalize(in, strlen(in), &h, &hl), 0);
  assert_string_equal(h, want);
  assert_int_equal(hl, strlen(want));
  free(h);
}

static void test_diacritics(void **s) {
  (void)s;
  expect("Sant Julià de Lòria", "sant julia de loria");
  expect("ÅNGSTRÖM", "angstrom");
  expect("e\xcc\x81t\xc3\xa9", "ete"); /* combining acute and precomposed e-acute */
  expect("mañana", "manana");
  expect("naïve café", "naive cafe");
}

static void test_case_folding(void **s) {
  (void)s;
  expect("Straße", "strasse");
  expect("ß", "ss");
  expect("HELLO World", "hello world");
  expect("ΣΊΣΥΦΟΣ", "σισυφοσ");
  expect("Ǆemal", "dzemal");
  expect("ﬁle", "file"); /* NFKC of the ligature */
  expect("①②", "12");
  expect("Ｆｕｌｌｗｉｄｔｈ", "fullwidth");
}

static void test_punctuation_runs(void **s) {
  (void)s;
  expect("  Hello,   World!! ", "hello world");
  expect("rock&roll", "rock roll");
  expect("o'neil", "o neil");
  expect("a--b__c", "a b c");
  expect("!!!", "");
  expect("", "");
  expect("\t\na\r\n", "a");
  expect("a\xc2\xa0"
         "b",
         "a b"); /* NBSP */
}

static void test_cjk_hangul_emoji(void **s) {
  (void)s;
  expect("東京都 渋谷", "東京都 渋谷");
  expect("한국어", "한국어");
  expect("I ❤️ NY 🍕", "i ny"); /* emoji are symbols (So), not letters */
  expect("🍕pizza🍕", "pizza");
  expect("北京2024", "北京2024");
}

static void test_invalid_utf8(void **s) {
  (void)s;
  char out[64];
  assert_int_equal(sg_normalize_into("bad\xff", 4, out, sizeof out), -1);
  assert_int_equal(sg_normalize_into("\xc3", 1, out, sizeof out), -1);
  assert_int_equal(sg_normalize_into("\xed\xa0\x80", 3, out, sizeof out), -1); /* surrogate */
  assert_int_equal(sg_normalize_into("\xc0\xaf", 2, out, sizeof out), -1);     /* overlong */
  char *h;
  size_t hl;
  assert_int_equal(sg_normalize("x\xfe", 2, &h, &hl), -1);
}

static void test_small_buffer(void **s) {
  (void)s;
  char out[4];
  assert_int_equal(sg_normalize_into("hello", 5, out, sizeof out), -2);
  assert_int_equal(sg_normalize_into("héllo", 6, out, sizeof out), -2);
  assert_int_equal(sg_normalize_into("abc", 3, out, sizeof out), 3);
}

static void test_long_input(void **s) {
  (void)s;
  /* Longer than the stack scratch: falls back to the heap, same result. */
  size_t n = 3 * SG_NORMALIZE_STACK_CP;
  char *in = malloc(n * 2 + 1);
  for (size_t i = 0; i < n; i++) memcpy(in + 2 * i, "é", 2);
  in[2 * n] = '\0';
  char *out = malloc(n + 1);
  assert_int_equal(sg_normalize_into(in, 2 * n, out, n + 1), (long)n);
  for (size_t i = 0; i < n; i++) assert_int_equal(out[i], 'e');
  free(in);
  free(out);
}

static void test_idempotent_on_ascii_and_mixed(void **s) {
  (void)s;
  const char *cases[] = {"Sant Julià de Lòria", "Straße 12", "東京 ❤️ tokyo", "ǅ ǆ Ǆ", "x"};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char a[128], b[128];
    long n = sg_normalize_into(cases[i], strlen(cases[i]), a, sizeof a);
    assert_true(n >= 0);
    long m = sg_normalize_into(a, (size_t)n, b, sizeof b);
    assert_int_equal(n, m);
    assert_string_equal(a, b);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_diacritics),       cmocka_unit_test(test_case_folding),
      cmocka_unit_test(test_punctuation_runs), cmocka_unit_test(test_cjk_hangul_emoji),
      cmocka_unit_test(test_invalid_utf8),     cmocka_unit_test(test_small_buffer),
      cmocka_unit_test(test_long_input),       cmocka_unit_test(test_idempotent_on_ascii_and_mixed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
