"""Control plane under connection floods: slowloris heads, per-IP caps, oversized heads.

The attacker connects from 127.0.0.1; the well-behaved client binds 127.0.0.2 (the
whole 127/8 is loopback on Linux), so the per-IP cap tells the two apart."""
import json
import select
import socket
import time

import pytest

from conftest import wait_until, raise_nofile, request


def connect(port, source="127.0.0.1"):
    s = socket.socket()
    s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    return s


def closed_by_server(s):
    """True once the server closed s (EOF or reset); never blocks."""
    p = select.poll()
    p.register(s, select.POLLIN)
    if not p.poll(0):
        return False
    try:
        return s.recv(4096) == b""
    except OSError:
        return True


def healthz_from(port, source, timeout=5):
    s = connect(port, source)
    s.settimeout(timeout)
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    buf = b""
    while b"\r\n" not in buf:
        chunk = s.recv(4096)
        if not chunk:
            break
        buf += chunk
    s.close()
    return buf


def test_trickled_heads_are_cut_at_the_deadline_and_others_are_served(make_server):
    """1,100 connections trickle header bytes (one byte a second each): the per-IP cap
    keeps most of them out, a client from another address is served at once, and the
    trickling connections that were let in are closed 10 s (the default head deadline)
    after their accept although bytes keep arriving."""
    if raise_nofile(1300) < 1300:
        pytest.skip("needs 1,300 file descriptors")
    s = make_server(mode="control")
    port = s.control_port
    conns = []
    t0 = time.time()
    try:
        for _ in range(1100):
            try:
                c = connect(port)
                c.setblocking(False)
                conns.append(c)
            except OSError:
                pass  # refused outright: fine
        for c in conns:
            try:
                c.send(b"GET /healthz HTTP/1.1\r\nX-Slow: ")
            except OSError:
                pass
        t_req = time.time()
        r = healthz_from(port, "127.0.0.2")
        assert r.startswith(b"HTTP/1.1 200"), r
        assert time.time() - t_req < 1.0
        time.sleep(0.5)
        open_now = [c for c in conns if not closed_by_server(c)]
        assert 0 < len(open_now) <= 64, len(open_now)  # the default per-IP cap
        # Trickle one byte a second on the survivors until the server cuts them.
        while open_now and time.time() - t0 < 20:
            for c in open_now:
                try:
                    c.send(b"a")
                except OSError:
                    pass
            time.sleep(1.0)
            open_now = [c for c in open_now if not closed_by_server(c)]
        elapsed = time.time() - t0
        assert not open_now, f"{len(open_now)} trickling connections still open"
        assert 9.0 <= elapsed <= 13.0, elapsed
        # The attacker's address is welcome again once its connections are gone.
        assert healthz_from(port, "127.0.0.1").startswith(b"HTTP/1.1 200")
    finally:
        for c in conns:
            c.close()


def test_head_deadline_flag(make_server):
    s = make_server(["--control-head-timeout", "2"], mode="control")
    c = connect(s.control_port)
    c.setblocking(False)
    t0 = time.time()
    c.send(b"GET /healthz HTTP/1.1\r\n")
    while not closed_by_server(c) and time.time() - t0 < 10:
        c.send(b"X")
        time.sleep(0.2)
    assert 1.5 <= time.time() - t0 <= 3.5
    c.close()
    # A complete request on a fresh connection is unaffected.
    assert request(s.control_port, "GET", "/healthz").status == 200


def test_per_ip_connection_cap(make_server):
    s = make_server(["--control-per-ip-connections", "8"], mode="control")
    port = s.control_port
    idle = [connect(port) for _ in range(8)]
    try:
        time.sleep(0.3)
        # The start-up /healthz connection counts until libmicrohttpd reports it closed,
        # which can come a moment later: an idle connection refused meanwhile is replaced,
        # so that exactly 8 are held open before the ninth is tried.
        for _ in range(50):
            gone = [c for c in idle if closed_by_server(c)]
            if not gone:
                break
            for c in gone:
                idle.remove(c)
                c.close()
                idle.append(connect(port))
            time.sleep(0.1)
        assert not any(closed_by_server(c) for c in idle)
        extra = connect(port)
        extra.settimeout(10)  # generous for a loaded machine; a refusal is at once
        try:
            assert extra.recv(100) == b""  # closed right after its accept
        except ConnectionResetError:
            pass
        extra.close()
        assert healthz_from(port, "127.0.0.2").startswith(b"HTTP/1.1 200")
        idle.pop().close()

        # The gate sees the close on its next poll: a slot is free again soon after.
        def served_again():
            try:
                return healthz_from(port, "127.0.0.1", timeout=2).startswith(b"HTTP/1.1 200")
            except OSError:
                return False

        assert wait_until(served_again, timeout=10)
    finally:
        for c in idle:
            c.close()


def read_response(sock):
    sock.settimeout(10)
    buf = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        buf += chunk
    head, _, body = buf.partition(b"\r\n\r\n")
    return head.decode("latin-1"), body


@pytest.mark.parametrize("size", [17_000, 100_000, 1_000_000])
def test_oversized_head_gets_the_json_431(make_server, size):
    s = make_server(mode="control")
    c = connect(s.control_port)
    try:
        c.sendall(b"GET /api/v1/lists HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * size + b"\r\n\r\n")
    except OSError:
        pass  # the server answered and shut its side before the whole head went out
    head, body = read_response(c)
    c.close()
    assert head.startswith("HTTP/1.1 431 "), head
    assert "content-type: application/json" in head.lower()
    b = json.loads(body)
    assert b["code"] == "invalid_request"
    assert b["details"]["reason"] == "headers_too_large"
    assert b["requestId"] and b["docsUrl"] == "/docs/errors#invalid_request"
    assert "16 KiB" in b["remediation"]
    assert request(s.control_port, "GET", "/healthz").status == 200


def test_oversized_request_line_gets_the_json_431(make_server):
    s = make_server(mode="control")
    c = connect(s.control_port)
    c.sendall(b"GET /" + b"a" * 20_000 + b" HTTP/1.1\r\n\r\n")
    head, body = read_response(c)
    c.close()
    assert head.startswith("HTTP/1.1 431 "), head
    assert json.loads(body)["details"]["reason"] == "headers_too_large"


def test_head_just_under_the_limit_is_served(make_server):
    s = make_server(mode="control")
    r = request(s.control_port, "GET", "/healthz", headers={"X-Big": "a" * 15_000})
    assert r.status == 200, r
    assert r.header("connection") == "close"


@pytest.mark.parametrize("kind", ["headers", "long headers", "cookies"])
def test_header_field_count(make_server, kind):
    """At most 256 header fields, each cookie counting as one: libmicrohttpd keeps every
    header and cookie in a fixed per-connection pool, and a flood of tiny ones would
    overflow it and get its own HTML 431 instead of our JSON one."""
    s = make_server(mode="control")
    for n, want in ((255, b"HTTP/1.1 200"), (300, b"HTTP/1.1 431"), (3000, b"HTTP/1.1 431")):
        if kind == "cookies":
            fields = b"Cookie: " + b"; ".join(b"c%d=1" % i for i in range(n)) + b"\r\n"
        else:
            fill = b"v" * (50 if kind == "long headers" else 0)
            fields = b"".join(b"a%d: %s\r\n" % (i, fill) for i in range(n))
        head = b"GET /healthz HTTP/1.1\r\n" + fields + b"\r\n"
        if len(head) > 16 * 1024:
            want = b"HTTP/1.1 431"
        c = connect(s.control_port)
        try:
            c.sendall(head)
        except OSError:
            pass
        h, body = read_response(c)
        c.close()
        assert h.encode().startswith(want), (n, len(head), h)
        if want.endswith(b"431"):
            assert json.loads(body)["details"]["reason"] == "headers_too_large"
