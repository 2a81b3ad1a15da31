"""Operability (docs/DESIGN.md §8): --metrics-listen (Prometheus text), /readyz on both listeners,
one access-log shape on both listeners, and `suggestd --version`.

Everything runs against the real binary: the not-ready cases break the edge store for
real (a directory moved away, a revision file that does not parse) and repair it.
"""
import json
import math
import os
import re
import subprocess
import socket
import time
import uuid

from conftest import BINARY, free_port, request, wait_until

ITEMS = [{"value": "Paris", "rank": 3}, {"value": "Parma", "rank": 2}, {"value": "Porto", "rank": 1}]

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="([^"\\\n]*)"(,|$)')


def parse_exposition(text):
    """Parses the Prometheus text format strictly: every line is # HELP, # TYPE or a sample
    of a declared family; a family is declared once. Returns {(name, labels): value} with
    labels a sorted tuple of (k, v), and {family: type}."""
    assert text.endswith("\n")
    samples, types = {}, {}
    for line in text.splitlines():
        if line.startswith("# HELP "):
            continue
        if line.startswith("# TYPE "):
            _, _, fam, typ = line.split(" ", 3)
            assert fam not in types, f"family {fam} declared twice"
            assert typ in ("counter", "gauge", "histogram", "summary", "untyped")
            types[fam] = typ
            continue
        m = SAMPLE.match(line)
        assert m, f"bad sample line: {line!r}"
        name, _, labels, value = m.groups()
        pairs = []
        if labels:
            pos = 0
            while pos < len(labels):
                lm = LABEL.match(labels, pos)
                assert lm, f"bad labels: {line!r}"
                pairs.append((lm.group(1), lm.group(2)))
                pos = lm.end()
        fam = re.sub(r'_(bucket|sum|count)$', '', name) if name not in types else name
        assert fam in types, f"sample {name} of an undeclared family"
        v = float(value)
        assert not math.isnan(v)
        key = (name, tuple(sorted(pairs)))
        assert key not in samples, f"duplicate series {line!r}"
        samples[key] = v
    return samples, types


def check_histograms(samples, types):
    """Every histogram series: buckets cumulative in le order, +Inf == _count."""
    for fam, typ in types.items():
        if typ != "histogram":
            continue
        series = {}
        for (name, labels), v in samples.items():
            if name == fam + "_bucket":
                d = dict(labels)
                le = d.pop("le")
                series.setdefault(tuple(sorted(d.items())), []).append(
                    (math.inf if le == "+Inf" else float(le), v))
        for labels, buckets in series.items():
            buckets.sort()
            counts = [v for _, v in buckets]
            assert counts == sorted(counts), f"{fam}{labels} buckets not cumulative"
            assert buckets[-1][0] == math.inf
            assert samples[(fam + "_count", labels)] == buckets[-1][1]
            assert (fam + "_sum", labels) in samples


class Metrics:
    def __init__(self, port):
        self.port = port

    def scrape(self):
        r = request(self.port, "GET", "/metrics")
        assert r.status == 200, r
        ct = r.header("content-type")
        assert ct.startswith("text/plain") and "version=0.0.4" in ct, ct
        samples, types = parse_exposition(r.body.decode())
        check_histograms(samples, types)
        return samples, types

    def value(self, name, **labels):
        samples, _ = self.scrape()
        return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def start_with_metrics(make_server, mode="serve", extra=None, env=None):
    port = free_port()
    flags = list(extra or [])
    if env is None:
        flags += ["--metrics-listen", f"127.0.0.1:{port}"]
    else:
        env = dict(env, SUGGESTD_METRICS_LISTEN=f"127.0.0.1:{port}")
    s = make_server(flags, mode=mode, env=env, limits=mode != "runtime")
    m = Metrics(port)
    assert wait_until(lambda: _up(port), timeout=5), "metrics listener did not start"
    return s, m


def _up(port):
    try:
        return request(port, "GET", "/metrics", timeout=1).status == 200
    except OSError:
        return False


def published(s):
    t = s.tenant()
    lst = t.create_list("Cities", visibility="public")
    t.add_items(lst["id"], ITEMS)
    v = t.publish(lst["id"])
    assert v["state"] == "active", v
    pk = t.publishable_key(lst["id"])["publishableKey"]
    assert wait_until(lambda: s.runtime("GET", "/v1/query", params={"key": pk, "q": "pa"})
                      .status == 200, timeout=5)
    return t, lst, pk


# ---------------------------------------------------------------- version -------------

def test_version_flag_and_command():
    for argv in (["--version"], ["version"]):
        r = subprocess.run([BINARY, *argv], capture_output=True, text=True, timeout=10)
        assert r.returncode == 0, r.stderr
        assert re.fullmatch(r"suggestd \d+\.\d+\.\d+ \(git [0-9A-Za-z.\-]+\)\n", r.stdout), r.stdout


# ---------------------------------------------------------------- metrics -------------

def test_metrics_count_requests_by_route_template_and_status(make_server):
    s, m = start_with_metrics(make_server)
    t, lst, pk = published(s)
    q200 = ("suggestd_http_requests_total",
            {"listener": "runtime", "route": "/v1/query", "status": "200"})
    before = m.value(q200[0], **q200[1])
    served0 = m.value("suggestd_queries_served_total")
    for q in ("p", "pa", "par", "po", "x"):
        assert s.runtime("GET", "/v1/query", params={"key": pk, "q": q}).status == 200
    assert s.runtime("GET", "/v1/query", params={"key": "pk_nope", "q": "pa"}).status == 401
    assert s.runtime("GET", "/nowhere/at/all").status == 404
    assert t.api("GET", f"/lists/{lst['id']}/items").status == 200
    assert t.api("GET", "/lists/lst_doesnotexist").status in (404, 400)

    samples, types = m.scrape()
    assert types["suggestd_http_requests_total"] == "counter"
    assert types["suggestd_http_request_duration_seconds"] == "histogram"
    assert samples[(q200[0], tuple(sorted(q200[1].items())))] == before + 5
    assert m.value("suggestd_queries_served_total") == served0 + 5
    get = lambda **lb: samples.get(("suggestd_http_requests_total", tuple(sorted(lb.items()))), 0)
    assert get(listener="runtime", route="/v1/query", status="401") >= 1
    assert get(listener="runtime", route="other", status="404") >= 1
    assert get(listener="control", route="/api/v1/lists/{listId}/items", status="200") >= 1
    assert get(listener="control", route="/api/v1/lists/{listId}/versions", status="200") + \
        get(listener="control", route="/api/v1/lists/{listId}/versions", status="202") >= 1
    # Routes are templates: no raw id, key or query ever becomes a label.
    for (name, labels), _ in samples.items():
        for k, v in labels:
            assert "lst_" not in v and "pk_" not in v and "itm_" not in v, (name, labels)
            if k == "route":
                assert v == "other" or v.startswith("/"), v
    # The latency histogram of the query route counted those requests too.
    cnt = samples[("suggestd_http_request_duration_seconds_count",
                   (("listener", "runtime"), ("route", "/v1/query")))]
    assert cnt >= before + 6


def test_metrics_report_publish_edge_artifacts_and_selections(make_server):
    s, m = start_with_metrics(make_server)
    t, lst, pk = published(s)
    samples, types = m.scrape()
    val = lambda name, **lb: samples.get((name, tuple(sorted(lb.items()))))
    assert types["suggestd_publish_duration_seconds"] == "histogram"
    assert val("suggestd_publish_duration_seconds_count", result="active") >= 1
    assert types["suggestd_publish_queue_depth"] == "gauge"
    assert val("suggestd_publish_queue_depth") == 0
    assert val("suggestd_edge_revision") >= 1
    assert 0 <= val("suggestd_snapshot_age_seconds") < 5
    assert val("suggestd_snapshot_loaded") == 1
    assert val("suggestd_artifact_bytes") > 0
    assert val("suggestd_artifacts") >= 1
    assert val("process_open_fds") > 0 and val("process_resident_memory_bytes") > 0
    rev0 = val("suggestd_edge_revision")

    # A second publish moves the edge revision the runtime serves.
    t.add_items(lst["id"], [{"value": "Pisa"}])
    assert t.publish(lst["id"])["state"] == "active"
    assert wait_until(lambda: m.value("suggestd_edge_revision") > rev0, timeout=5)
    assert m.value("suggestd_publish_duration_seconds_count", result="active") >= 2

    # Selections: written once each (a duplicate is not an event).
    w0 = m.value("suggestd_selection_events_written_total")
    q = s.runtime("GET", "/v1/query", params={"key": pk, "q": "pa"}).json()
    for _ in range(2):
        body = {"key": pk, "selectionId": str(uuid.uuid4()), "queryRequestId": q["requestId"],
                "listId": lst["id"], "itemId": q["items"][0]["itemId"], "position": 1}
        assert s.runtime("POST", "/v1/selection", body=body).status == 200
    assert s.runtime("POST", "/v1/selection", body=body).status == 200  # duplicate
    assert wait_until(lambda: m.value("suggestd_selection_events_written_total") == w0 + 2,
                      timeout=5)
    assert m.value("suggestd_selection_events_dropped_total") == 0


def test_metrics_count_rate_limited_answers(make_server):
    port = free_port()
    s = make_server(["--control-rate-ip", "2", "--control-rate-key", "0",
                     "--metrics-listen", f"127.0.0.1:{port}"], limits=False)
    m = Metrics(port)
    assert wait_until(lambda: _up(port), timeout=5)
    assert m.value("suggestd_rate_limited_total", listener="control") == 0
    statuses = [s.control("GET", "/api/v1/lists", key="sk_x_y").status for _ in range(5)]
    assert statuses.count(429) >= 2, statuses
    assert m.value("suggestd_rate_limited_total", listener="control") == statuses.count(429)
    assert m.value("suggestd_http_requests_total", listener="control", route="/api/v1/lists",
                   status="429") == statuses.count(429)


def test_metrics_listener_serves_only_metrics(make_server):
    s, m = start_with_metrics(make_server, mode="runtime",
                              extra=[], env={})  # SUGGESTD_METRICS_LISTEN, not the flag
    assert request(m.port, "GET", "/").status == 404
    r = request(m.port, "POST", "/metrics", raw=b"")
    assert r.status == 405 and "GET" in r.header("allow")
    samples, types = m.scrape()
    # A runtime alone: its own families, none of the control plane's.
    assert "suggestd_edge_revision" in types and "suggestd_publish_queue_depth" not in types


def test_metrics_listen_is_off_by_default(make_server):
    s = make_server()
    assert "metrics listening" not in s.read_log()


def test_bad_metrics_address_fails_at_start(tmp_path):
    r = subprocess.run([BINARY, "serve", "--data-dir", str(tmp_path), "--control-listen",
                        f"127.0.0.1:{free_port()}", "--runtime-listen", f"127.0.0.1:{free_port()}",
                        "--metrics-listen", "127.0.0.1:99999"],
                       capture_output=True, text=True, timeout=20)
    assert r.returncode != 0
    assert "error" in json.loads(r.stderr.strip().splitlines()[-1])


# ---------------------------------------------------------------- readiness -----------

def test_readyz_on_both_listeners(make_server):
    s = make_server()
    for port in (s.control_port, s.runtime_port):
        r = request(port, "GET", "/readyz")
        assert r.status == 200, r
        assert r.json()["status"] == "ready"
        assert r.header("cache-control") == "no-store"
    assert s.control("GET", "/healthz").status == 200
    assert s.runtime("GET", "/healthz").status == 200
    assert s.runtime("POST", "/readyz", raw=b"").status == 405


def test_control_not_ready_while_edge_store_unusable(make_server):
    s = make_server()
    edge = os.path.join(s.data_dir, "edge")
    os.rename(edge, edge + ".away")
    try:
        r = s.control("GET", "/readyz")
        assert r.status == 503, r
        assert r.json() == {"status": "not_ready", "checks": {"store": "ok", "edge": "unavailable"}}
        # Liveness is another question: the process is up.
        assert s.control("GET", "/healthz").status == 200
    finally:
        os.rename(edge + ".away", edge)

    def ready():
        r = s.control("GET", "/readyz")
        return r.status == 200 and r.json()["checks"] == {"store": "ok", "edge": "ok"}
    assert wait_until(ready, timeout=5), s.control("GET", "/readyz")


def test_runtime_not_ready_until_edge_store_readable(make_server, tmp_path):
    data = str(tmp_path)
    edge = os.path.join(data, "edge")
    os.makedirs(edge)
    with open(os.path.join(edge, "REVISION"), "w") as f:
        f.write("not a number\n")
    port = free_port()
    s = make_server(["--metrics-listen", f"127.0.0.1:{port}"], mode="runtime", data_dir=data,
                    limits=False)
    m = Metrics(port)
    assert wait_until(lambda: _up(port), timeout=5)
    r = s.runtime("GET", "/readyz")
    assert r.status == 503, r
    body = r.json()
    assert body["status"] == "not_ready" and body["checks"]["snapshot"] == "not_loaded"
    assert r.header("retry-after") == "1"
    # Nothing is known yet, so no key is "invalid": the answer says to come back.
    q = s.runtime("GET", "/v1/query", params={"key": "pk_anything", "q": "pa"})
    assert q.status == 503 and q.json()["code"] == "artifact_unavailable", q
    assert q.header("retry-after")
    assert m.value("suggestd_snapshot_loaded") == 0

    with open(os.path.join(edge, "REVISION.tmp"), "w") as f:
        f.write("0\n")
    os.rename(os.path.join(edge, "REVISION.tmp"), os.path.join(edge, "REVISION"))
    assert wait_until(lambda: s.runtime("GET", "/readyz").status == 200, timeout=5)
    assert s.runtime("GET", "/readyz").json()["checks"] == {"snapshot": "ok", "edge": "ok", "state": "ok"}
    assert m.value("suggestd_snapshot_loaded") == 1
    assert s.runtime("GET", "/v1/query",
                     params={"key": "pk_anything", "q": "pa"}).json()["code"] == "invalid_key"


def test_runtime_stays_ready_on_its_snapshot_when_edge_goes_away(make_server):
    s = make_server()
    t, lst, pk = published(s)
    edge = os.path.join(s.data_dir, "edge")
    os.rename(edge, edge + ".away")
    try:
        # The control plane cannot publish, so it is not ready; the runtime still serves
        # its last snapshot (docs/DESIGN.md §6) and says the edge store is unreachable.
        assert wait_until(lambda: s.runtime("GET", "/readyz").json()["checks"]["edge"]
                          == "unavailable", timeout=10)
        r = s.runtime("GET", "/readyz")
        assert r.status == 200 and r.json()["status"] == "ready"
        assert s.runtime("GET", "/v1/query", params={"key": pk, "q": "pa"}).status == 200
        assert s.control("GET", "/readyz").status == 503
    finally:
        os.rename(edge + ".away", edge)
    assert wait_until(lambda: s.runtime("GET", "/readyz").json()["checks"]["edge"] == "ok",
                      timeout=5)


# ---------------------------------------------------------------- access log ----------

def access_lines(s):
    out = []
    for line in s.read_log().splitlines():
        if not line.startswith("{"):
            continue
        o = json.loads(line)
        if o.get("msg") == "access":
            out.append(o)
    return out


def test_access_log_lines_have_the_same_fields_on_both_listeners(make_server):
    s, m = start_with_metrics(make_server)
    t, lst, pk = published(s)
    secret_q = "pa-secret-query"
    s.runtime("GET", "/v1/query", params={"key": pk, "q": secret_q})
    s.runtime("GET", "/v1/bootstrap", params={"key": pk})
    t.api("GET", f"/lists/{lst['id']}")
    m.scrape()

    def both():
        # The runtime writes its buffered lines every 200 ms: wait for the last request's.
        ls = access_lines(s)
        seen = {(o["listener"], o["route"]) for o in ls}
        want = {("runtime", "/v1/bootstrap"), ("control", "/api/v1/lists/{listId}"),
                ("metrics", "/metrics")}
        return ls if want <= seen else None
    lines = wait_until(both, timeout=3)
    assert lines, s.read_log()[-2000:]
    keys = {o["listener"]: set(o) for o in lines}
    assert keys["control"] == keys["runtime"] == keys["metrics"], keys
    assert keys["runtime"] >= {"ts", "level", "msg", "listener", "method", "route", "path",
                               "status", "durationUs", "requestId"}
    for o in lines:
        assert isinstance(o["status"], int) and isinstance(o["durationUs"], int)
        assert o["route"] == "other" or o["route"].startswith("/")
    q = [o for o in lines if o["listener"] == "runtime" and o["route"] == "/v1/query"]
    assert q and q[-1]["path"] == "/v1/query"
    c = [o for o in lines if o["listener"] == "control" and o["path"] == f"/api/v1/lists/{lst['id']}"]
    assert c and c[-1]["route"] == "/api/v1/lists/{listId}"
    # Never a key, a token or a query string.
    log = s.read_log()
    assert secret_q not in log and pk not in log and t.secret_key not in log


def test_access_log_paths_stay_json_whatever_bytes_they_hold(make_server):
    """The path is client input, percent-decoded: every byte a JSON string would need to
    escape (quote, backslash, control bytes, DEL, anything past ASCII) is logged as '?',
    the rest as it is, at any offset (the logger copies safe runs eight bytes at a time),
    and a path is cut at 159 bytes."""
    s = make_server([], mode="serve")
    cases = {
        "/v1/abcdefgh%22ijklmnop%5Cqrst%01uvw%C3%A9xyz%7F": "/v1/abcdefgh?ijklmnop?qrst?uvw??xyz?",
        "/v1/" + "a" * 7 + "%22" + "b" * 9 + "%09": "/v1/" + "a" * 7 + "?" + "b" * 9 + "?",
        "/v1/%22%22%22%22%22%22%22%22%22": "/v1/" + "?" * 9,
        "/v1/" + "x" * 300: ("/v1/" + "x" * 300)[:159],
        "/v1/plain-path_with.only~safe:bytes!": "/v1/plain-path_with.only~safe:bytes!",
    }
    for raw in cases:
        r = s.runtime("GET", raw)
        assert r.status in (400, 404), (raw, r.status)

    def logged():
        paths = {o["path"] for o in access_lines(s) if o["listener"] == "runtime"}
        return paths if set(cases.values()) <= paths else None
    paths = wait_until(logged, timeout=3)
    assert paths, sorted({o["path"] for o in access_lines(s)})


def test_new_connections_are_spread_over_the_workers(make_server):
    """A burst of connections (a client opening its pool at once) is served by every worker
    thread, not by the one the kernel woke for the burst: each newcomer goes to the worker
    with the fewest connections (docs/RUNTIME.md, "Connections")."""
    s, m = start_with_metrics(make_server, mode="runtime", extra=["--threads", "4"])

    def per_worker():
        samples, _ = m.scrape()
        return sorted(v for (name, labels), v in samples.items()
                      if name == "suggestd_runtime_worker_connections")

    assert per_worker() == [0, 0, 0, 0]
    socks = []
    try:
        # Opened all at once, and only then used: one wake of one worker can accept them all.
        for _ in range(40):
            socks.append(socket.create_connection(("127.0.0.1", s.runtime_port), timeout=5))
        for c in socks:
            c.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        for c in socks:
            assert c.recv(4096).startswith(b"HTTP/1.1 200")
        counts = wait_until(lambda: (lambda v: v if sum(v) == 40 else None)(per_worker()))
        assert counts, per_worker()
        # Even, give or take the newcomers a worker accepted while the hints lagged.
        assert counts[-1] - counts[0] <= 2, counts
    finally:
        for c in socks:
            c.close()
