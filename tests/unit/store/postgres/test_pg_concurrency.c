/* PostgreSQL backend: what the database must decide when several connections (threads
 * of one store, or two stores as two processes would hold) race. Runs when
 * SUGGESTD_TEST_STORE names a PostgreSQL server (make unit-pg), and skips otherwise. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <libpq-fe.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/util.h"
#include "store/postgres/pg.h"
#include "store/store.h"
#include "store/store_fixture.h"

#define THREADS 8

typedef struct {
  store_fixture *f;
  sg_store *st;
  pthread_barrier_t *go;
  const char *item_id, *etag;
  int index;
  sg_err rc;
  int64_t numbers[8];
} racer;

static void run_all(racer *r, int n, void *(*fn)(void *)) {
  pthread_t t[THREADS * 2];
  for (int i = 0; i < n; i++) assert_int_equal(pthread_create(&t[i], NULL, fn, &r[i]), 0);
  for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
}

static void *update_item(void *arg) {
  racer *r = arg;
  char value[32];
  snprintf(value, sizeof value, "value-%d", r->index);
  json_t *body = json_pack("{s:s,s:s}", "value", value, "displayValue", value);
  json_t *out = NULL;
  pthread_barrier_wait(r->go);
  r->rc = sg_store_item_update(r->st, r->f->ws, r->f->list, r->item_id, body, r->etag, &out);
  json_decref(out);
  json_decref(body);
  return NULL;
}

/* Eight writers holding the same ETag: exactly one wins, the others get 412. */
static void test_if_match_race_has_one_winner(void **state) {
  store_fixture *f = *state;
  json_t *item = NULL, *body = json_pack("{s:s,s:s}", "value", "start", "displayValue", "start");
  assert_int_equal(sg_store_item_create(f->st, f->ws, f->list, body, &item), SG_E_OK);
  json_decref(body);
  char etag[48], id[64];
  sg_store_item_etag(item, etag);
  snprintf(id, sizeof id, "%s", json_string_value(json_object_get(item, "id")));
  json_decref(item);
  pthread_barrier_t go;
  pthread_barrier_init(&go, NULL, THREADS);
  racer r[THREADS];
  for (int i = 0; i < THREADS; i++) r[i] = (racer){f, f->st, &go, id, etag, i, SG_E_OK, {0}};
  run_all(r, THREADS, update_item);
  pthread_barrier_destroy(&go);
  int won = 0, lost = 0;
  for (int i = 0; i < THREADS; i++) {
    if (r[i].rc == SG_E_OK) won++;
    if (r[i].rc == SG_E_PRECONDITION_FAILED) lost++;
  }
  assert_int_equal(won, 1);
  assert_int_equal(lost, THREADS - 1);
}

static void *create_versions(void *arg) {
  racer *r = arg;
  pthread_barrier_wait(r->go);
  for (int k = 0; k < 5; k++) {
    json_t *v = NULL;
    r->rc = sg_store_version_create(r->st, r->f->ws, r->f->list, &v);
    if (r->rc != SG_E_OK) return NULL;
    r->numbers[k] = json_integer_value(json_object_get(v, "versionNumber"));
    json_decref(v);
  }
  return NULL;
}

/* Forty creates from eight threads over two stores: the numbers are exactly 1..40. */
static void test_racing_version_creates_get_distinct_consecutive_numbers(void **state) {
  store_fixture *f = *state;
  sg_store *other = NULL;
  assert_int_equal(store_test_open(f->dir, &other), 0);
  pthread_barrier_t go;
  pthread_barrier_init(&go, NULL, THREADS);
  racer r[THREADS];
  for (int i = 0; i < THREADS; i++)
    r[i] = (racer){f, i % 2 ? other : f->st, &go, NULL, NULL, i, SG_E_OK, {0}};
  run_all(r, THREADS, create_versions);
  pthread_barrier_destroy(&go);
  bool seen[THREADS * 5 + 1] = {false};
  for (int i = 0; i < THREADS; i++) {
    assert_int_equal(r[i].rc, SG_E_OK);
    for (int k = 0; k < 5; k++) {
      int64_t n = r[i].numbers[k];
      assert_true(n >= 1 && n <= THREADS * 5);
      assert_false(seen[n]);
      seen[n] = true;
    }
  }
  sg_store_close(other);
}

#define VERSIONS 20

static void *claim_all(void *arg) {
  racer *r = arg;
  pthread_barrier_wait(r->go);
  for (int k = 0; k < VERSIONS; k++) {
    sg_version_job job;
    sg_err rc = sg_store_version_claim(r->st, r->f->list, k + 1, 60000, &job);
    sg_store_job_clear(&job);
    /* numbers[] as a bit set of the versions this claimer won. */
    if (rc == SG_E_OK)
      r->numbers[k / 8] |= 1LL << (k % 8);
    else if (rc != SG_E_PUBLISH_IN_PROGRESS)
      r->rc = rc;
  }
  return NULL;
}

/* Two stores (two lease owners, as two processes) claim the same twenty versions at
 * once: each version goes to exactly one of them. */
static void test_two_claimers_never_get_the_same_version(void **state) {
  store_fixture *f = *state;
  for (int k = 0; k < VERSIONS; k++) {
    json_t *v = NULL;
    assert_int_equal(sg_store_version_create(f->st, f->ws, f->list, &v), SG_E_OK);
    json_decref(v);
  }
  sg_store *other = NULL;
  assert_int_equal(store_test_open(f->dir, &other), 0);
  pthread_barrier_t go;
  pthread_barrier_init(&go, NULL, 2);
  racer r[2] = {{f, f->st, &go, NULL, NULL, 0, SG_E_OK, {0}},
                {f, other, &go, NULL, NULL, 1, SG_E_OK, {0}}};
  run_all(r, 2, claim_all);
  pthread_barrier_destroy(&go);
  assert_int_equal(r[0].rc, SG_E_OK);
  assert_int_equal(r[1].rc, SG_E_OK);
  for (int k = 0; k < VERSIONS; k++) {
    bool a = r[0].numbers[k / 8] & (1LL << (k % 8)), b = r[1].numbers[k / 8] & (1LL << (k % 8));
    if (a == b) fail_msg("version %d claimed by %s", k + 1, a ? "both" : "neither");
  }
  sg_store_close(other);
}

/* Ends every connection to the test's database, as a server restart or a failover
 * would (from the maintenance database, which stays reachable). */
static void kill_connections(const store_fixture *f) {
  char spec[1024];
  store_test_spec(f->dir, spec, sizeof spec);
  const char *db[] = {strrchr(spec, '/') + 1};
  PGconn *c = PQconnectdb(getenv("SUGGESTD_TEST_STORE"));
  assert_int_equal(PQstatus(c), CONNECTION_OK);
  PGresult *r = PQexecParams(c,
                             "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                             " WHERE datname=$1",
                             1, NULL, db, NULL, NULL, 0);
  assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
  assert_true(atoi(PQgetvalue(r, 0, 0)) >= 1);
  PQclear(r);
  PQfinish(c);
}

/* A pooled connection the server has closed is noticed, replaced and the transaction run
 * again: the caller sees no error, reads and writes alike. */
static void test_lost_connection_is_retried(void **state) {
  store_fixture *f = *state;
  json_t *l = NULL;
  assert_int_equal(sg_store_list_get(f->st, f->ws, f->list, &l), SG_E_OK);
  json_decref(l);
  kill_connections(f);
  assert_int_equal(sg_store_list_get(f->st, f->ws, f->list, &l), SG_E_OK);
  json_decref(l);
  kill_connections(f);
  json_t *item = NULL, *body = json_pack("{s:s,s:s}", "value", "after", "displayValue", "after");
  assert_int_equal(sg_store_item_create(f->st, f->ws, f->list, body, &item), SG_E_OK);
  json_decref(body);
  json_decref(item);
}

/* The value of setting name on c. */
static void expect_setting(PGconn *c, const char *name, const char *want) {
  char sql[96];
  snprintf(sql, sizeof sql, "SHOW %s", name);
  PGresult *r = PQexec(c, sql);
  assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
  assert_string_equal(PQgetvalue(r, 0, 0), want);
  PQclear(r);
}

/* A pooled connection the server closed is reset with the session settings every pooled
 * connection has (a reset opens a new session, which starts from the server's defaults),
 * and the next write on it is answered. */
static void test_reset_connection_keeps_session_settings(void **state) {
  store_fixture *f = *state;
  json_t *l = NULL;
  assert_int_equal(sg_store_list_get(f->st, f->ws, f->list, &l), SG_E_OK);
  json_decref(l);
  kill_connections(f);
  struct timespec ts = {0, 200 * 1000000L}; /* the backends exit */
  nanosleep(&ts, NULL);
  sg__pg *st = sg__pg_of(f->st);
  PGconn *c = sg__pg_acquire(st);
  assert_non_null(c);
  expect_setting(c, "lock_timeout", "30s");
  expect_setting(c, "default_transaction_isolation", "read committed");
  sg__pg_release(st, c);
  json_t *item = NULL, *body = json_pack("{s:s,s:s}", "value", "reset", "displayValue", "reset");
  assert_int_equal(sg_store_item_create(f->st, f->ws, f->list, body, &item), SG_E_OK);
  json_decref(body);
  json_decref(item);
}

/* Runs sql on the server's maintenance database (the URL under test). */
static void admin_sql(const char *sql) {
  PGconn *c = PQconnectdb(getenv("SUGGESTD_TEST_STORE"));
  assert_int_equal(PQstatus(c), CONNECTION_OK);
  PGresult *r = PQexec(c, sql);
  if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK)
    fail_msg("%s: %s", sql, PQerrorMessage(c));
  PQclear(r);
  PQfinish(c);
}

/* A database that refuses connections is a prompt SG_E_UNAVAILABLE (the 503 with
 * retry-after), not an internal error; once it takes connections again the store
 * reconnects by itself. */
static void test_unreachable_database_is_unavailable_then_recovers(void **state) {
  store_fixture *f = *state;
  char spec[1024], sql[512];
  store_test_spec(f->dir, spec, sizeof spec);
  const char *db = strrchr(spec, '/') + 1;
  snprintf(sql, sizeof sql, "ALTER DATABASE \"%s\" ALLOW_CONNECTIONS false", db);
  admin_sql(sql);
  kill_connections(f);
  json_t *l = NULL;
  int64_t t0 = sg_mono_ms();
  assert_int_equal(sg_store_list_get(f->st, f->ws, f->list, &l), SG_E_UNAVAILABLE);
  assert_true(sg_mono_ms() - t0 < 5000);
  snprintf(sql, sizeof sql, "ALTER DATABASE \"%s\" ALLOW_CONNECTIONS true", db);
  admin_sql(sql);
  assert_int_equal(sg_store_list_get(f->st, f->ws, f->list, &l), SG_E_OK);
  json_decref(l);
}

/* A lease held by a process of another host (whose liveness cannot be checked) keeps the
 * version until it expires; then this store claims it. */
static void test_other_hosts_lease_holds_until_it_expires(void **state) {
  store_fixture *f = *state;
  json_t *v = NULL;
  assert_int_equal(sg_store_version_create(f->st, f->ws, f->list, &v), SG_E_OK);
  json_decref(v);
  char spec[1024], sql[512];
  store_test_spec(f->dir, spec, sizeof spec);
  snprintf(sql, sizeof sql,
           "UPDATE versions SET lease_owner='elsewhere 1 1 x', lease_until_ms=%lld",
           (long long)(sg_now_ms() + 1500));
  PGconn *c = PQconnectdb(spec);
  PGresult *r = PQexec(c, sql);
  assert_int_equal(PQresultStatus(r), PGRES_COMMAND_OK);
  PQclear(r);
  PQfinish(c);
  sg_version_job job;
  sg_version_ref ref;
  bool found = true;
  assert_int_equal(sg_store_version_claim(f->st, f->list, 1, 1000, &job), SG_E_PUBLISH_IN_PROGRESS);
  sg_store_job_clear(&job);
  assert_int_equal(sg_store_version_next(f->st, NULL, -5, &ref, &found), SG_E_OK);
  assert_false(found);
  struct timespec ts = {.tv_sec = 1, .tv_nsec = 700000000L};
  nanosleep(&ts, NULL);
  assert_int_equal(sg_store_version_next(f->st, NULL, -5, &ref, &found), SG_E_OK);
  assert_true(found);
  assert_int_equal(sg_store_version_claim(f->st, f->list, 1, 1000, &job), SG_E_OK);
  assert_int_equal(job.attempts, 1);
  sg_store_job_clear(&job);
}

/* A version created through another store (another process) wakes a waiting worker at
 * once: NOTIFY sg_publish reaches wait_work; with nothing announced it times out. */
static void test_version_create_wakes_waiting_workers(void **state) {
  store_fixture *f = *state;
  assert_true(sg_store_announces_work(f->st));
  /* The first call connects and LISTENs; it reports work once, for what was missed. */
  assert_int_equal(sg_store_wait_work(f->st, 100), SG_E_OK);
  assert_int_equal(sg_store_wait_work(f->st, 200), SG_E_NOT_FOUND);
  sg_store *other = NULL;
  assert_int_equal(store_test_open(f->dir, &other), 0);
  json_t *v = NULL;
  assert_int_equal(sg_store_version_create(other, f->ws, f->list, &v), SG_E_OK);
  json_decref(v);
  int64_t t0 = sg_mono_ms();
  assert_int_equal(sg_store_wait_work(f->st, 5000), SG_E_OK);
  assert_true(sg_mono_ms() - t0 < 2000);
  assert_int_equal(sg_store_wait_work(f->st, 200), SG_E_NOT_FOUND);
  sg_store_close(other);
}

static int setup(void **state) {
  if (!store_test_is_postgres()) {
    fprintf(stderr, "skipped: SUGGESTD_TEST_STORE does not name a PostgreSQL server\n");
    return 0;
  }
  return store_fixture_setup(state);
}

static int teardown(void **state) {
  return store_test_is_postgres() ? store_fixture_teardown(state) : 0;
}

#define PG_TEST(fn)                                                                                \
  static void fn##_or_skip(void **state) {                                                         \
    if (!store_test_is_postgres()) skip();                                                         \
    fn(state);                                                                                     \
  }
PG_TEST(test_if_match_race_has_one_winner)
PG_TEST(test_racing_version_creates_get_distinct_consecutive_numbers)
PG_TEST(test_two_claimers_never_get_the_same_version)
PG_TEST(test_lost_connection_is_retried)
PG_TEST(test_reset_connection_keeps_session_settings)
PG_TEST(test_version_create_wakes_waiting_workers)
PG_TEST(test_other_hosts_lease_holds_until_it_expires)
PG_TEST(test_unreachable_database_is_unavailable_then_recovers)

int main(void) {
  if (sg_init()) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_if_match_race_has_one_winner_or_skip, setup, teardown),
      cmocka_unit_test_setup_teardown(
          test_racing_version_creates_get_distinct_consecutive_numbers_or_skip, setup, teardown),
      cmocka_unit_test_setup_teardown(test_two_claimers_never_get_the_same_version_or_skip, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_lost_connection_is_retried_or_skip, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reset_connection_keeps_session_settings_or_skip, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_version_create_wakes_waiting_workers_or_skip, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_other_hosts_lease_holds_until_it_expires_or_skip, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(
          test_unreachable_database_is_unavailable_then_recovers_or_skip, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
