"""The HTTP rules both listeners share (src/http/common): x-request-id, listen addresses.

The control listener (libmicrohttpd) and the runtime listener (its own event loop) once
applied different limits to the same header and different grammars to their --*-listen
flags; these tests hold both to one rule.
"""
import os
import subprocess
import tempfile

import pytest

from conftest import BINARY, free_port


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
