/* Unit tests of command-line flag parsing (src/common/args.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "common/args.h"

static const sg_flag_spec specs[] = {
    {"data-dir", true, false},      {"origin", true, true}, {"verbose", false, false},
    {"monthly-quota", true, false}, {NULL, false, false},
};

static int parse(sg_args *a, char **argv, int argc, char *err) {
  return sg_args_parse(a, argc, argv, specs, err, 256);
}

static void test_flags_before_and_after_positionals(void **state) {
  (void)state;
  char err[256];
  sg_args a;
  char *v1[] = {"workspace", "disable", "wsp_1", "--data-dir", "/d"};
  assert_int_equal(parse(&a, v1, 5, err), 0);
  assert_int_equal(a.npos, 3);
  assert_string_equal(a.pos[2], "wsp_1");
  assert_string_equal(sg_args_get(&a, "data-dir"), "/d");

  char *v2[] = {"--data-dir", "/d", "workspace", "disable", "wsp_1"};
  assert_int_equal(parse(&a, v2, 5, err), 0);
  assert_int_equal(a.npos, 3);
  assert_string_equal(a.pos[0], "workspace");
  assert_string_equal(a.pos[2], "wsp_1");
  assert_string_equal(sg_args_get(&a, "data-dir"), "/d");

  char *v3[] = {"workspace", "--data-dir=/e", "disable", "wsp_1"};
  assert_int_equal(parse(&a, v3, 4, err), 0);
  assert_int_equal(a.npos, 3);
  assert_string_equal(a.pos[1], "disable");
  assert_string_equal(sg_args_get(&a, "data-dir"), "/e");
}

static void test_equals_value_may_be_empty_or_contain_equals(void **state) {
  (void)state;
  char err[256];
  sg_args a;
  char *v[] = {"--data-dir=a=b"};
  assert_int_equal(parse(&a, v, 1, err), 0);
  assert_string_equal(sg_args_get(&a, "data-dir"), "a=b");
}

static void test_boolean_flag(void **state) {
  (void)state;
  char err[256];
  sg_args a;
  char *v[] = {"--verbose", "pos"};
  assert_int_equal(parse(&a, v, 2, err), 0);
  assert_true(sg_args_has(&a, "verbose"));
  assert_int_equal(a.npos, 1);
  assert_string_equal(a.pos[0], "pos");
  char *bad[] = {"--verbose=yes"};
  assert_int_equal(parse(&a, bad, 1, err), -1);
  assert_non_null(strstr(err, "verbose"));
}

static void test_errors(void **state) {
  (void)state;
  char err[256];
  sg_args a;
  char *unknown[] = {"--nope", "x"};
  assert_int_equal(parse(&a, unknown, 2, err), -1);
  assert_non_null(strstr(err, "nope"));
  char *missing[] = {"pos", "--data-dir"};
  assert_int_equal(parse(&a, missing, 2, err), -1);
  assert_non_null(strstr(err, "data-dir"));
  char *twice[] = {"--data-dir", "a", "--data-dir", "b"};
  assert_int_equal(parse(&a, twice, 4, err), -1);
  assert_non_null(strstr(err, "twice"));
  /* A prefix of a flag name is not that flag. */
  char *prefix[] = {"--data", "x"};
  assert_int_equal(parse(&a, prefix, 2, err), -1);
}

static void test_repeatable(void **state) {
  (void)state;
  char err[256];
  sg_args a;
  char *v[] = {"--origin", "https://a.example", "pos", "--origin=https://b.example"};
  assert_int_equal(parse(&a, v, 4, err), 0);
  assert_int_equal(sg_args_count(&a, "origin"), 2);
  assert_string_equal(sg_args_nth(&a, "origin", 0), "https://a.example");
  assert_string_equal(sg_args_nth(&a, "origin", 1), "https://b.example");
  assert_null(sg_args_nth(&a, "origin", 2));
  assert_int_equal(sg_args_count(&a, "data-dir"), 0);
}

static void test_double_dash_ends_flags(void **state) {
  (void)state;
  char err[256];
  sg_args a;
  char *v[] = {"--", "--data-dir", "x"};
  assert_int_equal(parse(&a, v, 3, err), 0);
  assert_int_equal(a.npos, 2);
  assert_string_equal(a.pos[0], "--data-dir");
  unsetenv("SUGGESTD_DATA_DIR");
  assert_null(sg_args_get(&a, "data-dir"));
}

static void test_environment_mirrors_flags(void **state) {
  (void)state;
  char err[256];
  sg_args a;
  char *none[] = {"pos"};
  assert_int_equal(parse(&a, none, 1, err), 0);
  setenv("SUGGESTD_DATA_DIR", "/from-env", 1);
  setenv("SUGGESTD_MONTHLY_QUOTA", "42", 1);
  assert_string_equal(sg_args_get(&a, "data-dir"), "/from-env");
  assert_string_equal(sg_args_get(&a, "monthly-quota"), "42");
  assert_string_equal(sg_args_get_or(&a, "data-dir", "dflt"), "/from-env");
  /* The flag wins over the environment. */
  char *flag[] = {"--data-dir", "/from-flag"};
  assert_int_equal(parse(&a, flag, 2, err), 0);
  assert_string_equal(sg_args_get(&a, "data-dir"), "/from-flag");
  /* An empty variable counts as absent. */
  setenv("SUGGESTD_DATA_DIR", "", 1);
  assert_int_equal(parse(&a, none, 1, err), 0);
  assert_null(sg_args_get(&a, "data-dir"));
  assert_string_equal(sg_args_get_or(&a, "data-dir", "dflt"), "dflt");
  unsetenv("SUGGESTD_DATA_DIR");
  unsetenv("SUGGESTD_MONTHLY_QUOTA");
  assert_false(sg_args_has(&a, "data-dir"));
}

static void test_too_many_arguments(void **state) {
  (void)state;
  char err[256];
  sg_args a;
  char *v[SG_ARGS_MAX + 1];
  for (int i = 0; i <= SG_ARGS_MAX; i++) v[i] = "p";
  assert_int_equal(parse(&a, v, SG_ARGS_MAX + 1, err), -1);
  char *f[2 * (SG_ARGS_MAX + 1)];
  for (int i = 0; i <= SG_ARGS_MAX; i++) {
    f[2 * i] = "--origin";
    f[2 * i + 1] = "o";
  }
  assert_int_equal(parse(&a, f, 2 * (SG_ARGS_MAX + 1), err), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_flags_before_and_after_positionals),
      cmocka_unit_test(test_equals_value_may_be_empty_or_contain_equals),
      cmocka_unit_test(test_boolean_flag),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_repeatable),
      cmocka_unit_test(test_double_dash_ends_flags),
      cmocka_unit_test(test_environment_mirrors_flags),
      cmocka_unit_test(test_too_many_arguments),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
