"""The runtime's answer cache (src/runtime/answer_cache.c, docs/RUNTIME.md): a repeated query
is answered from it byte for byte as before, and nothing it holds outlives what the
answer depends on (the artifact's content hash, the locale, the typo budget the list's
policy gives, the limit)."""

import http.client
import json
import os
import urllib.parse

import pytest

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
    # One cache for every worker thread: each repeat is a hit, whichever worker serves it.
    first = query(s, pk, "parix")  # a one-edit query: the typo search ran for it
    assert [i["value"] for i in first.json()["items"]][:1] == ["Paris"], first.json()
    h0 = hits(m)
    for _ in range(6):
        r = query(s, pk, "parix")
        assert r.body == first.body and r.header("etag") == first.header("etag")
    assert hits(m) == h0 + 6
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


def keep_alive_queries(s, pk, qs, conn=None):
    """Asks every q in order on one keep-alive connection (conn, or a new one closed at
    the end), which one runtime worker thread serves. Returns the bodies."""
    own = conn is None
    if own:
        conn = http.client.HTTPConnection("127.0.0.1", s.runtime_port, timeout=30)
    out = []
    for q in qs:
        conn.request("GET", "/v1/query?" + urllib.parse.urlencode({"key": pk, "q": q}))
        r = conn.getresponse()
        body = r.read()
        assert r.status == 200, body
        out.append(body)
    if own:
        conn.close()
    return out


def test_a_working_set_of_distinct_queries_stays_whole(make_server):
    # 1,500 distinct queries cycled: the second pass is answered from the cache
    # entirely. With two ways per set, queries whose sets overflowed evicted each other
    # on every pass (each such miss a full search).
    s, m = start_with_metrics(make_server)
    t, lst, pk = published(s)
    qs = [f"q{i:04d}" for i in range(1500)]
    conn = http.client.HTTPConnection("127.0.0.1", s.runtime_port, timeout=30)
    first = keep_alive_queries(s, pk, qs, conn)
    h0 = hits(m)
    assert keep_alive_queries(s, pk, qs, conn) == first
    assert hits(m) - h0 == len(qs)
    conn.close()


def test_a_flood_of_one_off_queries_does_not_flush_the_hot_answers(make_server):
    # 300 queries asked three times each, then 50,000 others asked once each (more than
    # the cache's 32,768 entries: a crawler, random text, a long mix cycled in order), all
    # on one connection (one worker thread, whose admission counts they are). The hot 300
    # are still answered from the cache: a full set admits a new answer only over one
    # asked less often lately (TinyLFU, docs/RUNTIME.md). With plain LRU the flood, ~24
    # answers a set of 16, replaced nearly all of them.
    s, m = start_with_metrics(make_server)
    t, lst, pk = published(s)
    hot = [f"hot{i:04d}" for i in range(300)]
    conn = http.client.HTTPConnection("127.0.0.1", s.runtime_port, timeout=30)
    first = keep_alive_queries(s, pk, hot, conn)
    for _ in range(2):
        assert keep_alive_queries(s, pk, hot, conn) == first
    keep_alive_queries(s, pk, [f"once{i:05d}" for i in range(50000)], conn)
    h0 = hits(m)
    assert keep_alive_queries(s, pk, hot, conn) == first
    assert hits(m) - h0 == len(hot)
    conn.close()


def test_an_answer_one_worker_kept_is_a_hit_on_another(make_server):
    # One cache per process, shared by the worker threads: two connections open at once
    # are served by two workers (a new connection goes to the worker with the fewest;
    # serve runs one per CPU), and a query one worker answered is a hit on the other, with
    # the same body. With a cache per worker the second one searched again.
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one CPU: the runtime has one worker thread")
    s, m = start_with_metrics(make_server)
    t, lst, pk = published(s)
    c1 = http.client.HTTPConnection("127.0.0.1", s.runtime_port, timeout=30)
    c2 = http.client.HTTPConnection("127.0.0.1", s.runtime_port, timeout=30)
    keep_alive_queries(s, pk, ["pa"], c1)  # both connected, c1 first
    keep_alive_queries(s, pk, ["pa"], c2)
    for q in ["parix", "lond", "berlni"]:
        h0 = hits(m)
        answers = []
        for c in (c1, c2):
            c.request("GET", "/v1/query?" + urllib.parse.urlencode({"key": pk, "q": q}))
            r = c.getresponse()
            answers.append((r.status, r.getheader("etag"), r.read()))
        assert answers[0] == answers[1] and answers[0][0] == 200, q
        assert hits(m) - h0 == 1, q
    c1.close()
    c2.close()


def test_answers_of_many_lists_stay_cached(make_server):
    # Entries carry their artifact's generation, however many artifacts are in use: a
    # query asked in turn of 6 lists (6 artifacts) is a hit on every list the second
    # time. The per-worker caches mapped the last 4 content hashes to generations, so a
    # rotation over 5 or more missed every time.
    s, m = start_with_metrics(make_server)
    t = s.tenant()
    pks = []
    for i in range(6):
        lst = t.create_list(f"Cities {i}", visibility="public")
        t.add_items(lst["id"], [{"value": f"Paris {i}", "rank": 2}, {"value": "Parma", "rank": 1}])
        v = t.publish(lst["id"])
        assert v["state"] == "active", v
        pks.append(t.publishable_key(lst["id"])["publishableKey"])
    for pk in pks:
        assert wait_until(lambda: s.runtime("GET", "/v1/query", params={"key": pk, "q": "zz"})
                          .status == 200, timeout=5)
    conn = http.client.HTTPConnection("127.0.0.1", s.runtime_port, timeout=30)
    first = [keep_alive_queries(s, pk, ["parix"], conn)[0] for pk in pks]
    assert len(set(first)) == 6
    h0 = hits(m)
    for _ in range(2):
        assert [keep_alive_queries(s, pk, ["parix"], conn)[0] for pk in pks] == first
    assert hits(m) - h0 == 12
    conn.close()


def test_an_answer_with_a_highlight_pair_per_word_is_kept(make_server):
    # Words in any order (tier 3): each item's highlight has one pair per matched word.
    s, m = start_with_metrics(make_server)
    t = s.tenant()
    lst = t.create_list("Cities", visibility="public")
    t.add_items(lst["id"], [{"value": "Porto Alegre", "rank": 3},
                            {"value": "Alegre Porto Novo", "rank": 1}])
    v = t.publish(lst["id"])
    assert v["state"] == "active", v
    pk = t.publishable_key(lst["id"])["publishableKey"]
    assert wait_until(lambda: s.runtime("GET", "/v1/query", params={"key": pk, "q": "po"})
                      .status == 200, timeout=5)
    first = keep_alive_queries(s, pk, ["alegre por"])[0]
    items = json.loads(first)["items"]
    assert any(len(i["highlight"]) == 2 for i in items), items
    h0 = hits(m)
    assert keep_alive_queries(s, pk, ["alegre por"] * 3) == [first] * 3
    assert hits(m) - h0 >= 2  # the first of the three may meet a thread without it


def test_each_key_keeps_its_own_request_id_on_a_hit(make_server):
    # The entry keeps the requestId last derived for it with the key it was derived
    # with: a hit through another key of the same list derives that key's own.
    s, m = start_with_metrics(make_server)
    t, lst, pk = published(s)
    pk2 = t.publishable_key(lst["id"])["publishableKey"]
    assert pk2 != pk
    assert wait_until(lambda: s.runtime("GET", "/v1/query", params={"key": pk2, "q": "pa"})
                      .status == 200, timeout=5)
    conn = http.client.HTTPConnection("127.0.0.1", s.runtime_port, timeout=30)
    ids = {pk: set(), pk2: set()}
    h0 = hits(m)
    for k in [pk, pk2, pk, pk, pk2, pk2, pk]:
        conn.request("GET", "/v1/query?" + urllib.parse.urlencode({"key": k, "q": "parix"}))
        r = conn.getresponse()
        body = json.loads(r.read())
        assert r.status == 200, body
        ids[k].add(body["requestId"])
    conn.close()
    assert hits(m) - h0 >= 6
    assert len(ids[pk]) == 1 and len(ids[pk2]) == 1 and ids[pk] != ids[pk2], ids
