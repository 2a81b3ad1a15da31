/* Unit tests of the SQLite store's reader pool (src/store/sqlite/core.c): pure reads go to
 * read-only WAL connections, so they answer while a write holds the store's lock and an
 * open write transaction (as an import's apply does for ~10 s per million items). This
 * test reaches into the backend's internals (sqlite_store.h) to play that writer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/util.h"
#include "store/sqlite/sqlite_store.h"

/* How long the writer holds on at most (it lets go earlier when told), and how long a
 * read may take while it does: far apart, so the test cannot flake on a slow machine and
 * a read that waited for the writer cannot pass. */
#define WRITER_HOLD_S 6
#define READ_BOUND_S 2.0

static char root[256];

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int setup(void **state) {
  snprintf(root, sizeof root, "/tmp/sg-readers-test-XXXXXX");
  if (!mkdtemp(root)) return -1;
  sg_store *st = NULL;
  char err[256];
  if (sg_store_open(root, &st, err, sizeof err)) return -1;
  *state = st;
  return 0;
}

static int teardown(void **state) {
  sg_store_close(*state);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  return system(cmd) == 0 ? 0 : -1;
}

/* A workspace, an application, a secret key and a list "Before". */
typedef struct {
  char ws[64], app[64], key[64], list[64];
  uint8_t digest[32];
} fixture;

static void make_fixture(sg_store *st, fixture *f) {
  json_t *o = NULL;
  assert_int_equal(sg_store_workspace_create(st, "W", &o), SG_E_OK);
  snprintf(f->ws, sizeof f->ws, "%s", json_string_value(json_object_get(o, "id")));
  json_decref(o);
  assert_int_equal(sg_store_application_create(st, f->ws, "A", -1, &o), SG_E_OK);
  snprintf(f->app, sizeof f->app, "%s", json_string_value(json_object_get(o, "id")));
  json_decref(o);
  snprintf(f->key, sizeof f->key, "sk_test_readers");
  for (int i = 0; i < 32; i++) f->digest[i] = (uint8_t)(i * 7 + 1);
  assert_int_equal(sg_store_secret_key_create(st, f->app, f->key, f->digest), SG_E_OK);
  assert_int_equal(sg_store_list_create(st, f->ws, "Before", NULL, &o), SG_E_OK);
  snprintf(f->list, sizeof f->list, "%s", json_string_value(json_object_get(o, "id")));
  json_decref(o);
}

/* The writer: takes the store's lock, opens a write transaction on the store's own
 * connection and renames the list without committing, then holds both until told to
 * commit (or WRITER_HOLD_S passes, so a failing test still ends). */
typedef struct {
  sg_store *st;
  const char *list_id;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool holding, release;
  int rc;
} writer;

static void *writer_main(void *arg) {
  writer *w = arg;
  sg__sq *st = sg__sq_of(w->st);
  pthread_mutex_lock(&st->mu);
  int rc = sg__sq_begin(st);
  sqlite3_stmt *s = NULL;
  if (rc == 0 && sqlite3_prepare_v2(st->db, "UPDATE lists SET name='After' WHERE id=?", -1, &s,
                                    NULL) == SQLITE_OK) {
    sg__sq_text(s, 1, w->list_id);
    rc = sqlite3_step(s) == SQLITE_DONE ? 0 : -1;
    sqlite3_finalize(s);
  } else {
    rc = -1;
  }
  pthread_mutex_lock(&w->mu);
  w->rc = rc;
  w->holding = true;
  pthread_cond_broadcast(&w->cv);
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += WRITER_HOLD_S;
  while (!w->release)
    if (pthread_cond_timedwait(&w->cv, &w->mu, &until)) break;
  pthread_mutex_unlock(&w->mu);
  if (rc == 0)
    sg__sq_commit(st);
  else
    sg__sq_rollback(st);
  pthread_mutex_unlock(&st->mu);
  return NULL;
}

static void writer_start(writer *w, pthread_t *t, sg_store *st, const char *list_id) {
  memset(w, 0, sizeof *w);
  w->st = st;
  w->list_id = list_id;
  pthread_mutex_init(&w->mu, NULL);
  pthread_cond_init(&w->cv, NULL);
  assert_int_equal(pthread_create(t, NULL, writer_main, w), 0);
  pthread_mutex_lock(&w->mu);
  while (!w->holding) pthread_cond_wait(&w->cv, &w->mu);
  pthread_mutex_unlock(&w->mu);
  assert_int_equal(w->rc, 0);
}

static void writer_finish(writer *w, pthread_t t) {
  pthread_mutex_lock(&w->mu);
  w->release = true;
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
  pthread_join(t, NULL);
  pthread_cond_destroy(&w->cv);
  pthread_mutex_destroy(&w->mu);
}

static const char *name_of(const json_t *l) {
  return json_string_value(json_object_get(l, "name"));
}

static void test_reads_do_not_wait_for_the_writer(void **state) {
  sg_store *st = *state;
  fixture f;
  make_fixture(st, &f);
  writer w;
  pthread_t t;
  writer_start(&w, &t, st, f.list);

  /* The store's lock is held and a write transaction is open: every read below must
   * answer at once, from the last committed snapshot. */
  double t0 = now_s();
  sg_principal who;
  sg_err auth = sg_store_authenticate(st, f.key, f.digest, &who);
  double auth_s = now_s() - t0;
  uint8_t wrong[32];
  memcpy(wrong, f.digest, 32);
  wrong[0] ^= 1;
  sg_principal nobody;
  sg_err refused = sg_store_authenticate(st, f.key, wrong, &nobody);
  t0 = now_s();
  json_t *l = NULL, *page = NULL;
  bool more = true;
  sg_err get = sg_store_list_get(st, f.ws, f.list, &l);
  sg_err pg = sg_store_list_page(st, f.ws, 10, NULL, &page, &more);
  double list_s = now_s() - t0;
  json_t *app = NULL;
  sg_err ag = sg_store_application_get(st, f.app, &app);
  /* The writer still held the store's lock through every read. */
  bool still_holding = pthread_mutex_trylock(&sg__sq_of(st)->mu) == EBUSY;
  if (!still_holding) pthread_mutex_unlock(&sg__sq_of(st)->mu);

  writer_finish(&w, t);
  assert_true(still_holding);
  assert_true(auth_s < READ_BOUND_S);
  assert_true(list_s < READ_BOUND_S);
  assert_int_equal(auth, SG_E_OK);
  assert_string_equal(who.key_id, f.key);
  assert_string_equal(who.application_id, f.app);
  assert_string_equal(who.workspace_id, f.ws);
  assert_int_equal(refused, SG_E_INVALID_KEY);
  assert_int_equal(get, SG_E_OK);
  assert_string_equal(name_of(l), "Before"); /* the uncommitted rename is not visible */
  assert_int_equal(pg, SG_E_OK);
  assert_int_equal(json_array_size(page), 1);
  assert_false(more);
  assert_string_equal(name_of(json_array_get(page, 0)), "Before");
  assert_int_equal(ag, SG_E_OK);
  assert_string_equal(json_string_value(json_object_get(app, "workspaceId")), f.ws);
  json_decref(l);
  json_decref(page);
  json_decref(app);

  /* Once the write commits, the next read sees it (a reader keeps no old snapshot). */
  assert_int_equal(sg_store_list_get(st, f.ws, f.list, &l), SG_E_OK);
  assert_string_equal(name_of(l), "After");
  json_decref(l);
}

/* Read-after-write through the store's API: a reader sees a write that returned. */
static void test_read_sees_previous_write(void **state) {
  sg_store *st = *state;
  fixture f;
  make_fixture(st, &f);
  for (int i = 0; i < 20; i++) {
    char name[32];
    snprintf(name, sizeof name, "{\"name\":\"N%d\"}", i);
    json_t *ch = json_loads(name, 0, NULL), *out = NULL;
    assert_int_equal(sg_store_list_patch(st, f.ws, f.list, ch, NULL, &out), SG_E_OK);
    json_decref(ch);
    json_decref(out);
    json_t *l = NULL;
    assert_int_equal(sg_store_list_get(st, f.ws, f.list, &l), SG_E_OK);
    snprintf(name, sizeof name, "N%d", i);
    assert_string_equal(name_of(l), name);
    json_decref(l);
  }
  /* Revoking the key is seen by the next authentication. */
  json_t *out = NULL;
  sg_principal who;
  assert_int_equal(sg_store_authenticate(st, f.key, f.digest, &who), SG_E_OK);
  assert_int_equal(sg_store_secret_key_revoke(st, f.key, &out), SG_E_OK);
  json_decref(out);
  assert_int_equal(sg_store_authenticate(st, f.key, f.digest, &who), SG_E_INVALID_KEY);
}

/* More readers than the pool holds, all at once: they share the pool (some wait for one
 * another, never for the writer) and every answer is right. */
#define READ_THREADS 12
#define READS_EACH 200

typedef struct {
  sg_store *st;
  const fixture *f;
  int bad;
} reader_arg;

static void *reader_main(void *arg) {
  reader_arg *a = arg;
  for (int i = 0; i < READS_EACH; i++) {
    sg_principal who;
    json_t *l = NULL;
    if (sg_store_authenticate(a->st, a->f->key, a->f->digest, &who) != SG_E_OK ||
        strcmp(who.workspace_id, a->f->ws) != 0)
      a->bad++;
    if (sg_store_list_get(a->st, a->f->ws, a->f->list, &l) != SG_E_OK) a->bad++;
    json_decref(l);
  }
  return NULL;
}

static void test_pool_shared_by_many_threads(void **state) {
  sg_store *st = *state;
  fixture f;
  make_fixture(st, &f);
  pthread_t t[READ_THREADS];
  reader_arg a[READ_THREADS];
  for (int i = 0; i < READ_THREADS; i++) {
    a[i] = (reader_arg){st, &f, 0};
    assert_int_equal(pthread_create(&t[i], NULL, reader_main, &a[i]), 0);
  }
  /* Writes go on meanwhile. */
  for (int i = 0; i < 20; i++) {
    json_t *ch = json_pack("{s:I}", "displayOrder", (json_int_t)i), *out = NULL;
    assert_int_equal(sg_store_list_patch(st, f.ws, f.list, ch, NULL, &out), SG_E_OK);
    json_decref(ch);
    json_decref(out);
  }
  for (int i = 0; i < READ_THREADS; i++) {
    pthread_join(t[i], NULL);
    assert_int_equal(a[i].bad, 0);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_reads_do_not_wait_for_the_writer, setup, teardown),
      cmocka_unit_test_setup_teardown(test_read_sees_previous_write, setup, teardown),
      cmocka_unit_test_setup_teardown(test_pool_shared_by_many_threads, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
