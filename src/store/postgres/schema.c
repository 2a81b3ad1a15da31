/*
 * Versioned migrations of the PostgreSQL store. Each entry runs once, in order, in one
 * transaction that also records it in sg_migrations, under an advisory lock shared by
 * every process (core.c); never edit a shipped entry, add a new one.
 *
 * Migration 1 is the SQLite schema after its migration 8 (src/store/sqlite/schema.c
 * explains each table and column), in PostgreSQL's types: times are BIGINT Unix seconds
 * (milliseconds where the column says _ms), digests and keys BYTEA, JSON texts TEXT (kept
 * byte for byte as the shared record code writes them). Every text column has the "C"
 * collation: orders, keyset pagination and uniqueness compare bytes, as on SQLite,
 * whatever the database's default locale.
 */
#include "store/postgres/pg.h"

const char *const sg__pg_migrations[] = {
    /* 1: the foundation. */
    "CREATE TABLE meta(name TEXT COLLATE \"C\" PRIMARY KEY, value BYTEA NOT NULL);"
    "CREATE TABLE workspaces(id TEXT COLLATE \"C\" PRIMARY KEY, name TEXT COLLATE \"C\" NOT NULL,"
    "  status TEXT COLLATE \"C\" NOT NULL DEFAULT 'active', created_at BIGINT NOT NULL);"
    "CREATE TABLE applications(id TEXT COLLATE \"C\" PRIMARY KEY,"
    "  workspace_id TEXT COLLATE \"C\" NOT NULL REFERENCES workspaces(id), name TEXT COLLATE \"C\" "
    "NOT NULL,"
    "  status TEXT COLLATE \"C\" NOT NULL DEFAULT 'active', monthly_quota BIGINT,"
    "  created_at BIGINT NOT NULL);"
    "CREATE INDEX applications_workspace ON applications(workspace_id);"
    "CREATE TABLE secret_keys(id TEXT COLLATE \"C\" PRIMARY KEY,"
    "  application_id TEXT COLLATE \"C\" NOT NULL REFERENCES applications(id), digest BYTEA NOT "
    "NULL,"
    "  status TEXT COLLATE \"C\" NOT NULL DEFAULT 'active', created_at BIGINT NOT NULL,"
    "  revoked_at BIGINT, last_used_at BIGINT);"
    "CREATE INDEX secret_keys_app ON secret_keys(application_id);"
    "CREATE TABLE lists(id TEXT COLLATE \"C\" PRIMARY KEY,"
    "  workspace_id TEXT COLLATE \"C\" NOT NULL REFERENCES workspaces(id), name TEXT COLLATE \"C\" "
    "NOT NULL,"
    "  description TEXT COLLATE \"C\", slug TEXT COLLATE \"C\" NOT NULL, visibility TEXT COLLATE "
    "\"C\" NOT NULL DEFAULT 'private',"
    "  status TEXT COLLATE \"C\" NOT NULL DEFAULT 'active', min_query_chars BIGINT NOT NULL "
    "DEFAULT 1,"
    "  debounce_ms BIGINT NOT NULL DEFAULT 150, default_locale TEXT COLLATE \"C\" NOT NULL DEFAULT "
    "'en',"
    "  supported_locales TEXT COLLATE \"C\" NOT NULL DEFAULT '[\"en\"]',"
    "  display_order BIGINT NOT NULL DEFAULT 0, active_version_number BIGINT,"
    "  active_content_hash TEXT COLLATE \"C\","
    "  next_version_number BIGINT NOT NULL DEFAULT 1, created_at BIGINT NOT NULL,"
    "  updated_at BIGINT NOT NULL, item_clock BIGINT NOT NULL DEFAULT 0,"
    "  typo_enabled BIGINT NOT NULL DEFAULT 1, typo_min_one BIGINT NOT NULL DEFAULT 4,"
    "  typo_min_two BIGINT NOT NULL DEFAULT 8,"
    /* Bumped by every successful PATCH: If-Match compares the ETag computed from the
     * row, and the UPDATE re-checks this number, so two writers cannot both win. */
    "  row_version BIGINT NOT NULL DEFAULT 1,"
    "  UNIQUE(workspace_id, slug));"
    "CREATE INDEX lists_order ON lists(workspace_id, display_order, slug, id);"
    "CREATE TABLE idempotency(workspace_id TEXT COLLATE \"C\" NOT NULL, key TEXT COLLATE \"C\" NOT "
    "NULL,"
    "  method TEXT COLLATE \"C\" NOT NULL, path TEXT COLLATE \"C\" NOT NULL, body_hash BYTEA NOT "
    "NULL,"
    "  state TEXT COLLATE \"C\" NOT NULL, status BIGINT, body TEXT COLLATE \"C\", headers TEXT "
    "COLLATE \"C\","
    "  created_at BIGINT NOT NULL, owner TEXT COLLATE \"C\", lease_until_ms BIGINT,"
    "  PRIMARY KEY(workspace_id, key));"
    "CREATE TABLE publishable_keys(id TEXT COLLATE \"C\" PRIMARY KEY,"
    "  application_id TEXT COLLATE \"C\" NOT NULL REFERENCES applications(id),"
    "  list_id TEXT COLLATE \"C\" NOT NULL REFERENCES lists(id), digest TEXT COLLATE \"C\" NOT "
    "NULL UNIQUE,"
    "  origins TEXT COLLATE \"C\" NOT NULL, status TEXT COLLATE \"C\" NOT NULL DEFAULT 'active',"
    "  created_at BIGINT NOT NULL);"
    "CREATE INDEX publishable_keys_app ON publishable_keys(application_id);"
    "CREATE TABLE subscriptions(id TEXT COLLATE \"C\" PRIMARY KEY,"
    "  workspace_id TEXT COLLATE \"C\" NOT NULL REFERENCES workspaces(id),"
    "  list_id TEXT COLLATE \"C\" NOT NULL REFERENCES lists(id), status TEXT COLLATE \"C\" NOT "
    "NULL DEFAULT 'active',"
    "  created_at BIGINT NOT NULL);"
    "CREATE INDEX subscriptions_ws ON subscriptions(workspace_id, list_id);"
    "CREATE TABLE signing_keys(kid TEXT COLLATE \"C\" PRIMARY KEY, secret_key BYTEA NOT NULL,"
    "  public_key BYTEA NOT NULL, created_at BIGINT NOT NULL, retired_at BIGINT);"
    "CREATE TABLE items(seq BIGSERIAL PRIMARY KEY, id TEXT COLLATE \"C\" NOT NULL,"
    "  list_id TEXT COLLATE \"C\" NOT NULL REFERENCES lists(id), value TEXT COLLATE \"C\" NOT NULL,"
    "  display_value TEXT COLLATE \"C\" NOT NULL, aliases TEXT COLLATE \"C\", rank BIGINT NOT NULL "
    "DEFAULT 0,"
    "  parent_id TEXT COLLATE \"C\", locales TEXT COLLATE \"C\", display_order BIGINT NOT NULL "
    "DEFAULT 0,"
    "  created_at BIGINT NOT NULL, from_clock BIGINT NOT NULL, to_clock BIGINT);"
    "CREATE UNIQUE INDEX items_value ON items(list_id, value) WHERE to_clock IS NULL;"
    "CREATE UNIQUE INDEX items_id ON items(id) WHERE to_clock IS NULL;"
    "CREATE INDEX items_order ON items(list_id, display_order, id) WHERE to_clock IS NULL;"
    "CREATE INDEX items_parent ON items(list_id, parent_id)"
    "  WHERE to_clock IS NULL AND parent_id IS NOT NULL;"
    "CREATE INDEX items_snapshot ON items(list_id, seq);"
    "CREATE INDEX items_ended ON items(list_id, to_clock) WHERE to_clock IS NOT NULL;"
    /* The dashboard's item search: a value prefix, ASCII case ignored (as SQLite's
     * NOCASE), paged by value. */
    "CREATE INDEX items_value_fold ON items(list_id,"
    "  translate(value, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz') COLLATE \"C\","
    "  id) WHERE to_clock IS NULL;"
    "CREATE TABLE versions(list_id TEXT COLLATE \"C\" NOT NULL REFERENCES lists(id),"
    "  version_number BIGINT NOT NULL, state TEXT COLLATE \"C\" NOT NULL, content_hash TEXT "
    "COLLATE \"C\","
    "  item_count BIGINT NOT NULL, snapshot_seq BIGINT NOT NULL,"
    "  locale_policy TEXT COLLATE \"C\" NOT NULL, validation_errors TEXT COLLATE \"C\", "
    "failure_reason TEXT COLLATE \"C\","
    "  attempts BIGINT NOT NULL DEFAULT 0, edge_synced BIGINT NOT NULL DEFAULT 0,"
    "  created_at BIGINT NOT NULL, activated_at BIGINT,"
    "  queued_async BIGINT NOT NULL DEFAULT 0, lease_owner TEXT COLLATE \"C\", lease_until_ms "
    "BIGINT,"
    /* The queue order (SQLite's rowid). */
    "  qseq BIGSERIAL,"
    "  PRIMARY KEY(list_id, version_number));"
    "CREATE INDEX versions_pending ON versions(state) WHERE state IN ('queued', 'staged');"
    "CREATE INDEX versions_unsynced ON versions(edge_synced) WHERE state='active' AND"
    "  edge_synced=0;"
    "CREATE INDEX versions_leased ON versions(lease_owner) WHERE lease_owner IS NOT NULL;"
    "CREATE TABLE edge_outbox(kind TEXT COLLATE \"C\" NOT NULL, id TEXT COLLATE \"C\" NOT NULL, "
    "want BIGINT NOT NULL,"
    "  done BIGINT NOT NULL DEFAULT 0, revision BIGINT NOT NULL DEFAULT 0,"
    "  PRIMARY KEY(kind, id));"
    "CREATE INDEX edge_outbox_dirty ON edge_outbox(kind, id) WHERE want > done;"
    /* The edge outbox's triggers (see SQLite's migration 4): a change to what the edge
     * mirrors marks the record in the same transaction. TG_ARGV[0] is the kind. */
    "CREATE FUNCTION sg_edge_mark() RETURNS trigger LANGUAGE plpgsql AS $$"
    " DECLARE rid TEXT COLLATE \"C\"; BEGIN"
    "  IF TG_TABLE_NAME = 'publishable_keys' THEN rid := NEW.digest;"
    "  ELSIF TG_TABLE_NAME = 'signing_keys' THEN"
    "    INSERT INTO edge_outbox(kind, id, want) SELECT 'signing-keys', kid, 1"
    "    FROM signing_keys ON CONFLICT(kind, id) DO UPDATE SET want=edge_outbox.want+1;"
    "    RETURN NULL;"
    "  ELSE rid := NEW.id; END IF;"
    "  INSERT INTO edge_outbox(kind, id, want) VALUES(TG_ARGV[0], rid, 1)"
    "  ON CONFLICT(kind, id) DO UPDATE SET want=edge_outbox.want+1;"
    "  RETURN NULL; END $$;"
    "CREATE TRIGGER edge_lists_ins AFTER INSERT ON lists FOR EACH ROW"
    "  EXECUTE FUNCTION sg_edge_mark('lists');"
    "CREATE TRIGGER edge_lists_upd AFTER UPDATE ON lists FOR EACH ROW WHEN ("
    "  OLD.visibility IS DISTINCT FROM NEW.visibility OR OLD.status IS DISTINCT FROM NEW.status"
    "  OR OLD.min_query_chars IS DISTINCT FROM NEW.min_query_chars"
    "  OR OLD.debounce_ms IS DISTINCT FROM NEW.debounce_ms"
    "  OR OLD.default_locale IS DISTINCT FROM NEW.default_locale"
    "  OR OLD.supported_locales IS DISTINCT FROM NEW.supported_locales"
    "  OR OLD.typo_enabled IS DISTINCT FROM NEW.typo_enabled"
    "  OR OLD.typo_min_one IS DISTINCT FROM NEW.typo_min_one"
    "  OR OLD.typo_min_two IS DISTINCT FROM NEW.typo_min_two"
    "  OR OLD.active_version_number IS DISTINCT FROM NEW.active_version_number"
    "  OR OLD.active_content_hash IS DISTINCT FROM NEW.active_content_hash"
    "  OR OLD.workspace_id IS DISTINCT FROM NEW.workspace_id)"
    "  EXECUTE FUNCTION sg_edge_mark('lists');"
    "CREATE TRIGGER edge_ws AFTER INSERT OR UPDATE ON workspaces FOR EACH ROW"
    "  EXECUTE FUNCTION sg_edge_mark('workspaces');"
    "CREATE TRIGGER edge_apps AFTER INSERT OR UPDATE ON applications FOR EACH ROW"
    "  EXECUTE FUNCTION sg_edge_mark('apps');"
    "CREATE TRIGGER edge_keys AFTER INSERT OR UPDATE ON publishable_keys FOR EACH ROW"
    "  EXECUTE FUNCTION sg_edge_mark('keys');"
    "CREATE TRIGGER edge_subs AFTER INSERT OR UPDATE ON subscriptions FOR EACH ROW"
    "  EXECUTE FUNCTION sg_edge_mark('subscriptions');"
    "CREATE TRIGGER edge_sigkeys AFTER INSERT ON signing_keys FOR EACH ROW"
    "  EXECUTE FUNCTION sg_edge_mark('signing-keys');"
    "CREATE TABLE members(id TEXT COLLATE \"C\" PRIMARY KEY,"
    "  workspace_id TEXT COLLATE \"C\" NOT NULL REFERENCES workspaces(id), email TEXT COLLATE "
    "\"C\" NOT NULL,"
    "  role TEXT COLLATE \"C\" NOT NULL, password_hash TEXT COLLATE \"C\" NOT NULL,"
    "  status TEXT COLLATE \"C\" NOT NULL DEFAULT 'active', created_at BIGINT NOT NULL,"
    "  updated_at BIGINT NOT NULL);"
    "CREATE UNIQUE INDEX members_email ON members(email) WHERE status='active';"
    "CREATE INDEX members_workspace ON members(workspace_id, email);"
    "CREATE TABLE sessions(digest BYTEA PRIMARY KEY,"
    "  member_id TEXT COLLATE \"C\" NOT NULL REFERENCES members(id), created_ms BIGINT NOT NULL,"
    "  last_seen_ms BIGINT NOT NULL);"
    "CREATE INDEX sessions_member ON sessions(member_id);"
    "CREATE TABLE audit(seq BIGSERIAL PRIMARY KEY, workspace_id TEXT COLLATE \"C\","
    "  actor TEXT COLLATE \"C\" NOT NULL, actor_email TEXT COLLATE \"C\", action TEXT COLLATE "
    "\"C\" NOT NULL, target TEXT COLLATE \"C\","
    "  request_id TEXT COLLATE \"C\", status BIGINT NOT NULL, details TEXT COLLATE \"C\", at_ms "
    "BIGINT NOT NULL);"
    "CREATE INDEX audit_workspace ON audit(workspace_id, seq);"
    /* Insertion order for `admin … list` (SQLite's rowid) among rows created in the same
     * second. */
    "ALTER TABLE workspaces ADD COLUMN rseq BIGSERIAL;"
    "ALTER TABLE applications ADD COLUMN rseq BIGSERIAL;"
    "ALTER TABLE secret_keys ADD COLUMN rseq BIGSERIAL;"
    "ALTER TABLE publishable_keys ADD COLUMN rseq BIGSERIAL;"
    "ALTER TABLE subscriptions ADD COLUMN rseq BIGSERIAL;",
    /* Selection events drained from a fleet's Redis stream (docs/STORE.md, "Selection
     * events"): the key makes a second delivery of one event a no-op. The applications
     * index serves the dashboard's paged applications page. */
    "CREATE TABLE selections(selection_id TEXT COLLATE \"C\" NOT NULL, ts_ms BIGINT NOT NULL,"
    "  application_id TEXT COLLATE \"C\" NOT NULL, key_id TEXT COLLATE \"C\" NOT NULL,"
    "  list_id TEXT COLLATE \"C\" NOT NULL, item_id TEXT COLLATE \"C\" NOT NULL,"
    "  query_request_id TEXT COLLATE \"C\" NOT NULL, position BIGINT NOT NULL, query TEXT,"
    "  PRIMARY KEY(selection_id, ts_ms));"
    "CREATE INDEX selections_list ON selections(list_id, ts_ms);"
    "CREATE INDEX applications_workspace_page ON applications(workspace_id, created_at, id);",
    /* The edge guard (docs/EDGE.md, "The staleness guard"): one row. */
    "CREATE TABLE edge_guard(id INT PRIMARY KEY CHECK (id = 1), epoch BIGINT NOT NULL,"
    "  heartbeat_ms BIGINT NOT NULL);",
    /* Search analytics (docs/DESIGN.md §9, docs/ANALYTICS.md): the runtimes' shipments aggregated
     * per list and UTC hour (hour = Unix seconds / 3600), and the shipment ids applied. */
    "CREATE TABLE analytics_shipments(id TEXT COLLATE \"C\" PRIMARY KEY, hour BIGINT NOT NULL);"
    "CREATE INDEX analytics_shipments_hour ON analytics_shipments(hour);"
    "CREATE TABLE analytics_hours(list_id TEXT COLLATE \"C\" NOT NULL, hour BIGINT NOT NULL,"
    "  queries BIGINT NOT NULL DEFAULT 0, no_result BIGINT NOT NULL DEFAULT 0,"
    "  distinct_q BIGINT NOT NULL DEFAULT 0, PRIMARY KEY(list_id, hour));"
    "CREATE INDEX analytics_hours_hour ON analytics_hours(hour);"
    "CREATE TABLE analytics_queries(list_id TEXT COLLATE \"C\" NOT NULL, hour BIGINT NOT NULL,"
    "  q TEXT COLLATE \"C\" NOT NULL, count BIGINT NOT NULL, no_result BIGINT NOT NULL,"
    "  PRIMARY KEY(list_id, hour, q));"
    "CREATE INDEX analytics_queries_min ON analytics_queries(list_id, hour, count, q);"
    "CREATE INDEX analytics_queries_hour ON analytics_queries(hour);"
    "CREATE TABLE analytics_selections(list_id TEXT COLLATE \"C\" NOT NULL,"
    "  hour BIGINT NOT NULL, q TEXT COLLATE \"C\" NOT NULL,"
    "  item_id TEXT COLLATE \"C\" NOT NULL, position BIGINT NOT NULL,"
    "  selections BIGINT NOT NULL, PRIMARY KEY(list_id, hour, q, item_id, position));"
    "CREATE INDEX analytics_selections_hour ON analytics_selections(hour);"
    "CREATE TABLE analytics_raw(list_id TEXT COLLATE \"C\" NOT NULL, hour BIGINT NOT NULL,"
    "  q TEXT COLLATE \"C\" NOT NULL, raw TEXT COLLATE \"C\" NOT NULL, count BIGINT NOT NULL,"
    "  PRIMARY KEY(list_id, hour, q, raw));"
    "CREATE INDEX analytics_raw_hour ON analytics_raw(hour);"
    "CREATE INDEX selections_ts ON selections(ts_ms);",
    /* A member's email is unique per workspace, not across the service (SQLite's
     * migration 13 says why). */
    "DROP INDEX members_email;"
    "CREATE UNIQUE INDEX members_workspace_email ON members(workspace_id, email)"
    "  WHERE status='active';"
    "CREATE INDEX members_email_active ON members(email, created_at) WHERE status='active';",
    /* Synonym sets (docs/DESIGN.md §3.4; SQLite's migration 12): one row per PUT stamped with
     * the list's item clock, read by a version at its snapshot_seq. */
    "CREATE TABLE synonyms(list_id TEXT COLLATE \"C\" NOT NULL REFERENCES lists(id),"
    "  clock BIGINT NOT NULL, sets TEXT NOT NULL, PRIMARY KEY(list_id, clock));",
    /* An item's optional display-only description (SQLite's migration 15). */
    "ALTER TABLE items ADD COLUMN description TEXT;",
    /* An item create in one statement (items.c; docs/PERFORMANCE.md, "Round trips per
     * write"): the list's row locked, the checks, the clock and the insert of
     * sg__pg_item_create's former five statements, sent without BEGIN so that the call,
     * its commit and the answer are one round trip. A refusal raises an error of class SG
     * (rolling everything back, the clock included, as before): SG001 no such list in the
     * workspace, SG002 the list is archived, SG003 the parent is no current item of the
     * list, SG004 the value (or the random id) is taken. The new row is the result.
     * p_retry is true when the call is sent again after a connection was lost with an
     * unknown outcome (core.c, sg__pg_one_again): once the list's lock is held, the
     * earlier call has either committed or rolled back; when the item with the random id
     * p_id is there, it was this create and is the result, so nothing is applied twice. */
    "CREATE FUNCTION sg_item_create(p_ws TEXT, p_list TEXT, p_id TEXT, p_value TEXT,"
    "  p_display TEXT, p_aliases TEXT, p_rank BIGINT, p_parent TEXT, p_locales TEXT,"
    "  p_order BIGINT, p_now BIGINT, p_description TEXT, p_retry BOOLEAN)"
    "  RETURNS SETOF items LANGUAGE plpgsql AS $fn$"
    " DECLARE s TEXT; k BIGINT; r items;"
    " BEGIN"
    "  SELECT status INTO s FROM lists WHERE id=p_list AND workspace_id=p_ws FOR UPDATE;"
    "  IF NOT FOUND THEN RAISE EXCEPTION 'no such list' USING ERRCODE='SG001'; END IF;"
    "  IF p_retry THEN"
    "    SELECT * INTO r FROM items WHERE id=p_id AND list_id=p_list AND to_clock IS NULL;"
    "    IF FOUND THEN RETURN NEXT r; RETURN; END IF;"
    "  END IF;"
    "  IF s='archived' THEN RAISE EXCEPTION 'list archived' USING ERRCODE='SG002'; END IF;"
    "  IF p_parent IS NOT NULL AND NOT EXISTS(SELECT 1 FROM items WHERE id=p_parent"
    "      AND list_id=p_list AND to_clock IS NULL) THEN"
    "    RAISE EXCEPTION 'no such parent' USING ERRCODE='SG003';"
    "  END IF;"
    "  UPDATE lists SET item_clock=item_clock+1 WHERE id=p_list RETURNING item_clock INTO k;"
    /* The unique indexes are the random id and (list_id, value) among current rows: a
     * conflict is a duplicate value. */
    "  INSERT INTO items(id, list_id, value, display_value, aliases, rank, parent_id,"
    "    locales, display_order, created_at, from_clock, description)"
    "    VALUES(p_id, p_list, p_value, p_display, p_aliases, p_rank, p_parent, p_locales,"
    "    p_order, p_now, k, p_description) ON CONFLICT DO NOTHING RETURNING * INTO r;"
    "  IF NOT FOUND THEN RAISE EXCEPTION 'duplicate value' USING ERRCODE='SG004'; END IF;"
    "  RETURN NEXT r;"
    " END $fn$;"
    /* The write half of an item edit and of a delete (items.c), sent with the COMMIT
     * once the transaction holds the list's lock and has read the current row p_seq:
     * the next item clock, the end of that row (SG005 when it is no longer current) and,
     * for an edit, the new row (SG004 when its value is taken), which is the result. */
    "CREATE FUNCTION sg_item_end(p_list TEXT, p_seq BIGINT) RETURNS BIGINT"
    "  LANGUAGE plpgsql AS $fn$"
    " DECLARE k BIGINT;"
    " BEGIN"
    "  UPDATE lists SET item_clock=item_clock+1 WHERE id=p_list RETURNING item_clock INTO k;"
    "  UPDATE items SET to_clock=k WHERE seq=p_seq AND to_clock IS NULL;"
    "  IF NOT FOUND THEN RAISE EXCEPTION 'row replaced' USING ERRCODE='SG005'; END IF;"
    "  RETURN k;"
    " END $fn$;"
    "CREATE FUNCTION sg_item_replace(p_list TEXT, p_seq BIGINT, p_value TEXT,"
    "  p_display TEXT, p_aliases TEXT, p_rank BIGINT, p_parent TEXT, p_locales TEXT,"
    "  p_order BIGINT, p_description TEXT) RETURNS SETOF items LANGUAGE plpgsql AS $fn$"
    " DECLARE k BIGINT; r items;"
    " BEGIN"
    "  k := sg_item_end(p_list, p_seq);"
    "  INSERT INTO items(id, list_id, value, display_value, aliases, rank, parent_id,"
    "    locales, display_order, created_at, from_clock, description)"
    "    SELECT id, list_id, p_value, p_display, p_aliases, p_rank, p_parent, p_locales,"
    "    p_order, created_at, k, p_description FROM items WHERE seq=p_seq"
    "    ON CONFLICT DO NOTHING RETURNING * INTO r;"
    "  IF NOT FOUND THEN RAISE EXCEPTION 'duplicate value' USING ERRCODE='SG004'; END IF;"
    "  RETURN NEXT r;"
    " END $fn$;",
    NULL,
};
