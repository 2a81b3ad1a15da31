"""Search analytics (DESIGN.md section 9; docs/ANALYTICS.md), black box against `serve`.

A fixed multiset of queries and selection reports goes to the runtime; every figure of
GET /api/v1/lists/{id}/analytics must then be exact (shipped within 15 s). Also: a
selection whose item is not in the list is 400 naming itemId and never counted, bad
ranges are 400 with field paths, and retention deletes old analytics."""
import datetime
import os
import sqlite3
import time
import uuid

import pytest

from conftest import wait_until

TODAY = datetime.datetime.now(datetime.timezone.utc).date()


def day(d):
    return d.isoformat()


def setup_list(server, **patch):
    t = server.tenant()
    lst = t.create_list("Cities", visibility="public", **patch)
    items = t.add_items(lst["id"], [{"value": v} for v in
                                    ("Paris", "Parma", "Porto", "Lyon", "Lille")])
    assert t.publish(lst["id"])["state"] == "active"
    pk = t.publishable_key(lst["id"])["publishableKey"]
    ids = {it["value"]: it["id"] for it in items}
    r = wait_until(lambda: (lambda x: x if x.status == 200 else None)(
        server.runtime("GET", "/v1/query", params={"key": pk, "q": "par"})), timeout=10)
    assert r and r.status == 200, r
    return t, lst, pk, ids


def query(server, pk, q, headers=None):
    return server.runtime("GET", "/v1/query", params={"key": pk, "q": q}, headers=headers)


def select(server, pk, lst, item_id, position, q=None, sid=None):
    body = {"key": pk, "selectionId": sid or str(uuid.uuid4()), "queryRequestId": "req_x",
            "listId": lst["id"], "itemId": item_id, "position": position}
    if q is not None:
        body["query"] = q
    return server.runtime("POST", "/v1/selection", body=body)


def analytics(t, lst, frm, to):
    return t.api("GET", f"/lists/{lst['id']}/analytics?from={frm}&to={to}")


def wait_for(t, lst, pred, timeout=15):
    got = [None]

    def probe():
        r = analytics(t, lst, day(TODAY), day(TODAY))
        assert r.status == 200, r
        got[0] = r.json()
        return pred(got[0])
    wait_until(probe, timeout=timeout, interval=0.5)
    return got[0]


def test_every_figure_is_exact(make_server):
    s = make_server()
    t, lst, pk, ids = setup_list(s)
    calls = 1  # the readiness probe above: one served "par" with two items
    # Served queries (200): "par" (and its forms), "lyon", no-result "zzz" and "qqq".
    for q in ["par"] * 4 + ["Par"] * 2 + ["PAR  "] + ["lyon"] * 3 + ["zzz"] * 2 + ["qqq"]:
        r = query(s, pk, q)
        assert r.status == 200 and "code" not in r.json(), r
        calls += 1
    # A 304 is served as well.
    r = query(s, pk, "lille")
    r2 = query(s, pk, "lille", headers={"If-None-Match": r.headers["etag"]})
    assert r2.status == 304
    calls += 2
    # Not counted: errors and query_too_short (normalised "!!!" is empty).
    assert query(s, pk, "!!!").json().get("code") == "query_too_short"
    assert s.runtime("GET", "/v1/query", params={"key": "pk_nope", "q": "par"}).status == 401
    # Selections: (query, item, position); a duplicate selectionId counts once; one
    # without a query counts in totals and topItems only.
    sid = str(uuid.uuid4())
    for body in [("Par", ids["Paris"], 1, sid), ("Par", ids["Paris"], 1, sid),
                 ("par", ids["Paris"], 1, None), ("PAR", ids["Parma"], 2, None),
                 ("lyon", ids["Lyon"], 1, None), (None, ids["Porto"], 3, None)]:
        q, item, pos, sel_id = body
        r = select(s, pk, lst, item, pos, q=q, sid=sel_id)
        assert r.status == 200, r
    # An item that is not in the list: 400 naming itemId, and never counted.
    r = select(s, pk, lst, "itm_invented", 1, q="par")
    assert r.status == 400, r
    b = r.json()
    assert b["code"] == "invalid_request" and b["details"] == {"fields": ["itemId"]}, b
    assert "itemId" in b["message"]

    want_queries = calls  # every 200/304 above
    a = wait_for(t, lst, lambda a: a["queries"] == want_queries and a["selections"] == 5)
    assert a["queries"] == want_queries, a
    assert a["noResultQueries"] == 3, a
    assert a["selections"] == 5, a
    assert a["clickThroughRate"] == round(5 / want_queries, 4), a
    assert a["byDay"] == [{"day": day(TODAY), "queries": want_queries, "noResultQueries": 3,
                           "selections": 5}], a
    assert a["topQueries"] == [
        {"q": "par", "count": 8, "selections": 3},
        {"q": "lyon", "count": 3, "selections": 1},
        {"q": "lille", "count": 2, "selections": 0},
        {"q": "zzz", "count": 2, "selections": 0},
        {"q": "qqq", "count": 1, "selections": 0},
    ], a
    assert a["topNoResultQueries"] == [{"q": "zzz", "count": 2}, {"q": "qqq", "count": 1}], a
    top = sorted([(ids["Paris"], 2, 1.0), (ids["Parma"], 1, 2.0), (ids["Lyon"], 1, 1.0),
                  (ids["Porto"], 1, 3.0)], key=lambda x: (-x[1], x[0]))
    assert a["topItems"] == [{"itemId": i, "selections": n, "meanPosition": m}
                             for i, n, m in top], a
    assert set(a) == {"queries", "noResultQueries", "selections", "clickThroughRate", "byDay",
                      "topQueries", "topNoResultQueries", "topItems"}
    # A range: every day, zeros included, ascending.
    r = analytics(t, lst, day(TODAY - datetime.timedelta(days=2)), day(TODAY))
    assert r.status == 200
    assert [d["day"] for d in r.json()["byDay"]] == [
        day(TODAY - datetime.timedelta(days=k)) for k in (2, 1, 0)]
    assert r.json()["byDay"][0] == {"day": day(TODAY - datetime.timedelta(days=2)),
                                    "queries": 0, "noResultQueries": 0, "selections": 0}
    # Nothing counted twice across a restart (the last interval is shipped at stop).
    s.restart()
    time.sleep(1)
    again = wait_for(t, lst, lambda a: True, timeout=2)
    assert again["queries"] == want_queries and again["selections"] == 5, again


def test_analytics_off_counts_nothing(make_server):
    s = make_server(["--analytics", "off"])
    t, lst, pk, ids = setup_list(s)
    assert query(s, pk, "lyon").status == 200
    assert select(s, pk, lst, ids["Lyon"], 1, q="lyon").status == 200
    time.sleep(7)  # longer than a shipment interval
    a = analytics(t, lst, day(TODAY), day(TODAY)).json()
    assert a["queries"] == 0 and a["selections"] == 0, a


@pytest.mark.parametrize("frm,to,field", [
    ("2024-01-01", "2024-04-02", "to"),        # 93 days
    ("2024-03-02", "2024-03-01", "from"),      # from after to
    ("2024-02-30", "2024-03-01", "from"),      # not a day
    ("2024-3-01", "2024-03-01", "from"),       # malformed
    ("2024-03-01", "yesterday", "to"),
    (None, "2024-03-01", "from"),              # missing
])
def test_bad_ranges(make_server, frm, to, field):
    s = make_server()
    t = s.tenant()
    lst = t.create_list("Cities")
    qs = "&".join(f"{k}={v}" for k, v in (("from", frm), ("to", to)) if v is not None)
    r = t.api("GET", f"/lists/{lst['id']}/analytics?{qs}")
    assert r.status == 400, r
    b = r.json()
    assert b["code"] == "invalid_request"
    assert [f["path"] for f in b["details"]["fields"]] == [field], b


def test_92_days_and_other_workspace(make_server):
    s = make_server()
    t = s.tenant()
    lst = t.create_list("Cities")
    r = t.api("GET", f"/lists/{lst['id']}/analytics?from=2024-01-01&to=2024-04-01")
    assert r.status == 200 and len(r.json()["byDay"]) == 92, r
    other = s.tenant()
    r = other.api("GET", f"/lists/{lst['id']}/analytics?from=2024-01-01&to=2024-01-02")
    assert r.status == 404, r


@pytest.mark.sqlite_only("ages analytics rows in SQLite's file")
def test_retention_deletes_old_analytics(make_server):
    s = make_server(["--analytics-retention-days", "3"])
    t, lst, pk, ids = setup_list(s)
    a = wait_for(t, lst, lambda a: a["queries"] >= 1)
    assert a["queries"] >= 1
    s.stop()
    # Age: one row 3 days old (outside a 3-day retention: today and the 2 before) and
    # one 2 days old (inside).
    old = (datetime.datetime.combine(TODAY - datetime.timedelta(days=3), datetime.time(),
                                     tzinfo=datetime.timezone.utc).timestamp()) // 3600
    kept = old + 24
    db = sqlite3.connect(os.path.join(s.data_dir, "suggestd.db"))
    with db:
        for h, q in ((old, "old"), (kept, "kept")):
            db.execute("INSERT INTO analytics_hours(list_id, hour, queries, no_result, distinct_q)"
                       " VALUES(?, ?, 7, 0, 1)", (lst["id"], int(h)))
            db.execute("INSERT INTO analytics_queries(list_id, hour, q, count, no_result)"
                       " VALUES(?, ?, ?, 7, 0)", (lst["id"], int(h), q))
    db.close()
    s.start()
    frm = day(TODAY - datetime.timedelta(days=5))

    def aged():
        r = analytics(t, lst, frm, day(TODAY)).json()
        return r if [q["q"] for q in r["topQueries"]].count("old") == 0 else None
    r = wait_until(aged, timeout=10, interval=0.5)
    assert r, "the row older than the retention is still there"
    qs = [q["q"] for q in r["topQueries"]]
    assert "kept" in qs and "old" not in qs, r
    by = {d["day"]: d["queries"] for d in r["byDay"]}
    assert by[day(TODAY - datetime.timedelta(days=3))] == 0
    assert by[day(TODAY - datetime.timedelta(days=2))] == 7


def test_old_selection_event_files_are_deleted(make_server):
    """The runtime's raw event files are only its 24-hour dedupe memory: a day before
    yesterday is deleted (counts live in the analytics)."""
    s = make_server()
    s.stop()
    events = os.path.join(s.data_dir, "runtime", "events")
    os.makedirs(events, exist_ok=True)
    old = os.path.join(events, f"selections-{day(TODAY - datetime.timedelta(days=2))}.ndjson")
    recent = os.path.join(events, f"selections-{day(TODAY - datetime.timedelta(days=1))}.ndjson")
    for p in (old, recent):
        with open(p, "w") as f:
            f.write("")
    s.start()
    assert wait_until(lambda: not os.path.exists(old), timeout=5), "old segment kept"
    assert os.path.exists(recent)
