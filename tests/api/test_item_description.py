"""An item's optional display-only description (docs/DESIGN.md §2, docs/IMPORT.md): validated,
stored, edited, imported and exported, and served by /v1/query only when set, per locale
with the displayValue fallback, never matched."""
import json

import pytest

from conftest import wait_until

ND = {"Content-Type": "application/x-ndjson"}
EURO = "\u20ac"  # three UTF-8 bytes, one code point


def fields(r):
    return {f["path"]: f["reason"] for f in r.json()["details"]["fields"]}


def ndjson(items):
    return "".join(json.dumps(it) + "\n" for it in items).encode()


def do_import(t, list_id, items=None, raw=None, mode="append"):
    body = raw if raw is not None else ndjson(items)
    return t.api("POST", f"/lists/{list_id}/items/import?mode={mode}", raw=body, headers=ND)


def export(t, list_id):
    r = t.api("GET", f"/lists/{list_id}/items/export")
    assert r.status == 200, r
    return [json.loads(line) for line in r.body.decode().splitlines()]


@pytest.fixture
def t(make_server):
    return make_server(mode="control").tenant()


def test_create_get_list_carry_it_and_absent_when_unset(t):
    lst = t.create_list(localePolicy={"defaultLocale": "en", "supportedLocales": ["en", "fr"]})
    body = {"value": "Paris, TX", "displayValue": "Paris",
            "description": "Texas, United States",
            "locales": {"fr": {"description": "Texas, \u00c9tats-Unis"}}}
    it, plain = t.add_items(lst["id"], [body, {"value": "Lyon"}])
    assert it["description"] == "Texas, United States"
    assert it["locales"] == {"fr": {"description": "Texas, \u00c9tats-Unis"}}
    assert "description" not in plain  # absent, not null or ""
    r = t.api("GET", f"/lists/{lst['id']}/items/{it['id']}")
    assert r.status == 200 and r.json() == it, r
    page = t.api("GET", f"/lists/{lst['id']}/items").json()["data"]
    got = {i["value"]: i for i in page}
    assert got["Paris, TX"]["description"] == "Texas, United States"
    assert "description" not in got["Lyon"]
    # null on create means none.
    r = t.api("POST", f"/lists/{lst['id']}/items", {"value": "Nice", "description": None})
    assert r.status == 201 and "description" not in r.json(), r


@pytest.mark.parametrize("body,path", [
    ({"value": "a", "description": ""}, "description"),
    ({"value": "a", "description": "x" * 201}, "description"),
    ({"value": "a", "description": EURO * 201}, "description"),
    ({"value": "a", "description": 3}, "description"),
    ({"value": "a", "description": ["x"]}, "description"),
    ({"value": "a", "locales": {"fr": {"description": ""}}}, "locales.fr.description"),
    ({"value": "a", "locales": {"fr": {"description": EURO * 201}}}, "locales.fr.description"),
    ({"value": "a", "locales": {"fr": {"description": {}}}}, "locales.fr.description"),
    ({"value": "a", "description": "ok", "subtitle": "x"}, "subtitle"),
    ({"value": "a", "locales": {"fr": {"desc": "x"}}}, "locales.fr.desc"),
])
def test_validation_names_the_field(t, body, path):
    lst = t.create_list()
    r = t.api("POST", f"/lists/{lst['id']}/items", body)
    assert r.status == 400, r
    assert r.json()["code"] == "invalid_request"
    assert path in fields(r), r


def test_limit_counts_code_points_not_bytes(t):
    lst = t.create_list()
    # 200 code points of 3 bytes each (600 bytes) are within the limit.
    it, = t.add_items(lst["id"], [{"value": "a", "description": EURO * 200,
                                   "locales": {"fr": {"description": "\U0001F600" * 200}}}])
    assert it["description"] == EURO * 200
    assert it["locales"]["fr"]["description"] == "\U0001F600" * 200


def test_invalid_utf8_is_refused(t):
    lst = t.create_list()
    raw = b'{"value":"a","description":"Texas \xc3\x28"}'
    r = t.api("POST", f"/lists/{lst['id']}/items", raw=raw)
    assert r.status == 400, r
    assert r.json()["code"] == "invalid_request"
    # A lone surrogate escape is not a character either.
    r = t.api("POST", f"/lists/{lst['id']}/items", raw=b'{"value":"a","description":"\\ud800"}')
    assert r.status == 400, r
    assert t.api("GET", f"/lists/{lst['id']}/items").json()["data"] == []


def test_patch_sets_keeps_and_null_removes(t):
    lst = t.create_list()
    it, = t.add_items(lst["id"], [{"value": "Paris"}])
    path = f"/lists/{lst['id']}/items/{it['id']}"
    r = t.api("PATCH", path, {"description": "France"})
    assert r.status == 200 and r.json()["description"] == "France", r
    etag = r.header("etag")
    # Another field: the description stays.
    r = t.api("PATCH", path, {"rank": 4})
    assert r.status == 200 and r.json()["description"] == "France", r
    # Same again: nothing changes, not even the ETag.
    r = t.api("PATCH", path, {"description": "France"})
    assert r.status == 200, r
    etag2 = r.header("etag")
    assert t.api("PATCH", path, {"description": "France"}).header("etag") == etag2
    assert etag2 != etag
    # "" is refused, not stored.
    r = t.api("PATCH", path, {"description": ""})
    assert r.status == 400 and "description" in fields(r), r
    assert t.api("GET", path).json()["description"] == "France"
    # null removes it: absent afterwards.
    r = t.api("PATCH", path, {"description": None})
    assert r.status == 200 and "description" not in r.json(), r
    assert "description" not in t.api("GET", path).json()
    # Per locale, and removing a locale's own.
    r = t.api("PATCH", path, {"locales": {"fr": {"description": "Ile-de-France"}}})
    assert r.json()["locales"] == {"fr": {"description": "Ile-de-France"}}, r
    r = t.api("PATCH", path, {"locales": {"fr": {"description": None}}})
    assert r.json()["locales"] == {"fr": {}}, r


def test_import_and_export_carry_it(t):
    lst = t.create_list()
    lines = [{"value": "Paris", "description": "France",
              "locales": {"fr": {"description": "la France"}}},
             {"value": "Paris, TX", "description": "Texas, United States"},
             {"value": "Lyon"}]
    r = do_import(t, lst["id"], lines, mode="replace")
    assert r.status == 200 and r.json()["created"] == 3, r
    out = {i["value"]: i for i in export(t, lst["id"])}
    assert out["Paris"]["description"] == "France"
    assert out["Paris"]["locales"] == {"fr": {"description": "la France"}}
    assert out["Paris, TX"]["description"] == "Texas, United States"
    assert "description" not in out["Lyon"]
    # The exported file imports unchanged.
    raw = "".join(json.dumps(i) + "\n" for i in out.values()).encode()
    r = do_import(t, lst["id"], raw=raw, mode="replace")
    assert r.json()["unchanged"] == 3 and r.json()["updated"] == 0, r
    # A line without it is an item without it (import lines are whole items), and a new
    # one on a matched item is an update.
    r = do_import(t, lst["id"], [{"value": "Paris"}, {"value": "Lyon", "description": "Rh\u00f4ne"}])
    assert r.json()["updated"] == 2, r
    out = {i["value"]: i for i in export(t, lst["id"])}
    assert "description" not in out["Paris"]
    assert out["Lyon"]["description"] == "Rh\u00f4ne"


def test_import_validation_names_the_line(t):
    lst = t.create_list()
    raw = (ndjson([{"value": "a", "description": "ok"},
                   {"value": "b", "description": EURO * 201},
                   {"value": "c", "locales": {"fr": {"description": ""}}}])
           + b'{"value":"d","description":"\xff"}\n')
    r = do_import(t, lst["id"], raw=raw)
    assert r.status == 400, r
    f = fields(r)
    assert set(f) == {"lines[1].description", "lines[2].locales.fr.description", "lines[3]"}, f
    assert export(t, lst["id"]) == []


def test_query_carries_it_only_when_set_with_locale_fallback(make_server):
    s = make_server()
    t = s.tenant()
    lst = t.create_list("Places", visibility="public",
                        localePolicy={"defaultLocale": "en", "supportedLocales": ["en", "fr", "de"]})
    tx, fr, ky = t.add_items(lst["id"], [
        {"value": "Paris, TX", "displayValue": "Paris", "rank": 3,
         "description": "Texas, United States",
         "locales": {"fr": {"description": "Texas, \u00c9tats-Unis"}}},
        {"value": "Paris, FR", "displayValue": "Paris", "rank": 2,
         "locales": {"fr": {"description": "France"}}},
        {"value": "Paris, KY", "displayValue": "Paris", "rank": 1,
         "locales": {"de": {"displayValue": "Paris (KY)"}}},
    ])
    assert t.publish(lst["id"])["state"] == "active"
    pk = t.publishable_key(lst["id"])["publishableKey"]

    def query(**extra):
        r = wait_until(lambda: (lambda x: x if x.status == 200 else None)(
            s.runtime("GET", "/v1/query", params={"key": pk, "q": "paris", **extra})))
        return {i["itemId"]: i for i in r.json()["items"]}

    en = query()
    assert en[tx["id"]]["description"] == "Texas, United States"
    assert "description" not in en[fr["id"]] and "description" not in en[ky["id"]]
    assert set(en[ky["id"]]) - {"highlight"} == {"itemId", "value", "displayValue"}
    frl = query(locale="fr")
    assert frl[tx["id"]]["description"] == "Texas, \u00c9tats-Unis"
    assert frl[fr["id"]]["description"] == "France"
    assert "description" not in frl[ky["id"]]
    de = query(locale="de")  # its own displayValue, the base description
    assert de[tx["id"]]["description"] == "Texas, United States"
    assert de[ky["id"]]["displayValue"] == "Paris (KY)" and "description" not in de[ky["id"]]
    # Never matched.
    r = s.runtime("GET", "/v1/query", params={"key": pk, "q": "texas"})
    assert r.status == 200 and r.json()["items"] == [], r
