"""The HTTP rules both listeners share (src/http/common): x-request-id, listen addresses,
percent-decoding of paths and query strings.

The control listener (libmicrohttpd) and the runtime listener (its own event loop) once
applied different limits to the same header and different grammars to their --*-listen
flags; these tests hold both to one rule.
"""
import os
import subprocess
import tempfile
import time

import pytest

import conftest
from conftest import wait_until, BINARY, free_port, request


@pytest.fixture(autouse=True)
def _not_recorded(monkeypatch):
    """These tests send each request to both listeners, runtime paths to the control
    listener and the other way round, to check the listeners agree. The OpenAPI check
    (tests/node/openapi.test.mjs) matches recorded answers by path alone, so it would read
    the control listener's answer to /v1/query as the runtime's: keep them out of it."""
    monkeypatch.setattr(conftest, "RECORD", None)


@pytest.mark.parametrize("path", ["/healthz", "/v1/query?q=a", "/nope"])
def test_request_id_of_128_chars_echoed_on_both_listeners(server, path):
    rid = "r" * 128
    for listener, call in (("control", server.control), ("runtime", server.runtime)):
        r = call("GET", path, headers={"x-request-id": rid})
        assert r.header("x-request-id") == rid, (listener, path, r)


@pytest.mark.parametrize("bad", ["r" * 129, "r" * 5000, 'a"b', "a b"])
def test_request_id_over_the_rule_replaced_on_both_listeners(server, bad):
    for listener, call in (("control", server.control), ("runtime", server.runtime)):
        r = call("GET", "/healthz", headers={"x-request-id": bad})
        assert r.status == 200, (listener, r)
        rid = r.header("x-request-id")
        assert rid and rid != bad and rid.startswith("req_"), (listener, rid)


def _start(flags, timeout=5):
    data = tempfile.mkdtemp(prefix="suggestd-listen-")
    base = {"--control-listen": f"127.0.0.1:{free_port()}",
            "--runtime-listen": f"127.0.0.1:{free_port()}"}
    base.update(flags)
    args = [BINARY, "serve", "--data-dir", data]
    for k, v in base.items():
        args += [k, v]
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stderr
    except subprocess.TimeoutExpired as e:  # it started: the address was accepted
        return None, (e.stderr or b"").decode() if isinstance(e.stderr, bytes) else e.stderr


@pytest.mark.parametrize("flag", ["--control-listen", "--runtime-listen", "--metrics-listen"])
@pytest.mark.parametrize("addr,why", [
    ("8080", "missing port"),
    ("localhost", "missing port"),
    ("::1:8080", "an IPv6 address needs brackets"),
    ("example.com:8080", "host must be a numeric address or localhost"),
    ("127.0.0.1:65536", "port must be 0-65535"),
])
def test_bad_listen_address_same_error_on_every_flag(flag, addr, why):
    rc, err = _start({flag: addr})
    assert rc not in (0, None), err
    assert f"bad listen address '{addr}': {why} (want host:port, [v6]:port or :port)" in err, err


@pytest.mark.parametrize("flag", ["--control-listen", "--runtime-listen", "--metrics-listen"])
def test_colon_port_listens_on_every_interface_for_every_flag(flag):
    port = free_port()
    rc, err = _start({flag: f":{port}"}, timeout=3)
    assert rc is None, err  # still serving when the timeout hit
    assert f"0.0.0.0:{port}" in (err or "") or flag == "--control-listen", err


# -- /healthz and /readyz: one rule (src/http/common/health.c) ------------------------------
@pytest.mark.parametrize("path", ["/healthz", "/readyz"])
def test_probes_same_methods_and_headers_on_both_listeners(server, path):
    for listener, call in (("control", server.control), ("runtime", server.runtime)):
        r = call("GET", path)
        assert r.status == 200, (listener, r)
        assert r.header("cache-control") == "no-store", (listener, path, r.headers)
        assert r.json()["status"] in ("ok", "ready"), (listener, r)
        assert call("HEAD", path).status == 200, listener
        for method in ("POST", "PUT", "DELETE"):
            r = call(method, path)
            assert r.status == 405, (listener, path, method, r)
            assert r.header("allow") == "GET, HEAD", (listener, path, method, r.headers)
            assert r.json()["code"] == "method_not_allowed", (listener, r)


# -- percent-decoding (src/http/common/percent.c, docs/DECISIONS.md "Percent-decoding") ----

BAD_ESCAPES = ["%", "%4", "%zz", "%00", "%C3%28", "%ED%A0%80", "%FF"]


@pytest.mark.parametrize("bad", BAD_ESCAPES)
@pytest.mark.parametrize("where", ["/healthz{}", "/healthz?x={}", "/v1/query?q={}",
                                   "/v1/lists/{}", "/nope?{}=1"])
def test_malformed_escape_same_answer_on_both_listeners(server, where, bad):
    """Before one decoder, /v1/query?q=%zz was 401 invalid_key on the runtime and 404 on
    the control listener, and /healthz%00 was 404 on both; now it is one typed 400."""
    path = where.format(bad)
    answers = {}
    for listener, call in (("control", server.control), ("runtime", server.runtime)):
        r = call("GET", path, headers={"x-request-id": "pct-1"})
        assert r.status == 400, (listener, path, r)
        b = r.json()
        assert b["code"] == "invalid_request", (listener, path, b)
        assert r.header("x-request-id") == "pct-1", (listener, r)
        answers[listener] = (r.status, b["code"], b["message"])
    assert answers["control"] == answers["runtime"], answers
    assert "percent-encoded UTF-8" in answers["control"][2]


def test_malformed_escape_keeps_the_runtime_connection(server):
    """A framed request with a bad escape is an ordinary 400: the next request on the
    same keep-alive connection is answered."""
    import http.client
    c = http.client.HTTPConnection("127.0.0.1", server.runtime_port, timeout=10)
    c.request("GET", "/healthz?x=%zz")
    r = c.getresponse()
    r.read()
    assert r.status == 400
    c.request("GET", "/healthz")
    r = c.getresponse()
    assert r.status == 200 and r.read() == b'{"status":"ok"}'
    c.close()


@pytest.mark.parametrize("path", ["/healthz?x=a+b", "/healthz?x=%2B%20%C3%A9", "/healthz?x=100%25",
                                  "/healthz?%E2%82%AC=1"])
def test_well_formed_escapes_unchanged(server, path):
    for listener, call in (("control", server.control), ("runtime", server.runtime)):
        r = call("GET", path)
        assert r.status == 200 and r.body == b'{"status":"ok"}', (listener, path, r)


# -- encoded slashes (issue 22 item 7) ------------------------------------------------------

def _published(server):
    """A tenant with a public list of two items, published, and a publishable key."""
    t = server.tenant()
    lst = t.create_list("Cities", visibility="public")
    t.add_items(lst["id"], [{"value": "Paris"}, {"value": "Parma"}])
    assert t.publish(lst["id"])["state"] == "active"
    pk = t.publishable_key(lst["id"])["publishableKey"]
    # The runtime learns the new key at its next edge poll (200 ms), later on a busy machine.
    assert wait_until(lambda: server.runtime("GET", "/v1/bootstrap", params={"key": pk})
                      .status == 200, timeout=10)
    return t, lst, pk


def test_encoded_slash_in_a_path_is_400_on_both_listeners(server):
    """A path is split on its literal '/' before decoding: /v1%2Fbootstrap and
    /api/v1/lists%2F<id> once routed as /v1/bootstrap and /api/v1/lists/<id>, so a proxy
    rule on the prefix /v1/ or /api/v1/lists/ could be walked around. Now an encoded '/'
    (either case) in the path is one typed 400 before routing or authentication, with
    the same message on both listeners, and the decoded spelling still works."""
    from dashboard_helpers import create_member, PASSWORD
    t, lst, pk = _published(server)
    create_member(server, t.workspace_id, "slash@example.com", "owner")
    auth = {"Authorization": f"Bearer {t.secret_key}"}
    session = {"email": "slash@example.com", "password": PASSWORD}
    cases = [
        ("runtime", "GET", f"/v1%2Fbootstrap?key={pk}", None, None),
        ("runtime", "GET", f"/v1%2fquery?key={pk}&q=par", None, None),
        ("runtime", "GET", "/v1/query%2F?q=par", None, None),
        ("control", "GET", f"/api/v1/lists%2F{lst['id']}", None, auth),
        ("control", "GET", "/api%2Fv1%2Flists", None, auth),
        ("control", "GET", f"/api/v1/lists/{lst['id']}%2Fitems", None, auth),
        ("control", "POST", "/dashboard%2Fapi%2Fsession", session, None),
        ("control", "GET", "/dashboard%2fapi%2fsession", None, None),
    ]
    messages = set()
    for listener, method, path, body, headers in cases:
        port = server.runtime_port if listener == "runtime" else server.control_port
        hdrs = dict(headers or {}, **{"x-request-id": "slash-1"})
        r = request(port, method, path, body=body, headers=hdrs)
        assert r.status == 400, (listener, path, r)
        b = r.json()
        assert {"code", "message", "requestId"} <= set(b), b  # each listener's error shape
        assert b["code"] == "invalid_request", (path, b)
        assert r.header("x-request-id") == "slash-1", (path, r)
        assert "%2F" in b["message"], b
        assert "sg_session" not in r.cookies, (path, r.cookies)
        messages.add(b["message"])
    assert len(messages) == 1, messages
    # The decoded spellings are served, and %2F in a query argument is an ordinary '/'.
    r = server.runtime("GET", "/v1/bootstrap", params={"key": pk})
    assert r.status == 200, r
    r = request(server.runtime_port, "GET", f"/v1/query?key={pk}&q=par%2Fx")
    assert r.status == 200 and r.json()["items"] == [], r
    r = request(server.runtime_port, "GET", f"/v1/query?key={pk}&q=par")
    assert r.status == 200 and len(r.json()["items"]) == 2, r
    assert t.api("GET", f"/lists/{lst['id']}").status == 200
    r = t.api("GET", "/lists?cursor=a%2Fb")
    assert r.status == 400 and "cursor" in r.body.decode(), r  # reached the route: a bad cursor


# -- serve's runtime URL for the dashboard ------------------------------------------------

@pytest.mark.parametrize("spelling", ["0.0.0.0:{}", ":{}", "[::]:{}"])
def test_wildcard_runtime_listen_names_localhost(spelling):
    """--runtime-listen :PORT listens on every IPv4 interface like 0.0.0.0:PORT, so the
    dashboard names the runtime as http://localhost:PORT, never http://:PORT."""
    data = tempfile.mkdtemp(prefix="suggestd-rturl-")
    cport, rport = free_port(), free_port()
    p = subprocess.Popen([BINARY, "serve", "--data-dir", data,
                          "--control-listen", f"127.0.0.1:{cport}",
                          "--runtime-listen", spelling.format(rport)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 10
        while True:
            assert p.poll() is None, p.stderr.read().decode()
            try:
                if request(cport, "GET", "/healthz", timeout=1).status == 200:
                    break
            except OSError:
                pass
            assert time.time() < deadline, "serve did not start"
            time.sleep(0.05)
        csp = request(cport, "GET", "/dashboard/").header("content-security-policy")
        assert f"connect-src 'self' http://localhost:{rport};" in csp, csp
    finally:
        p.terminate()
        p.wait(timeout=10)
