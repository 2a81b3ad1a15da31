"""End to end through the real pipeline: control plane → publish → edge → runtime.

Every test here publishes with POST /versions and reads answers from /v1 on the same
`suggestd serve` process (or separate `control` and `runtime` processes on one data dir),
exactly as a customer would.
"""
import os
import time

import pytest

from conftest import NO_LIMITS, Server, destroy_store, wait_until

CITIES = [
    {"value": "Paris, FR", "displayValue": "Paris", "rank": 2100000, "aliases": ["Lutece"],
     "locales": {"fr": {"displayValue": "Paris (France)"}}},
    {"value": "Paris, US", "displayValue": "Paris", "rank": 25000},
    {"value": "Parma", "rank": 190000},
    {"value": "Sant Julià de Lòria", "rank": 9000},
    {"value": "Saint-Denis", "rank": 110000},
    {"value": "Le Pari Fou", "rank": 1},
]


def ids(resp):
    return [i["displayValue"] for i in resp.json()["items"]]


BILINGUAL = {"defaultLocale": "en", "supportedLocales": ["en", "fr"]}


def publish_list(t, items, **patch):
    patch.setdefault("localePolicy", BILINGUAL)
    lst = t.create_list("Cities", **patch)
    created = t.add_items(lst["id"], items)
    v = t.publish(lst["id"])
    assert v["state"] == "active", v
    return lst, created, v


def wait_served(s, pk, content_hash, headers=None):
    """Waits until the runtime's snapshot serves content_hash (it polls every 200 ms)."""
    ok = wait_until(lambda: s.runtime("GET", "/v1/bootstrap", params={"key": pk},
                                      headers=headers).json().get("activeVersionHash")
                    == content_hash, timeout=3)
    assert ok, "the runtime did not pick up the publish within 3 s"


@pytest.fixture
def world(make_server):
    s = make_server()
    t = s.tenant()
    patch = {"visibility": "public",
             "localePolicy": {"defaultLocale": "en", "supportedLocales": ["en", "fr"]}}
    lst, created, v = publish_list(t, CITIES, **patch)
    pk = t.publishable_key(lst["id"])["publishableKey"]
    wait_served(s, pk, v["contentHash"])
    return s, t, lst, created, v, pk


def q(s, pk, text, **extra):
    return s.runtime("GET", "/v1/query", params={"key": pk, "q": text, **extra})


def test_query_after_publish_ranks_by_the_contract(world):
    s, t, lst, created, v, pk = world
    r = wait_until(lambda: q(s, pk, "par") if q(s, pk, "par").status == 200 else None)
    assert r.status == 200, r
    body = r.json()
    assert body["list"] == {"id": lst["id"]}
    # Tier 0 (displayValue prefix) by rank desc, then tier 2 (later word) "Le Pari Fou".
    assert ids(r) == ["Paris", "Parma", "Paris", "Le Pari Fou"]
    assert [i["value"] for i in body["items"]][:3] == ["Paris, FR", "Parma", "Paris, US"]
    assert body["items"][0]["itemId"] == created[0]["id"]
    assert "ancestors" not in body["items"][0]
    # Alias match (tier 1) returns the displayValue, which does not contain the query.
    assert ids(q(s, pk, "lut")) == ["Paris"]
    # Diacritics and case are folded the same way for items and queries.
    assert ids(q(s, pk, "SANT JULIA")) == ["Sant Julià de Lòria"]


def test_locale_fallback_and_byte_identical_answers(world):
    s, t, lst, created, v, pk = world
    fr = q(s, pk, "paris", locale="fr-CA")
    assert fr.json()["items"][0]["displayValue"] == "Paris (France)"
    unsupported = q(s, pk, "paris", locale="de")
    assert unsupported.json()["items"][0]["displayValue"] == "Paris"
    a, b = q(s, pk, "paris", locale="fr"), q(s, pk, "paris", locale="fr")
    assert a.body == b.body and a.header("etag") == b.header("etag")
    assert a.json()["requestId"] == b.json()["requestId"]


def test_bootstrap_names_the_published_version(world):
    s, t, lst, created, v, pk = world
    r = s.runtime("GET", "/v1/bootstrap", params={"key": pk})
    assert r.status == 200, r
    b = r.json()
    assert b["list"]["id"] == lst["id"]
    assert b["activeVersionHash"] == v["contentHash"]
    assert b["localePolicy"]["supportedLocales"] == ["en", "fr"]
    assert b["localePolicy"]["defaultLocale"] == "en"
    assert "items" not in b


def test_republish_switches_what_is_served(world):
    s, t, lst, created, v, pk = world
    t.add_items(lst["id"], [{"value": "Parakou", "rank": 99999999}])
    v2 = t.publish(lst["id"])
    assert v2["state"] == "active" and v2["contentHash"] != v["contentHash"]
    r = wait_until(lambda: (lambda x: x if ids(x)[0] == "Parakou" else None)(q(s, pk, "par")),
                   timeout=3)
    assert r and ids(r)[0] == "Parakou"
    boot = s.runtime("GET", "/v1/bootstrap", params={"key": pk}).json()
    assert boot["activeVersionHash"] == v2["contentHash"]
    old = t.api("GET", f"/lists/{lst['id']}/versions/{v['versionNumber']}").json()
    assert old["state"] == "superseded"


def test_query_policy_change_reaches_the_runtime(world):
    s, t, lst, created, v, pk = world
    r = t.api("PATCH", f"/lists/{lst['id']}", {"queryPolicy": {"minQueryChars": 3}})
    assert r.status == 200 and r.json()["edgeSync"]["state"] == "synced"
    short = wait_until(lambda: (lambda x: x if x.json().get("code") == "query_too_short"
                                else None)(q(s, pk, "pa")), timeout=3)
    assert short and short.status == 200 and not short.json().get("items")


def test_archiving_stops_serving(world):
    s, t, lst, created, v, pk = world
    assert t.api("PATCH", f"/lists/{lst['id']}", {"status": "archived"}).status == 200
    r = wait_until(lambda: (lambda x: x if x.status == 404 else None)(q(s, pk, "par")), timeout=3)
    assert r and r.json()["code"] == "list_not_published"


def test_never_published_list(make_server):
    s = make_server()
    t = s.tenant()
    lst = t.create_list("Empty", visibility="public")
    pk = t.publishable_key(lst["id"])["publishableKey"]
    for path, params in (("/v1/query", {"key": pk, "q": "x"}), ("/v1/bootstrap", {"key": pk})):
        r = wait_until(lambda: (lambda x: x if x.status == 404 else None)(
            s.runtime("GET", path, params=params)))
        assert r and r.json()["code"] == "list_not_published", r
    sel = s.runtime("POST", "/v1/selection", body={
        "key": pk, "selectionId": "0b8f6f5e-1c1a-4c5e-9a52-3f7d1b2a9c01", "queryRequestId": "r",
        "listId": lst["id"], "itemId": "itm_x", "position": 1})
    assert sel.json()["code"] == "list_not_published"


def test_hierarchy_serves_ancestors(make_server):
    s = make_server()
    t = s.tenant()
    lst = t.create_list("Places", visibility="public")
    europe, = t.add_items(lst["id"], [{"value": "Europe"}])
    france, = t.add_items(lst["id"], [{"value": "France", "parentId": europe["id"]}])
    t.add_items(lst["id"], [{"value": "Lyon", "parentId": france["id"]}])
    assert t.publish(lst["id"])["state"] == "active"
    pk = t.publishable_key(lst["id"])["publishableKey"]
    r = wait_until(lambda: (lambda x: x if x.status == 200 else None)(
        s.runtime("GET", "/v1/query", params={"key": pk, "q": "lyon"})))
    item = r.json()["items"][0]
    assert item["ancestors"] == [
        {"itemId": europe["id"], "value": "Europe", "displayValue": "Europe"},
        {"itemId": france["id"], "value": "France", "displayValue": "France"},
    ]


def test_selection_after_a_real_query(world):
    s, t, lst, created, v, pk = world
    r = q(s, pk, "par").json()
    body = {"key": pk, "selectionId": "9d2c5a8e-4b1f-4f7a-8e3d-2c1b0a9f8e7d",
            "queryRequestId": r["requestId"], "listId": r["list"]["id"],
            "itemId": r["items"][0]["itemId"], "position": 1, "query": "par"}
    first = s.runtime("POST", "/v1/selection", body=body)
    assert first.status == 200 and first.json() == {"selectionId": body["selectionId"]}
    again = s.runtime("POST", "/v1/selection", body=body)
    assert again.status == 200 and again.json() == {"selectionId": body["selectionId"]}
    zero = s.runtime("POST", "/v1/selection", body=dict(body, position=0))
    assert zero.status == 400 and zero.json()["code"] == "invalid_request"


def test_runtime_survives_without_the_control_plane_or_its_database(tmp_path):
    data = str(tmp_path / "data")
    os.makedirs(data)
    ctl = Server(data, mode="control", extra=NO_LIMITS).start()
    rt = Server(data, mode="runtime").start()
    try:
        t = ctl.tenant()
        lst, _, _ = publish_list(t, CITIES, visibility="public")
        pk = t.publishable_key(lst["id"])["publishableKey"]
        before = wait_until(lambda: (lambda x: x if x.status == 200 else None)(q(rt, pk, "par")))
        assert before and ids(before)[0] == "Paris"
        ctl.stop()
        destroy_store(data)
        after = q(rt, pk, "par")
        assert after.status == 200 and after.body == before.body
        # A restarted runtime still serves from the edge store alone.
        rt.restart()
        assert q(rt, pk, "par").body == before.body
    finally:
        rt.stop()
        ctl.stop()


# --- private lists, tokens, subscriptions (docs/DESIGN.md §4.2) --------------------------------


@pytest.fixture
def private_world(make_server):
    s = make_server()
    t = s.tenant()
    s.admin("signing-key", "rotate")
    lst, _, v = publish_list(t, CITIES)  # private by default
    pk = t.publishable_key(lst["id"])["publishableKey"]
    # The new key reaches the runtime's snapshot within a poll period.
    assert wait_until(lambda: q(s, pk, "par").json()["code"] != "invalid_key")
    return s, t, lst, pk


def mint(t, *list_ids):
    r = t.api("POST", "/token", {"listIds": list(list_ids)})
    assert r.status == 200, r
    return r.json()


def test_private_list_needs_a_token_and_serves_with_one(private_world):
    s, t, lst, pk = private_world
    r = q(s, pk, "par")
    assert r.status == 401 and r.json()["code"] == "invalid_token"
    assert r.header("www-authenticate").startswith("Bearer")
    tok = mint(t, lst["id"])
    assert tok["tokenType"] == "Bearer" and tok["expiresIn"] == 3600
    assert tok["scope"] == ["query", f"list:{lst['id']}"]
    assert tok["applicationId"] == t.application_id and tok["listIds"] == [lst["id"]]
    assert abs(tok["expiresAt"] - (time.time() + 3600)) < 120
    auth = {"Authorization": f"Bearer {tok['accessToken']}"}
    ok = s.runtime("GET", "/v1/query", params={"key": pk, "q": "par"}, headers=auth)
    assert ok.status == 200 and ids(ok)[0] == "Paris"
    assert ok.header("cache-control") == "private, no-store"
    boot = s.runtime("GET", "/v1/bootstrap", params={"key": pk}, headers=auth)
    assert boot.status == 200


def test_token_for_another_list_is_refused(private_world):
    s, t, lst, pk = private_world
    other = t.create_list("Other")
    tok = mint(t, other["id"])["accessToken"]
    r = s.runtime("GET", "/v1/query", params={"key": pk, "q": "par"},
                  headers={"Authorization": f"Bearer {tok}"})
    assert r.status == 401 and r.json()["code"] == "invalid_token"


def test_rotation_keeps_old_tokens_and_revocation_stops_new_ones(private_world):
    s, t, lst, pk = private_world
    old = mint(t, lst["id"])["accessToken"]
    s.admin("signing-key", "rotate")
    new = mint(t, lst["id"])["accessToken"]
    assert old.split(".")[0] != new.split(".")[0]  # another kid in the header
    for tok in (old, new):
        r = wait_until(lambda: (lambda x: x if x.status == 200 else None)(
            s.runtime("GET", "/v1/query", params={"key": pk, "q": "par"},
                      headers={"Authorization": f"Bearer {tok}"})))
        assert r and r.status == 200
    s.admin("secret-key", "revoke", t.key_id)
    assert t.api("POST", "/token", {"listIds": [lst["id"]]}).status == 401
    still = s.runtime("GET", "/v1/query", params={"key": pk, "q": "par"},
                      headers={"Authorization": f"Bearer {old}"})
    assert still.status == 200


def test_token_minting_errors(make_server):
    s = make_server()
    t = s.tenant()
    lst = t.create_list("L")
    r = t.api("POST", "/token", {"listIds": [lst["id"]]})
    assert r.status == 503 and r.json()["details"]["reason"] == "token_minting_unavailable"
    s.admin("signing-key", "rotate")
    for body, path in (({}, "listIds"), ({"listIds": []}, "listIds"),
                       ({"listIds": ["x"] * 21}, "listIds"), ({"listIds": [7]}, "listIds[0]"),
                       ({"listIds": [lst["id"]], "extra": 1}, "extra")):
        r = t.api("POST", "/token", body)
        assert r.status == 400, (body, r)
        assert path in [f["path"] for f in r.json()["details"]["fields"]]
    other_tenant = s.tenant()
    foreign = other_tenant.create_list("Theirs")
    r = t.api("POST", "/token", {"listIds": [lst["id"], foreign["id"]]})
    assert r.status == 404 and r.json()["code"] == "invalid_list"


def test_shared_list_subscription_lifecycle(make_server):
    s = make_server()
    owner = s.tenant()
    s.admin("signing-key", "rotate")
    lst, _, _ = publish_list(owner, CITIES, visibility="shared")
    sub_t = s.tenant()
    # Not yet subscribed: no key, no token.
    r = s.admin("publishable-key", "create", "--application", sub_t.application_id, "--list",
                lst["id"], check=False)
    assert r.returncode != 0 and "error" in r.stderr
    assert sub_t.api("POST", "/token", {"listIds": [lst["id"]]}).status == 404
    sub = s.admin("subscription", "create", "--workspace", sub_t.workspace_id, "--list", lst["id"])
    pk = sub_t.publishable_key(lst["id"])["publishableKey"]
    r = wait_until(lambda: (lambda x: x if x.status == 200 else None)(q(s, pk, "par")))
    assert r and ids(r)[0] == "Paris"
    assert sub_t.api("POST", "/token", {"listIds": [lst["id"]]}).status == 200
    # The subscriber never sees or changes the list through the control plane.
    assert lst["id"] not in [x["id"] for x in sub_t.api("GET", "/lists").json()["data"]]
    assert sub_t.api("GET", f"/lists/{lst['id']}").status == 404
    assert sub_t.api("PATCH", f"/lists/{lst['id']}", {"name": "x"}).status == 404
    assert sub_t.api("POST", f"/lists/{lst['id']}/versions").status == 404
    # Cancelling: the key turns invalid within a second, new mints answer 404.
    s.admin("subscription", "cancel", sub["id"])
    t0 = time.time()
    gone = wait_until(lambda: (lambda x: x if x.status == 401 else None)(q(s, pk, "par")),
                      timeout=2)
    assert gone and gone.json()["code"] == "invalid_key" and time.time() - t0 < 1.5
    assert sub_t.api("POST", "/token", {"listIds": [lst["id"]]}).status == 404
