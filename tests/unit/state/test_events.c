/* Selection events: dedupe, durable NDJSON, dedupe reloaded after a restart
 * (src/runtime/events.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "state/internal.h"

static sg__selection sel(const char *uuid) {
  sg__selection s;
  memset(&s, 0, sizeof s);
  snprintf(s.selection_id, sizeof s.selection_id, "%s", uuid);
  s.query_request_id = "req_1";
  s.list_id = "lst_1";
  s.item_id = "itm_\"1";
  s.position = 2;
  s.query = NULL;
  return s;
}

static int count_lines(const char *dir) {
  int n = 0;
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    FILE *f = fopen(p, "r");
    int c;
    while (f && (c = fgetc(f)) != EOF) n += c == '\n';
    if (f) fclose(f);
  }
  if (d) closedir(d);
  return n;
}

static void test_dedupe_and_restart(void **state) {
  char dir[] = "/tmp/sg-events-XXXXXX";
  assert_non_null(mkdtemp(dir));
  const char *A = "123e4567-e89b-12d3-a456-426614174000";
  const char *B = "123e4567-e89b-12d3-a456-426614174001";
  const char *C = "ffffffff-ffff-ffff-ffff-ffffffffffff";
  int64_t now = sg_now_ms();
  sg__events *ev;
  assert_int_equal(sg__events_open(dir, &ev), 0);
  sg__selection a = sel(A), b = sel(B), c = sel(C);
  assert_int_equal(sg__events_submit(ev, &a, "app_1", "pk_1", now), SG__EV_ACCEPTED);
  assert_int_equal(sg__events_submit(ev, &a, "app_1", "pk_1", now), SG__EV_DUPLICATE);
  assert_int_equal(sg__events_submit(ev, &b, "app_1", "pk_1", now), SG__EV_ACCEPTED);
  sg__events_sync(ev);
  assert_int_equal(count_lines(dir), 2);
  sg__events_close(ev);

  assert_int_equal(sg__events_open(dir, &ev), 0);
  assert_int_equal(sg__events_submit(ev, &a, "app_1", "pk_1", now + 1000), SG__EV_DUPLICATE);
  assert_int_equal(sg__events_submit(ev, &b, "app_1", "pk_1", now + 1000), SG__EV_DUPLICATE);
  assert_int_equal(sg__events_submit(ev, &c, "app_1", "pk_1", now + 1000), SG__EV_ACCEPTED);
  /* After 24 h an id may be recorded again. */
  assert_int_equal(sg__events_submit(ev, &a, "app_1", "pk_1", now + 25LL * 3600 * 1000),
                   SG__EV_ACCEPTED);
  sg__events_close(ev);
  assert_int_equal(count_lines(dir), 4);

  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

static void test_many_ids_grow(void **state) {
  char dir[] = "/tmp/sg-events-XXXXXX";
  assert_non_null(mkdtemp(dir));
  sg__events *ev;
  assert_int_equal(sg__events_open(dir, &ev), 0);
  int64_t now = sg_now_ms();
  for (int i = 0; i < 20000; i++) {
    char u[37];
    snprintf(u, sizeof u, "%08x-0000-4000-8000-%012x", i, i * 7);
    sg__selection s = sel(u);
    assert_int_equal(sg__events_submit(ev, &s, "app_1", "pk_1", now), SG__EV_ACCEPTED);
    if (i % 1000 == 0) sg__events_sync(ev); /* keep the queue from filling */
  }
  sg__selection s = sel("00000007-0000-4000-8000-000000000031");
  assert_int_equal(sg__events_submit(ev, &s, "app_1", "pk_1", now), SG__EV_DUPLICATE);
  sg__events_close(ev);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  if (sg_init()) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dedupe_and_restart),
      cmocka_unit_test(test_many_ids_grow),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
