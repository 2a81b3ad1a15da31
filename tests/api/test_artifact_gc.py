"""Artifact garbage collection (docs/DESIGN.md §5; issue 11, defect 7): artifacts other than each
list's active and previous version are deleted from the edge --artifact-grace seconds
(default 60) after they stop being served."""
import os
import time

from conftest import wait_until


def artifact_files(server):
    d = os.path.join(server.data_dir, "edge", "artifacts")
    return {f[:-4] for f in os.listdir(d) if f.endswith(".sga") and len(f) == 68}


def publish_versions(tenant, lst, n):
    hashes = []
    for i in range(n):
        tenant.add_items(lst["id"], [{"value": f"version {i} item"}])
        v = tenant.publish(lst["id"])
        assert v["state"] == "active", v
        hashes.append(v["contentHash"].split(":", 1)[1])
    return hashes


def test_only_active_and_previous_survive_the_grace(make_server):
    server = make_server(extra=["--artifact-grace", "1"])
    tenant = server.tenant()
    a = tenant.create_list(name="A", visibility="public")
    b = tenant.create_list(name="B", visibility="public")
    ha = publish_versions(tenant, a, 4)
    hb = publish_versions(tenant, b, 1)
    assert set(ha) | set(hb) <= artifact_files(server)
    keep = {ha[-1], ha[-2], hb[-1]}
    assert wait_until(lambda: artifact_files(server) == keep, timeout=10), \
        (artifact_files(server), keep)
    assert "artifact deleted" in server.read_log()
    # What is served is untouched, across a restart too.
    pk = tenant.publishable_key(a["id"])["publishableKey"]
    q = lambda: server.runtime("GET", "/v1/query", params={"key": pk, "q": "version"})
    assert wait_until(lambda: q().status == 200)
    assert len(q().json()["items"]) == 4
    server.restart()
    assert q().status == 200
    # Nothing that is kept goes later.
    time.sleep(2.5)
    assert artifact_files(server) == keep


def test_default_grace_keeps_replaced_artifacts_for_a_while(make_server):
    server = make_server(env={"SUGGESTD_ARTIFACT_GRACE": "3600"})
    tenant = server.tenant()
    a = tenant.create_list(name="A")
    ha = publish_versions(tenant, a, 3)
    time.sleep(2.5)  # the worker runs every second
    assert set(ha) <= artifact_files(server)


def test_bad_grace_is_refused(make_server, tmp_path):
    import subprocess
    from conftest import BINARY
    r = subprocess.run([BINARY, "serve", "--data-dir", str(tmp_path), "--artifact-grace", "x"],
                       capture_output=True, text=True, timeout=10)
    assert r.returncode != 0 and "artifact-grace" in r.stderr
