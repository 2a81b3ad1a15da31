/*
 * The edge under test, opened fresh for each test of the edge suites: a spec (a Redis
 * URL, or a directory) or, for NULL, a new temporary directory edge removed afterwards;
 * with a random key prefix so tests on one shared Redis do not see each other's records.
 */
#ifndef SG_TEST_EDGE_FIXTURE_H
#define SG_TEST_EDGE_FIXTURE_H

#include "edge/edge.h"

typedef struct {
  sg_edge *e;
  char root[256]; /* the temporary directory, when the fixture made one */
  char prefix[24];
} sgt_edge_fixture;

/* Opens the edge of spec (NULL: a temporary directory); fails the test when it cannot. */
sgt_edge_fixture *sgt_edge_fixture_new(const char *spec, const char *tag);
/* Closes it and removes its temporary directory: 0, or -1 when that failed. */
int sgt_edge_fixture_free(sgt_edge_fixture *f);

#endif
