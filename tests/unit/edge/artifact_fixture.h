/*
 * A real compiled artifact for the edge tests: n items whose values carry salt, so two
 * salts give two different artifacts (and content hashes).
 */
#ifndef SG_TEST_EDGE_ARTIFACT_FIXTURE_H
#define SG_TEST_EDGE_ARTIFACT_FIXTURE_H

#include <stddef.h>

#include "common/buf.h"

/* Compiles the artifact into *out (initialised here; sg_buf_free it) and writes its
 * contentHash ("sha256:<hex>") into hash. */
void sg_test_artifact(size_t n, unsigned salt, sg_buf *out, char hash[72]);

#endif
