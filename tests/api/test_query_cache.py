"""The runtime's answer cache (src/runtime/h_query.c, docs/RUNTIME.md): a repeated query
is answered from it byte for byte as before, and nothing it holds outlives what the
answer depends on (the artifact's content hash, the locale, the typo budget the list's
policy gives, the limit)."""

from conftest import wait_until
from test_observability import published, start_with_metrics


def hits(m):
    return m.value("suggestd_query_cache_hits_total")


def query(s, pk, q, **extra):
    r = s.runtime("GET", "/v1/query", params=dict({"key": pk, "q": q}, **extra))
    assert r.status == 200, r
    return r


def test_repeated_query_is_a_hit_and_answers_the_same(make_server):
    s, m = start_with_metrics(make_server)
    t, lst, pk = published(s)
    # Each runtime worker thread has its own cache: ask until one thread has seen it twice.
    first = query(s, pk, "parix")  # a one-edit query: the typo search ran for it
    assert [i["value"] for i in first.json()["items"]][:1] == ["Paris"], first.json()
    h0 = hits(m)
    for _ in range(6):
        r = query(s, pk, "parix")
        assert r.body == first.body and r.header("etag") == first.header("etag")
    assert hits(m) >= h0 + 4  # at most one miss per further thread
    # Another limit is another answer.
    one = query(s, pk, "parix", limit="1")
    assert len(one.json()["items"]) == 1 and one.body != first.body


def test_nothing_stale_after_a_republish_or_a_policy_change(make_server):
    s, m = start_with_metrics(make_server)
    t, lst, pk = published(s)
    for _ in range(4):
        before = query(s, pk, "parix").json()
    assert [i["value"] for i in before["items"]] == ["Paris"], before
    # A new version: a new content hash, so no entry of the old one can answer.
    t.add_items(lst["id"], [{"value": "Parisville", "rank": 9}])
    v = t.publish(lst["id"])
    assert v["state"] == "active", v
    assert wait_until(lambda: [i["value"] for i in query(s, pk, "parix").json()["items"]]
                      == ["Parisville", "Paris"], timeout=5)
    for _ in range(4):
        assert [i["value"] for i in query(s, pk, "parix").json()["items"]] == \
            ["Parisville", "Paris"]
    # Typo tolerance off (no republish): the budget is part of the key, so no typo match.
    r = t.api("PATCH", f"/lists/{lst['id']}",
              {"queryPolicy": {"typoTolerance": {"enabled": False}}})
    assert r.status == 200, r
    assert wait_until(lambda: query(s, pk, "parix").json()["items"] == [], timeout=5)
    for _ in range(4):
        assert query(s, pk, "parix").json()["items"] == []
