"""Backups (issue 27; docs/STORE.md "Backups"): `suggestd admin backup --to FILE` takes a
consistent online copy of an SQLite store (and the artifacts it names) while writes go on;
`suggestd admin restore --from FILE` puts it into an empty data dir; after `admin edge
rebuild`, every write acknowledged before the backup started is there and the runtime
answers byte for byte as before. On PostgreSQL the command points at pg_dump."""
import json
import os
import subprocess
import threading
import time

import pytest

import conftest
from conftest import BINARY, NO_LIMITS, Server, wait_until

CITIES = [{"value": f"{n} {i}", "displayValue": f"{n.title()} {i}", "rank": i % 13}
          for i in range(40) for n in ("paris", "parma", "porto", "prague")]
QUERIES = ["pa", "par", "paris 1", "prag", "pxris", "po", "zzz"]


def answers(s, pk):
    out = []
    for q in QUERIES:
        r = s.runtime("GET", "/v1/query", params={"key": pk, "q": q})
        out.append((q, r.status, r.body))
    r = s.runtime("GET", "/v1/bootstrap", params={"key": pk})
    out.append(("bootstrap", r.status, r.body))
    return out


def admin(args):
    return subprocess.run([BINARY, "admin", *args], capture_output=True, text=True, timeout=120)


def test_backup_while_writing_then_restore_serves_the_same(make_server, tmp_path):
    s = make_server()
    if (s.database or "").startswith("postgres"):
        r = admin(["backup", "--to", str(tmp_path / "b"), "--data-dir", s.data_dir,
                   *s.store_args()])
        assert r.returncode != 0 and "pg_dump" in r.stderr, r.stderr
        pytest.skip("PostgreSQL: test_pg_dump_restore_and_edge_rebuild")
    t = s.tenant()
    lst = t.create_list(visibility="public")
    t.add_items(lst["id"], CITIES)
    assert t.publish(lst["id"])["state"] == "active"
    pk = t.publishable_key(lst["id"])["publishableKey"]
    assert wait_until(lambda: s.runtime("GET", "/v1/query", params={"key": pk, "q": "pa"})
                      .status == 200, timeout=10)
    before = answers(s, pk)

    # Writes go on during the backup: every acknowledged one is recorded with its time.
    acked, stop = [], threading.Event()

    def writer():
        i = 0
        while not stop.is_set():
            r = t.api("POST", f"/lists/{lst['id']}/items", {"value": f"written {i}"})
            if r.status == 201:
                acked.append((time.time(), r.json()["id"]))
            i += 1

    th = threading.Thread(target=writer)
    th.start()
    time.sleep(0.5)
    backup = str(tmp_path / "suggestd.backup")
    started = time.time()
    r = admin(["backup", "--to", backup, "--data-dir", s.data_dir])
    time.sleep(0.3)
    stop.set()
    th.join()
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["artifacts"] >= 1 and out["bytes"] == os.path.getsize(backup)
    before_backup = [i for ts, i in acked if ts < started]
    assert len(before_backup) > 5 and len(acked) > len(before_backup)
    # A backup never overwrites a file.
    again = admin(["backup", "--to", backup, "--data-dir", s.data_dir])
    assert again.returncode != 0 and "exists" in again.stderr

    # Restored into an empty data dir, the edge rebuilt, then served.
    d = str(tmp_path / "restored")
    r = admin(["restore", "--from", backup, "--data-dir", d])
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["artifacts"] == out["artifacts"]
    r = admin(["restore", "--from", backup, "--data-dir", d])
    assert r.returncode != 0 and "empty data dir" in r.stderr
    r = admin(["edge", "rebuild", "--data-dir", d])
    assert r.returncode == 0, r.stderr
    s.stop()
    s2 = Server(d, extra=NO_LIMITS).start()
    try:
        ids = set()
        cursor = None
        while True:
            path = f"/api/v1/lists/{lst['id']}/items?limit=100" + (f"&cursor={cursor}" if cursor else "")
            page = s2.control("GET", path, key=t.secret_key).json()
            ids.update(x["id"] for x in page["data"])
            cursor = page.get("nextCursor")
            if not cursor:
                break
        missing = [i for i in before_backup if i not in ids]
        assert not missing, f"{len(missing)} acknowledged writes missing"
        assert wait_until(lambda: answers(s2, pk) == before, timeout=10), answers(s2, pk)
    finally:
        s2.stop()


def test_restore_refuses_what_is_not_a_backup(tmp_path):
    bad = tmp_path / "bad"
    bad.write_bytes(b"not a database at all")
    r = admin(["restore", "--from", str(bad), "--data-dir", str(tmp_path / "d")])
    assert r.returncode != 0 and "not a readable suggestd backup" in r.stderr
    assert not os.path.exists(tmp_path / "d" / "suggestd.db")
    r = admin(["restore", "--data-dir", str(tmp_path / "d")])
    assert r.returncode != 0 and "--from" in r.stderr


PG_BIN = os.environ.get("PG_BIN", "/usr/lib/postgresql/15/bin")


def test_pg_dump_restore_and_edge_rebuild(make_server, tmp_path):
    """The documented PostgreSQL procedure (docs/STORE.md "Backups"): pg_dump of a live
    store, pg_restore into a new empty database, `admin edge rebuild` onto a new edge, and
    the runtime answers as before."""
    if not conftest.ON_POSTGRES:
        pytest.skip("runs in the PostgreSQL suite (make api-pg)")
    s = make_server()
    t = s.tenant()
    lst = t.create_list(visibility="public")
    t.add_items(lst["id"], CITIES)
    assert t.publish(lst["id"])["state"] == "active"
    pk = t.publishable_key(lst["id"])["publishableKey"]
    assert wait_until(lambda: s.runtime("GET", "/v1/query", params={"key": pk, "q": "pa"})
                      .status == 200, timeout=10)
    before = answers(s, pk)
    dump = str(tmp_path / "suggestd.dump")
    r = subprocess.run([os.path.join(PG_BIN, "pg_dump"), "--format=custom", "--file", dump,
                        s.database], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    name = "sg_t_restored_" + os.urandom(6).hex()
    conftest.psql(f'CREATE DATABASE "{name}"')
    conftest._created.append(name)
    url = conftest._url_of(name)
    r = subprocess.run([os.path.join(PG_BIN, "pg_restore"), "--no-owner", "--dbname", url, dump],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    s.stop()
    d = str(tmp_path / "restored")
    os.makedirs(d)
    r = admin(["edge", "rebuild", "--database", url, "--edge", os.path.join(d, "edge")])
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["artifacts"]["restored"] >= 1
    s2 = Server(d, extra=NO_LIMITS, database=url, edge=os.path.join(d, "edge")).start()
    try:
        assert wait_until(lambda: answers(s2, pk) == before, timeout=10), answers(s2, pk)
    finally:
        s2.stop()
