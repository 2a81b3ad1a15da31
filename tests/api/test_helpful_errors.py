"""Errors that tell the caller what to change (issue 16): a key of the wrong kind on each
plane names the kind expected, a 413 states the limit, a missing q names the parameter,
and every docsUrl anchor is a section of the HTML error reference."""
import re

from conftest import wait_until
from control_helpers import assert_error


def published(server, tenant):
    lst = tenant.create_list("Cities", visibility="public")
    tenant.add_items(lst["id"], [{"value": "Paris"}])
    assert tenant.publish(lst["id"])["state"] == "active"
    pk = tenant.publishable_key(lst["id"])["publishableKey"]
    assert wait_until(lambda: server.runtime("GET", "/v1/bootstrap", {"key": pk}).status == 200)
    return lst, pk


def test_publishable_key_on_the_control_plane_says_a_secret_key_is_expected(server, tenant):
    _, pk = published(server, tenant)
    r = server.control("GET", "/api/v1/lists", key=pk)
    b = assert_error(r, 401, "invalid_key")
    assert "publishable key" in b["message"] and "secret key (sk_" in b["message"], b
    assert r.header("www-authenticate") == "Bearer"
    # An access token is named too, and a missing header says what to send.
    b = assert_error(server.control("GET", "/api/v1/lists", key="eyJhbGciOi.x.y"), 401, "invalid_key")
    assert "access token" in b["message"], b
    b = assert_error(server.control("GET", "/api/v1/lists"), 401, "invalid_key")
    assert "Authorization: Bearer sk_" in b["message"], b
    # A wrong secret key keeps the generic message: nothing to learn about which part failed.
    b = assert_error(server.control("GET", "/api/v1/lists", key="sk_nope_nope"), 401, "invalid_key")
    assert "publishable" not in b["message"]


def test_secret_key_on_the_runtime_says_a_publishable_key_is_expected(server, tenant):
    published(server, tenant)
    for route in ("/v1/query", "/v1/bootstrap"):
        r = server.runtime("GET", route, {"key": tenant.secret_key, "q": "pa"})
        assert r.status == 401, r
        b = r.json()
        assert b["code"] == "invalid_key"
        assert "secret key" in b["message"] and "publishable key (pk_" in b["message"], b
        assert tenant.secret_key not in r.body.decode()
    r = server.runtime("POST", "/v1/selection", body={"key": tenant.secret_key})
    assert r.status == 401 and "publishable key (pk_" in r.json()["message"], r
    r = server.runtime("GET", "/v1/query", {"q": "pa"})
    assert r.status == 401 and "No publishable key" in r.json()["message"], r
    # An unknown publishable key keeps the table's message.
    r = server.runtime("GET", "/v1/query", {"key": "pk_unknown", "q": "pa"})
    assert r.json()["message"] == "The key is missing, wrong or revoked.", r


def test_missing_q_names_the_parameter(server, tenant):
    _, pk = published(server, tenant)
    r = server.runtime("GET", "/v1/query", {"key": pk})
    assert r.status == 400, r
    b = r.json()
    assert b["code"] == "invalid_request"
    assert "query parameter q" in b["message"], b
    r = server.runtime("GET", f"/v1/query?key={pk}&q=%ff")
    assert r.status == 400 and "percent-encoded UTF-8" in r.json()["message"], r


def test_413_states_the_limit_on_both_planes(server, tenant):
    r = tenant.api("POST", "/lists", raw=b'{"name":"' + b"x" * (1 << 20) + b'"}',
                   headers={"Content-Type": "application/json"})
    b = assert_error(r, 413, "invalid_request", reason="payload_too_large")
    assert b["details"]["limitBytes"] == 1 << 20
    assert "at most 1 MiB" in b["message"], b
    r = server.runtime("POST", "/v1/selection", raw=b"x" * 5000, headers={"Content-Type": "text/plain"})
    assert r.status == 413, r
    assert "at most 4096 bytes" in r.json()["message"], r


def test_import_413_states_the_configured_cap(make_server):
    s = make_server(["--import-max-bytes", "1000"])
    t = s.tenant()
    lst = t.create_list("Big")
    r = t.api("POST", f"/lists/{lst['id']}/items/import", raw=b'{"value":"a"}\n' * 200,
              headers={"Content-Type": "application/x-ndjson"})
    b = assert_error(r, 413, "invalid_request", reason="payload_too_large")
    assert b["details"]["limitBytes"] == 1000 and "at most 1000 bytes" in b["message"], b


def test_every_docs_url_anchor_is_an_html_section(server, tenant):
    page = server.control("GET", "/docs/errors")
    assert page.header("content-type").startswith("text/html")
    html = page.body.decode()
    ids = set(re.findall(r'id="([^"]+)"', html))
    lst = tenant.create_list("X")
    answers = [
        server.control("GET", "/api/v1/lists"),
        tenant.api("GET", "/lists?limit=0"),
        tenant.api("GET", "/lists/lst_none"),
        tenant.api("GET", f"/lists/{lst['id']}/items/itm_none"),
        tenant.api("DELETE", "/lists"),
        server.control("GET", "/nope"),
    ]
    for r in answers:
        b = r.json()
        path, _, anchor = b["docsUrl"].partition("#")
        assert path == "/docs/errors" and anchor in ids, (b, sorted(ids))
        reason = b["details"].get("reason")
        if reason:
            assert f"{b['code']}-{reason}" in ids
