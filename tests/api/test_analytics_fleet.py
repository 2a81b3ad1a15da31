"""Search analytics on a fleet (docs/DESIGN.md §9, docs/ANALYTICS.md): one Redis (the edge and the
runtimes' shared state), two `suggestd control` processes on one store (PostgreSQL under
scripts/with-pg.sh) and two `suggestd runtime` processes. A fixed multiset of queries and
selection reports, spread over both runtimes, must come out exact in every figure of
GET /api/v1/lists/{id}/analytics read through either control process, stay exact after
further shipment intervals (nothing counted twice), and give the exact query suggestions.

Needs redis-server (scripts/deps.sh installs it): skipped without it, except under CI=true.
"""
import datetime
import time
import uuid

from conftest import wait_until
from test_scale_out import fleet, published, q, serving  # noqa: F401 (fleet: fixture)

TODAY = datetime.datetime.now(datetime.timezone.utc).date().isoformat()

# (query, runtime index): served, counted once each.
QUERIES = ([("par", 0), ("par", 1)] * 2 + [("Par", 0), ("PAR  ", 1)] +
           [("lyon", 0), ("lyon", 1), ("lyon", 1)] + [("zzz", 0), ("zzz", 1), ("qqq", 0)])


def test_every_figure_is_exact_across_the_fleet(fleet):  # noqa: F811
    t = fleet.tenant()
    lst, pk = published(fleet, t)
    key = pk["publishableKey"]
    r0, r1 = fleet.runtimes
    # Each runtime serves the list: its first 200 is one counted "par".
    for rt in (r0, r1):
        assert wait_until(lambda: serving(rt, key, "par"), timeout=30), rt.read_log()[-1500:]
    for text, i in QUERIES:
        r = q((r0, r1)[i], key, text)
        assert r.status == 200 and "code" not in r.json(), r
    items = {it["value"]: it["id"] for it in t.api("GET", f"/lists/{lst['id']}/items?limit=100")
             .json()["data"]}

    def select(rt, item_id, position, query=None, sid=None):
        body = {"key": key, "selectionId": sid or str(uuid.uuid4()), "queryRequestId": "req_f",
                "listId": lst["id"], "itemId": item_id, "position": position}
        if query is not None:
            body["query"] = query
        return rt.runtime("POST", "/v1/selection", body=body)

    sid = str(uuid.uuid4())
    for rt, value, pos, query, s in [(r0, "Paris", 1, "Par", sid), (r1, "Paris", 1, "Par", sid),
                                     (r1, "Paris", 1, "par", None), (r0, "Parma", 2, "PAR", None),
                                     (r1, "Lyon", 1, "lyon", None), (r0, "Berlin", 3, None, None)]:
        r = select(rt, items[value], pos, query, s)
        assert r.status == 200, r
    assert select(r1, "itm_invented", 1, "par").status == 400

    queries = 2 + len(QUERIES)
    top_items = sorted([(items["Paris"], 2, 1.0), (items["Parma"], 1, 2.0),
                        (items["Lyon"], 1, 1.0), (items["Berlin"], 1, 3.0)],
                       key=lambda x: (-x[1], x[0]))
    want = {
        "queries": queries, "noResultQueries": 3, "selections": 5,
        "clickThroughRate": round(5 / queries, 4),
        "byDay": [{"day": TODAY, "queries": queries, "noResultQueries": 3, "selections": 5}],
        "topQueries": [{"q": "par", "count": 8, "selections": 3},
                       {"q": "lyon", "count": 3, "selections": 1},
                       {"q": "zzz", "count": 2, "selections": 0},
                       {"q": "qqq", "count": 1, "selections": 0}],
        "topNoResultQueries": [{"q": "zzz", "count": 2}, {"q": "qqq", "count": 1}],
        "topItems": [{"itemId": i, "selections": n, "meanPosition": m} for i, n, m in top_items],
    }

    def read(c):
        r = c.control("GET", f"/api/v1/lists/{lst['id']}/analytics?from={TODAY}&to={TODAY}",
                      key=t.secret_key)
        assert r.status == 200, r
        return r.json()

    got = [None]

    def arrived():
        got[0] = read(fleet.controls[0])
        return got[0]["queries"] >= queries and got[0]["selections"] >= 5
    assert wait_until(arrived, timeout=20, interval=0.5), got[0]
    assert got[0] == want
    # Another shipment interval later, through the other control process: still exact.
    time.sleep(6)
    assert read(fleet.controls[1]) == want
    assert read(fleet.controls[0]) == want

    # The query suggestions of the same traffic: "par" has three forms once each, so the
    # bytewise smallest ("PAR") is shown.
    target = t.create_list("Popular")
    r = fleet.controls[1].control("POST", f"/api/v1/lists/{lst['id']}/query-suggestions",
                                  {"targetListId": target["id"], "minSelections": 1,
                                   "dryRun": True}, key=t.secret_key)
    assert r.status == 200, r
    assert r.json() == {"items": [{"value": "par", "displayValue": "PAR", "rank": 3},
                                  {"value": "lyon", "displayValue": "lyon", "rank": 1}]}
