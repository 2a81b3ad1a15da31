"""A damaged artifact never takes the process down and is never served (issue 11, defects
3 and 4).

The runtime reads each artifact into its own memory and checks its SHA-256 against the
list's contentHash before using it. So an artifact truncated in place under a running
server changes nothing it serves (it holds a verified copy), and after a restart (or any
reload) a truncated or same-size corrupted artifact answers 503 artifact_unavailable
with retry-after, never a crash and never a 200 built from bad bytes. Publishing the same
content again repairs the file.
"""
import json
import os

from conftest import wait_until


def setup_list(server, tenant):
    lst = tenant.create_list(visibility="public")
    tenant.add_items(lst["id"], [{"value": f"andorra {i}"} for i in range(200)])
    v = tenant.publish(lst["id"])
    assert v["state"] == "active", v
    pk = tenant.publishable_key(lst["id"])["publishableKey"]
    assert wait_until(lambda: query(server, pk).status == 200)
    path = os.path.join(server.data_dir, "edge", "artifacts",
                        v["contentHash"].split(":", 1)[1] + ".sga")
    assert os.path.exists(path)
    return lst, pk, path


def query(server, pk, q="an"):
    return server.runtime("GET", "/v1/query", params={"key": pk, "q": q})


def unavailable(server, pk):
    r = query(server, pk)
    return r.status == 503 and r.json()["code"] == "artifact_unavailable" and \
        r.header("retry-after")


def test_truncated_active_artifact_does_not_kill_the_process(server, tenant):
    lst, pk, path = setup_list(server, tenant)
    good = query(server, pk).json()
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) // 3)
    # Served from the verified private copy: same answer, and both listeners stay up.
    for q in ("an", "andorra 1", "andorra 19"):
        r = query(server, pk, q)
        assert r.status == 200, r
    assert query(server, pk).json() == good
    assert tenant.api("GET", f"/lists/{lst['id']}").status == 200
    assert server.proc.poll() is None
    # A process that must load it again answers artifact_unavailable.
    server.restart()
    assert unavailable(server, pk), query(server, pk)
    assert server.proc.poll() is None


def test_same_size_corruption_is_never_served(server, tenant):
    lst, pk, path = setup_list(server, tenant)
    size = os.path.getsize(path)
    with open(path, "r+b") as f:  # damage the middle (item JSON), keep the size
        f.seek(size // 2)
        chunk = f.read(64)
        f.seek(size // 2)
        f.write(bytes(b ^ 0x5A for b in chunk))
    assert os.path.getsize(path) == size
    server.restart()
    assert unavailable(server, pk), query(server, pk)
    assert "content does not match its hash" in server.read_log()
    # Publishing the same content again rewrites the damaged file; the list comes back.
    v = tenant.publish(lst["id"])
    assert v["state"] == "active", v
    assert wait_until(lambda: query(server, pk).status == 200, timeout=5), query(server, pk)
    body = query(server, pk).json()
    assert json.dumps(body) and len(body["items"]) == 10
