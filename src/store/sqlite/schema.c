/*
 * Versioned migrations of the SQLite store. Each entry runs once, in order, inside one
 * transaction that also records the new user_version; never edit a shipped entry, add a
 * new one.
 */
#include "store/sqlite/sqlite_store.h"

const char *const sg__sqlite_migrations[] = {
    /* 1: the foundation. */
    "CREATE TABLE meta(name TEXT PRIMARY KEY, value BLOB NOT NULL);"
    "CREATE TABLE workspaces(id TEXT PRIMARY KEY, name TEXT NOT NULL,"
    "  status TEXT NOT NULL DEFAULT 'active', created_at INTEGER NOT NULL);"
    "CREATE TABLE applications(id TEXT PRIMARY KEY,"
    "  workspace_id TEXT NOT NULL REFERENCES workspaces(id), name TEXT NOT NULL,"
    "  status TEXT NOT NULL DEFAULT 'active', monthly_quota INTEGER,"
    "  created_at INTEGER NOT NULL);"
    "CREATE TABLE secret_keys(id TEXT PRIMARY KEY,"
    "  application_id TEXT NOT NULL REFERENCES applications(id), digest BLOB NOT NULL,"
    "  status TEXT NOT NULL DEFAULT 'active', created_at INTEGER NOT NULL,"
    "  revoked_at INTEGER);"
    "CREATE TABLE lists(id TEXT PRIMARY KEY,"
    "  workspace_id TEXT NOT NULL REFERENCES workspaces(id), name TEXT NOT NULL,"
    "  description TEXT, slug TEXT NOT NULL, visibility TEXT NOT NULL DEFAULT 'private',"
    "  status TEXT NOT NULL DEFAULT 'active', min_query_chars INTEGER NOT NULL DEFAULT 1,"
    "  debounce_ms INTEGER NOT NULL DEFAULT 150, default_locale TEXT NOT NULL DEFAULT 'en',"
    "  supported_locales TEXT NOT NULL DEFAULT '[\"en\"]',"
    "  display_order INTEGER NOT NULL DEFAULT 0, active_version_number INTEGER,"
    "  active_content_hash TEXT,"
    "  next_version_number INTEGER NOT NULL DEFAULT 1, created_at INTEGER NOT NULL,"
    "  updated_at INTEGER NOT NULL, UNIQUE(workspace_id, slug));"
    "CREATE INDEX lists_order ON lists(workspace_id, display_order, slug, id);"
    "CREATE TABLE idempotency(workspace_id TEXT NOT NULL, key TEXT NOT NULL,"
    "  method TEXT NOT NULL, path TEXT NOT NULL, body_hash BLOB NOT NULL,"
    "  state TEXT NOT NULL, status INTEGER, body TEXT, headers TEXT,"
    "  created_at INTEGER NOT NULL, PRIMARY KEY(workspace_id, key));"
    "CREATE TABLE publishable_keys(id TEXT PRIMARY KEY,"
    "  application_id TEXT NOT NULL REFERENCES applications(id),"
    "  list_id TEXT NOT NULL REFERENCES lists(id), digest TEXT NOT NULL UNIQUE,"
    "  origins TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'active',"
    "  created_at INTEGER NOT NULL);"
    "CREATE TABLE subscriptions(id TEXT PRIMARY KEY,"
    "  workspace_id TEXT NOT NULL REFERENCES workspaces(id),"
    "  list_id TEXT NOT NULL REFERENCES lists(id), status TEXT NOT NULL DEFAULT 'active',"
    "  created_at INTEGER NOT NULL);"
    "CREATE TABLE signing_keys(kid TEXT PRIMARY KEY, secret_key BLOB NOT NULL,"
    "  public_key BLOB NOT NULL, created_at INTEGER NOT NULL, retired_at INTEGER);",
    /* 2: items and versions. Items are append-only and numbered by seq (AUTOINCREMENT,
     * so in commit order under SQLite's single writer): a version's snapshot is "the
     * list's items with seq <= snapshot_seq", which costs nothing to take and stays
     * exact because items are never updated or deleted in place. edge_synced is set once
     * the list's edge record names the version, so a restart can finish an interrupted
     * write. */
    "CREATE TABLE items(seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE,"
    "  list_id TEXT NOT NULL REFERENCES lists(id), value TEXT NOT NULL,"
    "  display_value TEXT NOT NULL, aliases TEXT, rank INTEGER NOT NULL DEFAULT 0,"
    "  parent_id TEXT, locales TEXT, display_order INTEGER NOT NULL DEFAULT 0,"
    "  created_at INTEGER NOT NULL, UNIQUE(list_id, value));"
    "CREATE INDEX items_order ON items(list_id, display_order, id);"
    "CREATE INDEX items_snapshot ON items(list_id, seq);"
    "CREATE TABLE versions(list_id TEXT NOT NULL REFERENCES lists(id),"
    "  version_number INTEGER NOT NULL, state TEXT NOT NULL, content_hash TEXT,"
    "  item_count INTEGER NOT NULL, snapshot_seq INTEGER NOT NULL,"
    "  locale_policy TEXT NOT NULL, validation_errors TEXT, failure_reason TEXT,"
    "  attempts INTEGER NOT NULL DEFAULT 0, edge_synced INTEGER NOT NULL DEFAULT 0,"
    "  created_at INTEGER NOT NULL, activated_at INTEGER,"
    "  PRIMARY KEY(list_id, version_number));"
    "CREATE INDEX versions_pending ON versions(state) WHERE state IN ('queued', 'staged');"
    "CREATE INDEX versions_unsynced ON versions(edge_synced) WHERE state='active' AND"
    "  edge_synced=0;",
    /* 3: items become mutable without losing exact snapshots. Each item is a chain of
     * row versions: a row is visible from its from_clock up to (not including) its
     * to_clock (NULL: current). Every write transaction on a list's items takes the next
     * value of lists.item_clock and stamps all its changes with it (an edit ends the old
     * row and inserts the new one, a delete only ends the row, an import does both for
     * up to millions of rows under one clock value). A version records the clock as its
     * snapshot_seq, so its content is "rows with from_clock <= S and (to_clock IS NULL or
     * to_clock > S)": still free to take and exact however the list changes afterwards.
     * Uniqueness of id and of (list, value) now holds among current rows only (partial
     * indexes). Existing rows keep their seq as from_clock and every list's clock starts
     * at the global maximum, so the snapshots of existing versions keep their meaning. */
    "CREATE TABLE items3(seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL,"
    "  list_id TEXT NOT NULL REFERENCES lists(id), value TEXT NOT NULL,"
    "  display_value TEXT NOT NULL, aliases TEXT, rank INTEGER NOT NULL DEFAULT 0,"
    "  parent_id TEXT, locales TEXT, display_order INTEGER NOT NULL DEFAULT 0,"
    "  created_at INTEGER NOT NULL, from_clock INTEGER NOT NULL, to_clock INTEGER);"
    "INSERT INTO items3(seq, id, list_id, value, display_value, aliases, rank, parent_id,"
    "  locales, display_order, created_at, from_clock) SELECT seq, id, list_id, value,"
    "  display_value, aliases, rank, parent_id, locales, display_order, created_at, seq"
    "  FROM items;"
    "DROP TABLE items;"
    "ALTER TABLE items3 RENAME TO items;"
    "CREATE UNIQUE INDEX items_value ON items(list_id, value) WHERE to_clock IS NULL;"
    "CREATE UNIQUE INDEX items_id ON items(id) WHERE to_clock IS NULL;"
    "CREATE INDEX items_order ON items(list_id, display_order, id) WHERE to_clock IS NULL;"
    "CREATE INDEX items_parent ON items(list_id, parent_id)"
    "  WHERE to_clock IS NULL AND parent_id IS NOT NULL;"
    "CREATE INDEX items_snapshot ON items(list_id, seq);"
    "CREATE INDEX items_ended ON items(list_id, to_clock) WHERE to_clock IS NOT NULL;"
    "ALTER TABLE lists ADD COLUMN item_clock INTEGER NOT NULL DEFAULT 0;"
    "UPDATE lists SET item_clock=(SELECT COALESCE(MAX(seq), 0) FROM items);",
    /* 4: queryPolicy.typoTolerance (DESIGN.md section 3.1), on by default for every list,
     * existing ones included. */
    "ALTER TABLE lists ADD COLUMN typo_enabled INTEGER NOT NULL DEFAULT 1;"
    "ALTER TABLE lists ADD COLUMN typo_min_one INTEGER NOT NULL DEFAULT 4;"
    "ALTER TABLE lists ADD COLUMN typo_min_two INTEGER NOT NULL DEFAULT 8;",
    NULL,
};
