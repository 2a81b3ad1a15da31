/* Unit tests of the store's items and versions (src/store/sqlite/items.c,
 * versions.c): snapshots, state transitions, monotonic activation, the work queue. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "store/store.h"
#include "store_fixture.h"

typedef store_fixture fixture;

static sg_err add_item(fixture *f, const char *value, const char *parent, char id_out[64]) {
  json_t *it = json_pack("{s:s,s:s,s:[],s:i,s:o,s:{},s:i}", "value", value, "displayValue", value,
                         "aliases", "rank", 0, "parentId",
                         parent ? json_string(parent) : json_null(), "locales", "displayOrder", 0);
  json_t *out = NULL;
  sg_err e = sg_store_item_create(f->st, f->ws, f->list, it, &out);
  if (e == SG_E_OK && id_out)
    snprintf(id_out, 64, "%s", json_string_value(json_object_get(out, "id")));
  json_decref(out);
  json_decref(it);
  return e;
}

static int64_t new_version(fixture *f) {
  json_t *v = NULL;
  assert_int_equal(sg_store_version_create(f->st, f->ws, f->list, &v), SG_E_OK);
  assert_string_equal(json_string_value(json_object_get(v, "state")), "queued");
  assert_true(json_is_null(json_object_get(v, "contentHash")));
  int64_t n = json_integer_value(json_object_get(v, "versionNumber"));
  json_decref(v);
  return n;
}

static const char *state_of(fixture *f, int64_t n, char buf[16]) {
  json_t *v = NULL;
  assert_int_equal(sg_store_version_get(f->st, f->ws, f->list, n, &v), SG_E_OK);
  snprintf(buf, 16, "%s", json_string_value(json_object_get(v, "state")));
  json_decref(v);
  return buf;
}

static int count_row(const sg_store_item_row *row, void *ctx) {
  (*(int *)ctx)++;
  return 0;
}

static void test_items_rules(void **state) {
  fixture *f = *state;
  char root[64];
  assert_int_equal(add_item(f, "a", NULL, root), SG_E_OK);
  assert_int_equal(add_item(f, "a", NULL, NULL), SG_E_DUPLICATE_VALUE);
  assert_int_equal(add_item(f, "b", "itm_missing", NULL), SG_E_INVALID_REQUEST);
  assert_int_equal(add_item(f, "b", root, NULL), SG_E_OK);
  json_t *o = NULL;
  json_t *ch = json_pack("{s:s}", "status", "archived");
  assert_int_equal(sg_store_list_patch(f->st, f->ws, f->list, ch, NULL, &o), SG_E_OK);
  json_decref(o);
  json_decref(ch);
  assert_int_equal(add_item(f, "c", NULL, NULL), SG_E_LIST_ARCHIVED);
  json_t *v = NULL;
  assert_int_equal(sg_store_version_create(f->st, f->ws, f->list, &v), SG_E_LIST_ARCHIVED);
  assert_int_equal(sg_store_version_create(f->st, "wsp_other", f->list, &v), SG_E_INVALID_LIST);
}

static void test_snapshot_is_frozen(void **state) {
  fixture *f = *state;
  for (int i = 0; i < 25; i++) {
    char v[16];
    snprintf(v, sizeof v, "v%d", i);
    assert_int_equal(add_item(f, v, NULL, NULL), SG_E_OK);
  }
  int64_t n = new_version(f);
  for (int i = 25; i < 40; i++) {
    char v[16];
    snprintf(v, sizeof v, "v%d", i);
    assert_int_equal(add_item(f, v, NULL, NULL), SG_E_OK);
  }
  sg_version_job job;
  assert_int_equal(sg_store_version_begin_run(f->st, f->list, n, &job), SG_E_OK);
  assert_int_equal(job.item_count, 25);
  assert_int_equal(job.attempts, 1);
  assert_string_equal(json_string_value(json_object_get(job.locale_policy, "defaultLocale")), "en");
  /* Paging in chunks of 10 sees exactly the 25 items of the snapshot. */
  int seen = 0;
  int64_t after = 0, last;
  size_t got;
  do {
    assert_int_equal(sg_store_snapshot_items(f->st, f->list, job.snapshot_seq, after, 10, count_row,
                                             &seen, &last, &got),
                     SG_E_OK);
    after = last;
  } while (got == 10);
  assert_int_equal(seen, 25);
  sg_store_job_clear(&job);
}

static void test_transitions_and_monotonic_activation(void **state) {
  fixture *f = *state;
  char buf[16];
  assert_int_equal(add_item(f, "x", NULL, NULL), SG_E_OK);
  int64_t v1 = new_version(f), v2 = new_version(f), v3 = new_version(f);
  assert_int_equal(v1, 1);
  assert_int_equal(v3, 3);

  /* Work queue: all three, oldest first. */
  sg_version_ref refs[8];
  size_t n;
  assert_int_equal(sg_store_versions_pending(f->st, NULL, 0, refs, 8, &n), SG_E_OK);
  assert_int_equal(n, 3);
  assert_int_equal(refs[0].number, 1);
  assert_string_equal(refs[0].workspace_id, f->ws);
  /* The publish queue depth (/metrics, /readyz) counts the same versions. */
  int64_t depth = -1;
  assert_int_equal(sg_store_queue_depth(f->st, &depth), SG_E_OK);
  assert_int_equal(depth, 3);
  /* Narrowed to one list and to the versions older than v3. */
  assert_int_equal(sg_store_versions_pending(f->st, f->list, v3, refs, 8, &n), SG_E_OK);
  assert_int_equal(n, 2);
  assert_int_equal(refs[1].number, 2);
  assert_int_equal(sg_store_versions_pending(f->st, "lst_other", 0, refs, 8, &n), SG_E_OK);
  assert_int_equal(n, 0);

  /* v3 activates first; v2 activating later must not move the pointer back. */
  const char *h = "sha256:0000000000000000000000000000000000000000000000000000000000000003";
  assert_int_equal(sg_store_version_set_staged(f->st, f->list, v3, h), SG_E_OK);
  assert_int_equal(sg_store_version_set_staged(f->st, f->list, v3, h), SG_E_PRECONDITION_FAILED);
  bool activated;
  json_t *list = NULL;
  assert_int_equal(sg_store_version_activate(f->st, f->ws, f->list, v3, &activated, &list),
                   SG_E_OK);
  assert_true(activated);
  assert_int_equal(json_integer_value(json_object_get(list, "activeVersionNumber")), 3);
  assert_string_equal(json_string_value(json_object_get(list, "activeContentHash")), h);
  json_decref(list);
  /* The activation marked the list's edge record dirty in its own transaction. */
  int64_t want, done, rev;
  assert_int_equal(sg_store_edge_state(f->st, "lists", f->list, &want, &done, &rev), SG_E_OK);
  assert_true(want > done);
  assert_int_equal(sg_store_edge_done(f->st, "lists", f->list, want, 7), SG_E_OK);
  assert_int_equal(sg_store_edge_state(f->st, "lists", f->list, &want, &done, &rev), SG_E_OK);
  assert_true(want == done && rev == 7);

  assert_int_equal(sg_store_version_set_staged(f->st, f->list, v2, "sha256:22"), SG_E_OK);
  assert_int_equal(sg_store_version_activate(f->st, f->ws, f->list, v2, &activated, NULL), SG_E_OK);
  assert_false(activated);
  assert_string_equal(state_of(f, v2, buf), "superseded");
  assert_string_equal(state_of(f, v3, buf), "active");

  /* v1 fails validation: draft with its errors; a draft cannot be staged or activated. */
  json_t *errs =
      json_pack("[{s:n,s:s,s:s,s:s}]", "itemId", "path", "items", "reason", "r", "message", "m");
  assert_int_equal(sg_store_version_set_draft(f->st, f->list, v1, errs), SG_E_OK);
  json_decref(errs);
  assert_int_equal(sg_store_version_set_staged(f->st, f->list, v1, "sha256:11"),
                   SG_E_PRECONDITION_FAILED);
  assert_int_equal(sg_store_version_activate(f->st, f->ws, f->list, v1, &activated, NULL),
                   SG_E_PRECONDITION_FAILED);
  assert_int_equal(sg_store_version_set_failed(f->st, f->list, v1, "x"), SG_E_PRECONDITION_FAILED);
  json_t *v = NULL;
  assert_int_equal(sg_store_version_get(f->st, f->ws, f->list, v1, &v), SG_E_OK);
  assert_string_equal(json_string_value(json_object_get(v, "state")), "draft");
  assert_int_equal(json_array_size(json_object_get(v, "validationErrors")), 1);
  json_decref(v);

  /* A fourth version supersedes v3. */
  int64_t v4 = new_version(f);
  assert_int_equal(sg_store_version_set_staged(f->st, f->list, v4, "sha256:44"), SG_E_OK);
  assert_int_equal(sg_store_version_activate(f->st, f->ws, f->list, v4, &activated, NULL), SG_E_OK);
  assert_true(activated);
  assert_string_equal(state_of(f, v3, buf), "superseded");
  assert_string_equal(state_of(f, v4, buf), "active");
  assert_int_equal(sg_store_versions_pending(f->st, NULL, 0, refs, 8, &n), SG_E_OK);
  assert_int_equal(n, 0);
  assert_int_equal(sg_store_queue_depth(f->st, &depth), SG_E_OK);
  assert_int_equal(depth, 0);

  /* Unallocated numbers. */
  assert_int_equal(sg_store_version_get(f->st, f->ws, f->list, 5, &v), SG_E_NOT_FOUND);
  assert_int_equal(sg_store_version_get(f->st, f->ws, f->list, 0, &v), SG_E_NOT_FOUND);

  /* Newest first, paged. */
  json_t *data = NULL;
  bool more;
  assert_int_equal(sg_store_version_page(f->st, f->ws, f->list, 3, NULL, &data, &more), SG_E_OK);
  assert_true(more);
  assert_int_equal(json_integer_value(json_object_get(json_array_get(data, 0), "versionNumber")),
                   4);
  json_decref(data);
  json_t *after = json_pack("[i]", 2);
  assert_int_equal(sg_store_version_page(f->st, f->ws, f->list, 3, after, &data, &more), SG_E_OK);
  assert_false(more);
  assert_int_equal(json_array_size(data), 1);
  json_decref(data);
  json_decref(after);
}

/* Rollback: a superseded version's hash and state are read back, it becomes active again
 * with its own hash, and a queued version has no hash yet. */
static void test_rollback_reads_hash_and_state(void **state) {
  fixture *f = *state;
  const char *h1 = "sha256:0000000000000000000000000000000000000000000000000000000000000001";
  const char *h2 = "sha256:0000000000000000000000000000000000000000000000000000000000000002";
  assert_int_equal(add_item(f, "x", NULL, NULL), SG_E_OK);
  bool activated, changed;
  int64_t v1 = new_version(f);
  assert_int_equal(sg_store_version_set_staged(f->st, f->list, v1, h1), SG_E_OK);
  assert_int_equal(sg_store_version_activate(f->st, f->ws, f->list, v1, &activated, NULL), SG_E_OK);
  int64_t v2 = new_version(f);
  assert_int_equal(sg_store_version_set_staged(f->st, f->list, v2, h2), SG_E_OK);
  assert_int_equal(sg_store_version_activate(f->st, f->ws, f->list, v2, &activated, NULL), SG_E_OK);

  char hash[80], st[16];
  assert_int_equal(sg_store_version_hash(f->st, f->ws, f->list, v1, hash, st), SG_E_OK);
  assert_string_equal(hash, h1);
  assert_string_equal(st, "superseded");
  assert_int_equal(sg_store_version_hash(f->st, f->ws, f->list, 9, hash, st), SG_E_NOT_FOUND);

  json_t *list = NULL;
  assert_int_equal(sg_store_version_reactivate(f->st, f->ws, f->list, v1, NULL, &changed, &list),
                   SG_E_OK);
  assert_true(changed);
  assert_int_equal(json_integer_value(json_object_get(list, "activeVersionNumber")), v1);
  assert_string_equal(json_string_value(json_object_get(list, "activeContentHash")), h1);
  json_decref(list);
  assert_int_equal(sg_store_version_hash(f->st, f->ws, f->list, v2, hash, st), SG_E_OK);
  assert_string_equal(hash, h2);
  assert_string_equal(st, "superseded");
  assert_int_equal(sg_store_version_reactivate(f->st, f->ws, f->list, v1, NULL, &changed, NULL),
                   SG_E_OK);
  assert_false(changed);
  /* The active version's artifact is in use. */
  json_t *used = NULL;
  assert_int_equal(sg_store_artifacts_in_use(f->st, &used), SG_E_OK);
  bool has_h1 = false;
  for (size_t i = 0; i < json_array_size(used); i++)
    if (strcmp(json_string_value(json_array_get(used, i)), h1) == 0) has_h1 = true;
  assert_true(has_h1);
  json_decref(used);

  int64_t v3 = new_version(f);
  assert_int_equal(sg_store_version_hash(f->st, f->ws, f->list, v3, hash, st), SG_E_OK);
  assert_string_equal(hash, "");
  assert_string_equal(st, "queued");
  assert_int_equal(sg_store_version_reactivate(f->st, f->ws, f->list, v2, NULL, &changed, NULL),
                   SG_E_PUBLISH_IN_PROGRESS);
}

static void test_attempts_count(void **state) {
  fixture *f = *state;
  int64_t n = new_version(f);
  sg_version_job job;
  for (int i = 1; i <= 3; i++) {
    assert_int_equal(sg_store_version_begin_run(f->st, f->list, n, &job), SG_E_OK);
    assert_int_equal(job.attempts, i);
    sg_store_job_clear(&job);
  }
  assert_int_equal(sg_store_version_set_failed(f->st, f->list, n, "too_many_attempts"), SG_E_OK);
  assert_int_equal(sg_store_version_begin_run(f->st, f->list, n, &job), SG_E_OK);
  assert_string_equal(job.state, "failed");
  assert_int_equal(job.attempts, 3); /* a resolved version is not counted again */
  sg_store_job_clear(&job);
  json_t *v = NULL;
  assert_int_equal(sg_store_version_get(f->st, f->ws, f->list, n, &v), SG_E_OK);
  assert_string_equal(json_string_value(json_object_get(v, "failureReason")), "too_many_attempts");
  json_decref(v);
  assert_int_equal(sg_store_version_begin_run(f->st, f->list, 99, &job), SG_E_NOT_FOUND);
}

/* Forks a process that opens the same store, claims version n with a long lease (and
 * renews it), says so on a pipe and waits to be killed: another process holding a lease. */
static pid_t claim_elsewhere(fixture *f, int64_t n, int64_t lease_ms) {
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlives a test that failed before killing it */
    sg_store *st = NULL;
    char err[256];
    sg_version_job job;
    (void)err;
    char ok = store_test_open(f->dir, &st) == 0 &&
              sg_store_version_claim(st, f->list, n, lease_ms, &job) == SG_E_OK &&
              sg_store_version_leases_renew(st, lease_ms) == SG_E_OK;
    if (write(fds[1], &ok, 1) != 1) _exit(1);
    for (;;) pause();
  }
  close(fds[1]);
  char ok = 0;
  assert_int_equal(read(fds[0], &ok, 1), 1);
  close(fds[0]);
  assert_true(ok);
  return pid;
}

static void test_claim_lease_and_attempts(void **state) {
  fixture *f = *state;
  int64_t n = new_version(f);
  sg_store_version_set_async(f->st, f->list, n);
  pid_t other = claim_elsewhere(f, n, 600000); /* attempt 1, by the other process */
  sg_version_job job;
  sg_version_ref ref;
  bool found = true;
  /* Leased by a live process: not claimable, not offered to the worker, not counted. */
  assert_int_equal(sg_store_version_claim(f->st, f->list, n, 1000, &job), SG_E_PUBLISH_IN_PROGRESS);
  sg_store_job_clear(&job);
  assert_int_equal(sg_store_version_next(f->st, NULL, 30, &ref, &found), SG_E_OK);
  assert_false(found);
  /* It dies (kill -9): a dead process of this host holds nothing. */
  kill(other, SIGKILL);
  waitpid(other, NULL, 0);
  assert_int_equal(sg_store_version_next(f->st, NULL, 30, &ref, &found), SG_E_OK);
  assert_true(found);
  assert_int_equal(ref.number, n);
  assert_int_equal(sg_store_version_claim(f->st, f->list, n, 1000, &job), SG_E_OK);
  assert_string_equal(job.state, "queued");
  assert_int_equal(job.attempts, 2);
  sg_store_job_clear(&job);
  assert_int_equal(sg_store_version_leases_renew(f->st, 1000), SG_E_OK);
  assert_int_equal(sg_store_version_release(f->st, f->list, n), SG_E_OK);
  /* A synchronous (not async) version is left to its request while it is fresh. */
  int64_t m = new_version(f);
  assert_int_equal(sg_store_version_set_failed(f->st, f->list, n, "test"), SG_E_OK);
  assert_int_equal(sg_store_version_next(f->st, NULL, 30, &ref, &found), SG_E_OK);
  assert_false(found);
  assert_int_equal(sg_store_version_next(f->st, NULL, -5, &ref, &found), SG_E_OK);
  assert_true(found);
  assert_int_equal(ref.number, m);
}

/* The service clock of this process (SUGGESTD_CLOCK_OFFSET, read by sg_init), shifted by
 * seconds: a host whose clock has drifted. */
static void set_clock_offset(const char *seconds) {
  assert_int_equal(setenv("SUGGESTD_CLOCK_OFFSET", seconds, 1), 0);
  assert_int_equal(sg_init(), 0);
}

/* A lease runs on the store's clock (the database server's on PostgreSQL, SQLite's own on
 * SQLite), never on the clock of the process that takes or checks it: a process whose
 * clock runs two minutes ahead cannot take a live 60 s lease over, and a lease taken and
 * renewed by a process whose clock runs two minutes behind is live for everyone else. */
static void test_lease_runs_on_the_store_clock(void **state) {
  fixture *f = *state;
  sg_version_job job;
  sg_version_ref ref;
  bool found = true;
  int64_t n = new_version(f);
  sg_store_version_set_async(f->st, f->list, n);
  pid_t other = claim_elsewhere(f, n, 60000);
  set_clock_offset("120"); /* this host runs ahead */
  assert_int_equal(sg_store_version_claim(f->st, f->list, n, 1000, &job), SG_E_PUBLISH_IN_PROGRESS);
  sg_store_job_clear(&job);
  assert_int_equal(sg_store_version_next(f->st, NULL, 30, &ref, &found), SG_E_OK);
  assert_false(found);
  set_clock_offset("0");
  kill(other, SIGKILL);
  waitpid(other, NULL, 0);
  assert_int_equal(sg_store_version_set_failed(f->st, f->list, n, "test"), SG_E_OK);

  int64_t m = new_version(f);
  sg_store_version_set_async(f->st, f->list, m);
  set_clock_offset("-120"); /* the other host runs behind (the child inherits it) */
  other = claim_elsewhere(f, m, 60000);
  set_clock_offset("0");
  assert_int_equal(sg_store_version_claim(f->st, f->list, m, 1000, &job), SG_E_PUBLISH_IN_PROGRESS);
  sg_store_job_clear(&job);
  assert_int_equal(sg_store_version_next(f->st, NULL, 30, &ref, &found), SG_E_OK);
  assert_false(found);
  kill(other, SIGKILL);
  waitpid(other, NULL, 0);
  /* Its owner dead, the version is this process's to run. */
  assert_int_equal(sg_store_version_claim(f->st, f->list, m, 1000, &job), SG_E_OK);
  assert_int_equal(job.attempts, 2);
  sg_store_job_clear(&job);
}

static void test_coalescing(void **state) {
  fixture *f = *state;
  char buf[16];
  int64_t a = new_version(f), b = new_version(f), c = new_version(f);
  sg_store_version_set_async(f->st, f->list, a);
  sg_store_version_set_async(f->st, f->list, c);
  sg_version_job job;
  /* a: async with newer ones queued, superseded without a claim (no attempt, no hash). */
  assert_int_equal(sg_store_version_claim(f->st, f->list, a, 1000, &job), SG_E_OK);
  assert_string_equal(job.state, "superseded");
  assert_int_equal(job.attempts, 0);
  sg_store_job_clear(&job);
  /* b: a synchronous publish is never coalesced (a 200 answers active or draft). */
  assert_int_equal(sg_store_version_claim(f->st, f->list, b, 1000, &job), SG_E_OK);
  assert_string_equal(job.state, "queued");
  assert_int_equal(job.attempts, 1);
  sg_store_job_clear(&job);
  /* c: the newest is compiled. */
  assert_int_equal(sg_store_version_claim(f->st, f->list, c, 1000, &job), SG_E_OK);
  assert_string_equal(job.state, "queued");
  sg_store_job_clear(&job);
  json_t *v = NULL;
  assert_int_equal(sg_store_version_get(f->st, f->ws, f->list, a, &v), SG_E_OK);
  assert_string_equal(state_of(f, a, buf), "superseded");
  assert_true(json_is_null(json_object_get(v, "contentHash")));
  assert_true(json_is_null(json_object_get(v, "activatedAt")));
  json_decref(v);
}

static void test_next_is_round_robin_across_workspaces(void **state) {
  fixture *f = *state;
  json_t *o = NULL;
  assert_int_equal(sg_store_workspace_create(f->st, "Other", &o), SG_E_OK);
  char ws2[64], list2[64];
  snprintf(ws2, sizeof ws2, "%s", json_string_value(json_object_get(o, "id")));
  json_decref(o);
  assert_int_equal(sg_store_list_create(f->st, ws2, "L2", NULL, &o), SG_E_OK);
  snprintf(list2, sizeof list2, "%s", json_string_value(json_object_get(o, "id")));
  json_decref(o);
  for (int i = 0; i < 3; i++) sg_store_version_set_async(f->st, f->list, new_version(f));
  assert_int_equal(sg_store_version_create(f->st, ws2, list2, &o), SG_E_OK);
  sg_store_version_set_async(f->st, list2, json_integer_value(json_object_get(o, "versionNumber")));
  json_decref(o);
  sg_version_ref ref;
  bool found = false;
  /* After a run in the first workspace, the other one's version comes next, though the
   * first's backlog is older. */
  assert_int_equal(sg_store_version_next(f->st, f->ws, 30, &ref, &found), SG_E_OK);
  assert_true(found);
  assert_string_equal(ref.list_id, list2);
  assert_int_equal(sg_store_version_next(f->st, ws2, 30, &ref, &found), SG_E_OK);
  assert_string_equal(ref.list_id, f->list);
  assert_int_equal(ref.number, 1);
}

int main(void) {
  if (sg_init()) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_items_rules, store_fixture_setup,
                                      store_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_snapshot_is_frozen, store_fixture_setup,
                                      store_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_transitions_and_monotonic_activation,
                                      store_fixture_setup, store_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_rollback_reads_hash_and_state, store_fixture_setup,
                                      store_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_attempts_count, store_fixture_setup,
                                      store_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_claim_lease_and_attempts, store_fixture_setup,
                                      store_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_lease_runs_on_the_store_clock, store_fixture_setup,
                                      store_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_coalescing, store_fixture_setup, store_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_next_is_round_robin_across_workspaces,
                                      store_fixture_setup, store_fixture_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
