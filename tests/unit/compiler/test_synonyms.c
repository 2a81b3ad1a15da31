/*
 * The synonym rule of docs/DESIGN.md §3.4 on hand-made examples (the property test
 * compares it with the brute force on random lists): equivalent and one-way sets, whole
 * words only, the first occurrence, no chaining, duplicates dropped, at most 20.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compiler/synonyms.h"

/* Expands the candidates (already normalised) and joins the results with '|'. */
static char *expand(const sg_synonym_set *sets, size_t n, const char *const *cand, size_t nc) {
  sg__synonyms *sy = sg__synonyms_new(sets, n);
  assert_non_null(sy);
  sg__span sp[8];
  for (size_t i = 0; i < nc; i++) sp[i] = (sg__span){cand[i], (uint32_t)strlen(cand[i])};
  sg__synonym_out out = {.n = 0};
  sg_buf_init(&out.text, 0);
  assert_int_equal(sg__synonyms_expand(sy, sp, nc, &out), 0);
  static char joined[8192];
  joined[0] = '\0';
  for (size_t i = 0; i < out.n; i++) {
    if (i) strcat(joined, "|");
    strncat(joined, out.text.data + out.off[i], out.len[i]);
  }
  sg_buf_free(&out.text);
  sg__synonyms_free(sy);
  return joined;
}

static void test_equivalent_replaces_with_every_other_phrase(void **state) {
  (void)state;
  const char *ph[] = {"NYC", "New York City", "Big Apple"};
  sg_synonym_set s = {NULL, ph, 3};
  const char *c[] = {"hotels in new york city"};
  assert_string_equal(expand(&s, 1, c, 1), "hotels in nyc|hotels in big apple");
  const char *d[] = {"nyc hotels"};
  assert_string_equal(expand(&s, 1, d, 1), "new york city hotels|big apple hotels");
}

static void test_one_way_only_from_the_phrases_to_the_input(void **state) {
  (void)state;
  const char *ph[] = {"television", "telly"};
  sg_synonym_set s = {"TV", ph, 2};
  const char *c[] = {"samsung television"};
  assert_string_equal(expand(&s, 1, c, 1), "samsung tv");
  const char *d[] = {"tv stand"}; /* the input itself is never replaced */
  assert_string_equal(expand(&s, 1, d, 1), "");
}

static void test_whole_words_first_occurrence_no_chaining(void **state) {
  (void)state;
  const char *a[] = {"st", "saint"};
  const char *b[] = {"saint", "san"};
  sg_synonym_set s[] = {{NULL, a, 2}, {NULL, b, 2}};
  /* "st" inside "street" is not a word; only the first "st" is replaced; "saint" made by
   * the first set is not replaced again by the second (no chaining). */
  const char *c[] = {"street st louis st"};
  assert_string_equal(expand(s, 2, c, 1), "street saint louis st");
  /* Candidates in order (displayValue, then aliases), sets in order within each. */
  const char *d[] = {"saint paul", "st paul"};
  assert_string_equal(expand(s, 2, d, 2), "san paul");
}

static void test_duplicates_and_candidates_dropped_and_20_at_most(void **state) {
  (void)state;
  const char *ph[] = {"a", "b", "c"};
  sg_synonym_set s = {NULL, ph, 3};
  /* "b x" equals the alias; "c x" comes once although both candidates make it. */
  const char *c[] = {"a x", "b x"};
  assert_string_equal(expand(&s, 1, c, 2), "c x");
  const char *many[21];
  char buf[21][16];
  for (unsigned i = 0; i < 21; i++) {
    snprintf(buf[i], sizeof buf[i], "w%u", i);
    many[i] = buf[i];
  }
  sg_synonym_set big = {NULL, many, 21};
  const char *d[] = {"w0 z"};
  char *got = expand(&big, 1, d, 1);
  size_t bars = 0;
  for (char *p = got; *p; p++) bars += *p == '|';
  assert_int_equal(bars, SG_SYNONYM_ALIASES_MAX - 1);
  assert_true(strncmp(got, "w1 z|w2 z|", 10) == 0);
  assert_non_null(strstr(got, "|w20 z"));
}

static void test_phrases_are_normalised(void **state) {
  (void)state;
  const char *ph[] = {"Café", "COFFEE-shop"};
  sg_synonym_set s = {NULL, ph, 2};
  const char *c[] = {"the coffee shop"};
  assert_string_equal(expand(&s, 1, c, 1), "the cafe");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_equivalent_replaces_with_every_other_phrase),
      cmocka_unit_test(test_one_way_only_from_the_phrases_to_the_input),
      cmocka_unit_test(test_whole_words_first_occurrence_no_chaining),
      cmocka_unit_test(test_duplicates_and_candidates_dropped_and_20_at_most),
      cmocka_unit_test(test_phrases_are_normalised),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
