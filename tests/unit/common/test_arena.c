/* Unit tests of the bump arena (src/common/arena.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "common/arena.h"

static void test_strings_and_alignment(void **state) {
  sg_arena a = SG_ARENA_INIT;
  char *s[5000];
  for (int i = 0; i < 5000; i++) {
    char tmp[32];
    snprintf(tmp, sizeof tmp, "item-%d", i);
    s[i] = sg_arena_strdup(&a, tmp);
    assert_non_null(s[i]);
    assert_int_equal((uintptr_t)s[i] % 8, 0);
  }
  for (int i = 0; i < 5000; i++) {
    char tmp[32];
    snprintf(tmp, sizeof tmp, "item-%d", i);
    assert_string_equal(s[i], tmp);
  }
  assert_null(sg_arena_strdup(&a, NULL));
  assert_string_equal(sg_arena_strndup(&a, "abcdef", 3), "abc");
  /* An allocation bigger than a chunk gets its own. */
  char *big = sg_arena_alloc(&a, 3u << 20);
  assert_non_null(big);
  memset(big, 1, 3u << 20);
  assert_string_equal(s[4999], "item-4999");
  sg_arena_free(&a);
  assert_null(a.head);
  assert_int_equal(a.total, 0);
  /* Reusable after free. */
  assert_string_equal(sg_arena_strdup(&a, "again"), "again");
  sg_arena_free(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_strings_and_alignment)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
