/* Unit tests of Idempotency-Key records in the store
 * (src/store/sqlite/idempotency.c), against a real database in a temporary directory.
 * Expiry is tested by shifting the service clock (SUGGESTD_CLOCK_OFFSET, read by sg_init),
 * never by sleeping. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "store/store.h"
#include "store_fixture.h"

static char root[256];

static void set_clock_offset(const char *seconds) {
  assert_int_equal(setenv("SUGGESTD_CLOCK_OFFSET", seconds, 1), 0);
  assert_int_equal(sg_init(), 0);
}

static int setup(void **state) {
  set_clock_offset("0");
  snprintf(root, sizeof root, "/tmp/sg-idem-test-XXXXXX");
  if (!mkdtemp(root)) return -1;
  sg_store *st = NULL;
  if (store_test_open(root, &st)) return -1;
  *state = st;
  return 0;
}

static int teardown(void **state) {
  sg_store_close(*state);
  if (store_test_drop(root)) return -1;
  set_clock_offset("0");
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  return system(cmd) == 0 ? 0 : -1;
}

static void hash_of(const char *body, uint8_t out[32]) { sg_sha256(body, strlen(body), out); }

typedef struct {
  sg_idem_state state;
  int status;
  char *body, *headers;
} outcome;

static outcome begin(sg_store *st, const char *ws, const char *key, const char *method,
                     const char *path, const char *body) {
  uint8_t h[32];
  hash_of(body, h);
  outcome o = {.state = (sg_idem_state)-1, .status = -1};
  assert_int_equal(
      sg_store_idem_begin(st, ws, key, method, path, h, &o.state, &o.status, &o.body, &o.headers),
      SG_E_OK);
  return o;
}

static void done(outcome *o) {
  free(o->body);
  free(o->headers);
}

static void test_proceed_finish_replay(void **state) {
  sg_store *st = *state;
  outcome o = begin(st, "wsp_a", "k1", "POST", "/api/v1/lists", "{\"name\":\"A\"}");
  assert_int_equal(o.state, SG_IDEM_PROCEED);
  assert_null(o.body);
  done(&o);
  assert_int_equal(sg_store_idem_finish(st, "wsp_a", "k1", 201, "{\"id\":\"lst_1\"}",
                                        "{\"ETag\":\"\\\"abc\\\"\"}"),
                   SG_E_OK);
  for (int i = 0; i < 2; i++) {
    o = begin(st, "wsp_a", "k1", "POST", "/api/v1/lists", "{\"name\":\"A\"}");
    assert_int_equal(o.state, SG_IDEM_REPLAY);
    assert_int_equal(o.status, 201);
    assert_string_equal(o.body, "{\"id\":\"lst_1\"}");
    assert_non_null(o.headers);
    json_t *h = json_loads(o.headers, 0, NULL);
    assert_non_null(h);
    assert_string_equal(json_string_value(json_object_get(h, "ETag")), "\"abc\"");
    json_decref(h);
    done(&o);
  }
}

static void test_replay_without_headers(void **state) {
  sg_store *st = *state;
  outcome o = begin(st, "wsp_a", "k", "POST", "/p", "");
  assert_int_equal(o.state, SG_IDEM_PROCEED);
  done(&o);
  assert_int_equal(sg_store_idem_finish(st, "wsp_a", "k", 400, "{\"code\":\"x\"}", NULL), SG_E_OK);
  o = begin(st, "wsp_a", "k", "POST", "/p", "");
  assert_int_equal(o.state, SG_IDEM_REPLAY);
  assert_int_equal(o.status, 400); /* a 4xx answer is remembered like a success */
  assert_string_equal(o.body, "{\"code\":\"x\"}");
  assert_null(o.headers);
  done(&o);
}

static void test_different_body_method_or_path_is_reused(void **state) {
  sg_store *st = *state;
  outcome o = begin(st, "wsp_a", "k2", "POST", "/api/v1/lists", "{\"name\":\"A\"}");
  assert_int_equal(o.state, SG_IDEM_PROCEED);
  done(&o);
  assert_int_equal(sg_store_idem_finish(st, "wsp_a", "k2", 201, "{}", NULL), SG_E_OK);
  o = begin(st, "wsp_a", "k2", "POST", "/api/v1/lists", "{\"name\":\"B\"}");
  assert_int_equal(o.state, SG_IDEM_REUSED);
  assert_null(o.body);
  done(&o);
  o = begin(st, "wsp_a", "k2", "POST", "/api/v1/lists/x/items", "{\"name\":\"A\"}");
  assert_int_equal(o.state, SG_IDEM_REUSED);
  done(&o);
  o = begin(st, "wsp_a", "k2", "PUT", "/api/v1/lists", "{\"name\":\"A\"}");
  assert_int_equal(o.state, SG_IDEM_REUSED);
  done(&o);
  /* The original still replays after the misuses. */
  o = begin(st, "wsp_a", "k2", "POST", "/api/v1/lists", "{\"name\":\"A\"}");
  assert_int_equal(o.state, SG_IDEM_REPLAY);
  done(&o);
}

static void test_keys_are_per_workspace(void **state) {
  sg_store *st = *state;
  outcome o = begin(st, "wsp_a", "shared", "POST", "/p", "1");
  assert_int_equal(o.state, SG_IDEM_PROCEED);
  done(&o);
  assert_int_equal(sg_store_idem_finish(st, "wsp_a", "shared", 201, "a", NULL), SG_E_OK);
  /* Same key in another workspace, even with another body: independent. */
  o = begin(st, "wsp_b", "shared", "POST", "/p", "2");
  assert_int_equal(o.state, SG_IDEM_PROCEED);
  done(&o);
}

static void test_in_flight(void **state) {
  sg_store *st = *state;
  outcome o = begin(st, "wsp_a", "k3", "POST", "/p", "x");
  assert_int_equal(o.state, SG_IDEM_PROCEED);
  done(&o);
  o = begin(st, "wsp_a", "k3", "POST", "/p", "x");
  assert_int_equal(o.state, SG_IDEM_IN_FLIGHT);
  assert_null(o.body);
  done(&o);
  /* A different body while in flight is still a misuse of the key. */
  o = begin(st, "wsp_a", "k3", "POST", "/p", "y");
  assert_int_equal(o.state, SG_IDEM_REUSED);
  done(&o);
  assert_int_equal(sg_store_idem_finish(st, "wsp_a", "k3", 200, "ok", NULL), SG_E_OK);
  o = begin(st, "wsp_a", "k3", "POST", "/p", "x");
  assert_int_equal(o.state, SG_IDEM_REPLAY);
  assert_string_equal(o.body, "ok");
  done(&o);
}

static void test_stale_in_flight_is_taken_over(void **state) {
  sg_store *st = *state;
  outcome o = begin(st, "wsp_a", "k4", "POST", "/p", "x");
  assert_int_equal(o.state, SG_IDEM_PROCEED);
  done(&o);
  /* The process that began it died; ten minutes later a retry may proceed. */
  set_clock_offset("600");
  o = begin(st, "wsp_a", "k4", "POST", "/p", "x");
  if (store_test_is_postgres()) {
    /* On PostgreSQL the record's lease runs on the database's clock: ten minutes on this
     * host's clock alone (a host whose clock runs ahead) take nothing over. */
    assert_int_equal(o.state, SG_IDEM_IN_FLIGHT);
    done(&o);
    /* Ten minutes on the database's clock do. */
    assert_int_equal(store_test_pg_exec(root, "UPDATE idempotency SET lease_until_ms ="
                                              " lease_until_ms - 600000 WHERE key = 'k4'"),
                     0);
    o = begin(st, "wsp_a", "k4", "POST", "/p", "x");
  }
  assert_int_equal(o.state, SG_IDEM_PROCEED);
  done(&o);
}

/* PostgreSQL: a record begun by a process on a host whose clock runs ten minutes behind
 * holds its lease for as long as the database's clock says, not five minutes less; a
 * process there cannot be told apart from a dead one by its clock. (SQLite is one host:
 * its processes share one clock.) */
static void test_lease_of_a_host_behind_holds(void **state) {
  sg_store *st = *state;
  if (!store_test_is_postgres()) skip();
  set_clock_offset("-600");
  sg_store *behind = NULL;
  assert_int_equal(store_test_open(root, &behind), 0);
  outcome o = begin(behind, "wsp_a", "k7", "POST", "/p", "x");
  assert_int_equal(o.state, SG_IDEM_PROCEED);
  done(&o);
  set_clock_offset("0");
  o = begin(st, "wsp_a", "k7", "POST", "/p", "x");
  assert_int_equal(o.state, SG_IDEM_IN_FLIGHT);
  done(&o);
  sg_store_close(behind);
}

/* A record begun by another process that is still running is in flight; once that
 * process is killed (-9, so it never finishes), a retry proceeds at once, without waiting
 * for the record to go stale. The other process is real: a forked child with its own
 * store connection. */
static void test_in_flight_of_a_dead_process_is_taken_over(void **state) {
  sg_store *st = *state;
  int ready[2];
  assert_int_equal(pipe(ready), 0);
  pid_t child = fork();
  assert_true(child >= 0);
  if (child == 0) {
    sg_store *cst = NULL;
    sg_idem_state cs;
    int status;
    char *body, *headers;
    uint8_t h[32];
    hash_of("x", h);
    if (store_test_open(root, &cst) ||
        sg_store_idem_begin(cst, "wsp_a", "k6", "POST", "/p", h, &cs, &status, &body, &headers) ||
        cs != SG_IDEM_PROCEED)
      _exit(1);
    if (write(ready[1], "r", 1) != 1) _exit(1);
    for (;;) pause(); /* "running the request" until killed */
  }
  close(ready[1]);
  char c;
  assert_int_equal(read(ready[0], &c, 1), 1);
  close(ready[0]);
  outcome o = begin(st, "wsp_a", "k6", "POST", "/p", "x");
  assert_int_equal(o.state, SG_IDEM_IN_FLIGHT);
  done(&o);
  kill(child, SIGKILL);
  assert_int_equal(waitpid(child, NULL, 0), child);
  o = begin(st, "wsp_a", "k6", "POST", "/p", "x");
  assert_int_equal(o.state, SG_IDEM_PROCEED);
  done(&o);
  /* Now this live process owns it again. */
  o = begin(st, "wsp_a", "k6", "POST", "/p", "x");
  assert_int_equal(o.state, SG_IDEM_IN_FLIGHT);
  done(&o);
}

static void forgotten_after(sg_store *st, const char *key, int status) {
  outcome o = begin(st, "wsp_a", key, "POST", "/p", "x");
  assert_int_equal(o.state, SG_IDEM_PROCEED);
  done(&o);
  assert_int_equal(sg_store_idem_finish(st, "wsp_a", key, status, "{\"code\":\"e\"}", NULL),
                   SG_E_OK);
  o = begin(st, "wsp_a", key, "POST", "/p", "x");
  assert_int_equal(o.state, SG_IDEM_PROCEED);
  done(&o);
  /* And since the key was forgotten, a different body is not "reused" either. */
  assert_int_equal(sg_store_idem_finish(st, "wsp_a", key, status, "{}", NULL), SG_E_OK);
  o = begin(st, "wsp_a", key, "POST", "/p", "other");
  assert_int_equal(o.state, SG_IDEM_PROCEED);
  done(&o);
}

static void test_5xx_and_429_are_forgotten(void **state) {
  sg_store *st = *state;
  forgotten_after(st, "k500", 500);
  forgotten_after(st, "k503", 503);
  forgotten_after(st, "k429", 429);
}

static void test_expiry_after_24h(void **state) {
  sg_store *st = *state;
  outcome o = begin(st, "wsp_a", "k5", "POST", "/p", "x");
  assert_int_equal(o.state, SG_IDEM_PROCEED);
  done(&o);
  assert_int_equal(sg_store_idem_finish(st, "wsp_a", "k5", 201, "first", NULL), SG_E_OK);
  /* 23 hours later it still replays. */
  set_clock_offset("82800");
  o = begin(st, "wsp_a", "k5", "POST", "/p", "x");
  assert_int_equal(o.state, SG_IDEM_REPLAY);
  assert_string_equal(o.body, "first");
  done(&o);
  /* Just past 24 hours it is forgotten: the same key with another body proceeds. */
  set_clock_offset("86401");
  o = begin(st, "wsp_a", "k5", "POST", "/p", "y");
  assert_int_equal(o.state, SG_IDEM_PROCEED);
  done(&o);
}

static void test_long_and_odd_keys(void **state) {
  sg_store *st = *state;
  char key[256];
  memset(key, '~', 255);
  key[255] = '\0';
  outcome o = begin(st, "wsp_a", key, "POST", "/p", "x");
  assert_int_equal(o.state, SG_IDEM_PROCEED);
  done(&o);
  o = begin(st, "wsp_a", "' OR 1=1 --", "POST", "/p", "x");
  assert_int_equal(o.state, SG_IDEM_PROCEED);
  done(&o);
  o = begin(st, "wsp_a", "' OR 1=1 --", "POST", "/p", "x");
  assert_int_equal(o.state, SG_IDEM_IN_FLIGHT);
  done(&o);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_proceed_finish_replay, setup, teardown),
      cmocka_unit_test_setup_teardown(test_replay_without_headers, setup, teardown),
      cmocka_unit_test_setup_teardown(test_different_body_method_or_path_is_reused, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_keys_are_per_workspace, setup, teardown),
      cmocka_unit_test_setup_teardown(test_in_flight, setup, teardown),
      cmocka_unit_test_setup_teardown(test_in_flight_of_a_dead_process_is_taken_over, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_stale_in_flight_is_taken_over, setup, teardown),
      cmocka_unit_test_setup_teardown(test_lease_of_a_host_behind_holds, setup, teardown),
      cmocka_unit_test_setup_teardown(test_5xx_and_429_are_forgotten, setup, teardown),
      cmocka_unit_test_setup_teardown(test_expiry_after_24h, setup, teardown),
      cmocka_unit_test_setup_teardown(test_long_and_odd_keys, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
