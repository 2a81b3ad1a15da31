/* A cmocka fixture shared by the store's unit tests: a fresh SQLite store in a temporary
 * directory with one workspace and one list in it, removed again at teardown. */
#ifndef SG_TESTS_STORE_FIXTURE_H
#define SG_TESTS_STORE_FIXTURE_H

#include "store/store.h"

typedef struct {
  char dir[256];
  sg_store *st;
  char ws[64], list[64];
} store_fixture;

/* cmocka group/test setup and teardown; *state is a store_fixture. */
int store_fixture_setup(void **state);
int store_fixture_teardown(void **state);

#endif
