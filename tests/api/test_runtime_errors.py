"""Runtime errors a page can act on (issue 27): a 400 names the field and what it must be,
a refused Origin still gets its typed 403 readable by the page (CORS header echoing the
Origin), and a private list queried without a token says so and what to do; /docs/errors
gives that remediation."""
import json
import time
import uuid

import pytest

from conftest import wait_until

ERROR_KEYS = {"code", "message", "requestId"}


@pytest.fixture
def world(server):
    t = server.tenant()
    pub = t.create_list("Cities", visibility="public")
    t.add_items(pub["id"], [{"value": "Paris"}, {"value": "Parma"}])
    assert t.publish(pub["id"])["state"] == "active"
    priv = t.create_list("Secret")
    t.add_items(priv["id"], [{"value": "Paris"}])
    assert t.publish(priv["id"])["state"] == "active"
    pk = t.publishable_key(pub["id"], origins=["https://shop.example"])["publishableKey"]
    ppk = t.publishable_key(priv["id"])["publishableKey"]
    wait_until(lambda: query(server, pk, "par").status == 200, timeout=10)
    # 401 alone would also be invalid_key, before the runtime knows the new key.
    wait_until(lambda: query(server, ppk, "par").json().get("code") == "invalid_token", timeout=10)
    return server, t, pub, pk, ppk


def query(server, key, q, headers=None):
    return server.runtime("GET", "/v1/query", params={"key": key, "q": q}, headers=headers)


def selection(server, **body):
    return server.runtime("POST", "/v1/selection", body=body)


def good_body(world):
    server, _, pub, pk, _ = world
    r = query(server, pk, "par")
    return {"key": pk, "selectionId": str(uuid.uuid4()), "queryRequestId": r.json()["requestId"],
            "listId": pub["id"], "itemId": r.json()["items"][0]["itemId"], "position": 1}


@pytest.mark.parametrize("field,value,words", [
    ("position", 0, "from 1 to 1000000"),
    ("position", "1", "from 1 to 1000000"),
    ("selectionId", "not-a-uuid", "UUID"),
    ("queryRequestId", "", "1 to 256 bytes"),
    ("itemId", 7, "1 to 256 bytes"),
    ("query", 5, "at most 1024 bytes"),
    ("listId", None, "1 to 256 bytes"),   # missing
    ("listId", "lst_other", "the key's list"),
])
def test_selection_400_names_the_field(world, field, value, words):
    server = world[0]
    body = good_body(world)
    if value is None:
        del body[field]
    else:
        body[field] = value
    r = selection(server, **body)
    assert r.status == 400, r
    b = r.json()
    # Every runtime 400 names its field (docs/DESIGN.md §4.1).
    assert set(b) == ERROR_KEYS | {"details"} and b["code"] == "invalid_request", b
    assert b["details"] == {"fields": [field]}, b
    assert f"The field {field} must" in b["message"], b
    assert words in b["message"], b
    assert "malformed" not in b["message"]


def test_selection_body_not_an_object(world):
    r = world[0].runtime("POST", "/v1/selection", raw=b"[1,2]",
                         headers={"Content-Type": "application/json"})
    assert r.status == 400
    assert "JSON object" in r.json()["message"] and "position" in r.json()["message"]


def test_good_selection_still_200(world):
    r = selection(world[0], **good_body(world))
    assert r.status == 200, r


def test_origin_not_allowed_is_readable_by_the_page(world):
    server, _, _, pk, _ = world
    ok = query(server, pk, "par", headers={"Origin": "https://shop.example"})
    assert ok.status == 200 and ok.header("access-control-allow-origin") == "https://shop.example"
    r = query(server, pk, "par", headers={"Origin": "https://evil.test"})
    assert r.status == 403 and r.json()["code"] == "origin_not_allowed"
    assert r.header("access-control-allow-origin") == "https://evil.test"
    assert "Origin" in r.header("vary")
    assert "items" not in r.json()
    body = dict(good_body(world))
    s = server.runtime("POST", "/v1/selection", body=body, headers={"Origin": "https://evil.test"})
    assert s.status == 403 and s.header("access-control-allow-origin") == "https://evil.test"


def test_private_list_without_token_says_what_to_do(world):
    server, _, _, _, ppk = world
    r = query(server, ppk, "par")
    assert r.status == 401 and r.json()["code"] == "invalid_token"
    m = r.json()["message"]
    assert "private" in m and "POST /api/v1/token" in m and "public" in m, m
    assert r.header("www-authenticate") == "Bearer"
    bad = query(server, ppk, "par", headers={"Authorization": "Bearer eyJnope"})
    assert bad.status == 401 and "POST /api/v1/token" in bad.json()["message"]
    assert "no access token was sent" not in bad.json()["message"]


def test_docs_errors_gives_the_remediation(server):
    page = server.control("GET", "/docs/errors").body.decode()
    sec = page[page.index('<section id="invalid_token">'):]
    sec = sec[:sec.index("</section>")]
    assert "POST /api/v1/token" in sec and "public" in sec
    assert "Retry later" not in sec
    sec = page[page.index('<section id="origin_not_allowed">'):]
    sec = sec[:sec.index("</section>")]
    assert "allowed origins" in sec and "Retry later" not in sec
