#include "edge/edge_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

sgt_edge_fixture *sgt_edge_fixture_new(const char *spec, const char *tag) {
  sgt_edge_fixture *f = calloc(1, sizeof *f);
  assert_non_null(f);
  char p[300];
  if (!spec) {
    snprintf(f->root, sizeof f->root, "/tmp/sg-%s-XXXXXX", tag);
    assert_non_null(mkdtemp(f->root));
    snprintf(p, sizeof p, "%s/edge", f->root);
    spec = p;
  }
  assert_int_equal(sg_edge_open(spec, &f->e), 0);
  uint8_t r[4];
  sg_random_bytes(r, sizeof r);
  char hex[9];
  sg_hex(r, sizeof r, hex);
  snprintf(f->prefix, sizeof f->prefix, "t%s_", hex);
  return f;
}

int sgt_edge_fixture_free(sgt_edge_fixture *f) {
  sg_edge_close(f->e);
  int rc = 0;
  if (f->root[0]) {
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->root);
    rc = system(cmd) == 0 ? 0 : -1;
  }
  free(f);
  return rc;
}
