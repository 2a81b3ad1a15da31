"""Black-box tests of `suggestd runtime` on a hand-built edge directory.

These need no control plane: the artifact comes from `suggestd compile` and the records
are written the way the edge store writes them (temp file + rename, then REVISION). The
same behaviours through the full pipeline (admin CLI + control-plane publish) live in
test_runtime_pipeline.py once publishing lands.
"""
import hashlib
import json
import os
import subprocess
import time
import uuid

import pytest

from conftest import BINARY, Server

ITEMS = [
    {"id": "itm_1", "value": "andorra la vella", "displayValue": "Andorra la Vella", "rank": 5},
    {"id": "itm_2", "value": "sant julia", "displayValue": "Sant Julià de Lòria",
     "aliases": ["sjl"], "locales": {"fr": {"displayValue": "Saint-Julien"}}},
    {"id": "itm_3", "value": "escaldes", "displayValue": "Escaldes", "parentId": "itm_1"},
    {"id": "itm_4", "value": "encamp", "displayValue": "Encamp", "rank": 1},
]
PK = "pk_test_public_0123456789"


class Edge:
    """Writes edge records the way src/edge does (atomic files + REVISION bump)."""

    KINDS = ("artifacts", "lists", "keys", "apps", "workspaces", "subscriptions", "signing-keys")

    def __init__(self, data_dir):
        self.root = os.path.join(data_dir, "edge")
        for k in self.KINDS:
            os.makedirs(os.path.join(self.root, k), exist_ok=True)

    def _write(self, path, data):
        tmp = path + ".tmp-test"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)

    def bump(self):
        p = os.path.join(self.root, "REVISION")
        try:
            rev = int(open(p).read().strip() or 0)
        except OSError:
            rev = 0
        self._write(p, f"{rev + 1}\n".encode())

    def put(self, kind, rid, rec):
        self._write(os.path.join(self.root, kind, rid + ".json"), json.dumps(rec).encode())
        self.bump()

    def delete(self, kind, rid):
        os.unlink(os.path.join(self.root, kind, rid + ".json"))
        self.bump()

    def put_artifact(self, path):
        data = open(path, "rb").read()
        h = hashlib.sha256(data).hexdigest()
        self._write(os.path.join(self.root, "artifacts", h + ".sga"), data)
        return "sha256:" + h

    def key(self, pk, app, lst, origins=None, status="active", kid="pk_1"):
        rec = {"id": kid, "applicationId": app, "listId": lst, "status": status,
               "origins": origins or []}
        self.put("keys", hashlib.sha256(pk.encode()).hexdigest(), rec)

    def list(self, lid, ws, content_hash, visibility="public", status="active", min_chars=1,
             locales=("en", "fr")):
        self.put("lists", lid, {
            "id": lid, "workspaceId": ws, "visibility": visibility, "status": status,
            "queryPolicy": {"minQueryChars": min_chars, "debounceMs": 120},
            "localePolicy": {"defaultLocale": "en", "supportedLocales": list(locales)},
            "activeVersionNumber": 1 if content_hash else None,
            "activeContentHash": content_hash})


def compile_items(tmp, items):
    src = os.path.join(tmp, "items.jsonl")
    with open(src, "w") as f:
        for it in items:
            f.write(json.dumps(it) + "\n")
    out = os.path.join(tmp, "a.sga")
    r = subprocess.run([BINARY, "compile", "--input", src, "--output", out, "--default-locale",
                        "en", "--locales", "en,fr"], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"suggestd compile unavailable: {r.stderr.strip()[:200]}")
    return out


@pytest.fixture
def env(tmp_path):
    data = str(tmp_path / "data")
    os.makedirs(data)
    edge = Edge(data)
    art = compile_items(str(tmp_path), ITEMS)
    h = edge.put_artifact(art)
    edge.put("workspaces", "wsp_1", {"id": "wsp_1", "status": "active"})
    edge.put("apps", "app_1", {"id": "app_1", "workspaceId": "wsp_1", "status": "active",
                               "monthlyQuota": None})
    edge.list("lst_1", "wsp_1", h, min_chars=2)
    edge.key(PK, "app_1", "lst_1")
    srv = Server(data, mode="runtime", extra=["--selection-rate", "5"])
    srv.start()
    srv.edge = edge
    srv.hash = h
    yield srv
    srv.stop()


def q(srv, query, key=PK, headers=None, **extra):
    params = {"key": key, "q": query}
    params.update(extra)
    return srv.runtime("GET", "/v1/query", params=params, headers=headers)


def wait_for(fn, timeout=1.0):
    """Polls fn() until truthy; returns the elapsed seconds (fails after timeout)."""
    t0 = time.time()
    while True:
        v = fn()
        if v:
            return time.time() - t0
        if time.time() - t0 > timeout:
            pytest.fail(f"condition not met within {timeout}s")
        time.sleep(0.02)


# -- query ----------------------------------------------------------------------------

def test_query_body_shape_and_determinism(env):
    r1 = q(env, "an", headers={"x-request-id": "abc-1"})
    r2 = q(env, "an", headers={"x-request-id": "other-2"})
    assert r1.status == 200, r1
    assert r1.body == r2.body  # byte-identical; x-request-id never reaches the body
    body = r1.json()
    assert list(body) == ["items", "list", "requestId"]
    assert body["list"] == {"id": "lst_1"}
    assert body["items"][0] == {"itemId": "itm_1", "value": "andorra la vella",
                                "displayValue": "Andorra la Vella", "highlight": [[0, 2]]}
    assert body["requestId"].startswith("req_") and len(body["requestId"]) == 36
    assert r1.header("x-request-id") == "abc-1"
    assert r2.header("x-request-id") == "other-2"
    assert q(env, "an").header("x-request-id")  # generated when absent
    assert r1.header("cache-control") == "public, max-age=60"
    assert r1.header("content-type").startswith("application/json")


def test_query_normalises_and_ancestors(env):
    r = q(env, "ESC")
    assert r.status == 200
    assert r.json()["items"] == [{"itemId": "itm_3", "value": "escaldes", "displayValue": "Escaldes",
                                  "ancestors": [{"itemId": "itm_1", "value": "andorra la vella",
                                                 "displayValue": "Andorra la Vella"}],
                                  "highlight": [[0, 3]]}]
    # The same normalised query gives the same requestId.
    assert q(env, "esc").json()["requestId"] == r.json()["requestId"]


def test_locale_fallback(env):
    fr = q(env, "sa", locale="fr-CA").json()
    assert fr["items"][0]["displayValue"] == "Saint-Julien"
    assert q(env, "sa", locale="fr").json() == fr
    de = q(env, "sa", locale="de").json()
    assert de["items"][0]["displayValue"] == "Sant Julià de Lòria"
    assert de == q(env, "sa").json()  # unsupported → default locale, same requestId
    assert de["requestId"] != fr["requestId"]


def test_etag_and_304(env):
    r = q(env, "an")
    etag = r.header("etag")
    assert etag and etag.startswith('"') and etag.endswith('"')
    r304 = q(env, "an", headers={"If-None-Match": etag})
    assert r304.status == 304 and r304.body == b""
    assert r304.header("etag") == etag
    assert q(env, "an", headers={"If-None-Match": '"nope"'}).status == 200
    assert q(env, "en").header("etag") != etag


def test_query_length_rules(env):
    short = q(env, "!!!")
    assert short.status == 200
    b = short.json()
    assert b["code"] == "query_too_short" and b["items"] == []
    assert q(env, "a").json()["code"] == "query_too_short"  # minQueryChars 2
    assert q(env, "é" * 255).status == 200  # 255 code points as sent is fine
    long_ = q(env, "é" * 256)
    assert long_.status == 400 and long_.json()["code"] == "query_too_long"
    bad = env.runtime("GET", f"/v1/query?key={PK}&q=%FF%FE")
    assert bad.status == 400 and bad.json()["code"] == "invalid_request"
    missing = env.runtime("GET", f"/v1/query?key={PK}")
    assert missing.status == 400 and missing.json()["code"] == "invalid_request"


def test_invalid_key(env):
    for key in ("", "pk_unknown"):
        r = q(env, "an", key=key)
        assert r.status == 401
        assert set(r.json()) == {"code", "message", "requestId"}
        assert r.json()["code"] == "invalid_key"
    r = env.runtime("GET", "/v1/query?q=an")
    assert r.status == 401 and r.json()["code"] == "invalid_key"


# -- origins and CORS -------------------------------------------------------------------

def test_any_origin_key_echoes_origin(env):
    r = q(env, "an", headers={"Origin": "https://anything.test"})
    assert r.status == 200
    assert r.header("access-control-allow-origin") == "https://anything.test"
    assert "Origin" in r.header("vary")
    assert q(env, "an").header("access-control-allow-origin") is None


def test_origin_allow_list(env):
    env.edge.key("pk_origins", "app_1", "lst_1", kid="pk_2",
                 origins=["https://shop.example", "https://*.example.org"])
    wait_for(lambda: q(env, "an", key="pk_origins").status == 200)
    for origin in ("https://shop.example", "https://a.example.org", "https://a.b.example.org"):
        r = q(env, "an", key="pk_origins", headers={"Origin": origin})
        assert r.status == 200, origin
        assert r.header("access-control-allow-origin") == origin
    for origin in ("https://evil.test", "https://example.org", "http://a.example.org",
                   "https://shop.example.evil.test"):
        r = q(env, "an", key="pk_origins", headers={"Origin": origin})
        assert r.status == 403 and r.json()["code"] == "origin_not_allowed", origin
        # The typed error is readable by the page (issue 27); nothing of the list is in it.
        assert r.header("access-control-allow-origin") == origin
    boot = env.runtime("GET", "/v1/bootstrap", params={"key": "pk_origins"},
                       headers={"Origin": "https://evil.test"})
    assert boot.status == 403


def test_preflight(env):
    for path in ("/v1/query", "/v1/bootstrap", "/v1/selection"):
        r = env.runtime("OPTIONS", path, headers={"Origin": "https://a.test",
                                                  "Access-Control-Request-Method": "GET"})
        assert r.status in (200, 204), path
        assert r.header("access-control-allow-origin") == "https://a.test"
        assert "POST" in r.header("access-control-allow-methods")
        assert "authorization" in r.header("access-control-allow-headers").lower()
        assert "x-request-id" in r.header("access-control-allow-headers").lower()
        assert r.header("access-control-max-age")


# -- bootstrap ------------------------------------------------------------------------

def test_bootstrap(env):
    r = env.runtime("GET", "/v1/bootstrap", params={"key": PK})
    assert r.status == 200
    assert r.json() == {"list": {"id": "lst_1"}, "activeVersionHash": env.hash,
                        "queryPolicy": {"minQueryChars": 2, "debounceMs": 120,
                                         "typoTolerance": {"enabled": True, "minCharsOneTypo": 4,
                                                           "minCharsTwoTypos": 8}},
                        "localePolicy": {"defaultLocale": "en", "supportedLocales": ["en", "fr"]}}
    assert r.header("etag")
    assert env.runtime("GET", "/v1/bootstrap", params={"key": PK},
                       headers={"If-None-Match": r.header("etag")}).status == 304
    assert env.runtime("GET", "/v1/bootstrap", params={"key": "nope"}).status == 401


def test_not_published_and_archived(env):
    env.edge.list("lst_1", "wsp_1", None)
    wait_for(lambda: q(env, "an").status == 404)
    r = q(env, "an")
    assert r.json()["code"] == "list_not_published"
    b = env.runtime("GET", "/v1/bootstrap", params={"key": PK})
    assert b.status == 404 and b.json()["code"] == "list_not_published"
    env.edge.list("lst_1", "wsp_1", env.hash, status="archived")
    time.sleep(0.5)
    assert q(env, "an").json()["code"] == "list_not_published"
    env.edge.list("lst_1", "wsp_1", env.hash)
    wait_for(lambda: q(env, "an").status == 200)


def test_private_list_needs_token(env):
    env.edge.list("lst_1", "wsp_1", env.hash, visibility="private")
    wait_for(lambda: q(env, "an").status == 401)
    for path in ("/v1/query", "/v1/bootstrap"):
        r = env.runtime("GET", path, params={"key": PK, "q": "an"},
                        headers={"Authorization": "Bearer x.y.z"})
        assert r.status == 401 and r.json()["code"] == "invalid_token"
        assert r.header("www-authenticate").startswith("Bearer")


def test_artifact_unavailable_then_recovers(env, tmp_path):
    items = ITEMS + [{"id": "itm_9", "value": "ordino", "displayValue": "Ordino"}]
    d = tmp_path / "second"
    d.mkdir()
    art = compile_items(str(d), items)
    data = open(art, "rb").read()
    h = "sha256:" + hashlib.sha256(data).hexdigest()
    env.edge.list("lst_1", "wsp_1", h)  # names an artifact that is not there yet
    wait_for(lambda: q(env, "or").status == 503)
    r = q(env, "or")
    assert r.json()["code"] == "artifact_unavailable" and r.header("retry-after")
    env.edge.put_artifact(art)  # no revision bump: the runtime retries on its own
    wait_for(lambda: q(env, "or").status == 200, timeout=3)
    assert q(env, "or").json()["items"][0]["itemId"] == "itm_9"


# -- key lifecycle ---------------------------------------------------------------------

def test_revocation_and_disabling_within_one_second(env):
    env.edge.key(PK, "app_1", "lst_1", status="revoked")
    wait_for(lambda: q(env, "an").status == 401, timeout=1.0)
    env.edge.key(PK, "app_1", "lst_1")
    wait_for(lambda: q(env, "an").status == 200)
    env.edge.put("apps", "app_1", {"id": "app_1", "workspaceId": "wsp_1", "status": "disabled"})
    wait_for(lambda: q(env, "an").status == 401, timeout=1.0)
    env.edge.put("apps", "app_1", {"id": "app_1", "workspaceId": "wsp_1", "status": "active"})
    wait_for(lambda: q(env, "an").status == 200)
    env.edge.put("workspaces", "wsp_1", {"id": "wsp_1", "status": "disabled"})
    wait_for(lambda: q(env, "an").status == 401, timeout=1.0)
    env.edge.put("workspaces", "wsp_1", {"id": "wsp_1", "status": "active"})
    wait_for(lambda: q(env, "an").status == 200)
    env.edge.delete("lists", "lst_1")
    wait_for(lambda: q(env, "an").status == 401, timeout=1.0)


def test_cross_workspace_needs_shared_list_and_subscription(env):
    env.edge.put("workspaces", "wsp_2", {"id": "wsp_2", "status": "active"})
    env.edge.put("apps", "app_2", {"id": "app_2", "workspaceId": "wsp_2", "status": "active"})
    env.edge.key("pk_other_ws", "app_2", "lst_1", kid="pk_9")
    time.sleep(0.5)
    assert q(env, "an", key="pk_other_ws").status == 401  # public list, no subscription
    env.edge.put("subscriptions", "sub_1", {"id": "sub_1", "workspaceId": "wsp_2",
                                            "listId": "lst_1", "status": "active"})
    time.sleep(0.5)
    assert q(env, "an", key="pk_other_ws").status == 401  # subscribed, but not shared
    env.edge.list("lst_1", "wsp_1", env.hash, visibility="shared", min_chars=2)
    wait_for(lambda: q(env, "an", key="pk_other_ws").status == 200)
    env.edge.put("subscriptions", "sub_1", {"id": "sub_1", "workspaceId": "wsp_2",
                                            "listId": "lst_1", "status": "cancelled"})
    wait_for(lambda: q(env, "an", key="pk_other_ws").status == 401)


# -- quota ----------------------------------------------------------------------------

def test_quota_exceeded_and_survives_restart(env):
    env.edge.put("apps", "app_1", {"id": "app_1", "workspaceId": "wsp_1", "status": "active",
                                   "monthlyQuota": 3})
    time.sleep(0.5)
    assert q(env, "a").json()["code"] == "query_too_short"  # not billed
    assert env.runtime("GET", "/v1/bootstrap", params={"key": PK}).status == 200  # not metered
    for _ in range(3):
        r = q(env, "an")
        assert r.status == 200 and "code" not in r.json()
    r = q(env, "an")
    assert r.status == 200 and r.json()["code"] == "quota_exceeded" and r.json()["items"] == []
    time.sleep(1.5)  # counters are flushed every second
    env.restart()
    assert q(env, "an").json().get("code") == "quota_exceeded"


# -- selection ------------------------------------------------------------------------

def sel_body(**over):
    b = {"key": PK, "selectionId": str(uuid.uuid4()), "queryRequestId": "req_1",
         "listId": "lst_1", "itemId": "itm_1", "position": 1, "query": "an"}
    b.update(over)
    return {k: v for k, v in b.items() if v is not ...}


def post_sel(env, body, headers=None):
    return env.runtime("POST", "/v1/selection", body=body, headers=headers)


def event_lines(env):
    d = os.path.join(env.data_dir, "runtime", "events")
    out = []
    for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        with open(os.path.join(d, name)) as f:
            out += [json.loads(line) for line in f if line.strip()]
    return out


def test_selection_accepts_and_dedupes(env):
    b = sel_body()
    r = post_sel(env, b)
    assert r.status == 200, r
    assert r.body == json.dumps({"selectionId": b["selectionId"]}, separators=(",", ":")).encode()
    assert post_sel(env, b).status == 200  # duplicate accepted
    wait_for(lambda: len(event_lines(env)) >= 1, timeout=3)
    time.sleep(0.3)
    evs = [e for e in event_lines(env) if e["selectionId"] == b["selectionId"]]
    assert len(evs) == 1
    assert evs[0]["itemId"] == "itm_1" and evs[0]["position"] == 1
    assert PK not in json.dumps(evs[0])  # the key itself is never written
    # sendBeacon: text/plain holding the JSON
    b2 = sel_body()
    r = env.runtime("POST", "/v1/selection", raw=json.dumps(b2).encode(),
                    headers={"Content-Type": "text/plain;charset=UTF-8"})
    assert r.status == 200 and r.json() == {"selectionId": b2["selectionId"]}
    # dedupe survives a restart
    env.restart()
    assert post_sel(env, b).status == 200
    time.sleep(1.5)
    assert len([e for e in event_lines(env) if e["selectionId"] == b["selectionId"]]) == 1


@pytest.mark.parametrize("over", [
    {"position": 0}, {"position": -1}, {"position": ...}, {"position": 1.5}, {"position": "1"},
    {"selectionId": "not-a-uuid"}, {"selectionId": ...}, {"itemId": ""}, {"listId": ...},
    {"queryRequestId": 5}, {"listId": "lst_other"},
])
def test_selection_invalid_fields(env, over):
    r = post_sel(env, sel_body(**over))
    assert r.status == 400, (over, r)
    assert r.json()["code"] == "invalid_request"


def test_selection_errors(env):
    assert post_sel(env, sel_body(key="pk_nope")).status == 401
    assert post_sel(env, sel_body(key=...)).status == 401
    r = env.runtime("POST", "/v1/selection", raw=b"{not json", headers={"Content-Type": "application/json"})
    assert r.status == 400 and r.json()["code"] == "invalid_request"
    big = sel_body(query="x" * 5000)
    r = post_sel(env, big)
    assert r.status in (400, 413) and r.json()["code"] == "invalid_request"
    assert env.runtime("GET", "/v1/selection").status == 405


def test_selection_rate_limit(env):
    codes = [post_sel(env, sel_body()).status for _ in range(6)]  # --selection-rate 5
    assert codes[:5] == [200] * 5
    assert codes[5] == 429
    r = post_sel(env, sel_body())
    assert r.json()["code"] == "rate_limited"
    assert 1 <= int(r.header("retry-after")) <= 60


# -- misc -----------------------------------------------------------------------------

def test_healthz_and_unknown_routes(env):
    r = env.runtime("GET", "/healthz")
    assert r.status == 200 and r.json() == {"status": "ok"}
    assert env.runtime("GET", "/v1/nope").status == 404
    assert env.runtime("POST", "/v1/query").status == 405


def test_access_log_never_contains_key(env):
    q(env, "an")
    post_sel(env, sel_body())
    # The access log is buffered per worker and written every 200 ms.
    deadline = time.time() + 5
    while '"path":"/v1/query"' not in env.read_log() and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)  # the selection's line too
    log = env.read_log()
    assert '"path":"/v1/query"' in log
    assert PK not in log
