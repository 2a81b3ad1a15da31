"""Control plane: secret-key authentication, tenancy, x-request-id, routing basics.

docs/DESIGN.md §4.2 and §4.3: a missing, wrong, malformed or revoked secret key, or a
disabled workspace or application, answers 401 invalid_key with WWW-Authenticate: Bearer;
a key sees only its own workspace's lists (404 invalid_list, never 403).
"""
import pytest

from control_helpers import assert_error


def assert_invalid_key(r):
    b = assert_error(r, 401, "invalid_key")
    assert r.header("www-authenticate") == "Bearer", r.headers
    return b


# -- missing, wrong, malformed ----------------------------------------------------------
def test_valid_key_works(cp, t):
    r = t.api("GET", "/lists")
    assert r.status == 200, r
    assert r.json()["data"] == []


def test_missing_key(cp, t):
    assert_invalid_key(cp.control("GET", "/api/v1/lists"))
    assert_invalid_key(cp.control("POST", "/api/v1/lists", {"name": "x"}))


@pytest.mark.parametrize("auth", [
    "",
    "Bearer",
    "Bearer ",
    "Basic dXNlcjpwYXNz",
    "bearer {key}",           # scheme with the wrong case is not accepted silently... see below
    "Token {key}",
    "Bearer {key}x",          # one extra character of secret
    "Bearer {key_id}",        # the id alone
    "Bearer {key_id}_",       # the id with an empty secret
    "Bearer {key_id}_wrongsecretwrongsecret",
    "Bearer sk_unknown_secretsecretsecret",
    "Bearer sk_",
    "Bearer pk_notasecretkey_at_all",
    "Bearer " + "a" * 300,
    "Bearer sk_" + "x" * 5000 + "_y",
])
def test_wrong_or_malformed_key(cp, t, auth):
    auth = auth.format(key=t.secret_key, key_id=t.key_id)
    if auth.startswith("bearer "):
        # RFC 7235 makes the scheme case-insensitive; either 200 or a clean 401 is fine,
        # but never anything else.
        r = cp.control("GET", "/api/v1/lists", headers={"Authorization": auth})
        assert r.status in (200, 401), r
        if r.status == 401:
            assert_invalid_key(r)
        return
    assert_invalid_key(cp.control("GET", "/api/v1/lists", headers={"Authorization": auth}))


def test_key_of_other_tenant_secret_swapped(cp):
    """The id of one key with the secret of another is refused (digest bound to the id)."""
    a, b = cp.tenant(), cp.tenant()
    secret_b = b.secret_key[len(b.key_id) + 1:]
    forged = f"{a.key_id}_{secret_b}"
    assert_invalid_key(cp.control("GET", "/api/v1/lists", key=forged))


def test_revoked_key(cp, t):
    assert t.api("GET", "/lists").status == 200
    out = cp.admin("secret-key", "revoke", t.key_id)
    assert out == {"id": t.key_id, "status": "revoked"}
    assert_invalid_key(t.api("GET", "/lists"))
    assert_invalid_key(t.api("POST", "/lists", {"name": "x"}))


def test_other_keys_survive_a_revocation(cp, t):
    sk2 = cp.admin("secret-key", "create", "--application", t.application_id)
    cp.admin("secret-key", "revoke", t.key_id)
    r = cp.control("GET", "/api/v1/lists", key=sk2["secretKey"])
    assert r.status == 200, r


def test_disabled_workspace(cp, t):
    out = cp.admin("workspace", "disable", t.workspace_id)
    assert out["id"] == t.workspace_id and out["status"] == "disabled"
    assert_invalid_key(t.api("GET", "/lists"))


def test_disabled_application(cp, t):
    out = cp.admin("application", "disable", t.application_id)
    assert out["id"] == t.application_id and out["status"] == "disabled"
    assert_invalid_key(t.api("GET", "/lists"))


def test_error_body_shape_and_docs_url(cp, t):
    b = assert_invalid_key(cp.control("GET", "/api/v1/lists"))
    assert b["details"] == {}
    assert "invalid_key" in b["docsUrl"]


# -- tenancy ----------------------------------------------------------------------------
def test_key_sees_only_its_workspace(cp):
    a, b = cp.tenant(), cp.tenant()
    la = a.create_list("Alpha")
    lb = b.create_list("Beta")
    assert [x["id"] for x in a.api("GET", "/lists").json()["data"]] == [la["id"]]
    assert [x["id"] for x in b.api("GET", "/lists").json()["data"]] == [lb["id"]]
    for method, body in (("GET", None), ("PATCH", {"name": "stolen"})):
        r = a.api(method, f"/lists/{lb['id']}", body)
        assert_error(r, 404, "invalid_list")
    # Nothing changed on b's list.
    assert b.api("GET", f"/lists/{lb['id']}").json()["name"] == "Beta"


def test_two_applications_of_one_workspace_share_its_lists(cp, t):
    app2 = cp.admin("application", "create", "--workspace", t.workspace_id, "--name", "ios")
    sk2 = cp.admin("secret-key", "create", "--application", app2["id"])
    lst = t.create_list("Shared")
    r = cp.control("GET", f"/api/v1/lists/{lst['id']}", key=sk2["secretKey"])
    assert r.status == 200, r


@pytest.mark.parametrize("bad_id", ["lst_doesnotexist000000000", "x", "lst_%20x", "..", "lst_" + "a" * 500])
def test_unknown_list_is_404_invalid_list(cp, t, bad_id):
    for method, body in (("GET", None), ("PATCH", {"name": "n"})):
        assert_error(t.api(method, f"/lists/{bad_id}", body), 404, "invalid_list")


def test_unauthenticated_probe_of_unknown_list_is_401_not_404(cp, t):
    """Authentication comes before any lookup, so ids cannot be probed without a key."""
    lst = t.create_list()
    assert_invalid_key(cp.control("GET", f"/api/v1/lists/{lst['id']}"))
    assert_invalid_key(cp.control("GET", "/api/v1/lists/lst_nope"))


def test_secret_key_never_in_server_log(cp, t):
    lst = t.create_list()
    t.api("GET", "/lists?limit=abc")
    t.api("PATCH", f"/lists/{lst['id']}", {"bogus": 1})
    cp.control("GET", "/api/v1/lists", key=t.secret_key + "x")
    cp.control("GET", "/api/v1/lists?key=" + t.secret_key)
    cp.admin("secret-key", "revoke", t.key_id)
    t.api("GET", "/lists")
    log = cp.read_log()
    secret = t.secret_key[len(t.key_id) + 1:]
    assert secret not in log
    assert t.secret_key not in log


# -- x-request-id -----------------------------------------------------------------------
def test_request_id_echoed_on_success_and_error(cp, t):
    r = t.api("GET", "/lists", headers={"x-request-id": "abc-123"})
    assert r.status == 200
    assert r.header("x-request-id") == "abc-123"
    assert r.json()["requestId"] == "abc-123"
    r = cp.control("GET", "/api/v1/lists", headers={"x-request-id": "trace-42"})
    b = assert_invalid_key(r)
    assert b["requestId"] == "trace-42" and r.header("x-request-id") == "trace-42"
    r = t.api("POST", "/lists", {"nope": 1}, headers={"X-Request-Id": "MiXeD"})
    b = assert_error(r, 400, "invalid_request")
    assert b["requestId"] == "MiXeD"


def test_request_id_generated_when_absent(cp, t):
    ids = set()
    for _ in range(3):
        r = t.api("GET", "/lists")
        rid = r.header("x-request-id")
        assert rid and rid == r.json()["requestId"]
        ids.add(rid)
    assert len(ids) == 3
    r = cp.control("GET", "/nope")
    assert r.header("x-request-id") == r.json()["requestId"]


@pytest.mark.parametrize("bad", ['has"quote', "back\\slash", "x" * 200, "sp ace"])
def test_hostile_request_id_replaced(cp, t, bad):
    r = t.api("GET", "/lists", headers={"x-request-id": bad})
    assert r.status == 200
    rid = r.header("x-request-id")
    assert rid and rid != bad and r.json()["requestId"] == rid


# -- routing ----------------------------------------------------------------------------
@pytest.mark.parametrize("path", ["/nope", "/api/v1", "/api/v1/", "/api/v2/lists",
                                  "/api/v1/lists/x/y/z/w", "/api/v1/listsX", "/"])
def test_unknown_path_404(cp, t, path):
    r = cp.control("GET", path, key=t.secret_key)
    assert_error(r, 404, "not_found")


def test_wrong_method_405_with_allow(cp, t):
    r = t.api("DELETE", "/lists")
    assert_error(r, 405, "method_not_allowed")
    assert set(m.strip() for m in r.header("allow").split(",")) == {"GET", "POST"}
    r = t.api("PUT", "/lists/lst_x", {"name": "x"})
    assert_error(r, 405, "method_not_allowed")
    assert set(m.strip() for m in r.header("allow").split(",")) == {"GET", "PATCH"}
    r = cp.control("DELETE", "/api/v1/lists")  # even without a key
    assert r.status == 405 and r.header("allow")


def test_healthz(cp):
    r = cp.control("GET", "/healthz")
    assert r.status == 200
    assert r.json() == {"status": "ok"}


def test_docs_errors_lists_every_code(cp):
    r = cp.control("GET", "/docs/errors")
    assert r.status == 200
    assert r.header("content-type").startswith("text/html"), r.headers
    text = r.body.decode()
    assert text.startswith("<!doctype html>")
    for code in ("invalid_key", "invalid_list", "invalid_request", "rate_limited",
                 "internal_error", "not_found", "method_not_allowed", "origin_not_allowed"):
        assert f'<section id="{code}">' in text, code
    for reason in ("precondition_failed", "idempotency_key_reused", "idempotency_key_in_flight",
                   "payload_too_large", "token_minting_unavailable", "artifact_write_failed"):
        assert f'id="invalid_request-{reason}"' in text or f'id="internal_error-{reason}"' in text, reason
    # Remediations are escaped, never raw markup ("<secret key>").
    assert "Bearer &lt;secret key&gt;" in text


def test_docs_url_of_every_error_resolves(cp, t):
    """Each error's docsUrl is an anchor of the HTML error reference."""
    for r in (cp.control("GET", "/api/v1/lists"), t.api("GET", "/lists?limit=0"),
              t.api("GET", "/lists/lst_none"), cp.control("GET", "/zzz")):
        b = r.json()
        path, _, anchor = b["docsUrl"].partition("#")
        doc = cp.control("GET", path)
        assert doc.status == 200 and doc.header("content-type").startswith("text/html")
        assert anchor == b["code"] and f'<section id="{anchor}">' in doc.body.decode()
