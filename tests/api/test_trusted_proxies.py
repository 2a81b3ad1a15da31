"""--trusted-proxies: behind a reverse proxy the per-IP limits and the access log see the
client the proxy names in Forwarded / X-Forwarded-For, and only when the proxy (here the
test itself, 127.0.0.1) is trusted; from any other peer those headers change nothing.
"""
import json

from control_helpers import assert_error
from dashboard_helpers import create_member, sign_in


def owner(server):
    t = server.tenant()
    create_member(server, t.workspace_id, "owner@example.com", "owner")


def xff(addr):
    return {"X-Forwarded-For": addr}


def test_sign_in_limit_counts_each_forwarded_client_from_a_trusted_proxy(make_server):
    s = make_server(["--signin-rate-ip", "2", "--signin-rate-email", "0",
                     "--trusted-proxies", "127.0.0.1/32"])
    owner(s)
    for i in range(2):
        assert sign_in(s, f"nobody{i}@example.com", headers=xff("203.0.113.1")).status == 401
    assert_error(sign_in(s, "x@example.com", headers=xff("203.0.113.1")), 429, "rate_limited")
    # Another client behind the same proxy has its own budget, and so has the proxy itself.
    assert sign_in(s, "x@example.com", headers=xff("203.0.113.2")).status == 401
    assert sign_in(s, "x@example.com", headers=xff("203.0.113.2")).status == 401
    assert sign_in(s, "x@example.com").status == 401
    # The client cannot escape its budget by prepending addresses: the right-most
    # untrusted hop is the client.
    r = sign_in(s, "x@example.com", headers=xff("198.51.100.7, 203.0.113.1"))
    assert_error(r, 429, "rate_limited")
    # RFC 7239 Forwarded names the client too.
    r = sign_in(s, "x@example.com", headers={"Forwarded": 'for="203.0.113.1:4711";proto=http'})
    assert_error(r, 429, "rate_limited")
    # The access log records the client, not the proxy.
    log = [json.loads(l) for l in s.read_log().splitlines() if l.startswith("{\"ts\"")]
    ips = {l.get("clientIp") for l in log if l.get("path") == "/dashboard/api/session"}
    assert {"203.0.113.1", "203.0.113.2", "127.0.0.1"} <= ips


def test_forwarded_headers_from_an_untrusted_peer_change_nothing(make_server):
    # Without the flag, and with a set that does not hold 127.0.0.1.
    for extra in ([], ["--trusted-proxies", "10.0.0.0/8,::1/128"]):
        s = make_server(["--signin-rate-ip", "2", "--signin-rate-email", "0"] + extra)
        owner(s)
        assert sign_in(s, "a@example.com", headers=xff("203.0.113.1")).status == 401
        assert sign_in(s, "a@example.com", headers=xff("203.0.113.2")).status == 401
        # A spoofed address does not buy a fresh budget: all three are 127.0.0.1.
        r = sign_in(s, "a@example.com", headers={**xff("203.0.113.3"), "Forwarded": "for=1.2.3.4"})
        assert_error(r, 429, "rate_limited")
        log = [json.loads(l) for l in s.read_log().splitlines() if l.startswith("{\"ts\"")]
        ips = {l.get("clientIp") for l in log if l.get("path") == "/dashboard/api/session"}
        assert ips == {"127.0.0.1"}


def test_control_rate_limit_per_forwarded_client(make_server):
    s = make_server(["--control-rate-ip", "3", "--control-rate-key", "1000",
                     "--trusted-proxies", "127.0.0.0/8"], limits=False)
    t = s.tenant()
    for _ in range(3):
        assert t.api("GET", "/lists", headers=xff("203.0.113.5")).status == 200
    assert_error(t.api("GET", "/lists", headers=xff("203.0.113.5")), 429, "rate_limited")
    assert t.api("GET", "/lists", headers=xff("203.0.113.6")).status == 200


def test_a_bad_trusted_proxies_value_is_refused(make_server, tmp_path):
    import subprocess
    from conftest import BINARY as BIN
    r = subprocess.run([BIN, "serve", "--data-dir", str(tmp_path), "--trusted-proxies",
                        "10.0.0.0/8,proxy.example.com"], capture_output=True, text=True, timeout=10)
    assert r.returncode != 0
    assert "proxy.example.com" in json.loads(r.stderr.strip().splitlines()[-1])["error"]


def runtime_client_ips(server):
    log = [json.loads(l) for l in server.read_log().splitlines() if l.startswith("{\"ts\"")]
    return [l.get("clientIp") for l in log
            if l.get("listener") == "runtime" and l.get("path") == "/v1/bootstrap"]


def wait_for_runtime_lines(server, n):
    import time
    deadline = time.time() + 5  # the runtime's access log is buffered for up to 200 ms
    while len(runtime_client_ips(server)) < n and time.time() < deadline:
        time.sleep(0.05)
    return runtime_client_ips(server)


def test_runtime_access_log_names_the_forwarded_client(make_server):
    s = make_server(["--trusted-proxies", "127.0.0.1/32"])
    for h in (xff("198.51.100.7, 203.0.113.9"), {"Forwarded": 'for="[2001:db8::1]:4711"'},
              {}, {"X-Forwarded-For": "garbage"}):
        s.runtime("GET", "/v1/bootstrap", params={"listId": "lst_x"}, headers=h)
    # The right-most untrusted hop; an IPv6 client; the proxy itself when it names no one
    # (or nothing that is an address). Each worker thread buffers its own lines, so their
    # order in the log is not the requests' order.
    assert sorted(wait_for_runtime_lines(s, 4)) == ["127.0.0.1", "127.0.0.1", "2001:db8::1",
                                                    "203.0.113.9"]


def test_runtime_ignores_forwarded_headers_from_an_untrusted_peer(make_server):
    s = make_server(["--trusted-proxies", "10.0.0.0/8"])
    s.runtime("GET", "/v1/bootstrap", params={"listId": "lst_x"}, headers=xff("203.0.113.9"))
    assert wait_for_runtime_lines(s, 1) == ["127.0.0.1"]
