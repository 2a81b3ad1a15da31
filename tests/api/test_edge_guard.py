"""The edge guard (docs/EDGE.md, "The staleness guard"; issue 22, defects 1 and 2).

An edge that goes back in time underneath the control plane (Redis restarted from an older
snapshot, a replica that was behind, a restore of the edge directory) or is emptied must
never un-hide a private list or revive a revoked key: runtimes that saw newer state hold
it, a runtime that starts on the old edge fails closed (503) until the control plane has
confirmed the edge again, and the control plane rewrites the edge on its own within 10 s.

"Coming back older" is done for real: every key of the Redis is DUMPed at one moment and,
after the changes, the database is flushed and the keys RESTOREd (what a restart from that
moment's RDB file gives); for a directory edge, the folder is copied and copied back.
"""
import os
import shutil
import time

import pytest

from conftest import wait_until
from test_edge_redis import fleet, redis  # noqa: F401  (fixtures)

ITEMS = [{"value": "andorra"}, {"value": "angola"}, {"value": "anguilla"}]


def query(s, pk, q="an"):
    return s.runtime("GET", "/v1/query", params={"key": pk, "q": q})


def leaks(s, pk):
    """True when the runtime answers the list's items to a caller without a token."""
    try:
        r = query(s, pk)
    except OSError:
        return False
    return r.status == 200 and bool(r.json().get("items"))


def snapshot_redis(redis):
    keys = redis.cmd("KEYS", "*")
    return [(k, redis.cmd("PTTL", k), redis.cmd("DUMP", k)) for k in keys]


def restore_redis(redis, dump):
    redis.cmd("FLUSHALL")
    for k, ttl, blob in dump:
        redis.cmd("RESTORE", k, max(int(ttl), 0), blob, "REPLACE")


def stamp(redis):
    v = redis.cmd("GET", "sg:edge:stamp")
    return None if v is None else [int(x) for x in v.decode().split()]


def setup_public(s):
    t = s.tenant()
    lst = t.create_list(visibility="public")
    t.add_items(lst["id"], ITEMS)
    assert t.publish(lst["id"])["state"] == "active"
    pk = t.publishable_key(lst["id"])["publishableKey"]
    pk2 = t.publishable_key(lst["id"])
    return t, lst, pk, pk2


def synced(t, lst):
    return t.api("GET", f"/lists/{lst['id']}").json()["edgeSync"]["state"] == "synced"


def watch(procs, keys, seconds):
    """Polls every runtime with every key for `seconds`; returns the (proc, key) pairs
    that ever leaked."""
    bad = set()
    end = time.time() + seconds
    while time.time() < end:
        for i, p in enumerate(procs):
            for k in keys:
                if leaks(p, k):
                    bad.add((i, k[:12]))
        time.sleep(0.05)
    return bad


def test_redis_back_from_an_older_snapshot_never_unhides_a_private_list(redis, fleet):
    s = fleet("serve")
    t, lst, pk, pk2 = setup_public(s)
    old_rt = fleet("runtime")
    assert wait_until(lambda: leaks(old_rt, pk) and leaks(s, pk2["publishableKey"]), timeout=15)
    assert wait_until(lambda: stamp(redis) and stamp(redis)[1] > 0, timeout=10)
    before = snapshot_redis(redis)
    epoch0 = stamp(redis)[0]

    # Made private, and the second key revoked, after the snapshot.
    r = t.api("PATCH", f"/lists/{lst['id']}", {"visibility": "private"})
    assert r.status == 200, r
    s.admin("publishable-key", "revoke", pk2["id"])
    assert wait_until(lambda: synced(t, lst), timeout=10)
    assert wait_until(lambda: not leaks(old_rt, pk) and not leaks(s, pk), timeout=10)
    assert wait_until(lambda: not leaks(old_rt, pk2["publishableKey"]), timeout=10)

    restore_redis(redis, before)
    # A runtime that starts on the old edge has never seen the newer revision.
    new_rt = fleet("runtime")
    keys = [pk, pk2["publishableKey"]]
    assert watch([s, old_rt, new_rt], keys, 6) == set()

    # The control plane rewrote the edge in a new epoch, on its own, within 10 s: the
    # list's record there says private again.
    assert wait_until(lambda: stamp(redis)[0] > epoch0 and stamp(redis)[1] > 0, timeout=10)
    rec = redis.cmd("HGET", "sg:edge:rec:lists", lst["id"])
    assert b'"private"' in rec
    assert synced(t, lst)
    # Everyone answers as the store says, and the new runtime is ready.
    for p in (s, old_rt, new_rt):
        assert wait_until(lambda p=p: query(p, pk).status == 401, timeout=10), query(p, pk)
        assert query(p, pk2["publishableKey"]).status == 401
    assert wait_until(lambda: new_rt.runtime("GET", "/readyz").status == 200, timeout=10)
    assert "edge behind the store; rewriting it" in s.read_log()


def test_a_flushed_redis_keeps_runtimes_serving_and_is_rebuilt(redis, fleet):
    s = fleet("serve")
    t, lst, pk, _ = setup_public(s)
    rt = fleet("runtime")
    assert wait_until(lambda: leaks(rt, pk), timeout=15)
    want = query(rt, pk).body
    redis.cmd("FLUSHALL")
    end = time.time() + 4
    while time.time() < end:
        r = query(rt, pk)
        assert r.status == 200 and r.body == want, r
        time.sleep(0.1)
    # Rebuilt by the control plane, without `admin edge rebuild`.
    assert wait_until(lambda: stamp(redis) and stamp(redis)[1] > 0, timeout=10)
    assert redis.cmd("HGET", "sg:edge:rec:lists", lst["id"]) is not None
    assert int(redis.cmd("GET", "sg:edge:rev")) > 0
    r = query(rt, pk)
    assert r.status == 200 and r.body == want, r
    # A change made after the flush reaches the runtime again.
    t.api("PATCH", f"/lists/{lst['id']}", {"visibility": "private"})
    assert wait_until(lambda: query(rt, pk).status == 401, timeout=10)


def test_an_edge_directory_restored_from_an_older_copy_is_rewritten(make_server, tmp_path):
    s = make_server()
    t, lst, pk, pk2 = setup_public(s)
    edge = os.path.join(s.data_dir, "edge")
    assert wait_until(lambda: os.path.exists(os.path.join(edge, "STAMP")), timeout=10)
    copy = str(tmp_path / "edge-copy")
    shutil.copytree(edge, copy)
    rt = make_server(mode="runtime", extra=["--edge", edge], limits=False)
    assert wait_until(lambda: leaks(rt, pk), timeout=10)

    t.api("PATCH", f"/lists/{lst['id']}", {"visibility": "private"})
    assert wait_until(lambda: synced(t, lst) and not leaks(rt, pk) and not leaks(s, pk),
                      timeout=10)
    # The old copy back in place, file by file (the processes keep the folder open).
    for name in os.listdir(copy):
        src, dst = os.path.join(copy, name), os.path.join(edge, name)
        if os.path.isdir(src):
            shutil.rmtree(dst, ignore_errors=True)
            shutil.copytree(src, dst)
        else:
            shutil.copy2(src, dst)
    rt2 = make_server(mode="runtime", extra=["--edge", edge], limits=False)
    assert watch([s, rt, rt2], [pk], 5) == set()
    with open(os.path.join(edge, "lists", lst["id"] + ".json")) as f:
        assert wait_until(lambda: '"private"' in open(f.name).read(), timeout=10)
    for p in (s, rt, rt2):
        assert wait_until(lambda p=p: query(p, pk).status == 401, timeout=10), query(p, pk)


def test_admin_edge_rebuild_opens_a_new_epoch(server, tenant):
    lst = tenant.create_list(visibility="public")
    tenant.add_items(lst["id"], ITEMS)
    assert tenant.publish(lst["id"])["state"] == "active"
    pk = tenant.publishable_key(lst["id"])["publishableKey"]
    assert wait_until(lambda: leaks(server, pk), timeout=10)
    out = server.admin("edge", "rebuild")
    first = out["epoch"]
    assert out["records"]["written"] > 0 and first >= 1
    assert server.admin("edge", "rebuild")["epoch"] == first + 1
    assert wait_until(lambda: leaks(server, pk), timeout=10)

    def edge_ok():
        r = server.runtime("GET", "/readyz")
        return r.status == 200 and r.json()["checks"]["edge"] == "ok"
    assert wait_until(edge_ok, timeout=10), server.runtime("GET", "/readyz")
