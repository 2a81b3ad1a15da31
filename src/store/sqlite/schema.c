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
    NULL,
};
