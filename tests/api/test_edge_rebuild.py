"""`suggestd admin edge rebuild` (docs/DESIGN.md §6): the edge is a projection of the store. After
the edge is wiped, a rebuild rewrites every record from the store and restores every
artifact the served versions need, so the runtime answers byte for byte as before. On
PostgreSQL the artifacts come back from the store's durable copies; a SQLite store keeps
none (its data dir's edge directory is the durable copy), so there a rebuild rewrites the
records and reports an artifact that is gone instead of restoring it."""
import json
import os
import shutil

from conftest import ON_POSTGRES, wait_until

QUERIES = ("pa", "par", "ly", "p", "zz")


def published(server):
    t = server.tenant()
    lst = t.create_list("Cities", visibility="public")
    t.add_items(lst["id"], [{"value": v, "rank": r} for v, r in
                            (("Paris", 3), ("Parma", 2), ("Lyon", 1), ("Pau", 0))])
    assert t.publish(lst["id"])["state"] == "active"
    # A second version: the previous one's artifact is needed too (rollback).
    t.add_items(lst["id"], [{"value": "Lyons-la-Forêt"}])
    v2 = t.publish(lst["id"])
    assert v2["state"] == "active"
    pk = t.publishable_key(lst["id"], origins=["https://shop.example.com"])["publishableKey"]
    # A private list, so signing keys and tokens are part of what must come back.
    priv = t.create_list("Private")
    t.add_items(priv["id"], [{"value": "Secret place"}])
    assert t.publish(priv["id"])["state"] == "active"
    return t, lst, pk, v2


def answers(server, pk):
    out = {}
    for q in QUERIES:
        r = server.runtime("GET", "/v1/query", params={"key": pk, "q": q},
                           headers={"Origin": "https://shop.example.com"})
        out[q] = (r.status, r.body, r.header("etag"))
    return out


def wipe(edge, keep_artifacts):
    for name in os.listdir(edge):
        if keep_artifacts and name == "artifacts":
            continue
        p = os.path.join(edge, name)
        shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)


def records(edge):
    """Every record file of the edge, relative to it (no artifacts, no bookkeeping)."""
    out = set()
    for kind in ("lists", "keys", "apps", "workspaces", "subscriptions", "signing-keys"):
        d = os.path.join(edge, kind)
        if os.path.isdir(d):
            out |= {f"{kind}/{f}" for f in os.listdir(d) if f.endswith(".json")}
    return out


def test_wiped_edge_is_rebuilt_and_answers_byte_for_byte(make_server):
    s = make_server()
    t, lst, pk, v2 = published(s)
    assert wait_until(lambda: s.runtime("GET", "/v1/query", params={"key": pk, "q": "ly"},
                                        headers={"Origin": "https://shop.example.com"})
                      .json().get("items"), timeout=5)
    before = answers(s, pk)
    assert before["par"][0] == 200 and b"Paris" in before["par"][1]
    edge = os.path.join(s.data_dir, "edge")
    had = records(edge)
    s.stop()
    # On SQLite the edge's artifacts are the only copy: wipe everything else.
    wipe(edge, keep_artifacts=not ON_POSTGRES)
    out = s.admin("edge", "rebuild")
    assert out["records"]["written"] >= len(had), out
    assert out["records"]["removed"] == 0
    art = out["artifacts"]
    assert art["needed"] == 3, out  # both versions of Cities, the private list's
    if ON_POSTGRES:
        assert art["storeKeepsCopies"] is True and art["restored"] == 3, out
    else:
        assert art["storeKeepsCopies"] is False and art["present"] == 3, out
    assert records(edge) == had
    s.start()
    assert wait_until(lambda: answers(s, pk) == before, timeout=5), (answers(s, pk), before)
    # The control plane goes on from the rebuilt edge: a new publish is served.
    t.add_items(lst["id"], [{"value": "Pamplona"}])
    assert t.publish(lst["id"])["state"] == "active"
    assert wait_until(lambda: b"Pamplona" in s.runtime(
        "GET", "/v1/query", params={"key": pk, "q": "pam"},
        headers={"Origin": "https://shop.example.com"}).body, timeout=5)


def test_rebuild_removes_records_the_store_does_not_have(make_server):
    s = make_server()
    t, lst, pk, _ = published(s)
    edge = os.path.join(s.data_dir, "edge")
    bogus = os.path.join(edge, "lists", "lst_nosuchlist.json")
    with open(os.path.join(edge, "lists", f"{lst['id']}.json")) as f:
        rec = json.load(f)
    rec["id"] = "lst_nosuchlist"
    with open(bogus, "w") as f:
        json.dump(rec, f)
    out = s.admin("edge", "rebuild")
    assert out["records"]["removed"] == 1, out
    assert not os.path.exists(bogus)
    assert os.path.exists(os.path.join(edge, "lists", f"{lst['id']}.json"))
    # Rebuilding a healthy edge changes nothing a user sees, while the server runs: once
    # the runtime has loaded the key published above (it polls the edge), the answers
    # before and after a second rebuild are the same bytes.
    assert wait_until(lambda: all(a[0] == 200 for a in answers(s, pk).values()), timeout=5)
    before = answers(s, pk)
    again = s.admin("edge", "rebuild")
    assert again["records"]["removed"] == 0 and again["artifacts"]["restored"] == 0
    assert answers(s, pk) == before


def test_rebuild_restores_or_reports_a_lost_artifact(make_server):
    s = make_server()
    t, lst, pk, v2 = published(s)
    art = os.path.join(s.data_dir, "edge", "artifacts", v2["contentHash"][7:] + ".sga")
    assert os.path.exists(art)
    os.remove(art)
    r = s.admin("edge", "rebuild", check=False)
    if ON_POSTGRES:
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["artifacts"]["restored"] == 1
        assert os.path.exists(art)
    else:
        assert r.returncode != 0 and r.stdout == ""
        err = json.loads(r.stderr)["error"]
        assert v2["contentHash"] in err and "keeps no copies" in err, err
