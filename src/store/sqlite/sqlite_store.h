/* Internals shared by the SQLite backend's files. */
#ifndef SG_STORE_SQLITE_STORE_H
#define SG_STORE_SQLITE_STORE_H

#include <pthread.h>
#include <sqlite3.h>

#include "store/store.h"

extern const char *const sg__sqlite_migrations[];

/* Read-only connections per store (see "Readers" below). */
#define SG__SQ_READERS 4

struct sg_store {
  sqlite3 *db;
  char dir[4096];     /* the data directory: import staging files */
  char db_path[4096]; /* the database file, which export and the readers open again */
  /* One connection shared by the process's threads; the mutex makes each store call one
   * transaction. Other processes (admin CLI) coordinate through WAL + busy timeout. */
  pthread_mutex_t mu;
#define SG__STMT_CACHE 64
  const char *sql[SG__STMT_CACHE];
  sqlite3_stmt *stmt[SG__STMT_CACHE];
  /* The reader pool: NULL in a reader itself. next_reader spreads acquisitions. */
  sg_store *readers[SG__SQ_READERS];
  unsigned next_reader;
};

/*
 * Readers.
 *
 * The write connection above is one connection behind one mutex, so a long write (an
 * import's apply holds it for ~10 s per million items) used to stall every other call,
 * authentication included. Pure reads therefore go to a small pool of read-only
 * connections on the same file. A reader is itself an sg_store (its own sqlite3 opened
 * with SQLITE_OPEN_READONLY, its own mutex, its own statement cache, no readers of its
 * own), so the helpers below that take an sg_store work on either kind unchanged.
 *
 * Why this is correct:
 * - The database is in WAL mode: a reader reads the last committed snapshot while the
 *   writer writes, and neither waits for the other (only checkpoints and WAL recovery
 *   interact, and the automatic checkpoint is PASSIVE: it never waits for readers).
 * - Read-after-write: every store call is a whole transaction, committed before it
 *   returns. A reader's read transaction begins at the first step of a statement, after
 *   the caller's earlier write returned, so it sees that write (WAL readers see every
 *   commit that completed before their transaction began). To keep that true a reader
 *   must never keep a read transaction open between calls: sg__sq_reader_release resets
 *   any statement left mid-step, so the next call takes a fresh snapshot.
 * - What stays on the writer: every read inside a write transaction (checks such as
 *   sg__sq_list_writable, the ETag compare of PATCH/DELETE, the reload of a record just
 *   written) because it must see the transaction's own uncommitted rows and decide under
 *   the write lock; and sg_store_secret, which creates the secret on first use.
 * - A read that spans several statements on a reader wraps them in BEGIN/COMMIT (a
 *   deferred read transaction) so they agree on one snapshot.
 */

/* Takes a reader of st and returns it locked (pass it where an sg_store is expected).
 * Never touches st->mu: it tries each reader's mutex in turn and, when all are busy
 * (other readers, never the writer), waits for one. Pair with sg__sq_reader_release. */
sg_store *sg__sq_reader_acquire(sg_store *st);
/* Resets any statement of reader r still mid-step (ending its read transaction) and
 * unlocks it. */
void sg__sq_reader_release(sg_store *r);

/* Returns the cached prepared statement for a static SQL string (keyed by its address),
 * reset and with bindings cleared. NULL on error. Call with st->mu held (st may be a
 * reader from sg__sq_reader_acquire). */
sqlite3_stmt *sg__sq_prep(sg_store *st, const char *sql);
/* Runs BEGIN IMMEDIATE / COMMIT / ROLLBACK. */
int sg__sq_begin(sg_store *st);
int sg__sq_commit(sg_store *st);
void sg__sq_rollback(sg_store *st);
/* Ends the write transaction begun by sg__sq_begin: commits when rc is SG_E_OK, else
 * rolls back. Returns rc, or SG_E_INTERNAL when the commit failed (then rolled back), so
 * a caller that built a result must drop it unless SG_E_OK comes back. */
sg_err sg__sq_end(sg_store *st, sg_err rc);
/* Runs the prepared, bound write statement s to completion and resets it. Returns the
 * number of rows it changed, or -1 on error. */
int sg__sq_run(sg_store *st, sqlite3_stmt *s);
/* Maps a count from sg__sq_run: SG_E_INTERNAL for -1, `none` for 0 (SG_E_NOT_FOUND for
 * "update one row by id"), SG_E_OK otherwise. */
sg_err sg__sq_changed(int changed, sg_err none);
/* Whether the query sql ("SELECT 1 FROM … WHERE …") finds a row, with p1 bound to ?1 and
 * p2 to ?2 when sql has a second parameter: 1 yes, 0 no, -1 on error. */
int sg__sq_exists(sg_store *st, const char *sql, const char *p1, const char *p2);
/* One page of a paginated read: steps s (bound with LIMIT limit + 1) and builds each of
 * the first `limit` rows with row(); *more tells whether a further row exists. Resets s.
 * Returns the array (caller owns it), or NULL on a step error. */
json_t *sg__sq_page_rows(sqlite3_stmt *s, size_t limit, json_t *(*row)(sqlite3_stmt *s),
                         bool *more);
/* Binds text (NULL binds SQL NULL). */
void sg__sq_text(sqlite3_stmt *s, int i, const char *v);
/* Column as a NUL-terminated string or NULL. */
const char *sg__sq_col(sqlite3_stmt *s, int i);

/* Loads list id of workspace_id in the API's shape into *out (caller owns it).
 * SG_E_INVALID_LIST when absent or another workspace's. With workspace_id NULL any
 * workspace's list is found and *out also carries "workspaceId". Call with st->mu held
 * (or on a reader). */
sg_err sg__sq_list_load(sg_store *st, const char *workspace_id, const char *id, json_t **out);
/* SG_E_OK when list_id is a list of workspace_id (archived or not), else
 * SG_E_INVALID_LIST or SG_E_INTERNAL. Call with st->mu held (or on a reader). */
sg_err sg__sq_list_exists(sg_store *st, const char *workspace_id, const char *list_id);
/* SG_E_OK when list_id is an active list of workspace_id, else SG_E_LIST_ARCHIVED,
 * SG_E_INVALID_LIST or SG_E_INTERNAL. Call with st->mu held. */
sg_err sg__sq_list_writable(sg_store *st, const char *workspace_id, const char *list_id);
/* Takes the list's next item clock (see migration 3): every item change of one write
 * transaction is stamped with it. Call inside a write transaction with st->mu held.
 * Returns 0 and *clock, or -1. */
int sg__sq_item_clock_next(sg_store *st, const char *list_id, int64_t *clock);
/* The item columns, in the order sg__sq_item_row reads them. */
#define SG__SQ_ITEM_COLS                                                                           \
  "id, value, display_value, aliases, rank, parent_id, locales, display_order, created_at"
/* Builds the API representation of the item row under s (SG__SQ_ITEM_COLS first). */
json_t *sg__sq_item_row(sqlite3_stmt *s);
/* Compact JSON text of v in its stored form, or NULL when v is absent, null or empty
 * ("none"). The caller frees the result. Imports use it too, so an unchanged item
 * compares equal byte for byte. */
char *sg__sq_json_text(const json_t *v);
/* Binds an item body's stored fields to parameters at, at+1, … at+6 in the one order every
 * item statement uses: value, displayValue, aliases, rank, parent, locales, displayOrder.
 * aliases and locales are their JSON texts (sg__sq_json_text); parent is the parent's id
 * or, for import staging, its value. */
void sg__sq_bind_item(sqlite3_stmt *s, int at, const json_t *item, const char *aliases,
                      const char *parent, const char *locales);
/* The public record of the signing key under s (kid, public_key, created_at, retired_at):
 * {kid, alg, publicKey, createdAt, retiredAt, retiredAtUnix}; NULL for a malformed row. */
json_t *sg__sq_signing_key_row(sqlite3_stmt *s);
/* Formats a Unix time column as an RFC 3339 JSON string (JSON null for SQL NULL). */
json_t *sg__sq_ts(sqlite3_stmt *s, int col);

/* This process as the owner of an in-flight record or a lease: "<host> <pid> <start>"
 * (idempotency.c). */
const char *sg__sq_self_owner(void);
/* True when owner names a process of this host that is no longer running. */
bool sg__sq_owner_dead(const char *owner);

#endif
