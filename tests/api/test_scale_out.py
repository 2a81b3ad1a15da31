"""Scale-out (issue 14, docs/DESIGN.md §6): one Redis (the edge and the runtimes' shared state),
two `suggestd control` processes on one database and two `suggestd runtime` processes,
each runtime with its own data directory.

- a control process killed -9 during an async publish: the other finishes it;
- a runtime killed -9 under load: the other keeps answering; restarted with an empty data
  directory it answers byte-identically;
- a revoked publishable key is refused by every runtime within a second;
- a monthly quota holds across both runtimes; a selectionId sent to both counts once;
- Redis stopped and restarted: queries keep answering, selections answer 503 meanwhile,
  and the shared state catches up.

Needs redis-server (scripts/deps.sh installs it): skipped without it, except under CI=true.
"""
import os
import shutil
import sqlite3
import subprocess
import tempfile
import threading
import time
import uuid

import pytest

from conftest import NO_LIMITS, ROOT, Server, database_url, wait_until
from test_publish_queue import PENDING, claims, publish_and_kill_holder, version

LEASE_S = 3


def redis_missing():
    return shutil.which("redis-server") is None


if redis_missing() and os.environ.get("CI") != "true":
    pytest.skip("redis-server is not installed (scripts/deps.sh installs it); "
                "the scale-out test needs a real Redis", allow_module_level=True)


class Redis:
    """A throwaway Redis 7 (scripts/redis.sh), which can be stopped and started again on
    its port and data."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="suggestd-redis-")
        out = subprocess.run([os.path.join(ROOT, "scripts", "redis.sh"), "start", self.dir + "/srv"],
                             capture_output=True, text=True, check=True)
        self.url = out.stdout.strip()
        self.port = int(self.url.rsplit(":", 1)[1])

    def cli(self, *args):
        return subprocess.run(["redis-cli", "-p", str(self.port), *args], capture_output=True,
                              text=True).stdout.strip()

    def stop(self):
        self.cli("shutdown", "nosave")
        assert wait_until(lambda: self.cli("ping") != "PONG", timeout=5)

    def start(self):
        """Starts it again on its port and data (scripts/redis.sh reuses both)."""
        subprocess.run([os.path.join(ROOT, "scripts", "redis.sh"), "start", self.dir + "/srv"],
                       capture_output=True, check=True)
        assert wait_until(lambda: self.cli("ping") == "PONG", timeout=5)

    def close(self):
        subprocess.run([os.path.join(ROOT, "scripts", "redis.sh"), "stop", self.dir + "/srv"],
                       capture_output=True)
        shutil.rmtree(self.dir, ignore_errors=True)


class FleetServer(Server):
    """A process of the fleet: it and its admin commands use the fleet's Redis edge."""

    def __init__(self, data_dir, mode, edge, extra=()):
        super().__init__(data_dir, mode=mode, extra=["--edge", edge, *extra])
        self.edge_url = edge  # conftest's admin() passes it on


class Fleet:
    def __init__(self):
        self.redis = Redis()
        self.dirs = [tempfile.mkdtemp(prefix="suggestd-fleet-")]
        self.db = self.dirs[0]
        flags = NO_LIMITS + ["--sync-publish-limit", "10", "--publish-lease-seconds", str(LEASE_S)]
        self.controls = []
        for name in ("a", "b"):
            c = FleetServer(self.db, "control", self.redis.url, flags)
            c.log_path = os.path.join(self.db, f"control-{name}.log")
            self.controls.append(c.start())
        self.runtimes = [self.new_runtime() for _ in range(2)]

    def new_runtime(self):
        d = tempfile.mkdtemp(prefix="suggestd-fleet-rt-")
        self.dirs.append(d)
        return FleetServer(d, "runtime", self.redis.url).start()

    def tenant(self, quota=None):
        return self.controls[0].tenant(quota)  # admin commands carry --edge (FleetServer)

    def close(self):
        for s in self.controls + self.runtimes:
            s.stop()
        self.redis.close()
        for d in self.dirs:
            shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def fleet():
    f = Fleet()
    yield f
    f.close()


CITIES = ["Paris", "Parma", "Pamplona", "Lyon", "London", "Lisbon", "Berlin", "Bern"]


def published(fleet, t, quota_items=CITIES):
    lst = t.create_list("Cities", visibility="public")
    t.add_items(lst["id"], [{"value": v} for v in quota_items])
    assert t.publish(lst["id"])["state"] == "active"
    pk = t.publishable_key(lst["id"])
    return lst, pk


def q(server, key, text):
    return server.runtime("GET", "/v1/query", params={"key": key, "q": text})


def serving(server, key, text="pa"):
    r = q(server, key, text)
    return r if r.status == 200 and r.json().get("items") else None


def test_killed_control_process_publish_is_finished_by_the_other(fleet):
    t, other, list_id, n, _ = publish_and_kill_holder(fleet.controls)
    assert wait_until(lambda: version(t, list_id, n)["state"] not in PENDING, timeout=60)
    assert version(t, list_id, n)["state"] == "active"
    assert claims(other, list_id, n), "the survivor did not take the version over"
    assert t.api("PATCH", f"/lists/{list_id}", {"visibility": "public"}).status == 200
    pk = t.publishable_key(list_id)["publishableKey"]
    for rt in fleet.runtimes:
        r = wait_until(lambda: serving(rt, pk, "item 0000001"), timeout=30)
        assert r, f"runtime does not serve the version: {rt.read_log()[-1500:]}"


def test_killed_runtime_the_other_answers_and_a_cold_one_answers_identically(fleet):
    t = fleet.tenant()
    lst, pk = published(fleet, t)
    key = pk["publishableKey"]
    r1, r2 = fleet.runtimes
    assert wait_until(lambda: serving(r1, key) and serving(r2, key), timeout=10)
    stop = threading.Event()
    errors = []

    def load(server):
        while not stop.is_set():
            try:
                q(server, key, "pa")
            except OSError as e:  # the killed one stops answering: expected
                errors.append(e)

    threads = [threading.Thread(target=load, args=(s,)) for s in (r1, r2, r2)]
    for th in threads:
        th.start()
    time.sleep(0.5)
    r1.stop(sig_kill=True)
    try:
        for text in ("pa", "l", "ber", "par"):
            r = q(r2, key, text)
            assert r.status == 200, r
    finally:
        stop.set()
        for th in threads:
            th.join()
    cold = fleet.new_runtime()  # an empty data directory: everything from Redis
    fleet.runtimes[0] = cold
    assert wait_until(lambda: cold.runtime("GET", "/readyz").status == 200, timeout=30)
    for text in ("pa", "l", "ber", "par", "lon", "zzz"):
        a, b = q(cold, key, text), q(r2, key, text)
        assert a.status == b.status == 200
        assert a.body == b.body, (text, a.body, b.body)


def test_revoked_key_is_refused_by_every_runtime_within_a_second(fleet):
    t = fleet.tenant()
    lst, pk = published(fleet, t)
    key = pk["publishableKey"]
    for rt in fleet.runtimes:
        assert wait_until(lambda: serving(rt, key), timeout=10)
    fleet.controls[1].admin("publishable-key", "revoke", pk["id"])
    revoked_at = time.time()
    for rt in fleet.runtimes:
        assert wait_until(lambda: q(rt, key, "pa").status == 401, timeout=1.0, interval=0.02)
    assert time.time() - revoked_at <= 1.0


def test_quota_holds_across_both_runtimes(fleet):
    t = fleet.tenant(quota=40)
    lst, pk = published(fleet, t)
    key = pk["publishableKey"]
    r1, r2 = fleet.runtimes
    assert wait_until(lambda: serving(r1, key) and serving(r2, key), timeout=10)
    time.sleep(1.5)  # the runtimes reconcile what the waits above served
    served = 0
    while served < 40:
        r = q((r1, r2)[served % 2], key, "pa")
        if r.json().get("code") == "quota_exceeded":
            break
        served += 1
    # Each runtime alone served about half of the quota; together they used it up, and each
    # learns it within a second (the other's flush, then its own, every 500 ms).
    time.sleep(1.2)
    for rt in (r1, r2):
        r = q(rt, key, "pa")
        assert r.status == 200 and r.json().get("code") == "quota_exceeded", (served, r.json())


def stored_selections(fleet, selection_id):
    url = database_url(fleet.db)
    if url:  # the suite on PostgreSQL
        r = subprocess.run(["psql", "-X", "-tA", "-d", url, "-c",
                            "SELECT count(*) FROM selections WHERE selection_id = "
                            f"'{selection_id}'"], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        return int(r.stdout.strip())
    con = sqlite3.connect(os.path.join(fleet.db, "suggestd.db"), timeout=5)
    try:
        return con.execute("SELECT count(*) FROM selections WHERE selection_id = ?",
                           (selection_id,)).fetchone()[0]
    finally:
        con.close()


def selection_body(key, list_id, item_id, sid):
    return {"key": key, "selectionId": sid, "queryRequestId": "req_scale", "listId": list_id,
            "itemId": item_id, "position": 1, "query": "pa"}


def test_same_selection_on_both_runtimes_counts_once(fleet):
    t = fleet.tenant()
    lst, pk = published(fleet, t)
    key = pk["publishableKey"]
    r1, r2 = fleet.runtimes
    hit = wait_until(lambda: serving(r1, key) and serving(r2, key), timeout=10)
    item = hit.json()["items"][0]["itemId"]
    sid = str(uuid.uuid4())
    body = selection_body(key, lst["id"], item, sid)
    for rt in (r1, r2, r1):
        r = rt.runtime("POST", "/v1/selection", body=body)
        assert r.status == 200 and r.json() == {"selectionId": sid}, r
    other = str(uuid.uuid4())
    assert r2.runtime("POST", "/v1/selection",
                      body=selection_body(key, lst["id"], item, other)).status == 200
    assert wait_until(lambda: stored_selections(fleet, other) == 1, timeout=10)
    assert stored_selections(fleet, sid) == 1
    assert fleet.redis.cli("xlen", "sg:state:selections") == "0"


def test_redis_down_queries_go_on_and_state_catches_up(fleet):
    t = fleet.tenant(quota=1000)
    lst, pk = published(fleet, t)
    key = pk["publishableKey"]
    r1, r2 = fleet.runtimes
    hit = wait_until(lambda: serving(r1, key) and serving(r2, key), timeout=10)
    item = hit.json()["items"][0]["itemId"]
    month = time.strftime("%Y-%m", time.gmtime())
    counter = f"sg:state:quota:{month}:{t.application_id}"
    time.sleep(1.5)
    before = int(fleet.redis.cli("get", counter) or 0)

    fleet.redis.stop()
    try:
        for i in range(10):
            rt = (r1, r2)[i % 2]
            r = q(rt, key, "pa")
            assert r.status == 200 and r.json()["items"], r
        sid = str(uuid.uuid4())
        r = r1.runtime("POST", "/v1/selection", body=selection_body(key, lst["id"], item, sid))
        assert r.status == 503 and r.header("retry-after") == "1", r
        for rt in (r1, r2):
            assert wait_until(lambda: rt.runtime("GET", "/readyz").json()["checks"]["state"]
                              == "unavailable", timeout=5)
            ready = rt.runtime("GET", "/readyz")
            assert ready.status == 200 and ready.json()["status"] == "ready"
    finally:
        fleet.redis.start()

    for rt in (r1, r2):
        assert wait_until(lambda: rt.runtime("GET", "/readyz").json()["checks"]["state"] == "ok",
                          timeout=10)
    # The ten queries served meanwhile reach the fleet's counter.
    assert wait_until(lambda: int(fleet.redis.cli("get", counter) or 0) >= before + 10,
                      timeout=10), fleet.redis.cli("get", counter)
    # The refused selection is accepted now, and drained once.
    r = wait_until(lambda: (lambda x: x if x.status == 200 else None)(
        r1.runtime("POST", "/v1/selection", body=selection_body(key, lst["id"], item, sid))),
        timeout=10)
    assert r, "selection still refused after Redis returned"
    assert wait_until(lambda: stored_selections(fleet, sid) == 1, timeout=10)


def test_dashboard_shows_the_fleets_usage_and_selections(fleet):
    from dashboard_helpers import Member, create_member
    t = fleet.tenant(quota=1000)
    create_member(fleet.controls[0], t.workspace_id, "viewer@example.com", "viewer")
    viewer = Member(fleet.controls[1], "viewer@example.com")
    lst, pk = published(fleet, t)
    key = pk["publishableKey"]
    r1, r2 = fleet.runtimes
    hit = wait_until(lambda: serving(r1, key) and serving(r2, key), timeout=10)
    item = hit.json()["items"][0]["itemId"]
    for i in range(6):
        assert q((r1, r2)[i % 2], key, "pa").status == 200
    for i in range(3):
        body = selection_body(key, lst["id"], item, str(uuid.uuid4()))
        assert (r1, r2)[i % 2].runtime("POST", "/v1/selection", body=body).status == 200
    month = time.strftime("%Y-%m", time.gmtime())
    counter = f"sg:state:quota:{month}:{t.application_id}"

    def usage():
        u = viewer.call("GET", "/usage").json()
        app = next(a for a in u["applications"] if a["id"] == t.application_id)
        return u if u["usageAvailable"] and app["used"] == int(fleet.redis.cli("get", counter) or -1) \
            and app["used"] >= 8 else None
    assert wait_until(usage, timeout=5), viewer.call("GET", "/usage").json()

    def selections():
        s = viewer.call("GET", f"/lists/{lst['id']}/selections?days=2").json()
        return s if s["total"] == 3 else None
    s = wait_until(selections, timeout=10)
    assert s and s["eventsAvailable"] and s["perDay"][-1]["selections"] == 3, s
    assert [(x["itemId"], x["selections"]) for x in s["topItems"]] == [(item, 3)]
