#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_fixture.h"

void store_test_spec(const char *dir, char *out, size_t outsz) {
  const char *env = getenv("SUGGESTD_TEST_STORE");
  if (!env || !*env) {
    snprintf(out, outsz, "%s", dir);
    return;
  }
  /* The unique part of dir: its last component, with characters every backend accepts
   * in a name. */
  const char *slash = strrchr(dir, '/');
  char name[128];
  snprintf(name, sizeof name, "%s", slash ? slash + 1 : dir);
  for (char *p = name; *p; p++)
    if (*p == '-') *p = '_';
  size_t n = 0;
  for (const char *p = env; *p && n + 1 < outsz; p++) {
    if (p[0] == '%' && p[1] == 's') {
      n += (size_t)snprintf(out + n, outsz - n, "%s", name);
      if (n >= outsz) n = outsz - 1;
      p++;
    } else {
      out[n++] = *p;
    }
  }
  out[n] = '\0';
}

int store_test_open(const char *dir, sg_store **st) {
  char spec[1024], err[256];
  store_test_spec(dir, spec, sizeof spec);
  if (sg_store_open(spec, st, err, sizeof err)) {
    fprintf(stderr, "store_test_open %s: %s\n", spec, err);
    return -1;
  }
  return 0;
}

int store_fixture_setup(void **state) {
  store_fixture *f = calloc(1, sizeof *f);
  assert_non_null(f);
  snprintf(f->dir, sizeof f->dir, "/tmp/sg-store-test-XXXXXX");
  assert_non_null(mkdtemp(f->dir));
  assert_int_equal(store_test_open(f->dir, &f->st), 0);
  json_t *o;
  assert_int_equal(sg_store_workspace_create(f->st, "W", &o), SG_E_OK);
  snprintf(f->ws, sizeof f->ws, "%s", json_string_value(json_object_get(o, "id")));
  json_decref(o);
  assert_int_equal(sg_store_list_create(f->st, f->ws, "L", NULL, &o), SG_E_OK);
  snprintf(f->list, sizeof f->list, "%s", json_string_value(json_object_get(o, "id")));
  json_decref(o);
  *state = f;
  return 0;
}

int store_fixture_teardown(void **state) {
  store_fixture *f = *state;
  sg_store_close(f->st);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
  int rc = system(cmd);
  free(f);
  return rc == 0 ? 0 : -1;
}
