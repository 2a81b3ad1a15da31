"""Rollback (issue 27; docs/DESIGN.md §10; docs/PUBLISHING.md "Rollback"):
POST /api/v1/lists/{id}/versions/{n}/activate makes a superseded version active again,
through the outbox like any activation, while its artifact is kept (--keep-versions)."""
import os
import time

from conftest import wait_until


def publish(t, lst, items):
    r = t.api("POST", f"/lists/{lst['id']}/items/import?mode=replace",
              raw="\n".join(__import__("json").dumps(i) for i in items).encode(),
              headers={"Content-Type": "application/x-ndjson"})
    assert r.status in (200, 201, 202), r
    v = t.publish(lst["id"])
    assert v["state"] == "active", v
    return v


def served_hash(s, pk):
    r = s.runtime("GET", "/v1/bootstrap", params={"key": pk})
    return r.json()["activeVersionHash"] if r.status == 200 else None


def two_versions(s):
    t = s.tenant()
    lst = t.create_list(visibility="public")
    v1 = publish(t, lst, [{"value": "alpha"}, {"value": "alps"}])
    v2 = publish(t, lst, [{"value": "beta"}, {"value": "betta"}])
    pk = t.publishable_key(lst["id"])["publishableKey"]
    assert wait_until(lambda: served_hash(s, pk) == v2["contentHash"], timeout=10)
    return t, lst, v1, v2, pk


def activate(t, lst, n, headers=None):
    return t.api("POST", f"/lists/{lst['id']}/versions/{n}/activate", headers=headers)


def test_rollback_serves_the_previous_version_again(server):
    t, lst, v1, v2, pk = two_versions(server)
    before = time.time()
    r = activate(t, lst, v1["versionNumber"])
    assert r.status == 200, r
    v = r.json()
    assert v["versionNumber"] == v1["versionNumber"] and v["state"] == "active"
    assert v["contentHash"] == v1["contentHash"]
    assert v["edgeSync"]["state"] in ("synced", "pending")
    assert r.header("ETag") == f'"{v1["contentHash"]}"'
    activated = v["activatedAt"]
    # activatedAt is now (to the second), not the version's first activation.
    assert activated >= time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(before)))
    assert wait_until(lambda: served_hash(server, pk) == v1["contentHash"], timeout=10)
    q = server.runtime("GET", "/v1/query", params={"key": pk, "q": "al"}).json()
    assert [i["displayValue"] for i in q["items"]] == ["alpha", "alps"]
    got = t.api("GET", f"/lists/{lst['id']}/versions/{v2['versionNumber']}").json()
    assert got["state"] == "superseded"
    listed = t.api("GET", f"/lists/{lst['id']}").json()
    assert listed["activeVersionNumber"] == v1["versionNumber"]
    assert listed["activeContentHash"] == v1["contentHash"]
    # Already active: 200 and nothing changes.
    again = activate(t, lst, v1["versionNumber"])
    assert again.status == 200 and again.json()["activatedAt"] == activated
    # And forward again to v2.
    r = activate(t, lst, v2["versionNumber"])
    assert r.status == 200 and r.json()["state"] == "active"
    assert wait_until(lambda: served_hash(server, pk) == v2["contentHash"], timeout=10)
    # A new publish still goes forward from there.
    v3 = publish(t, lst, [{"value": "gamma"}])
    assert v3["versionNumber"] > v2["versionNumber"]
    assert wait_until(lambda: served_hash(server, pk) == v3["contentHash"], timeout=10)


def test_rollback_errors(server):
    t, lst, v1, v2, pk = two_versions(server)
    r = activate(t, lst, 99)
    assert r.status == 400 and r.json()["details"]["fields"][0]["path"] == "version", r
    r = activate(t, lst, "x")
    assert r.status == 400, r
    r = t.api("POST", "/lists/lst_0000000000000000000000/versions/1/activate")
    assert r.status == 404, r
    # If-Match on the list.
    r = activate(t, lst, v1["versionNumber"], headers={"If-Match": '"nope"'})
    assert r.status == 412 and r.header("ETag"), r
    etag = t.api("GET", f"/lists/{lst['id']}").header("ETag")
    r = activate(t, lst, v1["versionNumber"], headers={"If-Match": etag})
    assert r.status == 200, r
    # An archived list accepts no rollback.
    r = t.api("PATCH", f"/lists/{lst['id']}", {"status": "archived"})
    assert r.status == 200
    r = activate(t, lst, v2["versionNumber"])
    assert r.status == 409 and r.json()["details"]["reason"] == "list_archived", r


def test_a_version_past_keep_versions_is_not_available(make_server):
    s = make_server(extra=["--keep-versions", "1", "--artifact-grace", "1"])
    t, lst, v1, v2, pk = two_versions(s)
    edge = os.path.join(s.data_dir, "edge", "artifacts")
    gone = v1["contentHash"].split(":")[1] + ".sga"
    if s.edge_url is None:
        assert wait_until(lambda: not os.path.exists(os.path.join(edge, gone)), timeout=20)
    else:
        time.sleep(5)
    r = activate(t, lst, v1["versionNumber"])
    assert r.status == 409 and r.json()["details"]["reason"] == "version_not_available", r
    assert served_hash(s, pk) == v2["contentHash"]


def test_the_previous_version_is_kept_by_default(make_server):
    s = make_server(extra=["--artifact-grace", "1"])
    t, lst, v1, v2, pk = two_versions(s)
    v3 = publish(t, lst, [{"value": "gamma"}])
    time.sleep(3)  # several collection passes past the grace
    # v2 (the one before the active v3) is kept; v1 is not.
    assert activate(t, lst, v1["versionNumber"]).json()["details"]["reason"] == \
        "version_not_available"
    r = activate(t, lst, v2["versionNumber"])
    assert r.status == 200, r
    assert wait_until(lambda: served_hash(s, pk) == v2["contentHash"], timeout=10)
    # After the rollback, v3 (active just before) is the one kept besides v2.
    time.sleep(3)
    assert activate(t, lst, v3["versionNumber"]).status == 200


def test_rollback_from_the_cli(server, tmp_path):
    import json
    import subprocess
    from conftest import BINARY
    t, lst, v1, v2, pk = two_versions(server)
    keyf = tmp_path / "sk"
    keyf.write_text(t.secret_key + "\n")
    base = [BINARY, "versions", "activate", str(v1["versionNumber"]), "--control-url",
            f"http://127.0.0.1:{server.control_port}", "--secret-key-file", str(keyf),
            "--list", lst["id"]]
    r = subprocess.run(base, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["state"] == "active" and out["versionNumber"] == v1["versionNumber"]
    assert "edgeSync" in out
    assert wait_until(lambda: served_hash(server, pk) == v1["contentHash"], timeout=10)
    # A stale If-Match is refused with the server's answer; a bad number never leaves.
    r = subprocess.run(base + ["--if-match", '"stale"'], capture_output=True, text=True, timeout=30)
    assert r.returncode != 0 and '"status":412' in r.stderr, r.stderr
    bad = base[:3] + ["x"] + base[4:]
    r = subprocess.run(bad, capture_output=True, text=True, timeout=30)
    assert r.returncode != 0 and "usage: suggestd versions activate" in r.stderr
