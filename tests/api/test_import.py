"""Black-box tests of bulk import, export and item edits (docs/IMPORT.md) against the real
binary: POST …/items/import, GET …/items/export, GET/PATCH/DELETE …/items/{itemId}, and the
`suggestd import` / `suggestd export` client commands."""
import json
import os
import random
import subprocess
import threading
import time

import pytest

from conftest import BINARY, request

ND = {"Content-Type": "application/x-ndjson"}


def ndjson(items):
    return "".join(json.dumps(it) + "\n" for it in items).encode()


def do_import(t, list_id, items=None, raw=None, mode="append", headers=None):
    body = raw if raw is not None else ndjson(items)
    h = dict(ND)
    h.update(headers or {})
    return t.api("POST", f"/lists/{list_id}/items/import?mode={mode}", raw=body, headers=h)


def export(t, list_id):
    r = t.api("GET", f"/lists/{list_id}/items/export")
    assert r.status == 200, r
    assert r.header("content-type").startswith("application/x-ndjson")
    return [json.loads(line) for line in r.body.decode().splitlines()]


def by_value(items):
    return {it["value"]: it for it in items}


def fields(r):
    return {f["path"]: f["reason"] for f in r.json()["details"]["fields"]}


@pytest.fixture
def ctl(make_server):
    # The control plane alone: these tests never need the runtime listener.
    return make_server(mode="control")


@pytest.fixture
def t(ctl):
    return ctl.tenant()


# -- import -------------------------------------------------------------------------------
def test_append_creates_and_updates_by_value(t):
    lst = t.create_list()
    r = do_import(t, lst["id"], [{"value": "Paris", "rank": 3}, {"value": "Lyon"}])
    assert r.status == 200, r
    assert r.json() == {"mode": "append", "lines": 2, "created": 2, "updated": 0, "deleted": 0,
                        "unchanged": 0}
    before = by_value(export(t, lst["id"]))
    r = do_import(t, lst["id"], [{"value": "Paris", "rank": 5}, {"value": "Nice"}])
    assert r.json()["created"] == 1 and r.json()["updated"] == 1, r
    after = by_value(export(t, lst["id"]))
    assert set(after) == {"Paris", "Lyon", "Nice"}  # append never deletes
    assert after["Paris"]["id"] == before["Paris"]["id"]
    assert after["Paris"]["rank"] == 5
    assert after["Paris"]["createdAt"] == before["Paris"]["createdAt"]


def test_replace_keeps_ids_and_deletes_the_rest(t):
    lst = t.create_list()
    do_import(t, lst["id"], [{"value": "a"}, {"value": "b"}, {"value": "c"}], mode="replace")
    ids = {v: it["id"] for v, it in by_value(export(t, lst["id"])).items()}
    r = do_import(t, lst["id"], [{"value": "b", "rank": 9}, {"value": "c"}, {"value": "d"}],
                  mode="replace")
    assert r.status == 200, r
    n = r.json()
    assert (n["created"], n["updated"], n["deleted"], n["unchanged"]) == (1, 1, 1, 1), n
    now = by_value(export(t, lst["id"]))
    assert set(now) == {"b", "c", "d"}
    assert now["b"]["id"] == ids["b"] and now["c"]["id"] == ids["c"]
    assert now["d"]["id"] not in ids.values()
    # The item API agrees: the deleted one is gone, the kept one answers under its old id.
    assert t.api("GET", f"/lists/{lst['id']}/items/{ids['a']}").status == 404
    assert t.api("GET", f"/lists/{lst['id']}/items/{ids['b']}").json()["rank"] == 9


def test_parent_value_resolves_against_the_final_set(t):
    lst = t.create_list()
    items = [{"value": "Lyon", "parentValue": "France"}, {"value": "France"}]
    r = do_import(t, lst["id"], items, mode="replace")
    assert r.status == 200, r
    got = by_value(export(t, lst["id"]))
    assert got["Lyon"]["parentId"] == got["France"]["id"]
    assert got["Lyon"]["parentValue"] == "France"
    # Append resolves against the list's existing items too.
    r = do_import(t, lst["id"], [{"value": "Paris", "parentValue": "France"}])
    assert r.status == 200, r
    r = do_import(t, lst["id"], [{"value": "Oslo", "parentValue": "Norway"}])
    assert r.status == 400 and fields(r) == {"lines[0].parentValue": "unknown_parent"}, r


def test_invalid_line_in_the_middle_changes_nothing(t):
    lst = t.create_list()
    do_import(t, lst["id"], [{"value": f"v{i}"} for i in range(50)], mode="replace")
    before = export(t, lst["id"])
    lines = [{"value": f"w{i}"} for i in range(100)]
    lines[41] = {"value": "w41", "rank": "high"}
    lines[60] = {"value": "w60", "colour": "red"}
    raw = ndjson(lines[:70]) + b"{not json\n" + ndjson(lines[71:])
    r = do_import(t, lst["id"], raw=raw, mode="replace")
    assert r.status == 400, r
    assert r.json()["code"] == "invalid_request"
    f = fields(r)
    assert set(f) == {"lines[41].rank", "lines[60].colour", "lines[70]"}, f
    assert f["lines[60].colour"] == "unknown_field"
    assert r.json()["details"]["errorCount"] == 3
    assert export(t, lst["id"]) == before


def test_duplicate_values_and_blank_lines(t):
    lst = t.create_list()
    raw = b'{"value":"a"}\n\n  \r\n{"value":"b"}\r\n{"value":"a"}'
    r = do_import(t, lst["id"], raw=raw)
    assert r.status == 400 and fields(r) == {"lines[4].value": "duplicate_value"}, r
    r = do_import(t, lst["id"], raw=b'{"value":"a"}\n\n  \r\n{"value":"b"}\r\n')
    assert r.status == 200 and r.json()["created"] == 2 and r.json()["lines"] == 4, r


def test_more_than_100_bad_lines_are_capped(t):
    lst = t.create_list()
    r = do_import(t, lst["id"], [{"value": ""} for _ in range(250)])
    assert r.status == 400, r
    d = r.json()["details"]
    assert len(d["fields"]) == 100 and d["errorCount"] == 250
    assert d["fields"][0]["path"] == "lines[0].value"
    assert d["fields"][99]["path"] == "lines[99].value"


def test_empty_body_is_refused(t):
    lst = t.create_list()
    do_import(t, lst["id"], [{"value": "a"}], mode="replace")
    for raw in (b"", b"\n  \n"):
        r = do_import(t, lst["id"], raw=raw, mode="replace")
        assert r.status == 400 and fields(r) == {"body": "empty: the body holds no item line"}, r
    assert [it["value"] for it in export(t, lst["id"])] == ["a"]


def test_line_too_long(t):
    lst = t.create_list()
    long_line = json.dumps({"value": "x", "displayValue": "y" * 70000}).encode()
    raw = b'{"value":"ok"}\n' + long_line + b'\n{"value":"ok2"}\n'
    r = do_import(t, lst["id"], raw=raw)
    assert r.status == 400 and fields(r) == {"lines[1]": "line_too_long"}, r
    assert export(t, lst["id"]) == []


def test_body_over_the_cap(make_server):
    s = make_server(["--import-max-bytes", "1000"], mode="control")
    t = s.tenant()
    lst = t.create_list()
    r = do_import(t, lst["id"], [{"value": f"value-{i:05d}"} for i in range(200)])
    assert r.status == 413, r
    assert r.json()["details"]["reason"] == "payload_too_large"
    assert do_import(t, lst["id"], [{"value": "small"}]).status == 200
    # Without a Content-Length (chunked) the server's own count still stops it.
    def chunks():
        for i in range(200):
            yield json.dumps({"value": f"value-{i:05d}"}).encode() + b"\n"
    import http.client
    conn = http.client.HTTPConnection("127.0.0.1", s.control_port, timeout=30)
    conn.request("POST", f"/api/v1/lists/{lst['id']}/items/import", body=chunks(),
                 headers={**ND, "Authorization": f"Bearer {t.secret_key}"},
                 encode_chunked=True)
    r = conn.getresponse()
    assert r.status == 413, r.read()
    conn.close()
    assert [it["value"] for it in export(t, lst["id"])] == ["small"]


def test_checks_before_the_body(t, ctl):
    lst = t.create_list()
    r = do_import(t, lst["id"], [{"value": "a"}], mode="merge")
    assert r.status == 400 and "mode" in fields(r), r
    r = t.api("POST", f"/lists/{lst['id']}/items/import", raw=b'{"value":"a"}\n',
              headers={"Content-Type": "application/json"})
    assert r.status == 415 and r.json()["details"]["reason"] == "unsupported_media_type", r
    r = do_import(t, "lst_nope", [{"value": "a"}])
    assert r.status == 404 and r.json()["code"] == "invalid_list", r
    r = ctl.control("POST", f"/api/v1/lists/{lst['id']}/items/import", raw=b"{}\n",
                       headers=ND)
    assert r.status == 401, r
    t.api("PATCH", f"/lists/{lst['id']}", {"status": "archived"})
    r = do_import(t, lst["id"], [{"value": "a"}])
    assert r.status == 409 and r.json()["details"]["reason"] == "list_archived", r


def test_idempotent_replay(t):
    lst = t.create_list()
    h = {"Idempotency-Key": "sync-2026-11-22"}
    body = [{"value": "a"}, {"value": "b"}]
    r1 = do_import(t, lst["id"], body, mode="replace", headers=h)
    assert r1.status == 200, r1
    r2 = do_import(t, lst["id"], body, mode="replace", headers=h)
    assert r2.status == 200 and r2.body == r1.body, r2
    assert r2.header("idempotent-replayed") == "true"
    # The mode is part of the request the key names.
    r3 = do_import(t, lst["id"], body, mode="append", headers=h)
    assert r3.status == 422 and r3.json()["details"]["reason"] == "idempotency_key_reused", r3
    r4 = do_import(t, lst["id"], body + [{"value": "c"}], mode="replace", headers=h)
    assert r4.status == 422, r4
    assert len(export(t, lst["id"])) == 2


def test_kill_during_import_leaves_old_or_new(make_server):
    s = make_server(mode="control")
    t = s.tenant()
    lst = t.create_list()
    old = [{"value": f"old-{i}"} for i in range(1000)]
    assert do_import(t, lst["id"], old, mode="replace").status == 200
    new_raw = ndjson({"value": f"new-{i}", "rank": i} for i in range(150000))
    seen = set()
    rng = random.Random(int(os.environ.get("SG_CRASH_SEED", "7")))
    for _round in range(4):
        outcome = {}

        def run():
            try:
                outcome["r"] = do_import(t, lst["id"], raw=new_raw, mode="replace")
            except OSError as e:
                outcome["e"] = e

        th = threading.Thread(target=run)
        th.start()
        time.sleep(rng.uniform(0.2, 3.5))
        s.stop(sig_kill=True)
        th.join(30)
        s.start()
        values = [it["value"] for it in export(t, lst["id"])]
        kinds = {v.split("-")[0] for v in values}
        assert kinds in ({"old"}, {"new"}), kinds
        assert len(values) == (1000 if kinds == {"old"} else 150000)
        seen.add(kinds.pop())
        if "r" in outcome and outcome["r"].status == 200:
            assert len(values) == 150000  # an acknowledged import survived
        # Back to the old set for the next round.
        assert do_import(t, lst["id"], old, mode="replace").status == 200
    # SQLite stages in files under the data dir; PostgreSQL in TEMP tables that end with
    # their session (nothing on disk to leave behind).
    if not os.environ.get("SUGGESTD_TEST_DATABASE"):
        assert not os.listdir(os.path.join(s.data_dir, "import-tmp"))


# -- export -------------------------------------------------------------------------------
def test_export_round_trip_is_a_no_op(t):
    lst = t.create_list(localePolicy={"defaultLocale": "en", "supportedLocales": ["en", "fr"]})
    items = [{"value": "France", "aliases": ["FR"], "rank": 4, "displayOrder": 2,
              "locales": {"fr": {"displayValue": "La France"}}},
             {"value": "Paris", "displayValue": "Paris, FR", "parentValue": "France"},
             {"value": "Lyon", "parentValue": "France", "displayOrder": -1}]
    assert do_import(t, lst["id"], items, mode="replace").status == 200
    exported = export(t, lst["id"])
    # Ordered by displayOrder then id, like GET …/items.
    listed = t.api("GET", f"/lists/{lst['id']}/items").json()["data"]
    assert [it["id"] for it in exported] == [it["id"] for it in listed]
    for e, l in zip(exported, listed):
        parent_value = e.pop("parentValue")
        assert e == l
        assert parent_value == ("France" if l["parentId"] else None)
    raw = t.api("GET", f"/lists/{lst['id']}/items/export").body
    r = do_import(t, lst["id"], raw=raw, mode="replace")
    assert r.status == 200, r
    assert r.json()["unchanged"] == 3 and r.json()["created"] == 0, r
    assert t.api("GET", f"/lists/{lst['id']}/items/export").body == raw


def test_export_unknown_list(t):
    r = t.api("GET", "/lists/lst_nope/items/export")
    assert r.status == 404 and r.json()["code"] == "invalid_list", r


# -- item edits -----------------------------------------------------------------------------
def test_patch_and_delete_with_if_match(t):
    lst = t.create_list()
    a, b = t.add_items(lst["id"], [{"value": "a"}, {"value": "b", "rank": 1}])
    path = f"/lists/{lst['id']}/items/{b['id']}"
    g = t.api("GET", path)
    assert g.status == 200 and g.json() == b
    etag = g.header("etag")
    r = t.api("PATCH", path, {"rank": 2}, headers={"If-Match": '"stale"'})
    assert r.status == 412 and r.header("etag") == etag, r
    assert r.json()["details"]["reason"] == "precondition_failed"
    r = t.api("PATCH", path, {"rank": 2, "displayValue": "Bee"}, headers={"If-Match": etag})
    assert r.status == 200, r
    assert r.json()["rank"] == 2 and r.json()["displayValue"] == "Bee"
    assert r.json()["id"] == b["id"] and r.json()["createdAt"] == b["createdAt"]
    assert r.header("etag") != etag
    # A value another item has.
    r = t.api("PATCH", path, {"value": "a"})
    assert r.status == 409 and r.json()["details"]["reason"] == "duplicate_value", r
    # Same validation as POST.
    r = t.api("PATCH", path, {"aliases": [""], "colour": 1})
    assert r.status == 400 and set(fields(r)) == {"aliases[0]", "colour"}, r
    # Parents: unknown, itself, or a cycle are refused; null removes it.
    assert t.api("PATCH", path, {"parentId": "itm_nope"}).status == 400
    assert t.api("PATCH", path, {"parentId": b["id"]}).status == 400
    assert t.api("PATCH", path, {"parentId": a["id"]}).status == 200
    r = t.api("PATCH", f"/lists/{lst['id']}/items/{a['id']}", {"parentId": b["id"]})
    assert r.status == 400 and "parentId" in fields(r), r
    # a has a child now: no delete (no cascade).
    r = t.api("DELETE", f"/lists/{lst['id']}/items/{a['id']}")
    assert r.status == 409 and r.json()["details"]["reason"] == "item_has_children", r
    cur = t.api("GET", path).header("etag")
    r = t.api("DELETE", path, headers={"If-Match": etag})
    assert r.status == 412 and r.header("etag") == cur, r
    r = t.api("DELETE", path, headers={"If-Match": cur})
    assert r.status == 204, r
    r = t.api("GET", path)
    assert r.status == 404 and r.json()["code"] == "invalid_item", r
    assert t.api("DELETE", path).status == 404
    assert t.api("DELETE", f"/lists/{lst['id']}/items/{a['id']}").status == 204
    # The value is free again.
    assert t.api("POST", f"/lists/{lst['id']}/items", {"value": "b"}).status == 201


def test_edits_are_not_served_until_publish(make_server):
    # Every publish is queued (202) so a version waits while the items change.
    s = make_server(["--sync-publish-limit", "0"], mode="control")
    t = s.tenant()
    lst = t.create_list()
    items = t.add_items(lst["id"], [{"value": f"city {i}", "rank": i} for i in range(30)])
    v1 = t.publish(lst["id"])
    assert v1["state"] == "active", v1
    # A version accepted before edits keeps exactly the content of that moment, even if it
    # is compiled after them: identical content gives an identical artifact.
    r = t.api("POST", f"/lists/{lst['id']}/versions")
    assert r.status == 202, r
    n2 = r.json()["versionNumber"]
    t.api("PATCH", f"/lists/{lst['id']}/items/{items[0]['id']}", {"value": "renamed"})
    t.api("DELETE", f"/lists/{lst['id']}/items/{items[1]['id']}")
    do_import(t, lst["id"], [{"value": "brand new"}])
    deadline = time.time() + 30
    v2 = r.json()
    # staged is the moment between compile and activation: wait past both pending states
    while v2["state"] in ("queued", "staged") and time.time() < deadline:
        time.sleep(0.1)
        v2 = t.api("GET", f"/lists/{lst['id']}/versions/{n2}").json()
    assert v2["state"] == "active" and v2["contentHash"] == v1["contentHash"], (v1, v2)
    assert v2["itemCount"] == 30
    # The served version did not move with the edits; the next publish takes them.
    assert t.api("GET", f"/lists/{lst['id']}").json()["activeVersionNumber"] == n2
    v3 = t.publish(lst["id"])
    assert v3["state"] == "active" and v3["contentHash"] != v1["contentHash"], v3
    assert v3["itemCount"] == 30


# -- CLI ----------------------------------------------------------------------------------------
def cli(*args, timeout=120):
    return subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=timeout)


def test_cli_import_export_publish(ctl, tmp_path):
    server = ctl
    t = server.tenant()
    lst = t.create_list()
    key = tmp_path / "key"
    key.write_text(t.secret_key + "\n")
    src = tmp_path / "items.ndjson"
    src.write_bytes(ndjson([{"value": f"item {i}", "rank": i % 7} for i in range(5000)]))
    url = f"http://127.0.0.1:{server.control_port}"
    common = ["--control-url", url, "--secret-key-file", str(key), "--list", lst["id"]]
    r = cli("import", *common, str(src), "--replace", "--publish")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["created"] == 5000 and out["mode"] == "replace"
    assert out["version"]["state"] == "active" and out["version"]["itemCount"] == 5000
    # stderr is not a terminal here: plain progress lines, no carriage returns, no key.
    assert "import:" in r.stderr and "\r" not in r.stderr
    assert t.secret_key not in r.stderr + r.stdout
    dest = tmp_path / "out.ndjson"
    r = cli("export", *common, str(dest))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["items"] == 5000
    r = cli("import", *common, str(dest), "--replace")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["unchanged"] == 5000
    # Errors are one JSON object on stderr and a non-zero exit.
    bad = tmp_path / "bad.ndjson"
    bad.write_text('{"value": 1}\n')
    r = cli("import", *common, str(bad))
    assert r.returncode != 0
    err = json.loads(r.stderr.strip().splitlines()[-1])
    assert err["status"] == 400 and err["response"]["details"]["fields"][0]["path"] == "lines[0].value"
    r = cli("import", "--control-url", url, "--secret-key-file", str(tmp_path / "missing"),
            "--list", lst["id"], str(src))
    assert r.returncode != 0 and "error" in json.loads(r.stderr)


def test_runtime_serves_edits_only_after_publish(make_server):
    # With the runtime merged: what a user queries changes only when a publish activates.
    from conftest import wait_until
    s = make_server()
    t = s.tenant()
    lst = t.create_list(visibility="public")
    assert do_import(t, lst["id"], [{"value": "Paris"}, {"value": "Lyon"}],
                     mode="replace").status == 200
    v1 = t.publish(lst["id"])
    pk = t.publishable_key(lst["id"])["publishableKey"]

    def served(text):
        r = s.runtime("GET", "/v1/query", params={"key": pk, "q": text})
        return [i["value"] for i in r.json().get("items", [])]

    assert wait_until(lambda: served("par") == ["Paris"], timeout=3)
    paris = by_value(export(t, lst["id"]))["Paris"]
    t.api("PATCH", f"/lists/{lst['id']}/items/{paris['id']}", {"value": "Parma"})
    do_import(t, lst["id"], [{"value": "Lille"}])
    time.sleep(0.5)
    assert served("par") == ["Paris"] and served("lil") == []
    v2 = t.publish(lst["id"])
    assert v2["contentHash"] != v1["contentHash"]
    assert wait_until(lambda: served("par") == ["Parma"], timeout=3)
    assert served("lil") == ["Lille"]
