/*
 * The reader side of the edge tests' write races: two writer processes put {"seq":N}
 * bodies to one record while the test reads it.
 */
#ifndef SG_TEST_EDGE_SEQ_RACE_H
#define SG_TEST_EDGE_SEQ_RACE_H

#include <sys/types.h>

#include "edge/edge.h"

/* Reads record (kind, id) of e until both writers pids[0..2) have exited, each with
 * status 0. Every body read is {"seq":N}: those with N > 0 never go below the one read
 * before, and none is {"seq":-1} (the body of an older write the edge must refuse). */
void sg_test_watch_seq(sg_edge *e, sg_edge_kind kind, const char *id, pid_t pids[2]);

#endif
