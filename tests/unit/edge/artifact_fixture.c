/* A real compiled artifact for the edge tests (artifact_fixture.h). */
#include "edge/artifact_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>

#include "common/util.h"
#include "compiler/compiler.h"

void sg_test_artifact(size_t n, unsigned salt, sg_buf *out, char hash[72]) {
  sg_compile_item *it = calloc(n, sizeof *it);
  char(*text)[2][48] = calloc(n, sizeof *text);
  assert_non_null(it);
  assert_non_null(text);
  for (size_t i = 0; i < n; i++) {
    snprintf(text[i][0], sizeof text[i][0], "itm_%u_%zu", salt, i);
    snprintf(text[i][1], sizeof text[i][1], "place %u number %zu", salt, i);
    it[i].id = text[i][0];
    it[i].value = text[i][1];
    it[i].display_value = text[i][1];
    it[i].rank = (int64_t)(i % 100);
  }
  const char *const locs[] = {"en"};
  sg_compile_opts opts = {"en", locs, 1, 0};
  sg_buf_init(out, 0);
  assert_int_equal(sg_compile(it, n, &opts, out), 0);
  sg_sha256_tagged(out->data, out->len, hash);
  free(it);
  free(text);
}
