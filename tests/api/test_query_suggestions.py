"""Query suggestions (docs/DESIGN.md §9; docs/ANALYTICS.md), black box against `serve`,
on SQLite and on PostgreSQL (scripts/with-pg.sh).

POST /api/v1/lists/{id}/query-suggestions builds a target list from the normalised
queries of the source's selection reports: thresholds, display form (the most frequent
trimmed raw form, ties bytewise smallest), rank, exclude as whole words, maxItems, ids
kept by value, the publish's answer, dryRun, 409 no_qualifying_queries, 404 for another
workspace's list, 400 with field paths, and Idempotency-Key."""
import datetime
import os
import sqlite3
import uuid

import pytest

import conftest
from conftest import wait_until
from test_analytics import TODAY, analytics, day, select, setup_list

# (raw query, item value) of each selection report the source list receives.
REPORTS = ([("Par ", "Paris"), ("Par", "Parma"), ("par", "Paris"), ("par", "Paris")] +
           [("Lyon", "Lyon")] * 3 +
           [("Cheap  Paris", "Paris")] * 3 +
           [("cheaper lille", "Lille"), ("Cheaper Lille", "Lille"), ("Cheaper Lille", "Lille")] +
           [("porto", "Porto")] * 2 +
           [(None, "Porto")] * 4)
SELECTIONS = len(REPORTS)
# minSelections 3: par 4 ("Par" twice once trimmed, "par" twice: "Par" is bytewise
# smaller), then the 3s by value. porto has 2; the reports without a query count nowhere.
EXPECTED = [
    {"value": "par", "displayValue": "Par", "rank": 4},
    {"value": "cheap paris", "displayValue": "Cheap  Paris", "rank": 3},
    {"value": "cheaper lille", "displayValue": "Cheaper Lille", "rank": 3},
    {"value": "lyon", "displayValue": "Lyon", "rank": 3},
]


def fed_source(s):
    """A published source list whose selection reports (REPORTS) have reached the store."""
    t, lst, pk, ids = setup_list(s)
    for q, value in REPORTS:
        r = select(s, pk, lst, ids[value], 1, q=q)
        assert r.status == 200, r
    ok = wait_until(lambda: analytics(t, lst, day(TODAY), day(TODAY)).json()["selections"]
                    == SELECTIONS, timeout=20, interval=0.5)
    assert ok, analytics(t, lst, day(TODAY), day(TODAY)).json()
    return t, lst


def suggest(t, lst, body, headers=None):
    return t.api("POST", f"/lists/{lst['id']}/query-suggestions", body, headers=headers)


def items_of(t, list_id):
    r = t.api("GET", f"/lists/{list_id}/items?limit=100")
    assert r.status == 200, r
    return {it["value"]: it for it in r.json()["data"]}


def shown(items):
    return sorted(({"value": v, "displayValue": it["displayValue"], "rank": it["rank"]}
                   for v, it in items.items()), key=lambda x: x["value"])


def test_dry_run_then_publish(make_server):
    s = make_server()
    t, src = fed_source(s)
    target = t.create_list("Popular searches")
    kept = t.add_items(target["id"], [{"value": "lyon", "rank": 1}, {"value": "stale"}])[0]
    before = items_of(t, target["id"])

    # The review: exactly the items, best first; nothing changes.
    r = suggest(t, src, {"targetListId": target["id"], "dryRun": True})
    assert r.status == 200, r
    assert r.json() == {"items": EXPECTED}, r.json()
    assert items_of(t, target["id"]) == before
    assert t.api("GET", f"/lists/{target['id']}/versions").json()["data"] == []

    # maxItems keeps the best by rank, ties by value.
    r = suggest(t, src, {"targetListId": target["id"], "dryRun": True, "maxItems": 2})
    assert r.json() == {"items": EXPECTED[:2]}, r.json()
    # exclude: whole words, normalised ("CHEAP" drops "cheap paris", not "cheaper lille").
    r = suggest(t, src, {"targetListId": target["id"], "dryRun": True, "exclude": ["CHEAP"]})
    assert r.json() == {"items": [EXPECTED[0]] + EXPECTED[2:]}, r.json()
    r = suggest(t, src, {"targetListId": target["id"], "dryRun": True,
                         "exclude": ["lille", "a"]})
    assert r.json() == {"items": [EXPECTED[0], EXPECTED[1], EXPECTED[3]]}, r.json()
    # minSelections 2 lets porto in; 5 leaves nothing.
    r = suggest(t, src, {"targetListId": target["id"], "dryRun": True, "minSelections": 2})
    assert r.json() == {"items": EXPECTED + [
        {"value": "porto", "displayValue": "porto", "rank": 2}]}, r.json()

    # The real thing: T's items replaced (lyon keeps its id), then T published.
    r = suggest(t, src, {"targetListId": target["id"]})
    assert r.status == 200, r
    v = r.json()
    assert v["state"] == "active" and v["itemCount"] == 4, v
    assert r.header("location") == f"/api/v1/lists/{target['id']}/versions/{v['versionNumber']}"
    after = items_of(t, target["id"])
    assert shown(after) == sorted(EXPECTED, key=lambda x: x["value"])
    assert after["lyon"]["id"] == kept["id"]
    assert "stale" not in after
    # The source list is untouched.
    assert set(items_of(t, src["id"])) == {"Paris", "Parma", "Porto", "Lyon", "Lille"}


def test_no_qualifying_query_and_other_workspaces(make_server):
    s = make_server()
    t, src = fed_source(s)
    target = t.create_list("Popular searches")
    t.add_items(target["id"], [{"value": "keep me"}])
    before = items_of(t, target["id"])
    for body in ({"targetListId": target["id"], "minSelections": 5},
                 {"targetListId": target["id"], "minSelections": 5, "dryRun": True},
                 {"targetListId": target["id"], "exclude": ["par", "cheap", "lille", "lyon"]}):
        r = suggest(t, src, body)
        assert r.status == 409, r
        b = r.json()
        assert b["code"] == "invalid_request" and b["details"]["reason"] == "no_qualifying_queries", b
    assert items_of(t, target["id"]) == before
    assert t.api("GET", f"/lists/{target['id']}/versions").json()["data"] == []

    other = s.tenant()
    theirs = other.create_list("Theirs")
    r = suggest(t, src, {"targetListId": theirs["id"], "dryRun": True})
    assert r.status == 404, r
    # Nor may another workspace read this one's queries into its own list.
    r = other.api("POST", f"/lists/{src['id']}/query-suggestions",
                  {"targetListId": theirs["id"], "dryRun": True})
    assert r.status == 404, r
    r = suggest(t, src, {"targetListId": "lst_nope"})
    assert r.status == 404, r


def test_idempotency_key(make_server):
    s = make_server()
    t, src = fed_source(s)
    target = t.create_list("Popular searches")
    h = {"Idempotency-Key": "qs-" + uuid.uuid4().hex}
    body = {"targetListId": target["id"], "maxItems": 3}
    r1 = suggest(t, src, body, headers=h)
    assert r1.status == 200, r1
    r2 = suggest(t, src, body, headers=h)
    assert r2.status == 200 and r2.json() == r1.json(), (r1, r2)
    versions = t.api("GET", f"/lists/{target['id']}/versions").json()["data"]
    assert len(versions) == 1, versions
    r3 = suggest(t, src, dict(body, maxItems=2), headers=h)
    assert r3.status == 422, r3
    assert r3.json()["details"]["reason"] == "idempotency_key_reused", r3


@pytest.mark.parametrize("body,paths", [
    ({}, ["targetListId"]),
    ({"targetListId": 7}, ["targetListId"]),
    ({"targetListId": "x", "days": 0}, ["days"]),
    ({"targetListId": "x", "days": 367}, ["days"]),
    ({"targetListId": "x", "minSelections": "3"}, ["minSelections"]),
    ({"targetListId": "x", "minSelections": 0}, ["minSelections"]),
    ({"targetListId": "x", "maxItems": 0}, ["maxItems"]),
    ({"targetListId": "x", "maxItems": 100001}, ["maxItems"]),
    ({"targetListId": "x", "exclude": "cheap"}, ["exclude"]),
    ({"targetListId": "x", "exclude": ["ok", "!!!", 3]}, ["exclude[1]", "exclude[2]"]),
    ({"targetListId": "x", "dryRun": "yes"}, ["dryRun"]),
    ({"targetListId": "x", "limit": 5}, ["limit"]),
])
def test_bad_bodies(cp, t, body, paths):
    lst = t.create_list("Cities")
    r = suggest(t, lst, body)
    assert r.status == 400, r
    b = r.json()
    assert b["code"] == "invalid_request"
    assert sorted(f["path"] for f in b["details"]["fields"]) == sorted(paths), b


def test_not_json(cp, t):
    lst = t.create_list("Cities")
    r = t.api("POST", f"/lists/{lst['id']}/query-suggestions", raw=b"[1,2]")
    assert r.status == 400 and r.json()["details"]["fields"][0]["path"] == "body", r


def store_exec(s, statements):
    """Runs SQL statements against the server's store (either backend)."""
    url = conftest.database_url(s.data_dir)
    if url:
        conftest.psql("; ".join(statements), url=url)
        return
    db = sqlite3.connect(os.path.join(s.data_dir, "suggestd.db"))
    with db:
        for st in statements:
            db.execute(st)
    db.close()


def test_days_window(make_server):
    """Only the last `days` UTC days count, today included."""
    s = make_server()
    t = s.tenant()
    src = t.create_list("Cities")
    target = t.create_list("Popular searches")
    today_h = int(datetime.datetime.combine(TODAY, datetime.time(),
                                            tzinfo=datetime.timezone.utc).timestamp()) // 3600
    rows = []
    # "old" 9 days back (inside days=10, outside days=9); "recent" in today's last hour.
    for q, h in (("old", today_h - 9 * 24), ("recent", today_h + 23)):
        rows.append("INSERT INTO analytics_selections(list_id, hour, q, item_id, position,"
                    f" selections) VALUES('{src['id']}', {h}, '{q}', 'itm_x', 1, 3)")
        rows.append("INSERT INTO analytics_raw(list_id, hour, q, raw, count)"
                    f" VALUES('{src['id']}', {h}, '{q}', ' {q.upper()} ', 3)")
    store_exec(s, rows)
    r = suggest(t, src, {"targetListId": target["id"], "dryRun": True, "days": 9})
    assert r.json() == {"items": [{"value": "recent", "displayValue": "RECENT", "rank": 3}]}, r
    r = suggest(t, src, {"targetListId": target["id"], "dryRun": True, "days": 10})
    assert r.json() == {"items": [{"value": "old", "displayValue": "OLD", "rank": 3},
                                  {"value": "recent", "displayValue": "RECENT", "rank": 3}]}, r
