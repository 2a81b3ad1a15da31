/*
 * The file-descriptor budget of a server process.
 *
 * Every connection costs a descriptor, and so do the store (SQLite's database, WAL and
 * shared-memory files, an import's staging file, an export's own read connection), the
 * edge directory and the listeners. Without a budget, idle connections on one listener
 * can take the last descriptors and starve the other listener and the store. So at start
 * the soft RLIMIT_NOFILE is raised to the hard one, a reserve is set aside, and the rest
 * is split into connection caps: a control-plane connection is counted at
 * SG_FDS_PER_CONTROL_CONN descriptors (the request may open store files), a runtime
 * connection at one.
 */
#ifndef SG_COMMON_FDS_H
#define SG_COMMON_FDS_H

#include <stdbool.h>

#define SG_FDS_PER_CONTROL_CONN 4
#define SG_FDS_MAX_CONTROL_CONNS 1024u
#define SG_FDS_MAX_RUNTIME_CONNS 16384u

typedef struct {
  unsigned long nofile;   /* the soft limit after raising it */
  unsigned long reserve;  /* kept for the store, the edge, listeners and threads */
  unsigned control_conns; /* 0 when the process has no control listener */
  unsigned runtime_conns; /* 0 when the process has no runtime listener */
} sg_fd_budget;

/* Raises the soft RLIMIT_NOFILE as far as the hard limit allows; returns the soft limit. */
unsigned long sg_fd_raise_limit(void);
/* Splits nofile descriptors between the listeners the process runs. */
void sg_fd_budget_for(unsigned long nofile, bool control, bool runtime, sg_fd_budget *out);
/* One info line on stderr with the budget, for operators. */
void sg_fd_budget_log(const sg_fd_budget *b);

#endif
