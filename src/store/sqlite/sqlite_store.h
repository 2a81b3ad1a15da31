/* Internals shared by the SQLite backend's files. */
#ifndef SG_STORE_SQLITE_STORE_H
#define SG_STORE_SQLITE_STORE_H

#include <pthread.h>
#include <sqlite3.h>

#include "store/store.h"

extern const char *const sg__sqlite_migrations[];

struct sg_store {
  sqlite3 *db;
  /* One connection shared by the process's threads; the mutex makes each store call one
   * transaction. Other processes (admin CLI) coordinate through WAL + busy timeout. */
  pthread_mutex_t mu;
#define SG__STMT_CACHE 64
  const char *sql[SG__STMT_CACHE];
  sqlite3_stmt *stmt[SG__STMT_CACHE];
};

/* Returns the cached prepared statement for a static SQL string (keyed by its address),
 * reset and with bindings cleared. NULL on error. Call with st->mu held. */
sqlite3_stmt *sg__sq_prep(sg_store *st, const char *sql);
/* Runs BEGIN IMMEDIATE / COMMIT / ROLLBACK. */
int sg__sq_begin(sg_store *st);
int sg__sq_commit(sg_store *st);
void sg__sq_rollback(sg_store *st);
/* Binds text (NULL binds SQL NULL). */
void sg__sq_text(sqlite3_stmt *s, int i, const char *v);
/* Column as a NUL-terminated string or NULL. */
const char *sg__sq_col(sqlite3_stmt *s, int i);

#endif
