"""Access tokens on the runtime: a private list needs `Authorization: Bearer <token>`.

Uses the control plane (`suggestd control`) to create the list and mint tokens, and a
separate `suggestd runtime` on the same data directory. The list is never published, so
a token that passes answers 404 list_not_published and one that fails 401 invalid_token:
that difference is what these tests check. Queries on a published private list are in
the pipeline tests.
"""
import base64
import json
import os
import time

import pytest

from conftest import Server


@pytest.fixture
def setup(tmp_path):
    data = str(tmp_path / "data")
    os.makedirs(data)
    ctl = Server(data, mode="control").start()
    rt = Server(data, mode="runtime").start()
    t = ctl.tenant()
    # Created public then made private, so the PATCH mirrors the list to the edge store
    # whichever way creation itself does.
    lst = t.create_list("Cities", visibility="public")
    other = t.create_list("Other", visibility="public")
    for l in (lst, other):
        assert t.api("PATCH", f"/lists/{l['id']}", {"visibility": "private"}).status == 200
    ctl.admin("signing-key", "rotate")
    pk = ctl.admin("publishable-key", "create", "--application", t.application_id,
                   "--list", lst["id"])["publishableKey"]
    yield ctl, rt, t, lst, other, pk
    rt.stop()
    ctl.stop()


def boot(rt, pk, token=None, auth=None):
    headers = {}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    if auth is not None:
        headers["Authorization"] = auth
    return rt.runtime("GET", "/v1/bootstrap", params={"key": pk}, headers=headers)


def mint(t, *list_ids):
    r = t.api("POST", "/token", {"listIds": list(list_ids)})
    assert r.status == 200, r
    return r.json()["accessToken"]


def wait_status(fn, status, timeout=2.0):
    t0 = time.time()
    while fn().status != status:
        assert time.time() - t0 < timeout, fn()
        time.sleep(0.05)


def test_token_gates_private_list(setup):
    ctl, rt, t, lst, other, pk = setup
    t0 = time.time()
    while boot(rt, pk).json().get("code") != "invalid_token":  # until the key is loaded
        assert time.time() - t0 < 2
        time.sleep(0.05)
    r = boot(rt, pk)
    assert r.json()["code"] == "invalid_token"
    assert r.header("www-authenticate").startswith("Bearer")

    token = mint(t, lst["id"])
    wait_status(lambda: boot(rt, pk, token), 404)  # token accepted; list not published yet
    assert boot(rt, pk, token).json()["code"] == "list_not_published"
    q = rt.runtime("GET", "/v1/query", params={"key": pk, "q": "an"},
                   headers={"Authorization": f"Bearer {token}"})
    assert q.status == 404 and q.json()["code"] == "list_not_published"


def test_bad_tokens(setup):
    ctl, rt, t, lst, other, pk = setup
    token = mint(t, lst["id"])
    wait_status(lambda: boot(rt, pk, token), 404)
    head, payload, sig = token.split(".")
    tampered_sig = head + "." + payload + "." + ("A" if sig[0] != "A" else "B") + sig[1:]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims["sub"] = "app_someone_else"
    forged = head + "." + base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=") + "." + sig
    none_alg = base64.urlsafe_b64encode(b'{"alg":"none","kid":"x"}').decode().rstrip("=") + "." + payload + "."
    for bad in (tampered_sig, forged, none_alg, "x.y.z", "", token + "x"):
        r = boot(rt, pk, bad)
        assert r.status == 401 and r.json()["code"] == "invalid_token", bad
    assert boot(rt, pk, auth=token).status == 401  # no "Bearer " scheme
    assert boot(rt, pk, auth="Basic " + token).status == 401
    # A token that does not cover the key's list.
    assert boot(rt, pk, mint(t, other["id"])).status == 401
    # A token minted for another application of the same workspace.
    app2 = ctl.admin("application", "create", "--workspace", t.workspace_id, "--name", "app2")["id"]
    sk2 = ctl.admin("secret-key", "create", "--application", app2)["secretKey"]
    r = ctl.control("POST", "/api/v1/token", body={"listIds": [lst["id"]]}, key=sk2)
    assert r.status == 200, r
    assert boot(rt, pk, r.json()["accessToken"]).status == 401


def test_expired_token(setup, tmp_path):
    ctl, rt, t, lst, other, pk = setup
    token = mint(t, lst["id"])
    wait_status(lambda: boot(rt, pk, token), 404)
    # A runtime whose clock is two hours ahead sees the same token as expired.
    late = Server(rt.data_dir, mode="runtime", env={"SUGGESTD_CLOCK_OFFSET": "7200"})
    late.log_path = os.path.join(rt.data_dir, "runtime-late.log")
    late.start()
    try:
        r = late.runtime("GET", "/v1/bootstrap", params={"key": pk},
                         headers={"Authorization": f"Bearer {token}"})
        assert r.status == 401 and r.json()["code"] == "invalid_token"
    finally:
        late.stop()


def test_bearer_scheme_is_case_insensitive_on_both_listeners(setup):
    """RFC 7235: the auth-scheme is case-insensitive. Both listeners parse the credential
    the same way: any case of "Bearer", one or more spaces, one non-empty token."""
    ctl, rt, t, lst, other, pk = setup
    token = mint(t, lst["id"])
    wait_status(lambda: boot(rt, pk, token), 404)
    for scheme in ("Bearer", "bearer", "BEARER", "bEaReR"):
        for sep in (" ", "   "):
            r = ctl.control("GET", "/api/v1/lists", headers={"Authorization": scheme + sep + t.secret_key})
            assert r.status == 200, (scheme, sep, r)
            r = boot(rt, pk, auth=scheme + sep + token)
            assert r.status == 404 and r.json()["code"] == "list_not_published", (scheme, sep, r)
    for bad in ("Bearer", "bearer ", "Bearer\t{}", "Bearer {} extra", "Bearer{}", "Basic {}",
                "Bearer ={}"):
        r = ctl.control("GET", "/api/v1/lists", headers={"Authorization": bad.format(t.secret_key)})
        assert r.status == 401 and r.json()["code"] == "invalid_key", (bad, r)
        r = boot(rt, pk, auth=bad.format(token))
        assert r.status == 401 and r.json()["code"] == "invalid_token", (bad, r)
