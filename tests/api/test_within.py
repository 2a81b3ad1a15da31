"""The filter by ancestor, `within=ITEM_ID` on GET /v1/query (docs/DESIGN.md §3.5), through
the real pipeline: items with parents, publish, runtime. Only descendants (any depth), the
top N taken after the filter, typos included; a malformed, repeated or empty `within` is a
400 naming the parameter; an id the active version does not hold is 200 with no items.
"""
import shutil
import tempfile
import urllib.parse

import pytest

from conftest import NO_LIMITS, Server, wait_until


def q(s, pk, text, **extra):
    return s.runtime("GET", "/v1/query", params={"key": pk, "q": text, **extra})


def raw(s, pk, tail):
    """A query whose query string is written by hand (repeated parameters)."""
    return s.runtime("GET", "/v1/query?key=" + urllib.parse.quote(pk) + "&q=par" + tail)


def shown(r):
    assert r.status == 200, r
    return [i["displayValue"] for i in r.json()["items"]]


@pytest.fixture(scope="module")
def world():
    d = tempfile.mkdtemp(prefix="suggestd-test-")
    s = Server(d, mode="serve", extra=list(NO_LIMITS), env=None).start()
    try:
        yield build_world(s)
    finally:
        s.stop()
        shutil.rmtree(d, ignore_errors=True)


def build_world(s):
    t = s.tenant()
    lst = t.create_list("Places", visibility="public")
    europe, asia = t.add_items(lst["id"], [{"value": "Europe", "rank": 1},
                                           {"value": "Asia", "rank": 1}])
    france, spain = t.add_items(lst["id"], [
        {"value": "France", "parentId": europe["id"], "rank": 5},
        {"value": "Spain", "parentId": europe["id"], "rank": 5}])
    japan, = t.add_items(lst["id"], [{"value": "Japan", "parentId": asia["id"], "rank": 5}])
    cities = [{"value": f"Paris {i}", "parentId": france["id"], "rank": 100 + i} for i in range(12)]
    cities += [{"value": "Parla", "parentId": spain["id"], "rank": 50},
               {"value": "Pamplona", "parentId": spain["id"], "rank": 40},
               {"value": "Paro", "parentId": japan["id"], "rank": 1000},
               {"value": "Paris Japan", "parentId": japan["id"], "rank": 999},
               {"value": "Pari", "rank": 2000}]  # a root: never inside any filter
    t.add_items(lst["id"], cities)
    v = t.publish(lst["id"])
    assert v["state"] == "active", v
    pk = t.publishable_key(lst["id"])["publishableKey"]
    assert s.serves(pk, v["contentHash"], timeout=3)
    ids = {"europe": europe["id"], "asia": asia["id"], "france": france["id"],
           "spain": spain["id"], "japan": japan["id"]}
    return s, pk, ids


def test_only_descendants_any_depth_top_10_after_the_filter(world):
    s, pk, ids = world
    # Unfiltered, the Japanese and root items outrank everything.
    assert shown(q(s, pk, "par"))[:3] == ["Pari", "Paro", "Paris Japan"]
    # Europe (grandparent): ten French cities by rank, none of Asia, no root.
    got = shown(q(s, pk, "par", within=ids["europe"]))
    assert got == [f"Paris {i}" for i in range(11, 1, -1)]
    assert shown(q(s, pk, "par", within=ids["spain"])) == ["Parla"]
    assert shown(q(s, pk, "pa", within=ids["spain"])) == ["Parla", "Pamplona"]
    assert shown(q(s, pk, "par", within=ids["asia"])) == ["Paro", "Paris Japan"]
    # limit applies after the filter
    assert shown(q(s, pk, "par", within=ids["europe"], limit="3")) == [
        "Paris 11", "Paris 10", "Paris 9"]


def test_typos_are_filtered_too(world):
    s, pk, ids = world
    # "parla" exact in Spain; "pamplna" is one deletion from Pamplona (7 code points: k=1).
    assert shown(q(s, pk, "pamplna", within=ids["spain"])) == ["Pamplona"]
    assert shown(q(s, pk, "pamplna", within=ids["france"])) == []
    # "pairs" (swap) within Asia: Paris Japan at one edit, not the French Parises.
    r = q(s, pk, "pairs", within=ids["asia"])
    assert shown(r) == ["Paris Japan"]
    assert r.json()["items"][0]["highlight"] == [[0, 5]]


def test_a_leaf_or_an_unknown_id_answers_no_items(world):
    s, pk, ids = world
    for wid in ("itm_" + "A" * 22, "itm_0123456789abcdefABCDEF"):
        r = q(s, pk, "par", within=wid)
        assert r.status == 200 and r.json()["items"] == [], r
    leaf = q(s, pk, "parla").json()["items"][0]["itemId"]
    assert q(s, pk, "p", within=leaf).json()["items"] == []


def test_within_is_an_input_to_the_request_id(world):
    s, pk, ids = world
    plain = q(s, pk, "par").json()["requestId"]
    a = q(s, pk, "par", within=ids["europe"])
    b = q(s, pk, "par", within=ids["asia"])
    assert len({plain, a.json()["requestId"], b.json()["requestId"]}) == 3
    assert q(s, pk, "par", within=ids["europe"]).body == a.body  # identical calls, same bytes
    assert a.header("etag") != q(s, pk, "par").header("etag")


def bad(r):
    assert r.status == 400, r
    b = r.json()
    assert b["code"] == "invalid_request", b
    assert b["details"] == {"fields": ["within"]}, b
    assert "within" in b["message"]


@pytest.mark.parametrize("value", [
    "", "itm_", "itm_" + "a" * 21, "itm_" + "a" * 23, "ITM_" + "a" * 22, "itm_" + "a" * 21 + "-",
    "itm_" + "a" * 21 + "_", "itm_" + "\u00e9" * 11, " itm_" + "a" * 22, "x" * 10240,
    "itm_" + "a" * 10240], ids=lambda v: f"{v[:12]}..{len(v)}")
def test_malformed_within_is_400_naming_the_parameter(world, value):
    s, pk, ids = world
    bad(q(s, pk, "par", within=value))


def test_within_twice_or_without_value_is_400(world):
    s, pk, ids = world
    w = ids["europe"]
    bad(raw(s, pk, f"&within={w}&within={w}"))
    bad(raw(s, pk, f"&within={w}&within=itm_{'B' * 22}"))
    bad(raw(s, pk, "&within"))
    bad(raw(s, pk, "&within="))
    assert raw(s, pk, f"&within={w}").status == 200
