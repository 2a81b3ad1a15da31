"""The Redis edge store (`--edge redis://…`, docs/DESIGN.md §6, docs/EDGE.md "Redis layout").

A real Redis 7 started by scripts/redis.sh (skipped when redis-server is missing, except
under CI=true). `serve` publishes to Redis; a `runtime` with its own empty --data-dir on
the same Redis fetches every artifact into its local cache, becomes ready, and answers
byte for byte what `serve` answers, and what a runtime on a directory edge holding the
same records and artifacts answers. Redis killed with -9: queries keep answering from the
snapshot, /readyz and the metrics say the edge is unreachable; restarted, the runtime
reconnects and catches up with what was published meanwhile.
"""
import hashlib
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time

import pytest

from conftest import BINARY, NO_LIMITS, ROOT, Server, free_port, request, wait_until

REDIS_SH = os.path.join(ROOT, "scripts", "redis.sh")


class Redis:
    """A throwaway redis-server (scripts/redis.sh) and a minimal RESP client."""

    def __init__(self, root):
        self.dir = os.path.join(root, "srv")
        self.url = subprocess.check_output([REDIS_SH, "start", self.dir], text=True).strip()
        self.port = int(self.url.rsplit(":", 1)[1])

    def kill(self):
        subprocess.run([REDIS_SH, "kill", self.dir], check=True)
        assert wait_until(lambda: not self.alive(), timeout=5)

    def start(self):
        assert subprocess.check_output([REDIS_SH, "start", self.dir], text=True).strip() == self.url

    def stop(self):
        subprocess.run([REDIS_SH, "stop", self.dir], check=False)

    def alive(self):
        try:
            return self.cmd("PING") == "PONG"
        except OSError:
            return False

    def cmd(self, *args):
        with socket.create_connection(("127.0.0.1", self.port), timeout=10) as s:
            out = b"*%d\r\n" % len(args)
            for a in args:
                a = a if isinstance(a, bytes) else str(a).encode()
                out += b"$%d\r\n%s\r\n" % (len(a), a)
            s.sendall(out)
            return self._read(s.makefile("rb"))

    def _read(self, f):
        line = f.readline()
        kind, rest = line[:1], line[1:-2]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = f.read(n + 2)
            return data[:-2]
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self._read(f) for _ in range(n)]
        raise RuntimeError(f"bad reply {line!r}")


@pytest.fixture
def redis():
    if not shutil.which("redis-server"):
        if os.environ.get("CI") == "true":
            pytest.fail("redis-server is missing: run scripts/deps.sh")
        pytest.skip("redis-server is not installed (scripts/deps.sh installs it)")
    root = tempfile.mkdtemp(prefix="sg-redis-")
    r = Redis(root)
    yield r
    r.stop()
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def fleet(redis):
    """Processes on the Redis edge, each with its own data dir; all stopped after."""
    procs, dirs = [], []

    def start(mode, extra=(), edge=None):
        d = tempfile.mkdtemp(prefix="suggestd-test-")
        dirs.append(d)
        edge = edge or redis.url
        flags = (NO_LIMITS if mode != "runtime" else []) + ["--edge", edge] + list(extra)
        s = Server(d, mode=mode, extra=flags)
        s.edge_url = edge
        procs.append(s)
        return s.start()

    yield start
    for s in procs:
        s.stop()
    for d in dirs:
        shutil.rmtree(d, ignore_errors=True)


CITIES = [{"value": f"{name} {i}", "displayValue": f"{name.title()} {i}", "rank": i % 17}
          for i in range(60) for name in ("paris", "parma", "porto", "prague", "lisbon")]
QUERIES = ["pa", "par", "paris 1", "prag", "lisbn", "po", "p", "zzz", "paris 59", "parma 3"]


def publish_list(s):
    t = s.tenant()
    lst = t.create_list("Cities", visibility="public")
    t.add_items(lst["id"], CITIES)
    v = t.publish(lst["id"])
    assert v["state"] == "active", v
    pk = t.publishable_key(lst["id"])["publishableKey"]
    return t, lst, v, pk


def answers(s, pk):
    """Status and exact body bytes of a set of runtime calls."""
    out = []
    for q in QUERIES:
        r = s.runtime("GET", "/v1/query", params={"key": pk, "q": q})
        out.append((q, r.status, r.body))
    r = s.runtime("GET", "/v1/bootstrap", params={"key": pk})
    out.append(("bootstrap", r.status, r.body))
    return out


def ready(s):
    r = s.runtime("GET", "/readyz")
    return r.status == 200 and r.json()["checks"]["snapshot"] == "ok"


def dump_to_directory(redis, edge_dir):
    """Copies the Redis edge's records and artifacts into a directory edge (docs/EDGE.md
    layouts), so a runtime on each can be compared."""
    kinds = ("lists", "keys", "apps", "workspaces", "subscriptions", "signing-keys")
    for k in kinds + ("artifacts",):
        os.makedirs(os.path.join(edge_dir, k), exist_ok=True)
    for k in kinds:
        flat = redis.cmd("HGETALL", f"sg:edge:rec:{k}")
        for rid, body in zip(flat[::2], flat[1::2]):
            with open(os.path.join(edge_dir, k, rid.decode() + ".json"), "wb") as f:
                f.write(body)
    flat = redis.cmd("ZRANGE", "sg:edge:artifacts", 0, -1)
    for hx in flat:
        hx = hx.decode()
        chunks = int(redis.cmd("HGET", f"sg:edge:art:{hx}", "chunks"))
        data = b"".join(redis.cmd("GET", f"sg:edge:art:{hx}:{i}") for i in range(chunks))
        assert hashlib.sha256(data).hexdigest() == hx
        with open(os.path.join(edge_dir, "artifacts", hx + ".sga"), "wb") as f:
            f.write(data)
    with open(os.path.join(edge_dir, "REVISION"), "w") as f:
        f.write(redis.cmd("GET", "sg:edge:rev").decode() + "\n")


def test_runtime_on_redis_answers_like_serve_and_a_directory_edge(redis, fleet):
    s = fleet("serve")
    t, lst, v, pk = publish_list(s)
    assert wait_until(lambda: s.runtime("GET", "/v1/query", params={"key": pk, "q": "pa"})
                      .status == 200, timeout=10)
    hx = v["contentHash"].split(":", 1)[1]
    # The layout of docs/EDGE.md: records in hashes, the artifact under its manifest.
    assert int(redis.cmd("GET", "sg:edge:rev")) > 0
    assert int(redis.cmd("HGET", f"sg:edge:art:{hx}", "size")) > 0
    assert redis.cmd("HGET", "sg:edge:rec:lists", lst["id"]) is not None
    assert not os.path.exists(os.path.join(s.data_dir, "edge"))

    # A runtime with its own empty data directory: ready only once it holds the
    # artifact, which is in its local cache, verified.
    rt = fleet("runtime")
    assert wait_until(lambda: ready(rt), timeout=15)
    assert rt.runtime("GET", "/v1/query", params={"key": pk, "q": "pa"}).status == 200
    cached = os.path.join(rt.data_dir, "runtime", "artifacts", hx + ".sga")
    with open(cached, "rb") as f:
        assert hashlib.sha256(f.read()).hexdigest() == hx

    want = answers(s, pk)
    assert all(st == 200 for _, st, _ in want), want
    assert answers(rt, pk) == want

    # The same records and artifacts on a directory edge answer the same bytes.
    other = tempfile.mkdtemp(prefix="suggestd-test-")
    try:
        dump_to_directory(redis, os.path.join(other, "edge"))
        d = Server(other, mode="runtime").start()
        try:
            assert wait_until(lambda: ready(d), timeout=10)
            assert answers(d, pk) == want
        finally:
            d.stop()
    finally:
        shutil.rmtree(other, ignore_errors=True)


def metric(port, name):
    r = request(port, "GET", "/metrics")
    for line in r.body.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


def test_redis_killed_queries_keep_answering_and_changes_catch_up(redis, fleet):
    s = fleet("serve")
    t, lst, v, pk = publish_list(s)
    mport = free_port()
    rt = fleet("runtime", ["--metrics-listen", f"127.0.0.1:{mport}"])
    assert wait_until(lambda: ready(rt), timeout=15)
    want = answers(rt, pk)
    assert metric(mport, "suggestd_edge_up") == 1

    redis.kill()
    # Keeps serving its snapshot, byte for byte; stays ready (a Redis blip must not take
    # every runtime out of the load balancer) and says the edge is unreachable.
    assert answers(rt, pk) == want
    assert wait_until(lambda: rt.runtime("GET", "/readyz").json()["checks"]["edge"]
                      == "unavailable", timeout=15)
    r = rt.runtime("GET", "/readyz")
    assert r.status == 200 and r.json()["status"] == "ready", r
    assert metric(mport, "suggestd_edge_up") == 0
    assert metric(mport, "suggestd_snapshot_age_seconds") >= 5
    assert answers(rt, pk) == want

    # A publish meanwhile: the compiled artifact cannot be stored, so the version fails and
    # the answer is the documented outage, 503 with Retry-After (not a 500); the control
    # listener is not ready, and nothing the runtimes serve changes.
    t.add_items(lst["id"], [{"value": "pamplona", "displayValue": "Pamplona", "rank": 99}])
    r = t.api("POST", f"/lists/{lst['id']}/versions")
    assert r.status == 503, r
    err = r.json()
    assert err["code"] == "internal_error", err
    assert err["details"]["reason"] == "artifact_write_failed", err
    assert r.headers.get("retry-after", "").isdigit(), r.headers
    failed = t.api("GET", f"/lists/{lst['id']}/versions/{err['details']['versionNumber']}")
    assert failed.json()["state"] == "failed", failed
    ctl = s.control("GET", "/readyz")
    assert ctl.status == 503 and ctl.json()["checks"]["edge"] == "unavailable", ctl
    assert answers(rt, pk) == want

    redis.start()
    # Reconnects (backoff at most 5 s) and applies what changed while it was away.
    assert wait_until(lambda: rt.runtime("GET", "/readyz").json()["checks"]["edge"] == "ok",
                      timeout=15)
    # The serve process's control plane has an edge client of its own, reconnecting on its
    # own backoff: its listener's /readyz says when it answers, and from then on a publish
    # goes through at once.
    assert wait_until(lambda: s.control("GET", "/readyz").status == 200, timeout=15)
    assert s.control("GET", "/readyz").json()["checks"]["edge"] == "ok"
    r = t.api("POST", f"/lists/{lst['id']}/versions")
    assert r.status in (200, 202), r
    path = f"/lists/{lst['id']}/versions/{r.json()['versionNumber']}"
    assert wait_until(lambda: t.api("GET", path).json()["state"] not in ("queued", "staged"),
                      timeout=30)
    v2 = t.api("GET", path).json()
    assert v2["state"] == "active", v2

    def has_pamplona():
        r = rt.runtime("GET", "/v1/query", params={"key": pk, "q": "pamp"})
        return r.status == 200 and b"Pamplona" in r.body

    assert wait_until(has_pamplona, timeout=15)
    assert metric(mport, "suggestd_edge_up") == 1
    assert wait_until(lambda: answers(rt, pk) == answers(s, pk), timeout=10)


def test_rediss_and_bad_urls_are_refused_clearly(tmp_path):
    for mode in ("runtime", "serve"):
        r = subprocess.run([BINARY, mode, "--data-dir", str(tmp_path), "--edge",
                            "rediss://127.0.0.1:6379"], capture_output=True, text=True,
                           timeout=30)
        assert r.returncode != 0
        assert "TLS" in r.stderr, r.stderr
    r = subprocess.run([BINARY, "admin", "workspace", "create", "--name", "x", "--data-dir",
                        str(tmp_path), "--edge", "redis://127.0.0.1:6379?nope=1"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode != 0
    assert json.loads(r.stderr.strip().splitlines()[-1])["error"], r.stderr


def test_list_keeps_its_version_until_the_new_artifact_is_local(redis, fleet):
    s = fleet("serve")
    t, lst, v, pk = publish_list(s)
    rt = fleet("runtime")
    assert wait_until(lambda: ready(rt), timeout=15)
    want = answers(rt, pk)
    # The runtime cannot store a fetched artifact (its cache folder is a file now).
    cache = os.path.join(rt.data_dir, "runtime", "artifacts")
    shutil.move(cache, cache + ".away")
    with open(cache, "w") as f:
        f.write("not a folder")
    try:
        t.add_items(lst["id"], [{"value": "pamplona", "displayValue": "Pamplona"}])
        v2 = t.publish(lst["id"])
        assert v2["state"] == "active", v2
        assert wait_until(lambda: b"Pamplona" in s.runtime(
            "GET", "/v1/query", params={"key": pk, "q": "pamp"}).body, timeout=10)
        time.sleep(1.5)  # several reloads of the new list record
        # Still the old version, whole and ready: not artifact_unavailable.
        assert answers(rt, pk) == want
        assert ready(rt)
    finally:
        os.unlink(cache)
        shutil.move(cache + ".away", cache)
    assert wait_until(lambda: answers(rt, pk) == answers(s, pk), timeout=15)
    assert os.path.exists(os.path.join(cache, v2["contentHash"].split(":", 1)[1] + ".sga"))


def test_prefix_option_namespaces_the_edge(redis, fleet):
    url = redis.url + "/0?prefix=alt"
    s = fleet("serve", edge=url)
    t, lst, v, pk = publish_list(s)
    assert wait_until(lambda: s.runtime("GET", "/v1/query", params={"key": pk, "q": "pa"})
                      .status == 200, timeout=10)
    rt = fleet("runtime", edge=url)
    assert wait_until(lambda: ready(rt), timeout=15)
    assert answers(rt, pk) == answers(s, pk)
    assert redis.cmd("HGET", "alt:edge:rec:lists", lst["id"]) is not None
    assert redis.cmd("EXISTS", "sg:edge:rev") == 0
