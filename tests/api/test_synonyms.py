"""Synonym sets (docs/DESIGN.md §3.4): GET/PUT /api/v1/lists/{id}/synonyms (ETag,
If-Match, 400 with field paths, limits, nothing stored on an error) and what publishing
makes of them: extra aliases that match through prefixes and typos, served only from the
next publish on. Runs on SQLite and, under scripts/with-pg.sh, on PostgreSQL."""
import json

import pytest

from conftest import wait_until
from control_helpers import assert_error, assert_etag, fields_of

EQ = {"type": "equivalent", "phrases": ["NYC", "New York City"]}
ONE = {"type": "oneWay", "input": "tv", "phrases": ["television"]}


def syn(t, lst):
    return t.api("GET", f"/lists/{lst['id']}/synonyms")


def put(t, lst, sets, headers=None, body=None):
    return t.api("PUT", f"/lists/{lst['id']}/synonyms",
                 body if body is not None else {"synonyms": sets}, headers=headers)


@pytest.fixture
def lst(t):
    return t.create_list("Synonyms")


def test_get_empty_then_put_replaces_all_and_answers_as_sent(t, lst):
    r = syn(t, lst)
    assert r.status == 200, r
    assert r.json() == {"synonyms": []}
    empty_tag = assert_etag(r)
    sets = [EQ, ONE, {"phrases": ["a", "b"], "type": "equivalent"}]
    r = put(t, lst, sets)
    assert r.status == 200, r
    assert r.json() == {"synonyms": sets}
    # As sent: member order too.
    assert r.body.decode().index('"phrases"') > r.body.decode().index('"type"')
    assert list(r.json()["synonyms"][2]) == ["phrases", "type"]
    tag = assert_etag(r)
    assert tag != empty_tag
    r = syn(t, lst)
    assert r.json() == {"synonyms": sets} and r.header("etag") == tag
    # The resource's own tag, not the list's.
    assert t.api("GET", f"/lists/{lst['id']}").header("etag") != tag
    # Replaces all.
    r = put(t, lst, [ONE])
    assert r.status == 200 and r.json() == {"synonyms": [ONE]}
    assert syn(t, lst).json() == {"synonyms": [ONE]}
    r = put(t, lst, [])
    assert r.status == 200 and syn(t, lst).json() == {"synonyms": []}
    assert r.header("etag") == empty_tag


def test_if_match(t, lst):
    tag = assert_etag(put(t, lst, [EQ]))
    r = put(t, lst, [ONE], headers={"If-Match": '"nope"'})
    assert_error(r, 412, "invalid_request", reason="precondition_failed")
    assert r.header("etag") == tag
    assert syn(t, lst).json() == {"synonyms": [EQ]}
    r = put(t, lst, [ONE], headers={"If-Match": tag})
    assert r.status == 200, r
    new = assert_etag(r)
    assert new != tag
    # The old tag is stale now.
    r = put(t, lst, [EQ], headers={"If-Match": tag})
    assert_error(r, 412, "invalid_request", reason="precondition_failed")
    assert r.header("etag") == new
    assert put(t, lst, [EQ], headers={"If-Match": "*"}).status == 200


def test_unknown_and_archived_lists(t, lst):
    assert_error(t.api("GET", "/lists/lst_doesnotexist00000000/synonyms"), 404, "invalid_list")
    r = t.api("PUT", "/lists/lst_doesnotexist00000000/synonyms", {"synonyms": []})
    assert_error(r, 404, "invalid_list")
    r = t.api("PUT", "/lists/" + "x" * 500 + "/synonyms", {"synonyms": []})
    assert_error(r, 404, "invalid_list")
    other = t.server.tenant()
    assert_error(other.api("GET", f"/lists/{lst['id']}/synonyms"), 404, "invalid_list")
    assert_error(put(other, lst, [EQ]), 404, "invalid_list")
    assert t.api("PATCH", f"/lists/{lst['id']}", {"status": "archived"}).status == 200
    assert_error(put(t, lst, [EQ]), 409, "invalid_request", reason="list_archived")
    assert syn(t, lst).status == 200


BAD = [
    # (body, field path)
    ({"synonyms": [EQ], "extra": 1}, "extra"),
    ({}, "synonyms"),
    ({"synonyms": {"a": 1}}, "synonyms"),
    ({"synonyms": [EQ, "x"]}, "synonyms[1]"),
    ({"synonyms": [{"type": "both", "phrases": ["a", "b"]}]}, "synonyms[0].type"),
    ({"synonyms": [{"phrases": ["a", "b"]}]}, "synonyms[0].type"),
    ({"synonyms": [{"type": "equivalent", "phrases": ["a"]}]}, "synonyms[0].phrases"),
    ({"synonyms": [{"type": "equivalent", "phrases": [str(i) for i in range(21)]}]},
     "synonyms[0].phrases"),
    ({"synonyms": [{"type": "oneWay", "input": "a", "phrases": []}]}, "synonyms[0].phrases"),
    ({"synonyms": [{"type": "oneWay", "phrases": ["a"]}]}, "synonyms[0].input"),
    ({"synonyms": [{"type": "equivalent", "input": "a", "phrases": ["b", "c"]}]},
     "synonyms[0].input"),
    ({"synonyms": [{"type": "equivalent", "phrases": ["a", "b"], "x": 1}]}, "synonyms[0].x"),
    ({"synonyms": [EQ, EQ, EQ, {"type": "equivalent", "phrases": ["a", "  -- "]}]},
     "synonyms[3].phrases[1]"),
    ({"synonyms": [{"type": "equivalent", "phrases": ["a", ""]}]}, "synonyms[0].phrases[1]"),
    ({"synonyms": [{"type": "equivalent", "phrases": ["a", 7]}]}, "synonyms[0].phrases[1]"),
    ({"synonyms": [{"type": "equivalent", "phrases": ["a", "b" * 101]}]},
     "synonyms[0].phrases[1]"),
    ({"synonyms": [{"type": "oneWay", "input": "!!", "phrases": ["a"]}]}, "synonyms[0].input"),
    ({"synonyms": [{"type": "oneWay", "input": "é" * 101, "phrases": ["a"]}]},
     "synonyms[0].input"),
    ({"synonyms": [{"type": "equivalent", "phrases": ["Café", "b", "CAFE\u0301"]}]},
     "synonyms[0].phrases[2]"),
    ({"synonyms": [{"type": "oneWay", "input": "TV", "phrases": ["tv."]}]},
     "synonyms[0].phrases[0]"),
]


@pytest.mark.parametrize("body,path", BAD)
def test_400_with_field_paths_and_nothing_stored(t, lst, body, path):
    tag = assert_etag(put(t, lst, [ONE]))
    r = put(t, lst, None, body=body)
    assert_error(r, 400, "invalid_request", field=path)
    r = syn(t, lst)
    assert r.json() == {"synonyms": [ONE]} and r.header("etag") == tag


def test_boundaries_are_accepted(t, lst):
    sets = [
        {"type": "equivalent", "phrases": ["a", "b"]},
        {"type": "equivalent", "phrases": [f"p{i}" for i in range(20)]},
        {"type": "oneWay", "input": "x", "phrases": ["y"]},
        # 100 code points once normalised, more before (marks and punctuation go).
        {"type": "equivalent", "phrases": ["é" * 100, "-" + "e\u0301" * 99 + "f!"]},
    ]
    r = put(t, lst, sets)
    assert r.status == 200, r
    assert r.json() == {"synonyms": sets}


def test_body_not_an_object_or_malformed(t, lst):
    for raw in (b"[]", b"nope", b"\"x\""):
        r = t.api("PUT", f"/lists/{lst['id']}/synonyms", raw=raw,
                  headers={"Content-Type": "application/json"})
        assert_error(r, 400, "invalid_request", field="body")
    assert syn(t, lst).json() == {"synonyms": []}


def test_10000_sets_accepted_10001_refused(t, lst):
    sets = [{"type": "equivalent", "phrases": [f"w{i}", f"v{i}"]} for i in range(10000)]
    r = put(t, lst, sets)
    assert r.status == 200, r
    assert len(r.json()["synonyms"]) == 10000
    tag = r.header("etag")
    r = put(t, lst, sets + [{"type": "equivalent", "phrases": ["a", "b"]}])
    assert_error(r, 400, "invalid_request", field="synonyms")
    r = syn(t, lst)
    assert len(r.json()["synonyms"]) == 10000 and r.header("etag") == tag


def test_body_of_4_mib_at_most(t, lst):
    # Past 1 MiB (the ordinary routes' cap) and under 4 MiB: accepted.
    long_sets = [{"type": "equivalent", "phrases": [f"{i} " + "x" * 90, f"{i} " + "y" * 90]}
                 for i in range(7000)]
    raw = json.dumps({"synonyms": long_sets}).encode()
    assert (1 << 20) < len(raw) < (4 << 20)
    r = t.api("PUT", f"/lists/{lst['id']}/synonyms", raw=raw,
              headers={"Content-Type": "application/json"})
    assert r.status == 200, r
    tag = r.header("etag")
    # Exactly 4 MiB: accepted.
    exact = raw + b" " * ((4 << 20) - len(raw))
    r = t.api("PUT", f"/lists/{lst['id']}/synonyms", raw=exact,
              headers={"Content-Type": "application/json"})
    assert r.status == 200 and r.header("etag") == tag, r
    # Past 4 MiB: 413, nothing stored.
    big = raw + b" " * ((4 << 20) + 1 - len(raw))
    r = t.api("PUT", f"/lists/{lst['id']}/synonyms", raw=big,
              headers={"Content-Type": "application/json"})
    assert_error(r, 413, "invalid_request", reason="payload_too_large")
    assert syn(t, lst).header("etag") == tag


# ---- publishing ----------------------------------------------------------------------------

ITEMS = [
    {"value": "nyc", "displayValue": "New York City", "rank": 10},
    {"value": "tv", "displayValue": "Samsung Television 55", "rank": 5},
    {"value": "sf", "displayValue": "San Francisco", "aliases": ["Frisco"], "rank": 3},
    {"value": "la", "displayValue": "Los Angeles", "rank": 2},
]


@pytest.fixture
def world(make_server):
    s = make_server()
    t = s.tenant()
    lst = t.create_list("Places", visibility="public")
    t.add_items(lst["id"], ITEMS)
    pk = t.publishable_key(lst["id"])["publishableKey"]
    return s, t, lst, pk


def publish(s, t, lst, pk):
    v = t.publish(lst["id"])
    assert v["state"] == "active", v
    assert s.serves(pk, v["contentHash"], timeout=5)
    return v


def query(s, pk, text):
    r = s.runtime("GET", "/v1/query", params={"key": pk, "q": text})
    assert r.status == 200, r
    return r.json()["items"]


def shown(s, pk, text):
    return [i["displayValue"] for i in query(s, pk, text)]


def test_publish_makes_synonyms_match_like_aliases(world):
    s, t, lst, pk = world
    r = put(t, lst, [EQ, ONE, {"type": "equivalent", "phrases": ["San Francisco", "SF", "Bay"]},
                     {"type": "oneWay", "input": "LA", "phrases": ["Los Angeles"]}])
    assert r.status == 200, r
    publish(s, t, lst, pk)
    # Equivalent: NYC stands for New York City, through prefixes.
    for q in ("nyc", "ny", "NYC"):
        assert shown(s, pk, q)[0] == "New York City", q
    # Highlight [] for a synonym alias, like any alias.
    assert query(s, pk, "nyc")[0]["highlight"] == []
    # One way: "tv" finds the television; "television" itself still matches by its name.
    assert shown(s, pk, "tv") == ["Samsung Television 55"]
    assert shown(s, pk, "samsung tv") == ["Samsung Television 55"]
    # ...and never the other way: no alias "los angeles" is made from "la".
    assert "Los Angeles" in shown(s, pk, "la")
    # A later word of a synonym alias is tier 2, as for aliases.
    assert shown(s, pk, "bay") == ["San Francisco"]
    # Typos: a synonym alias is an alias in every respect.
    assert shown(s, pk, "samsung tc")[0] == "Samsung Television 55"
    assert shown(s, pk, "nuw york city")[0] == "New York City"
    # Own aliases are candidates too (Frisco) but nothing chains from a result.
    assert shown(s, pk, "frisco") == ["San Francisco"]


def test_put_after_publish_changes_nothing_until_next_publish(world):
    s, t, lst, pk = world
    assert put(t, lst, [EQ]).status == 200
    publish(s, t, lst, pk)
    assert shown(s, pk, "nyc") == ["New York City"]
    assert shown(s, pk, "big apple") == []
    assert put(t, lst, [{"type": "equivalent", "phrases": ["Big Apple", "New York City"]}]).status == 200
    # Still the published sets.
    assert shown(s, pk, "nyc") == ["New York City"]
    assert shown(s, pk, "big apple") == []
    publish(s, t, lst, pk)
    assert shown(s, pk, "big apple") == ["New York City"]
    assert shown(s, pk, "big ap") == ["New York City"]
    # Typos reach a synonym alias like any alias (one deletion, one substitution).
    assert shown(s, pk, "big aple") == ["New York City"]
    assert shown(s, pk, "bug apple") == ["New York City"]
    assert shown(s, pk, "nyc") == []


def test_a_version_compiles_the_sets_of_its_snapshot(make_server):
    """A queued version keeps the sets current when it was created, whatever a PUT does
    before the worker compiles it (every publish is queued here: 202; the store test
    tests/unit/store/test_synonyms.c pins the order down without a race)."""
    s = make_server(["--sync-publish-limit", "0"])
    t = s.tenant()
    lst = t.create_list("Queued", visibility="public")
    t.add_items(lst["id"], ITEMS)
    pk = t.publishable_key(lst["id"])["publishableKey"]
    assert put(t, lst, [EQ]).status == 200
    r = t.api("POST", f"/lists/{lst['id']}/versions")
    assert r.status == 202, r
    number = r.json()["versionNumber"]
    assert put(t, lst, []).status == 200
    # staged is the moment between compile and activation: wait past both pending states
    assert wait_until(lambda: t.api("GET", f"/lists/{lst['id']}/versions/{number}")
                      .json()["state"] not in ("queued", "staged"), timeout=30)
    v = t.api("GET", f"/lists/{lst['id']}/versions/{number}").json()
    assert v["state"] == "active", v
    assert s.serves(pk, v["contentHash"], timeout=5)
    assert shown(s, pk, "nyc") == ["New York City"]


def test_the_export_is_unchanged(world):
    s, t, lst, pk = world
    before = t.api("GET", f"/lists/{lst['id']}/items/export").body
    assert put(t, lst, [EQ]).status == 200
    assert t.api("GET", f"/lists/{lst['id']}/items/export").body == before
