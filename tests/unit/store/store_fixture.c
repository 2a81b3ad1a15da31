#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "store_fixture.h"

/* With SUGGESTD_TEST_STORE=postgres://…/DB and no "%s" in it, each scratch directory gets
 * a database of its own on that server, named after the directory, created on first use
 * and dropped at teardown: the URL's database is only the one the test connects to for
 * that. */
static bool pg_env(const char *env) {
  return env && (strncmp(env, "postgres://", 11) == 0 || strncmp(env, "postgresql://", 13) == 0) &&
         !strstr(env, "%s");
}

/* env with its database (the path after the host) replaced by db, into out. */
static void pg_url_with_db(const char *env, const char *db, char *out, size_t outsz) {
  const char *hosts = strstr(env, "://") + 3;
  const char *path = strchr(hosts, '/');
  const char *query = strchr(hosts, '?');
  if (!path || (query && path > query)) path = query ? query : hosts + strlen(hosts);
  const char *rest = query ? query : "";
  snprintf(out, outsz, "%.*s/%s%s", (int)(path - env), env, db, rest);
}

/* Runs one statement on the server's maintenance database; 0, or -1 with the error on
 * stderr. An error whose SQLSTATE is `ok_state` counts as success. */
static int pg_admin(const char *env, const char *sql, const char *ok_state) {
  PGconn *c = PQconnectdb(env);
  int rc = -1;
  if (PQstatus(c) == CONNECTION_OK) {
    PGresult *r = PQexec(c, sql);
    const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    if (PQresultStatus(r) == PGRES_COMMAND_OK || (state && ok_state && !strcmp(state, ok_state)))
      rc = 0;
    PQclear(r);
  }
  if (rc) fprintf(stderr, "store fixture: %s: %s", sql, PQerrorMessage(c));
  PQfinish(c);
  return rc;
}

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
  if (pg_env(env)) {
    char db[160];
    snprintf(db, sizeof db, "sgt_%s", name);
    for (char *p = db; *p; p++)
      if (*p >= 'A' && *p <= 'Z') *p = (char)(*p - 'A' + 'a');
    pg_url_with_db(env, db, out, outsz);
    return;
  }
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

/* The per-test database's name for dir (see pg_env), from its URL. */
static void pg_db_of(const char *dir, char *db, size_t dbsz) {
  char spec[1024];
  store_test_spec(dir, spec, sizeof spec);
  const char *hosts = strstr(spec, "://") + 3;
  const char *slash = strchr(hosts, '/');
  snprintf(db, dbsz, "%.*s", (int)strcspn(slash + 1, "?"), slash + 1);
}

bool store_test_is_postgres(void) {
  const char *env = getenv("SUGGESTD_TEST_STORE");
  return env && (strncmp(env, "postgres://", 11) == 0 || strncmp(env, "postgresql://", 13) == 0);
}

int store_test_drop(const char *dir) {
  const char *env = getenv("SUGGESTD_TEST_STORE");
  if (!pg_env(env)) return 0;
  char db[160], sql[256];
  pg_db_of(dir, db, sizeof db);
  snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS \"%s\" WITH (FORCE)", db);
  return pg_admin(env, sql, NULL);
}

int store_test_pg_exec(const char *dir, const char *sql) {
  if (!store_test_is_postgres()) return -1;
  char spec[1024];
  store_test_spec(dir, spec, sizeof spec);
  return pg_admin(spec, sql, NULL);
}

int store_test_open(const char *dir, sg_store **st) {
  char spec[1024], err[256];
  const char *env = getenv("SUGGESTD_TEST_STORE");
  if (pg_env(env)) {
    char db[160], sql[256];
    pg_db_of(dir, db, sizeof db);
    /* 42P04: it exists already (a second open of the same test's store). */
    snprintf(sql, sizeof sql, "CREATE DATABASE \"%s\"", db);
    if (pg_admin(env, sql, "42P04")) return -1;
  }
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
  if (store_test_drop(f->dir)) return -1;
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
  int rc = system(cmd);
  free(f);
  return rc == 0 ? 0 : -1;
}
