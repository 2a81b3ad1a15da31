/* Unit tests of the store's durable artifact copies (store.h, "durable artifact copies";
 * src/store/postgres/artifacts.c) and of the edge outbox walk (sg_store_edge_records).
 * Backend-neutral: a store that keeps no copies (SQLite) must say so and refuse the
 * calls; one that keeps them (PostgreSQL: SUGGESTD_TEST_STORE) must round-trip bytes
 * across chunk boundaries, keep a copy whole, refresh it on a repeated put and delete it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/util.h"
#include "store_fixture.h"

static int collect(const void *data, size_t len, void *ctx) {
  return sg_buf_append(ctx, data, len);
}

typedef struct {
  const char *hex;
  int found;
  int64_t written_at;
} find_ctx;

static int find(const char *hex, int64_t written_at, void *arg) {
  find_ctx *x = arg;
  if (strcmp(hex, x->hex) == 0) {
    x->found++;
    x->written_at = written_at;
  }
  return 0;
}

/* Bytes that differ at every offset, so a chunk out of order or repeated shows. */
static uint8_t *pattern(size_t n) {
  uint8_t *p = malloc(n);
  assert_non_null(p);
  uint32_t x = 2463534242u;
  for (size_t i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    p[i] = (uint8_t)x;
  }
  return p;
}

static void round_trip(store_fixture *f, size_t n) {
  uint8_t *data = pattern(n);
  char hash[72];
  sg_sha256_tagged(data, n, hash);
  assert_int_equal(sg_store_artifact_put(f->st, hash, data, n), SG_E_OK);
  sg_buf b;
  sg_buf_init(&b, 0);
  uint64_t size = 0;
  assert_int_equal(sg_store_artifact_get(f->st, hash, &size, collect, &b), SG_E_OK);
  assert_int_equal(size, n);
  assert_int_equal(b.len, n);
  assert_memory_equal(b.data, data, n);
  find_ctx x = {hash + 7, 0, 0};
  assert_int_equal(sg_store_artifacts(f->st, find, &x), SG_E_OK);
  assert_int_equal(x.found, 1);
  assert_true(x.written_at > 0);
  sg_buf_free(&b);
  free(data);
}

static void test_copies(void **state) {
  store_fixture *f = *state;
  const char *h0 = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
  if (!sg_store_keeps_artifacts(f->st)) {
    /* SQLite: the edge directory is the durable copy; the calls refuse. */
    uint8_t one = 1;
    assert_int_equal(sg_store_artifact_put(f->st, h0, &one, 1), SG_E_INTERNAL);
    sg_buf b;
    sg_buf_init(&b, 0);
    assert_int_equal(sg_store_artifact_get(f->st, h0, NULL, collect, &b), SG_E_INTERNAL);
    assert_int_equal(sg_store_artifact_delete(f->st, h0), SG_E_INTERNAL);
    return;
  }
  sg_buf b;
  sg_buf_init(&b, 0);
  /* Absent, and a malformed name is absent too. */
  assert_int_equal(sg_store_artifact_get(f->st, h0, NULL, collect, &b), SG_E_NOT_FOUND);
  assert_int_equal(sg_store_artifact_get(f->st, "sha256:xyz", NULL, collect, &b), SG_E_NOT_FOUND);
  assert_int_equal(sg_store_artifact_delete(f->st, h0), SG_E_NOT_FOUND);
  uint8_t one = 1;
  assert_int_equal(sg_store_artifact_put(f->st, "sha256:XYZ", &one, 1), SG_E_INTERNAL);
  /* Small, exactly one chunk (4 MiB), and several chunks with a short last one. */
  round_trip(f, 1);
  round_trip(f, (size_t)4 << 20);
  round_trip(f, ((size_t)9 << 20) + 12345);
  /* A repeated put keeps one whole copy; delete removes it. */
  size_t n = ((size_t)5 << 20) + 7;
  uint8_t *data = pattern(n);
  char hash[72];
  sg_sha256_tagged(data, n, hash);
  assert_int_equal(sg_store_artifact_put(f->st, hash, data, n), SG_E_OK);
  assert_int_equal(sg_store_artifact_put(f->st, hash, data, n), SG_E_OK);
  assert_int_equal(sg_store_artifact_get(f->st, hash, NULL, collect, &b), SG_E_OK);
  assert_int_equal(b.len, n);
  assert_memory_equal(b.data, data, n);
  assert_int_equal(sg_store_artifact_delete(f->st, hash), SG_E_OK);
  assert_int_equal(sg_store_artifact_get(f->st, hash, NULL, collect, &b), SG_E_NOT_FOUND);
  find_ctx x = {hash + 7, 0, 0};
  assert_int_equal(sg_store_artifacts(f->st, find, &x), SG_E_OK);
  assert_int_equal(x.found, 0);
  /* A callback that stops the read is an error, not a short copy. */
  assert_int_equal(sg_store_artifact_put(f->st, hash, data, n), SG_E_OK);
  sg_buf tiny;
  sg_buf_init(&tiny, 1024);
  assert_int_equal(sg_store_artifact_get(f->st, hash, NULL, collect, &tiny), SG_E_INTERNAL);
  sg_buf_free(&tiny);
  sg_buf_free(&b);
  free(data);
}

/* Every outbox row comes back once, in (kind, id) order, across pages. */
static void test_edge_records_walk_every_record(void **state) {
  store_fixture *f = *state;
  json_t *o;
  for (int i = 0; i < 5; i++) {
    assert_int_equal(sg_store_list_create(f->st, f->ws, "More", NULL, &o), SG_E_OK);
    json_decref(o);
  }
  sg_edge_dirty all[64], page[2];
  size_t total = 0, n = 0;
  assert_int_equal(sg_store_edge_records(f->st, "", "", all, 64, &total), SG_E_OK);
  assert_true(total >= 7); /* the workspace and six lists */
  size_t seen = 0;
  char kind[24] = "", id[129] = "";
  do {
    assert_int_equal(sg_store_edge_records(f->st, kind, id, page, 2, &n), SG_E_OK);
    for (size_t i = 0; i < n; i++, seen++) {
      assert_string_equal(page[i].kind, all[seen].kind);
      assert_string_equal(page[i].id, all[seen].id);
      assert_true(page[i].gen >= 1);
    }
    if (n) {
      snprintf(kind, sizeof kind, "%s", page[n - 1].kind);
      snprintf(id, sizeof id, "%s", page[n - 1].id);
    }
  } while (n == 2);
  assert_int_equal(seen, total);
  size_t lists = 0;
  for (size_t i = 0; i < total; i++) {
    if (i)
      assert_true(
          strcmp(all[i - 1].kind, all[i].kind) < 0 ||
          (strcmp(all[i - 1].kind, all[i].kind) == 0 && strcmp(all[i - 1].id, all[i].id) < 0));
    if (strcmp(all[i].kind, "lists") == 0) lists++;
  }
  assert_int_equal(lists, 6);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_copies, store_fixture_setup, store_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_edge_records_walk_every_record, store_fixture_setup,
                                      store_fixture_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
