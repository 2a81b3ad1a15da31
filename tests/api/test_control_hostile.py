"""Control plane under hostile input: every request gets a 4xx (or is dropped) and the
server keeps serving afterwards."""
import json
import socket

import pytest

from control_helpers import assert_error


def still_serving(cp, t):
    assert cp.control("GET", "/healthz").status == 200
    assert t.api("POST", "/lists", {"name": "alive"}).status == 201


def raw_exchange(port, data, timeout=10):
    """Sends raw bytes, returns the status code of the first response (or None if the
    server closed the connection without answering)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        try:
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        buf = b""
        try:
            while b"\r\n" not in buf:
                chunk = s.recv(4096)
                if not chunk:
                    break
                buf += chunk
        except OSError:
            pass
    if not buf.startswith(b"HTTP/1."):
        return None
    return int(buf.split(b" ", 2)[1])


def test_100kb_header(cp, t):
    r = t.api("GET", "/lists", headers={"X-Big": "a" * 100_000})
    assert 400 <= r.status < 500, r
    still_serving(cp, t)


def test_100kb_authorization_header(cp, t):
    r = cp.control("GET", "/api/v1/lists", headers={"Authorization": "Bearer sk_" + "a" * 100_000})
    assert 400 <= r.status < 500, r
    still_serving(cp, t)


def test_many_headers(cp, t):
    hdrs = {f"X-H{i}": "v" * 50 for i in range(2000)}
    r = t.api("GET", "/lists", headers=hdrs)
    assert 400 <= r.status < 500, r
    still_serving(cp, t)


def test_100kb_url(cp, t):
    r = t.api("GET", "/lists?cursor=" + "A" * 100_000)
    assert 400 <= r.status < 500, r
    still_serving(cp, t)


def test_long_cursor_within_header_budget(cp, t):
    r = t.api("GET", "/lists?cursor=" + "A" * 5000 + "." + "B" * 22)
    assert_error(r, 400, "invalid_request", field="cursor")


def test_deeply_nested_json(cp, t):
    for depth in (100, 10_000, 100_000):
        raw = b'{"name": ' + b"[" * depth + b"]" * depth + b"}"
        r = t.api("POST", "/lists", raw=raw)
        assert_error(r, 400, "invalid_request")
        raw = b'{"name": "x", "queryPolicy": ' + b'{"a":' * depth + b"1" + b"}" * depth + b"}"
        r = t.api("POST", "/lists", raw=raw)
        assert_error(r, 400, "invalid_request")
    # Past the body cap the answer is 413 before any parsing.
    raw = b'{"name": ' + b"[" * 600_000 + b"]" * 600_000 + b"}"
    assert_error(t.api("POST", "/lists", raw=raw), 413, "invalid_request")
    lst = t.create_list()
    raw = b'{"queryPolicy": ' + b'{"minQueryChars":' * 50_000 + b"1" + b"}" * 50_000 + b"}"
    assert_error(t.api("PATCH", f"/lists/{lst['id']}", raw=raw), 400, "invalid_request")
    still_serving(cp, t)


@pytest.mark.parametrize("num", [b"1e999", b"-1e999", b"1" * 400, b"-" + b"9" * 400,
                                 b"9223372036854775808", b"-9223372036854775809",
                                 b"1e-999", b"0.0000001", b"NaN", b"Infinity", b"0x10"],
                         ids=lambda n: n[:24].decode())
def test_huge_or_odd_numbers(cp, t, num):
    lst = t.create_list()
    before = t.api("GET", f"/lists/{lst['id']}").json()
    for body in (b'{"displayOrder": %s}' % num,
                 b'{"queryPolicy": {"minQueryChars": %s}}' % num,
                 b'{"queryPolicy": {"debounceMs": %s}}' % num):
        r = t.api("PATCH", f"/lists/{lst['id']}", raw=body)
        assert_error(r, 400, "invalid_request")
    r = t.api("POST", "/lists", raw=b'{"name": %s}' % num)
    assert_error(r, 400, "invalid_request")
    assert t.api("GET", f"/lists/{lst['id']}").json() == before


def test_nul_bytes_everywhere(cp, t):
    lst = t.create_list()
    # In a JSON body, raw and escaped.
    for raw in (b"\x00", b'{"name":"x"}\x00', b'\x00{"name":"x"}', b'{"name":"x\x00"}',
                b'{"na\x00me":"x"}', b'{"name":"x\\u0000"}', b'{"na\\u0000me":"x"}'):
        r = t.api("POST", "/lists", raw=raw)
        assert_error(r, 400, "invalid_request")
        r = t.api("PATCH", f"/lists/{lst['id']}", raw=raw)
        assert_error(r, 400, "invalid_request")
    # In the path and query string (percent-encoded): the shared decoder refuses %00
    # before routing (docs/DECISIONS.md "Percent-decoding").
    for path in (f"/lists/{lst['id']}%00", "/lists?limit=1%00", "/lists?cursor=%00abc"):
        r = t.api("GET", path)
        assert_error(r, 400, "invalid_request")
        assert "percent-encoded UTF-8" in r.json()["message"], r
    # In header values, sent raw.
    port = cp.control_port
    for hdr in (b"Authorization: Bearer " + t.secret_key.encode() + b"\x00junk",
                b"x-request-id: a\x00b", b"Idempotency-Key: k\x00k", b"If-Match: \x00"):
        req = (b"POST /api/v1/lists HTTP/1.1\r\nHost: x\r\nContent-Length: 12\r\n"
               b"Authorization: Bearer " + t.secret_key.encode() + b"\r\n" + hdr +
               b"\r\n\r\n" + b'{"name":"n"}')
        status = raw_exchange(port, req)
        assert status is None or status < 500, (hdr, status)
    still_serving(cp, t)


MALFORMED_HTTP = [
    b"GARBAGE\r\n\r\n",
    b"GET\r\n\r\n",
    b"GET /api/v1/lists HTTP/9.9\r\n\r\n",
    b"GET /api/v1/lists HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
    b"GET /api/v1/lists HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n",
    b"POST /api/v1/lists HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    b"POST /api/v1/lists HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"name\":",
    b"GET /api/v1/lists%zz HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /api/v1/lists?%ff%fe=%c0%af HTTP/1.1\r\nHost: x\r\n\r\n",
    b"\xff\xfe\xfd\r\n\r\n",
    b"GET /" + b"a" * 200_000 + b" HTTP/1.1\r\n\r\n",
]


# Short ids: pytest exports the test id in the environment of child processes.
@pytest.mark.parametrize("raw", MALFORMED_HTTP, ids=[f"req{i}" for i in range(len(MALFORMED_HTTP))])
def test_malformed_http(cp, t, raw):
    status = raw_exchange(cp.control_port, raw)
    if b"HTTP/9.9" in raw:
        assert status in (400, 505), status
    else:
        assert status is None or 400 <= status < 500, status
    still_serving(cp, t)


def test_chunked_body_over_cap(cp, t):
    chunk = b"a" * 65536
    body = b'{"name":"x","description":"'
    req = [b"POST /api/v1/lists HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
           b"Authorization: Bearer " + t.secret_key.encode() + b"\r\n\r\n",
           b"%x\r\n%s\r\n" % (len(body), body)]
    for _ in range(20):  # 1.25 MiB in total
        req.append(b"%x\r\n%s\r\n" % (len(chunk), chunk))
    req.append(b'2\r\n"}\r\n0\r\n\r\n')
    status = raw_exchange(cp.control_port, b"".join(req), timeout=30)
    assert status == 413, status
    still_serving(cp, t)


def test_unicode_names_round_trip(cp, t):
    for name in ("Zürich ☃", "日本語のリスト", "emoji 😀👍🏽", "rtl עברית", "\u200b", "a\u0301"):
        r = t.api("POST", "/lists", {"name": name})
        assert r.status == 201, (name, r)
        assert r.json()["name"] == name
        assert t.api("GET", f"/lists/{r.json()['id']}").json()["name"] == name


def test_json_injection_in_strings_is_escaped(cp, t):
    evil = '"},"visibility":"public","x":{"'
    r = t.api("POST", "/lists", {"name": evil, "description": "</script>\\\n\t"})
    assert r.status == 201
    b = r.json()
    assert b["name"] == evil and b["visibility"] == "private"
    assert json.loads(t.api("GET", f"/lists/{b['id']}").body)["name"] == evil


def test_log_lines_stay_valid_json(cp, t):
    """Every server log line is one JSON object in valid UTF-8, whatever the path held:
    raw invalid bytes, a multi-byte character cut by the length cap, quotes, newlines."""
    cp.control("GET", "/%ff%fe%c0%af")
    cp.control("GET", "/" + "%C3%A9" * 300)       # long: cut somewhere in the middle
    cp.control("GET", "/x" + "%E2%82%AC" * 200)   # 3-byte characters, another alignment
    cp.control("GET", "/a%22b%5C%0A%0D%09c")
    raw_exchange(cp.control_port, b"G\xffT / HTTP/1.1\r\nHost: x\r\n\r\n")
    t.api("GET", "/lists/%F0%9F%98%80%ED%A0%80")
    still_serving(cp, t)
    cp.stop()
    lines = [ln for ln in open(cp.log_path, "rb").read().split(b"\n") if ln]
    assert len(lines) > 5
    for ln in lines:
        obj = json.loads(ln.decode("utf-8"))  # strict: raises on invalid UTF-8
        assert isinstance(obj, dict)


def test_keep_alive_connection_reuse(cp, t):
    """Requests on one kept-alive connection never see each other's bodies, even after
    a validation error and an oversized body."""
    import http.client
    c = http.client.HTTPConnection("127.0.0.1", cp.control_port, timeout=30)
    h = {"Authorization": "Bearer " + t.secret_key, "Content-Type": "application/json"}
    seen = []
    for method, body in (("POST", b'{"name":"one"}'), ("POST", b'{"bad":1}'),
                         ("POST", b'{"name":"x","description":"' + b"a" * (1 << 20) + b'"}'),
                         ("POST", b'{"name":"two"}'), ("GET", None)):
        try:
            c.request(method, "/api/v1/lists", body=body, headers=h)
            r = c.getresponse()
            seen.append((r.status, json.loads(r.read())))
        except (http.client.HTTPException, OSError):
            c.close()  # the server may close after a 413; a new connection is fine
            c = http.client.HTTPConnection("127.0.0.1", cp.control_port, timeout=30)
            seen.append((None, None))
    c.close()
    assert seen[0][0] == 201 and seen[0][1]["name"] == "one"
    assert seen[1][0] == 400
    assert seen[2][0] in (413, None)
    assert seen[3][0] == 201 and seen[3][1]["name"] == "two"
    assert seen[4][0] == 200
    assert sorted(x["name"] for x in seen[4][1]["data"]) == ["one", "two"]
