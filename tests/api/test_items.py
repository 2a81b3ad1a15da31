"""Black-box tests of /api/v1/lists/{id}/items against the real binary (control mode)."""
import pytest


@pytest.fixture
def ctl(make_server):
    return make_server(mode="control")


@pytest.fixture
def t(ctl):
    return ctl.tenant()


def fields(r):
    return {f["path"]: f["reason"] for f in r.json()["details"]["fields"]}


def test_create_defaults(t):
    lst = t.create_list()
    r = t.api("POST", f"/lists/{lst['id']}/items", {"value": "Paris"})
    assert r.status == 201, r
    it = r.json()
    assert it["id"].startswith("itm_")
    assert it["value"] == "Paris"
    assert it["displayValue"] == "Paris"
    assert it["aliases"] == []
    assert it["rank"] == 0
    assert it["parentId"] is None
    assert it["locales"] == {}
    assert it["displayOrder"] == 0
    assert it["createdAt"].endswith("Z")
    assert r.header("location") == f"/api/v1/lists/{lst['id']}/items/{it['id']}"


def test_create_all_fields(t):
    lst = t.create_list(localePolicy={"defaultLocale": "en", "supportedLocales": ["en", "fr"]})
    parent = t.add_items(lst["id"], [{"value": "France"}])[0]
    body = {"value": "Paris", "displayValue": "Paris, FR", "aliases": ["Lutece"], "rank": 7,
            "parentId": parent["id"], "displayOrder": -3,
            "locales": {"fr": {"displayValue": "Paris (FR)", "aliases": ["Ville Lumiere"]}}}
    it = t.add_items(lst["id"], [body])[0]
    for k, v in body.items():
        assert it[k] == v, k


@pytest.mark.parametrize("body,path", [
    ({}, "value"),
    ({"value": ""}, "value"),
    ({"value": "x" * 1025}, "value"),
    ({"value": 5}, "value"),
    ({"value": "a", "displayValue": "x" * 513}, "displayValue"),
    ({"value": "a", "displayValue": 1}, "displayValue"),
    ({"value": "a", "aliases": "b"}, "aliases"),
    ({"value": "a", "aliases": ["x"] * 33}, "aliases"),
    ({"value": "a", "aliases": [""]}, "aliases[0]"),
    ({"value": "a", "aliases": ["ok", 3]}, "aliases[1]"),
    ({"value": "a", "rank": 1.5}, "rank"),
    ({"value": "a", "rank": "1"}, "rank"),
    ({"value": "a", "rank": True}, "rank"),
    ({"value": "a", "displayOrder": 2 ** 40}, "displayOrder"),
    ({"value": "a", "parentId": 12}, "parentId"),
    ({"value": "a", "parentId": "itm_doesnotexist"}, "parentId"),
    ({"value": "a", "locales": []}, "locales"),
    ({"value": "a", "locales": {"not a tag": {}}}, "locales.not a tag"),
    ({"value": "a", "locales": {"fr": {"colour": "x"}}}, "locales.fr.colour"),
    ({"value": "a", "locales": {"fr": {"displayValue": ""}}}, "locales.fr.displayValue"),
    ({"value": "a", "locales": {"fr": {"aliases": [1]}}}, "locales.fr.aliases[0]"),
    ({"value": "a", "locales": {"fr": "x"}}, "locales.fr"),
    ({"value": "a", "locales": {"fr": {}, "FR": {}}}, "locales.FR"),
    ({"value": "a", "colour": "red"}, "colour"),
])
def test_field_validation(t, body, path):
    lst = t.create_list()
    r = t.api("POST", f"/lists/{lst['id']}/items", body)
    assert r.status == 400, r
    assert r.json()["code"] == "invalid_request"
    assert path in fields(r), r


def test_too_many_locales(t):
    lst = t.create_list()
    locs = {f"l{chr(97 + i // 26)}{chr(97 + i % 26)}": {} for i in range(33)}
    r = t.api("POST", f"/lists/{lst['id']}/items", {"value": "a", "locales": locs})
    assert r.status == 400 and "locales" in fields(r)


def test_malformed_and_non_object_bodies(t):
    lst = t.create_list()
    for raw in (b"{", b"[1]", b"\"x\"", b'{"value": "\xff"}'):
        r = t.api("POST", f"/lists/{lst['id']}/items", raw=raw,
                  headers={"Content-Type": "application/json"})
        assert r.status == 400, (raw, r)
        assert r.json()["code"] == "invalid_request"


def test_limits_exact(t):
    lst = t.create_list()
    it = t.add_items(lst["id"], [{"value": "v" * 1024, "displayValue": "d" * 512,
                                  "aliases": ["a" * 512] * 32}])[0]
    assert len(it["value"]) == 1024 and len(it["aliases"]) == 32
    # The default displayValue copies a long value whatever its length.
    it = t.add_items(lst["id"], [{"value": "w" * 1000}])[0]
    assert it["displayValue"] == "w" * 1000


def test_duplicate_value(t):
    lst = t.create_list()
    t.add_items(lst["id"], [{"value": "Paris"}])
    r = t.api("POST", f"/lists/{lst['id']}/items", {"value": "Paris", "rank": 3})
    assert r.status == 409, r
    assert r.json()["code"] == "invalid_request"
    assert r.json()["details"]["reason"] == "duplicate_value"
    # Exact bytes: another case is another value; another list is another namespace.
    assert t.api("POST", f"/lists/{lst['id']}/items", {"value": "paris"}).status == 201
    other = t.create_list("Other")
    assert t.api("POST", f"/lists/{other['id']}/items", {"value": "Paris"}).status == 201


def test_parent_must_be_in_same_list(t):
    a = t.create_list("A")
    b = t.create_list("B")
    pa = t.add_items(a["id"], [{"value": "root"}])[0]
    r = t.api("POST", f"/lists/{b['id']}/items", {"value": "child", "parentId": pa["id"]})
    assert r.status == 400 and "parentId" in fields(r)


def test_unknown_and_foreign_list(ctl, t):
    r = t.api("POST", "/lists/lst_nope/items", {"value": "a"})
    assert r.status == 404 and r.json()["code"] == "invalid_list"
    assert t.api("GET", "/lists/lst_nope/items").status == 404
    other = ctl.tenant()
    lst = other.create_list()
    r = t.api("POST", f"/lists/{lst['id']}/items", {"value": "a"})
    assert r.status == 404 and r.json()["code"] == "invalid_list"
    r = t.api("GET", f"/lists/{lst['id']}/items")
    assert r.status == 404 and r.json()["code"] == "invalid_list"


def test_requires_secret_key(ctl, t):
    lst = t.create_list()
    r = ctl.control("POST", f"/api/v1/lists/{lst['id']}/items", {"value": "a"})
    assert r.status == 401


def test_archived_list_refuses_items(t):
    lst = t.create_list()
    t.add_items(lst["id"], [{"value": "a"}])
    assert t.api("PATCH", f"/lists/{lst['id']}", {"status": "archived"}).status == 200
    r = t.api("POST", f"/lists/{lst['id']}/items", {"value": "b"})
    assert r.status == 409, r
    assert r.json()["code"] == "invalid_request"
    assert r.json()["details"]["reason"] == "list_archived"
    # Reading still works.
    assert [i["value"] for i in t.api("GET", f"/lists/{lst['id']}/items").json()["data"]] == ["a"]


def test_order_and_pagination(t):
    lst = t.create_list()
    orders = [3, 1, 2, 1, 0, 2, 3, 0, 1, 2, 5, -1]
    made = t.add_items(lst["id"], [{"value": f"v{i}", "displayOrder": o}
                                   for i, o in enumerate(orders)])
    expected = [i["id"] for i in sorted(made, key=lambda i: (i["displayOrder"], i["id"]))]
    seen, cursor, pages = [], None, 0
    while True:
        path = f"/lists/{lst['id']}/items?limit=5" + (f"&cursor={cursor}" if cursor else "")
        r = t.api("GET", path)
        assert r.status == 200, r
        body = r.json()
        assert set(body) == {"data", "nextCursor", "requestId"}
        assert len(body["data"]) <= 5
        seen += [i["id"] for i in body["data"]]
        pages += 1
        cursor = body["nextCursor"]
        if cursor is None:
            break
    assert seen == expected
    assert pages == 3
    full = t.api("GET", f"/lists/{lst['id']}/items").json()
    assert [i["id"] for i in full["data"]] == expected and full["nextCursor"] is None


def test_cursor_scoped_per_list(t):
    a = t.create_list("A")
    b = t.create_list("B")
    t.add_items(a["id"], [{"value": f"a{i}"} for i in range(3)])
    t.add_items(b["id"], [{"value": f"b{i}"} for i in range(3)])
    cur = t.api("GET", f"/lists/{a['id']}/items?limit=1").json()["nextCursor"]
    assert cur
    r = t.api("GET", f"/lists/{b['id']}/items?limit=1&cursor={cur}")
    assert r.status == 400 and "cursor" in fields(r)
    r = t.api("GET", f"/lists/{a['id']}/items?limit=1&cursor={cur[:-2]}xx")
    assert r.status == 400 and "cursor" in fields(r)
    # A lists-collection cursor is not an items cursor either.
    t.create_list("C")
    lc = t.api("GET", "/lists?limit=1").json()["nextCursor"]
    r = t.api("GET", f"/lists/{a['id']}/items?cursor={lc}")
    assert r.status == 400 and "cursor" in fields(r)


@pytest.mark.parametrize("limit", ["0", "101", "x", "-1"])
def test_bad_limit(t, limit):
    lst = t.create_list()
    r = t.api("GET", f"/lists/{lst['id']}/items?limit={limit}")
    assert r.status == 400 and "limit" in fields(r)


def test_idempotent_create(t):
    lst = t.create_list()
    h = {"Idempotency-Key": "item-1"}
    r1 = t.api("POST", f"/lists/{lst['id']}/items", {"value": "Paris"}, headers=h)
    r2 = t.api("POST", f"/lists/{lst['id']}/items", {"value": "Paris"}, headers=h)
    assert r1.status == r2.status == 201
    assert r1.json() == r2.json()
    assert r2.header("idempotent-replayed") == "true"
    assert r1.header("idempotent-replayed") is None
    data = t.api("GET", f"/lists/{lst['id']}/items").json()["data"]
    assert len(data) == 1
    r3 = t.api("POST", f"/lists/{lst['id']}/items", {"value": "Rome"}, headers=h)
    assert r3.status == 422 and r3.json()["details"]["reason"] == "idempotency_key_reused"
    # A 4xx answer is remembered too (only 5xx and 429 are not).
    h2 = {"Idempotency-Key": "item-2"}
    d1 = t.api("POST", f"/lists/{lst['id']}/items", {"value": "Paris"}, headers=h2)
    d2 = t.api("POST", f"/lists/{lst['id']}/items", {"value": "Paris"}, headers=h2)
    assert d1.status == d2.status == 409 and d2.header("idempotent-replayed") == "true"
