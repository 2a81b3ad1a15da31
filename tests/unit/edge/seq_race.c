/* The reader side of the edge tests' write races (seq_race.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "edge/seq_race.h"

void sg_test_watch_seq(sg_edge *e, sg_edge_kind kind, const char *id, pid_t pids[2]) {
  int64_t seen = 0;
  for (int alive = 2; alive > 0;) {
    char *json;
    size_t len;
    if (sg_edge_get(e, kind, id, &json, &len) == 0) {
      int64_t v;
      assert_int_equal(sscanf(json, "{\"seq\":%ld}", &v), 1);
      assert_true(v != -1);
      if (v > 0) {
        assert_true(v >= seen);
        seen = v;
      }
      free(json);
    }
    for (int w = 0; w < 2; w++) {
      int st;
      if (pids[w] > 0 && waitpid(pids[w], &st, WNOHANG) == pids[w]) {
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 0);
        pids[w] = 0;
        alive--;
      }
    }
  }
}
