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
    /* 4: the edge outbox. Every change to a row the edge store mirrors bumps that
     * record's `want` generation IN THE SAME TRANSACTION (the triggers below), so a
     * committed change can never be forgotten: whoever writes the edge record (the
     * request, the admin command, or the reconciler of any control process, on a timer
     * and at start) rebuilds it from the store and then raises `done` to the generation
     * it read. want > done means the edge may be stale ("pending"); revision is the edge
     * revision of the last confirmed write. kind is the edge folder name. Every record
     * that exists is marked once here, so a data directory upgraded from a version that
     * lost edge writes converges at the next start. */
    "CREATE TABLE edge_outbox(kind TEXT NOT NULL, id TEXT NOT NULL, want INTEGER NOT NULL,"
    "  done INTEGER NOT NULL DEFAULT 0, revision INTEGER NOT NULL DEFAULT 0,"
    "  PRIMARY KEY(kind, id));"
    "CREATE INDEX edge_outbox_dirty ON edge_outbox(kind, id) WHERE want > done;"
    "CREATE TRIGGER edge_lists_ins AFTER INSERT ON lists BEGIN"
    "  INSERT INTO edge_outbox(kind, id, want) VALUES('lists', NEW.id, 1)"
    "  ON CONFLICT(kind, id) DO UPDATE SET want=want+1; END;"
    /* Only the columns the runtime serves: item writes bump lists.item_clock, and a
     * rename or a new displayOrder changes nothing on the edge. */
    "CREATE TRIGGER edge_lists_upd AFTER UPDATE ON lists WHEN"
    "  OLD.visibility IS NOT NEW.visibility OR OLD.status IS NOT NEW.status OR"
    "  OLD.min_query_chars IS NOT NEW.min_query_chars OR"
    "  OLD.debounce_ms IS NOT NEW.debounce_ms OR OLD.default_locale IS NOT NEW.default_locale"
    "  OR OLD.supported_locales IS NOT NEW.supported_locales OR"
    "  OLD.active_version_number IS NOT NEW.active_version_number OR"
    "  OLD.active_content_hash IS NOT NEW.active_content_hash OR"
    "  OLD.workspace_id IS NOT NEW.workspace_id BEGIN"
    "  INSERT INTO edge_outbox(kind, id, want) VALUES('lists', NEW.id, 1)"
    "  ON CONFLICT(kind, id) DO UPDATE SET want=want+1; END;"
    "CREATE TRIGGER edge_ws_ins AFTER INSERT ON workspaces BEGIN"
    "  INSERT INTO edge_outbox(kind, id, want) VALUES('workspaces', NEW.id, 1)"
    "  ON CONFLICT(kind, id) DO UPDATE SET want=want+1; END;"
    "CREATE TRIGGER edge_ws_upd AFTER UPDATE ON workspaces BEGIN"
    "  INSERT INTO edge_outbox(kind, id, want) VALUES('workspaces', NEW.id, 1)"
    "  ON CONFLICT(kind, id) DO UPDATE SET want=want+1; END;"
    "CREATE TRIGGER edge_apps_ins AFTER INSERT ON applications BEGIN"
    "  INSERT INTO edge_outbox(kind, id, want) VALUES('apps', NEW.id, 1)"
    "  ON CONFLICT(kind, id) DO UPDATE SET want=want+1; END;"
    "CREATE TRIGGER edge_apps_upd AFTER UPDATE ON applications BEGIN"
    "  INSERT INTO edge_outbox(kind, id, want) VALUES('apps', NEW.id, 1)"
    "  ON CONFLICT(kind, id) DO UPDATE SET want=want+1; END;"
    "CREATE TRIGGER edge_keys_ins AFTER INSERT ON publishable_keys BEGIN"
    "  INSERT INTO edge_outbox(kind, id, want) VALUES('keys', NEW.digest, 1)"
    "  ON CONFLICT(kind, id) DO UPDATE SET want=want+1; END;"
    "CREATE TRIGGER edge_keys_upd AFTER UPDATE ON publishable_keys BEGIN"
    "  INSERT INTO edge_outbox(kind, id, want) VALUES('keys', NEW.digest, 1)"
    "  ON CONFLICT(kind, id) DO UPDATE SET want=want+1; END;"
    "CREATE TRIGGER edge_subs_ins AFTER INSERT ON subscriptions BEGIN"
    "  INSERT INTO edge_outbox(kind, id, want) VALUES('subscriptions', NEW.id, 1)"
    "  ON CONFLICT(kind, id) DO UPDATE SET want=want+1; END;"
    "CREATE TRIGGER edge_subs_upd AFTER UPDATE ON subscriptions BEGIN"
    "  INSERT INTO edge_outbox(kind, id, want) VALUES('subscriptions', NEW.id, 1)"
    "  ON CONFLICT(kind, id) DO UPDATE SET want=want+1; END;"
    /* A new signing key retires the others, and long-retired ones leave the edge: every
     * key's record is rewritten (or removed) after a rotation. */
    "CREATE TRIGGER edge_sigkeys_ins AFTER INSERT ON signing_keys BEGIN"
    "  INSERT INTO edge_outbox(kind, id, want) SELECT 'signing-keys', kid, 1 FROM signing_keys"
    "  WHERE true ON CONFLICT(kind, id) DO UPDATE SET want=want+1; END;"
    "INSERT INTO edge_outbox(kind, id, want) SELECT 'lists', id, 1 FROM lists;"
    "INSERT INTO edge_outbox(kind, id, want) SELECT 'workspaces', id, 1 FROM workspaces;"
    "INSERT INTO edge_outbox(kind, id, want) SELECT 'apps', id, 1 FROM applications;"
    "INSERT INTO edge_outbox(kind, id, want) SELECT 'keys', digest, 1 FROM publishable_keys;"
    "INSERT INTO edge_outbox(kind, id, want) SELECT 'subscriptions', id, 1 FROM subscriptions;"
    "INSERT INTO edge_outbox(kind, id, want) SELECT 'signing-keys', kid, 1 FROM signing_keys;",
    /* 5: an in-flight Idempotency-Key record names the process running it ("host pid
     * start-time"), so a retry after that process died (kill -9) runs again at once
     * instead of answering idempotency_key_in_flight until the record goes stale. */
    "ALTER TABLE idempotency ADD COLUMN owner TEXT;",
    /* 6: the dashboard (docs/DESIGN.md §7). A member's email is stored lower-cased and names one
     * member across all workspaces, so sign-in needs no workspace. A session is kept only
     * as the SHA-256 of its cookie; times in milliseconds for the idle window. The audit
     * log is append-only. Secret keys learn their last use. */
    "CREATE TABLE members(id TEXT PRIMARY KEY,"
    "  workspace_id TEXT NOT NULL REFERENCES workspaces(id), email TEXT NOT NULL,"
    "  role TEXT NOT NULL, password_hash TEXT NOT NULL,"
    "  status TEXT NOT NULL DEFAULT 'active', created_at INTEGER NOT NULL,"
    "  updated_at INTEGER NOT NULL);"
    "CREATE UNIQUE INDEX members_email ON members(email) WHERE status='active';"
    "CREATE INDEX members_workspace ON members(workspace_id, email);"
    "CREATE TABLE sessions(digest BLOB PRIMARY KEY,"
    "  member_id TEXT NOT NULL REFERENCES members(id), created_ms INTEGER NOT NULL,"
    "  last_seen_ms INTEGER NOT NULL) WITHOUT ROWID;"
    "CREATE INDEX sessions_member ON sessions(member_id);"
    "CREATE TABLE audit(seq INTEGER PRIMARY KEY AUTOINCREMENT, workspace_id TEXT,"
    "  actor TEXT NOT NULL, actor_email TEXT, action TEXT NOT NULL, target TEXT,"
    "  request_id TEXT, status INTEGER NOT NULL, details TEXT, at_ms INTEGER NOT NULL);"
    "CREATE INDEX audit_workspace ON audit(workspace_id, seq);"
    "ALTER TABLE secret_keys ADD COLUMN last_used_at INTEGER;"
    /* The dashboard's item search: a value prefix, ASCII case ignored, paged by value. */
    "CREATE INDEX items_value_nocase ON items(list_id, value COLLATE NOCASE, id)"
    "  WHERE to_clock IS NULL;",
    /* 7: queryPolicy.typoTolerance (docs/DESIGN.md §3.1), on by default for every list,
     * existing ones included. The policy is served, so the edge outbox's list trigger
     * (migration 4) now also watches its columns: a typoTolerance change whose edge write
     * failed is retried like any other. */
    "ALTER TABLE lists ADD COLUMN typo_enabled INTEGER NOT NULL DEFAULT 1;"
    "ALTER TABLE lists ADD COLUMN typo_min_one INTEGER NOT NULL DEFAULT 4;"
    "ALTER TABLE lists ADD COLUMN typo_min_two INTEGER NOT NULL DEFAULT 8;"
    "DROP TRIGGER edge_lists_upd;"
    "CREATE TRIGGER edge_lists_upd AFTER UPDATE ON lists WHEN"
    "  OLD.visibility IS NOT NEW.visibility OR OLD.status IS NOT NEW.status OR"
    "  OLD.min_query_chars IS NOT NEW.min_query_chars OR"
    "  OLD.debounce_ms IS NOT NEW.debounce_ms OR OLD.default_locale IS NOT NEW.default_locale"
    "  OR OLD.supported_locales IS NOT NEW.supported_locales OR"
    "  OLD.typo_enabled IS NOT NEW.typo_enabled OR OLD.typo_min_one IS NOT NEW.typo_min_one OR"
    "  OLD.typo_min_two IS NOT NEW.typo_min_two OR"
    "  OLD.active_version_number IS NOT NEW.active_version_number OR"
    "  OLD.active_content_hash IS NOT NEW.active_content_hash OR"
    "  OLD.workspace_id IS NOT NEW.workspace_id BEGIN"
    "  INSERT INTO edge_outbox(kind, id, want) VALUES('lists', NEW.id, 1)"
    "  ON CONFLICT(kind, id) DO UPDATE SET want=want+1; END;",
    /* 8: the publish queue with several processes (issue 12, docs/PUBLISHING.md). A
     * version is claimed with a lease ("host pid start-time" until a time in ms) that its
     * worker renews; queued_async marks a version whose POST answered 202, the only kind
     * a newer version of the list may supersede without a compile. */
    "ALTER TABLE versions ADD COLUMN queued_async INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE versions ADD COLUMN lease_owner TEXT;"
    "ALTER TABLE versions ADD COLUMN lease_until_ms INTEGER;"
    "CREATE INDEX versions_leased ON versions(lease_owner) WHERE lease_owner IS NOT NULL;",
    /* 9: selection events drained from a fleet's Redis stream (issue 14). The key makes a
     * second delivery of the same event a no-op; a selectionId reported again after the
     * runtimes' 24-hour dedupe window is a new event (another tsMs). */
    "CREATE TABLE selections(selection_id TEXT NOT NULL, ts_ms INTEGER NOT NULL,"
    "  application_id TEXT NOT NULL, key_id TEXT NOT NULL, list_id TEXT NOT NULL,"
    "  item_id TEXT NOT NULL, query_request_id TEXT NOT NULL, position INTEGER NOT NULL,"
    "  query TEXT, PRIMARY KEY(selection_id, ts_ms)) WITHOUT ROWID;"
    "CREATE INDEX selections_list ON selections(list_id, ts_ms);",
    /* 10: the dashboard's applications page reads one workspace's applications a page at a
     * time, oldest first, without scanning every workspace's. */
    "CREATE INDEX applications_workspace ON applications(workspace_id, created_at, id);",
    /* 11: the edge guard (docs/EDGE.md, "The staleness guard"): one row. */
    "CREATE TABLE edge_guard(id INTEGER PRIMARY KEY CHECK (id = 1),"
    "  epoch INTEGER NOT NULL, heartbeat_ms INTEGER NOT NULL);",
    /* 12: search analytics (docs/DESIGN.md §9, docs/ANALYTICS.md): the runtimes' shipments
     * aggregated per list and UTC hour (hour = Unix seconds / 3600), and the shipment
     * ids applied, so that a shipment delivered again is not counted twice. q is the
     * normalised query ('' in analytics_selections for a report without one). */
    "CREATE TABLE analytics_shipments(id TEXT PRIMARY KEY, hour INTEGER NOT NULL);"
    "CREATE INDEX analytics_shipments_hour ON analytics_shipments(hour);"
    "CREATE TABLE analytics_hours(list_id TEXT NOT NULL, hour INTEGER NOT NULL,"
    "  queries INTEGER NOT NULL DEFAULT 0, no_result INTEGER NOT NULL DEFAULT 0,"
    "  distinct_q INTEGER NOT NULL DEFAULT 0, PRIMARY KEY(list_id, hour));"
    "CREATE INDEX analytics_hours_hour ON analytics_hours(hour);"
    "CREATE TABLE analytics_queries(list_id TEXT NOT NULL, hour INTEGER NOT NULL,"
    "  q TEXT NOT NULL, count INTEGER NOT NULL, no_result INTEGER NOT NULL,"
    "  PRIMARY KEY(list_id, hour, q));"
    "CREATE INDEX analytics_queries_min ON analytics_queries(list_id, hour, count, q);"
    "CREATE INDEX analytics_queries_hour ON analytics_queries(hour);"
    "CREATE TABLE analytics_selections(list_id TEXT NOT NULL, hour INTEGER NOT NULL,"
    "  q TEXT NOT NULL, item_id TEXT NOT NULL, position INTEGER NOT NULL,"
    "  selections INTEGER NOT NULL, PRIMARY KEY(list_id, hour, q, item_id, position));"
    "CREATE INDEX analytics_selections_hour ON analytics_selections(hour);"
    "CREATE TABLE analytics_raw(list_id TEXT NOT NULL, hour INTEGER NOT NULL,"
    "  q TEXT NOT NULL, raw TEXT NOT NULL, count INTEGER NOT NULL,"
    "  PRIMARY KEY(list_id, hour, q, raw));"
    "CREATE INDEX analytics_raw_hour ON analytics_raw(hour);"
    "CREATE INDEX selections_ts ON selections(ts_ms);",
    /* 13: a member's email is unique per workspace, not across the service (issue 22 item
     * 8, docs/DASHBOARD.md "Members"): one person may be a member of several workspaces,
     * each with its own password, and whether an email is taken elsewhere never shows.
     * Sign-in looks members up by email alone. */
    "DROP INDEX members_email;"
    "CREATE UNIQUE INDEX members_workspace_email ON members(workspace_id, email)"
    "  WHERE status='active';"
    "CREATE INDEX members_email_active ON members(email, created_at) WHERE status='active';",
    /* 14: synonym sets (docs/DESIGN.md §3.4): a list's whole array, as compact JSON, one row per
     * PUT stamped with the list's item clock, so a version reads the row current at its
     * snapshot_seq exactly as it reads its items. Rows no unresolved version can read are
     * removed by the next PUT. */
    "CREATE TABLE synonyms(list_id TEXT NOT NULL REFERENCES lists(id),"
    "  clock INTEGER NOT NULL, sets TEXT NOT NULL, PRIMARY KEY(list_id, clock));",
    /* 15: an item's optional display-only description (docs/DESIGN.md §2); NULL when the
     * item has none (a locale's own lives in the locales JSON). Never matched, so no
     * index. */
    "ALTER TABLE items ADD COLUMN description TEXT;",
    NULL,
};
