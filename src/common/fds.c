#include "common/fds.h"

#include <stdio.h>
#include <sys/resource.h>

unsigned long sg_fd_raise_limit(void) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return 1024;
  if (rl.rlim_cur < rl.rlim_max) {
    struct rlimit want = rl;
    want.rlim_cur = rl.rlim_max;
    /* An unlimited hard limit still stops at the kernel's nr_open: try a sane ceiling. */
    if (setrlimit(RLIMIT_NOFILE, &want) != 0) {
      want.rlim_cur = rl.rlim_max < (1u << 20) ? rl.rlim_max : (1u << 20);
      if (setrlimit(RLIMIT_NOFILE, &want) != 0) want.rlim_cur = rl.rlim_cur;
    }
    rl.rlim_cur = want.rlim_cur;
  }
  return rl.rlim_cur == RLIM_INFINITY ? (1ul << 20) : (unsigned long)rl.rlim_cur;
}

static unsigned clamp(unsigned long v, unsigned lo, unsigned hi) {
  return v < lo ? lo : v > hi ? hi : (unsigned)v;
}

void sg_fd_budget_for(unsigned long nofile, bool control, bool runtime, sg_fd_budget *out) {
  /* A quarter of a small limit, at most 256: SQLite and the edge need a few dozen, the
   * listeners' threads a few each; the rest is headroom for bursts of imports. */
  out->nofile = nofile;
  out->reserve = nofile / 4 < 256 ? nofile / 4 : 256;
  unsigned long avail = nofile > out->reserve ? nofile - out->reserve : 0;
  out->control_conns = out->runtime_conns = 0;
  if (control && runtime) {
    /* Half the budget at most for the control plane (each connection weighs
     * SG_FDS_PER_CONTROL_CONN), the rest for the runtime. */
    out->control_conns = clamp(avail / 2 / SG_FDS_PER_CONTROL_CONN, 8, SG_FDS_MAX_CONTROL_CONNS);
    unsigned long used = (unsigned long)out->control_conns * SG_FDS_PER_CONTROL_CONN;
    out->runtime_conns = clamp(avail > used ? avail - used : 0, 8, SG_FDS_MAX_RUNTIME_CONNS);
  } else if (control) {
    out->control_conns = clamp(avail / SG_FDS_PER_CONTROL_CONN, 8, SG_FDS_MAX_CONTROL_CONNS);
  } else if (runtime) {
    out->runtime_conns = clamp(avail, 8, SG_FDS_MAX_RUNTIME_CONNS);
  }
}

void sg_fd_budget_log(const sg_fd_budget *b) {
  fprintf(stderr,
          "{\"level\":\"info\",\"msg\":\"descriptor budget\",\"nofile\":%lu,\"reserve\":%lu,"
          "\"controlConnections\":%u,\"runtimeConnections\":%u}\n",
          b->nofile, b->reserve, b->control_conns, b->runtime_conns);
}
