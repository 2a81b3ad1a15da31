"""The dashboard's JSON API (docs/DESIGN.md §7): lists, items and versions through the control
plane's own handlers; the applications area (applications, secret keys shown once,
publishable keys with origins); members; usage; selections; the audit log."""
import os
import sqlite3
import subprocess
import urllib.parse
import uuid

import pytest

from conftest import BINARY, ON_POSTGRES, ROOT, request, wait_until
from control_helpers import assert_error
from dashboard_helpers import Member, create_member, sign_in, workspace_with_members


def strip(b):
    b = dict(b)
    b.pop("requestId", None)
    return b


def test_list_routes_answer_like_api_v1(server):
    t, ms = workspace_with_members(server, roles=("data_steward",))
    ds = ms["data_steward"]
    r = ds.call("POST", "/lists", {"name": "Cities"})
    assert r.status == 201, r
    lst = r.json()
    assert strip(t.api("GET", f"/lists/{lst['id']}").json()) == strip(
        ds.call("GET", f"/lists/{lst['id']}").json())
    # The settings form: exactly the PATCH fields, with If-Match.
    etag = ds.call("GET", f"/lists/{lst['id']}").header("etag")
    r = ds.call("PATCH", f"/lists/{lst['id']}",
                {"name": "Towns", "visibility": "public", "queryPolicy": {"minQueryChars": 2}},
                headers={"If-Match": etag})
    assert r.status == 200 and r.json()["name"] == "Towns", r
    r = ds.call("PATCH", f"/lists/{lst['id']}", {"name": "Late"}, headers={"If-Match": etag})
    assert_error(r, 412, "invalid_request", reason="precondition_failed")
    r = ds.call("PATCH", f"/lists/{lst['id']}", {"nope": 1})
    assert_error(r, 400, "invalid_request", field="nope")
    # Items: create, page, edit, delete.
    r = ds.call("POST", f"/lists/{lst['id']}/items", {"value": "Paris", "rank": 3})
    assert r.status == 201, r
    item = r.json()
    assert ds.call("GET", f"/lists/{lst['id']}/items").json()["data"] == [item]
    r = ds.call("PATCH", f"/lists/{lst['id']}/items/{item['id']}", {"value": "Paris", "rank": 4})
    assert r.status == 200 and r.json()["rank"] == 4, r
    # Import a file (streamed NDJSON), then publish and watch the version go active.
    nd = b'{"value":"Lyon"}\n{"value":"Nice"}\n'
    r = ds.call("POST", f"/lists/{lst['id']}/items/import?mode=append", raw=nd,
                headers={"Content-Type": "application/x-ndjson"})
    assert r.status == 200, r
    assert r.json()["created"] == 2, r.json()
    r = ds.call("POST", f"/lists/{lst['id']}/versions")
    assert r.status in (200, 201, 202), r
    v = r.json()
    v = wait_until(lambda: (lambda x: x if x["state"] == "active" else None)(
        ds.call("GET", f"/lists/{lst['id']}/versions/{v['versionNumber']}").json()), timeout=10)
    assert v and v["itemCount"] == 3, v
    versions = ds.call("GET", f"/lists/{lst['id']}/versions").json()["data"]
    assert [x["versionNumber"] for x in versions] == [v["versionNumber"]]
    assert t.api("GET", f"/lists/{lst['id']}").json()["activeVersionNumber"] == v["versionNumber"]
    r = ds.call("DELETE", f"/lists/{lst['id']}/items/{item['id']}")
    assert r.status in (200, 204), r
    exp = ds.call("GET", f"/lists/{lst['id']}/items/export")
    assert exp.status == 200 and b"Lyon" in exp.body and b"Paris" not in exp.body


def test_workspaces_are_isolated(server):
    t1, m1 = workspace_with_members(server, roles=("owner",))
    t2 = server.tenant()
    other = t2.create_list("Theirs")
    o = m1["owner"]
    assert_error(o.call("GET", f"/lists/{other['id']}"), 404, "invalid_list")
    assert_error(o.call("POST", f"/lists/{other['id']}/items", {"value": "x"}), 404,
                 "invalid_list")
    assert_error(o.call("GET", f"/lists/{other['id']}/selections"), 404, "invalid_list")
    for method, path in (("GET", f"/applications/{t2.application_id}/secret-keys"),
                         ("POST", f"/applications/{t2.application_id}/secret-keys"),
                         ("POST", f"/applications/{t2.application_id}/disable"),
                         ("PATCH", f"/applications/{t2.application_id}"),
                         ("POST", f"/secret-keys/{t2.key_id}/revoke")):
        r = o.call(method, path, {"monthlyQuota": 1} if method == "PATCH" else None)
        assert_error(r, 404, "not_found")
    assert t2.api("GET", "/lists").status == 200  # the other workspace's key still works
    assert [a["id"] for a in o.call("GET", "/applications").json()["data"]] == [t1.application_id]


def test_secret_key_is_shown_once_then_never_again(server):
    t, ms = workspace_with_members(server, roles=("admin",))
    a = ms["admin"]
    r = a.call("POST", f"/applications/{t.application_id}/secret-keys")
    assert r.status == 201, r
    sk = r.json()
    assert sk["secretKey"].startswith(sk["id"] + "_")
    assert r.header("cache-control") == "no-store"
    # It works on /api/v1 ...
    assert request(server.control_port, "GET", "/api/v1/lists",
                   headers={"Authorization": f"Bearer {sk['secretKey']}"}).status == 200
    # ... and no later answer carries it: lists, the audit log, the members, anything.
    listed = a.call("GET", f"/applications/{t.application_id}/secret-keys")
    assert listed.status == 200
    keys = {k["id"]: k for k in listed.json()["data"]}
    assert set(keys) == {t.key_id, sk["id"]}
    assert set(keys[sk["id"]]) == {"id", "status", "createdAt", "lastUsedAt", "revokedAt"}
    assert keys[sk["id"]]["lastUsedAt"] is not None  # used just above
    assert keys[t.key_id]["lastUsedAt"] is None
    secret_part = sk["secretKey"].split("_", 2)[2]
    for path in (f"/applications/{t.application_id}/secret-keys", "/audit", "/applications",
                 "/members", "/me", "/usage"):
        assert secret_part not in a.call("GET", path).body.decode(), path
    assert secret_part not in server.read_log()
    # Revoked: refused at once on /api/v1, and listed as revoked.
    r = a.call("POST", f"/secret-keys/{sk['id']}/revoke")
    assert r.status == 200 and r.json()["status"] == "revoked", r
    assert request(server.control_port, "GET", "/api/v1/lists",
                   headers={"Authorization": f"Bearer {sk['secretKey']}"}).status == 401
    keys = {k["id"]: k for k in
            a.call("GET", f"/applications/{t.application_id}/secret-keys").json()["data"]}
    assert keys[sk["id"]]["status"] == "revoked" and keys[sk["id"]]["revokedAt"]


def test_publishable_keys_with_origins(server):
    t, ms = workspace_with_members(server, roles=("admin", "data_steward"))
    a = ms["admin"]
    lst = t.create_list("Cities", visibility="public")
    t.add_items(lst["id"], [{"value": "Paris"}, {"value": "Parma"}])
    assert t.publish(lst["id"])["state"] == "active"
    path = f"/applications/{t.application_id}/publishable-keys"
    for bad in (["shop.example"], ["https://"], ["https://a.example/path"], "https://x.example"):
        r = a.call("POST", path, {"listId": lst["id"], "origins": bad})
        assert_error(r, 400, "invalid_request")
    assert_error(a.call("POST", path, {"listId": "lst_nope"}), 404, "invalid_list")
    r = a.call("POST", path, {"listId": lst["id"], "origins": ["https://shop.example"]})
    assert r.status == 201, r
    pk = r.json()
    assert pk["publishableKey"].startswith("pk_") and pk["origins"] == ["https://shop.example"]
    listed = a.call("GET", path).json()["data"]
    assert [(k["id"], k["listId"], k["origins"]) for k in listed] == [
        (pk["id"], lst["id"], ["https://shop.example"])]
    assert pk["publishableKey"] not in a.call("GET", path).body.decode()

    def query(origin):
        return server.runtime("GET", "/v1/query", params={"key": pk["publishableKey"], "q": "par"},
                              headers={"Origin": origin})
    r = wait_until(lambda: (lambda x: x if x.status == 200 else None)(
        query("https://shop.example")))
    assert r and len(r.json()["items"]) == 2, r
    assert query("https://evil.example").status == 403
    assert a.call("POST", f"/publishable-keys/{pk['id']}/revoke").status == 200
    assert wait_until(lambda: query("https://shop.example").status == 401)


def test_applications_create_disable_and_quota(server):
    t, ms = workspace_with_members(server, roles=("admin", "owner"))
    a, o = ms["admin"], ms["owner"]
    r = a.call("POST", "/applications", {"name": "mobile"})
    assert r.status == 201 and r.json()["monthlyQuota"] is None, r
    app = r.json()
    assert_error(a.call("POST", "/applications", {"name": ""}), 400, "invalid_request",
                 field="name")
    r = o.call("PATCH", f"/applications/{app['id']}", {"monthlyQuota": 500})
    assert r.status == 200 and r.json()["monthlyQuota"] == 500, r
    r = o.call("PATCH", f"/applications/{app['id']}", {"monthlyQuota": -1})
    assert_error(r, 400, "invalid_request", field="monthlyQuota")
    sk = a.call("POST", f"/applications/{app['id']}/secret-keys").json()["secretKey"]
    assert request(server.control_port, "GET", "/api/v1/lists",
                   headers={"Authorization": f"Bearer {sk}"}).status == 200
    r = a.call("POST", f"/applications/{app['id']}/disable")
    assert r.status == 200 and r.json()["status"] == "disabled", r
    assert request(server.control_port, "GET", "/api/v1/lists",
                   headers={"Authorization": f"Bearer {sk}"}).status == 401
    apps = {x["id"]: x for x in a.call("GET", "/applications").json()["data"]}
    assert apps[app["id"]]["status"] == "disabled" and apps[t.application_id]["status"] == "active"


def test_members_invite_change_role_remove(server):
    t, ms = workspace_with_members(server, roles=("admin", "owner"))
    a, o = ms["admin"], ms["owner"]
    r = a.call("POST", "/members", {"email": "New@Example.com", "role": "data_steward"})
    assert r.status == 201, r
    new = r.json()
    assert new["email"] == "new@example.com" and new["role"] == "data_steward"
    temp = new["temporaryPassword"]
    assert len(temp) >= 12
    # Shown once: never listed.
    listed = a.call("GET", "/members")
    assert temp not in listed.body.decode()
    assert {m["email"] for m in listed.json()["data"]} == {"admin@example.com",
                                                            "owner@example.com",
                                                            "new@example.com"}
    assert sign_in(server, "new@example.com", temp).status == 200
    assert_error(a.call("POST", "/members", {"email": "new@example.com", "role": "viewer"}), 409,
                 "invalid_request", reason="member_exists")
    r = a.call("POST", "/members", {"email": "x@example.com", "role": "root"})
    assert_error(r, 400, "invalid_request", field="role")
    r = a.call("POST", "/members", {"email": "p@example.com", "role": "viewer",
                                    "password": "chosen by the admin"})
    assert r.status == 201 and "temporaryPassword" not in r.json(), r
    assert sign_in(server, "p@example.com", "chosen by the admin").status == 200
    # Change role, then remove; the removed member's sessions end.
    nm = Member(server, "new@example.com", temp)
    r = a.call("PATCH", f"/members/{new['id']}", {"role": "viewer"})
    assert r.status == 200 and r.json()["role"] == "viewer", r
    r = a.call("DELETE", f"/members/{new['id']}")
    assert r.status == 200 and r.json()["status"] == "disabled", r
    assert_error(nm.call("GET", "/me"), 401, "invalid_session")
    assert_error(a.call("DELETE", f"/members/{new['id']}"), 404, "not_found")
    # The last owner stays.
    oid = o.me["id"]
    assert_error(o.call("PATCH", f"/members/{oid}", {"role": "admin"}), 409, "invalid_request",
                 reason="last_owner")
    assert_error(o.call("DELETE", f"/members/{oid}"), 409, "invalid_request",
                 reason="last_owner")
    r = o.call("POST", "/members", {"email": "o2@example.com", "role": "owner"})
    assert r.status == 201, r
    assert o.call("PATCH", f"/members/{oid}", {"role": "admin"}).status == 200


def test_audit_log_records_every_write_without_secrets(server):
    t, ms = workspace_with_members(server, roles=("admin",))
    a = ms["admin"]
    lst = a.call("POST", "/lists", {"name": "Cities"}).json()
    a.call("PATCH", f"/lists/{lst['id']}", {"name": "Towns"})
    sk = a.call("POST", f"/applications/{t.application_id}/secret-keys").json()
    a.call("POST", "/members", {"email": "m@example.com", "role": "viewer",
                                "password": "a long enough secret"})
    a.call("GET", "/lists")  # reads are not audited
    r = a.call("GET", "/audit?limit=100")
    assert r.status == 200, r
    entries = r.json()["data"]
    actions = [e["action"] for e in entries]
    for want in ("list.create", "list.update", "secret_key.create", "member.create",
                 "session.sign_in"):
        assert want in actions, actions
    assert actions.index("member.create") < actions.index("list.create")  # newest first
    by = {e["action"]: e for e in entries}
    assert by["list.update"]["target"] == lst["id"]
    assert by["list.update"]["details"] == {"fields": ["name"]}
    assert by["secret_key.create"]["target"] == sk["id"]
    assert by["list.create"]["actor"] == a.me["id"]
    assert by["list.create"]["actorEmail"] == "admin@example.com"
    assert by["list.create"]["requestId"].startswith("req_")
    # The admin CLI's writes are there too.
    cli = [e for e in entries if e["actor"] == "cli"]
    assert {"application.create", "secret-key.create", "member.create"} <= {e["action"] for e in cli}
    text = r.body.decode()
    assert sk["secretKey"] not in text and "a long enough secret" not in text
    assert t.secret_key not in text
    # Every CLI row carries a result.
    assert all(e["status"] == 200 for e in cli), cli
    # Writes made with a secret key through /api/v1 are there too, the key's id as actor
    # (and never the secret), reads are not; a replayed idempotent write is one entry.
    lst2 = t.create_list("Rivers")
    headers = {"Idempotency-Key": "audit-1"}
    for _ in range(2):
        r = t.api("POST", f"/lists/{lst2['id']}/items", {"value": "Seine"}, headers=headers)
        assert r.status == 201, r
    item = r.json()
    t.api("PATCH", f"/lists/{lst2['id']}/items/{item['id']}", {"rank": 3})
    t.api("GET", f"/lists/{lst2['id']}/items")
    t.api("POST", f"/lists/{lst2['id']}/items/import?mode=append", raw=b'{"value":"Loire"}\n',
          headers={"Content-Type": "application/x-ndjson"})
    keyed = [e for e in a.call("GET", "/audit?limit=100").json()["data"] if e["actor"] == t.key_id]
    acts = [e["action"] for e in keyed]
    assert acts.count("item.create") == 1 and "item.update" in acts and "items.import" in acts, acts
    assert "list.create" in acts, acts
    ki = [e for e in keyed if e["action"] == "item.create"][0]
    assert ki["target"] == f"{lst2['id']}/{item['id']}" and ki["status"] == 201, ki
    assert t.secret_key not in a.call("GET", "/audit?limit=100").body.decode()
    # Paging.
    p1 = a.call("GET", "/audit?limit=2").json()
    assert len(p1["data"]) == 2 and p1["nextCursor"]
    p2 = a.call("GET", f"/audit?limit=2&cursor={p1['nextCursor']}").json()
    assert p2["data"][0]["seq"] < p1["data"][1]["seq"]


def test_usage_counts_queries_against_the_quota(server):
    t, ms = workspace_with_members(server, roles=("viewer", "owner"))
    o = ms["owner"]
    o.call("PATCH", f"/applications/{t.application_id}", {"monthlyQuota": 100})
    lst = t.create_list("Cities", visibility="public")
    t.add_items(lst["id"], [{"value": "Paris"}])
    t.publish(lst["id"])
    pk = t.publishable_key(lst["id"])["publishableKey"]
    wait_until(lambda: server.runtime("GET", "/v1/query", params={"key": pk, "q": "pa"}).status == 200)
    for _ in range(4):
        assert server.runtime("GET", "/v1/query", params={"key": pk, "q": "pa"}).status == 200

    def used():
        u = ms["viewer"].call("GET", "/usage").json()
        app = [a for a in u["applications"] if a["id"] == t.application_id][0]
        return app if app["used"] >= 5 else None
    app = wait_until(used, timeout=5)
    assert app and app["used"] == 5 and app["monthlyQuota"] == 100, app


def test_selections_per_day_and_top_items(server):
    t, ms = workspace_with_members(server, roles=("viewer",))
    lst = t.create_list("Cities", visibility="public")
    paris, lyon = t.add_items(lst["id"], [{"value": "Paris"}, {"value": "Lyon"}])
    t.publish(lst["id"])
    pk = t.publishable_key(lst["id"])["publishableKey"]
    wait_until(lambda: server.runtime("GET", "/v1/query", params={"key": pk, "q": "pa"}).status == 200)
    for item, n in ((paris, 3), (lyon, 1)):
        for _ in range(n):
            body = {"key": pk, "selectionId": str(uuid.uuid4()), "queryRequestId": "req_1",
                    "listId": lst["id"], "itemId": item["id"], "position": 1, "query": "p"}
            assert server.runtime("POST", "/v1/selection", body=body).status == 200

    def sel():
        s = ms["viewer"].call("GET", f"/lists/{lst['id']}/selections?days=3").json()
        return s if s["total"] == 4 else None
    # Counted from the analytics aggregates: shipped every 5 s, visible within 15 s.
    s = wait_until(sel, timeout=20, interval=0.5)
    assert s, ms["viewer"].call("GET", f"/lists/{lst['id']}/selections?days=3").json()
    assert len(s["perDay"]) == 3 and s["perDay"][-1]["selections"] == 4
    assert [(x["itemId"], x["selections"], x["value"]) for x in s["topItems"]] == [
        (paris["id"], 3, "Paris"), (lyon["id"], 1, "Lyon")]
    assert_error(ms["viewer"].call("GET", f"/lists/{lst['id']}/selections?days=0"), 400,
                 "invalid_request", field="days")


def test_api_v1_stays_secret_key_only_without_cors(server):
    t, ms = workspace_with_members(server, roles=("owner",))
    o = ms["owner"]
    # A dashboard session is not an /api/v1 credential.
    r = request(server.control_port, "GET", "/api/v1/lists",
                headers={"Cookie": f"sg_session={o.cookie}", "X-CSRF-Token": o.csrf})
    assert_error(r, 401, "invalid_key")
    r = t.api("GET", "/lists", headers={"Origin": "https://shop.example"})
    assert r.status == 200
    assert not any(h.startswith("access-control-") for h in r.headers), r.headers
    r = request(server.control_port, "OPTIONS", "/api/v1/lists",
                headers={"Origin": "https://shop.example",
                         "Access-Control-Request-Method": "POST"})
    assert not any(h.startswith("access-control-") for h in r.headers), r.headers


def test_dashboard_unknown_routes(server):
    t, ms = workspace_with_members(server, roles=("owner",))
    o = ms["owner"]
    assert_error(o.call("GET", "/nope"), 404, "not_found")
    assert_error(o.call("PUT", "/lists"), 405, "method_not_allowed")
    big = b'{"name":"' + b"x" * (2 << 20) + b'"}'
    r = o.call("POST", "/lists", raw=big, headers={"Content-Type": "application/json"})
    assert_error(r, 413, "invalid_request", reason="payload_too_large")


def test_sign_in_page_is_built_in(server):
    r = request(server.control_port, "GET", "/dashboard")
    assert r.status == 308 and r.header("location") == "/dashboard/", r
    r = request(server.control_port, "GET", "/dashboard/")
    assert r.status == 200 and r.header("content-type").startswith("text/html"), r
    page = r.body.decode()
    assert 'type="password"' in page and 'for="email"' in page and 'for="password"' in page
    csp = r.header("content-security-policy")
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert "<script>" not in page  # no inline script: the CSP forbids it
    assert r.header("x-frame-options") == "DENY"
    # Nothing from the internet.
    assert "http://" not in page and "https://" not in page
    js = request(server.control_port, "GET", "/dashboard/app.js")
    assert js.status == 200 and js.header("content-type").startswith("text/javascript")
    assert b"X-CSRF-Token" in js.body and b"/dashboard/api" in js.body
    assert request(server.control_port, "GET", "/dashboard/app.css").status == 200
    assert_error(request(server.control_port, "GET", "/dashboard/nope"), 404, "not_found")


def test_pages_name_the_runtime_for_the_preview(server, make_server):
    # serve: the runtime's listen address is the default, in /me and in connect-src only.
    url = f"http://127.0.0.1:{server.runtime_port}"
    t, ms = workspace_with_members(server, roles=("viewer",))
    assert ms["viewer"].call("GET", "/me").json()["runtimeUrl"] == url
    csp = request(server.control_port, "GET", "/dashboard/").header("content-security-policy")
    assert f"connect-src 'self' {url};" in csp and "script-src 'self';" in csp
    # The widget of clients/js is served from the binary, byte for byte.
    js = request(server.control_port, "GET", "/dashboard/suggestd.js")
    assert js.status == 200 and js.header("content-type").startswith("text/javascript")
    with open(os.path.join(ROOT, "clients", "js", "dist", "suggestd.js"), "rb") as f:
        assert js.body == f.read()
    # An explicit public URL wins; `control` alone without it names none.
    other = make_server(["--runtime-public-url", "https://rt.example.com"])
    _, m2 = workspace_with_members(other, roles=("viewer",))
    assert m2["viewer"].call("GET", "/me").json()["runtimeUrl"] == "https://rt.example.com"
    cp = make_server(mode="control")
    _, m3 = workspace_with_members(cp, roles=("viewer",))
    assert m3["viewer"].call("GET", "/me").json()["runtimeUrl"] is None
    csp = request(cp.control_port, "GET", "/dashboard/").header("content-security-policy")
    assert "connect-src 'self';" in csp


@pytest.mark.parametrize("bad", ["rt.example.com", "https://rt.example.com; script-src *",
                                 "https://rt.example.com/path", "javascript:alert(1)", "https://"])
def test_runtime_public_url_must_be_an_origin(bad, tmp_path):
    r = subprocess.run([BINARY, "serve", "--data-dir", str(tmp_path), "--runtime-public-url", bad],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode != 0 and "--runtime-public-url must be an origin" in r.stderr, r.stderr


def test_item_search_by_value_prefix(server):
    t, ms = workspace_with_members(server, roles=("viewer",))
    v = ms["viewer"]
    lst = t.create_list("Cities")
    values = ["Paris", "parma", "Lyon", "100%", "100 ans", "a_b", "axb", "Pärnu", "PARIS 2"]
    t.add_items(lst["id"], [{"value": x} for x in values])
    path = f"/lists/{lst['id']}/items/search"

    def found(q, **extra):
        params = "&".join(f"{k}={vv}" for k, vv in extra.items())
        r = v.call("GET", f"{path}?q={urllib.parse.quote(q)}" + (f"&{params}" if params else ""))
        assert r.status == 200, r
        return r.json()

    assert [i["value"] for i in found("par")["data"]] == ["Paris", "PARIS 2", "parma"]
    assert [i["value"] for i in found("100%")["data"]] == ["100%"]  # % is not a wildcard
    assert [i["value"] for i in found("a_")["data"]] == ["a_b"]  # nor is _
    assert [i["value"] for i in found("Pä")["data"]] == ["Pärnu"]
    assert found("zz")["data"] == []
    # Paged by value then id, with the item list's cursor rules.
    p1 = found("par", limit=2)
    assert [i["value"] for i in p1["data"]] == ["Paris", "PARIS 2"] and p1["nextCursor"]
    p2 = found("par", limit=2, cursor=p1["nextCursor"])
    assert [i["value"] for i in p2["data"]] == ["parma"] and p2["nextCursor"] is None
    r = v.call("GET", f"{path}?q=ly&cursor={p1['nextCursor']}")  # another search's cursor
    assert_error(r, 400, "invalid_request", field="cursor")
    # Without q (or q empty) every item, by value: the dashboard's items table.
    every = v.call("GET", path).json()["data"]
    fold = lambda x: "".join(c.lower() if c.isascii() else c for c in x).encode()  # NOCASE
    assert [i["value"] for i in every] == sorted((i["value"] for i in every), key=fold), every
    assert len(every) == len(values)
    assert_error(v.call("GET", path + "?q=" + "x" * 1025), 400, "invalid_request", field="q")
    assert_error(v.call("GET", f"/lists/lst_nope/items/search?q=a"), 404, "invalid_list")
    # Served from the index, so it stays fast on a list of millions of items (SQLite's
    # plan; the PostgreSQL backend's own index is its unit tests' business).
    if ON_POSTGRES:
        return
    db = sqlite3.connect(f"file:{server.data_dir}/suggestd.db?mode=ro", uri=True)
    plan = " ".join(str(row) for row in db.execute(
        "EXPLAIN QUERY PLAN SELECT id FROM items WHERE list_id='x' AND to_clock IS NULL"
        " AND value >= 'a' COLLATE NOCASE AND value < 'b' COLLATE NOCASE"
        " ORDER BY value COLLATE NOCASE, id"))
    db.close()
    assert "items_value_nocase" in plan and "TEMP B-TREE" not in plan, plan
