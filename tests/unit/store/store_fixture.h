/* A cmocka fixture shared by the store's unit tests: a fresh store with one workspace and
 * one list in it, removed again at teardown.
 *
 * The backend comes from the environment variable SUGGESTD_TEST_STORE (a spec as
 * sg_store_open takes it, e.g. "sqlite:///tmp/t/%s.db" or, once it exists,
 * "postgres://…/sg_%s"): every "%s" is replaced by a name unique to the test's scratch
 * directory, so each test starts from an empty store. A postgres:// URL without "%s"
 * (e.g. postgres://suggestd@127.0.0.1:5432/postgres) makes the fixture create a database
 * of its own for each test on that server and drop it at teardown. Unset or empty: a fresh SQLite
 * store in the scratch directory. The same tests thus run unchanged against any backend;
 * tests that only make sense for one backend live in its folder (tests/unit/store/sqlite/). */
#ifndef SG_TESTS_STORE_FIXTURE_H
#define SG_TESTS_STORE_FIXTURE_H

#include <stdbool.h>

#include "store/store.h"

typedef struct {
  char dir[256];
  sg_store *st;
  char ws[64], list[64];
} store_fixture;

/* The store spec under test for the scratch directory dir (see above) into out. */
void store_test_spec(const char *dir, char *out, size_t outsz);
/* Opens the store under test for dir (the same store each time for the same dir); 0 or -1
 * (with the error on stderr). */
int store_test_open(const char *dir, sg_store **st);

/* Whether the backend under test is PostgreSQL (for the few expectations that differ:
 * ownership by lease instead of process liveness). */
bool store_test_is_postgres(void);
/* Drops the per-test PostgreSQL database of dir, if the backend under test made one
 * (call after closing the store); 0 or -1. */
int store_test_drop(const char *dir);

/* Runs one SQL statement on dir's PostgreSQL database (only when the backend under test
 * is PostgreSQL), e.g. to let time pass on the database's clock for a lease; 0 or -1 (with
 * the error on stderr). */
int store_test_pg_exec(const char *dir, const char *sql);

/* cmocka group/test setup and teardown; *state is a store_fixture. */
int store_fixture_setup(void **state);
int store_fixture_teardown(void **state);

#endif
