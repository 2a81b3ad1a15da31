#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>

#include "store_fixture.h"

int store_fixture_setup(void **state) {
  store_fixture *f = calloc(1, sizeof *f);
  assert_non_null(f);
  snprintf(f->dir, sizeof f->dir, "/tmp/sg-store-test-XXXXXX");
  assert_non_null(mkdtemp(f->dir));
  char err[256];
  assert_int_equal(sg_store_open(f->dir, &f->st, err, sizeof err), 0);
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
