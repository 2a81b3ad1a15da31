"""The dashboard API behind the pages added last (docs/DASHBOARD.md): the live preview of a
list's active version without a publishable key, paged applications, the audit-log and
quota rights per role, the password change's own rate limit, and usage with no data
source configured."""
import os
import subprocess
import types

from conftest import BINARY, Server, free_port, request, wait_until
from control_helpers import assert_error
from dashboard_helpers import PASSWORD, Member, create_member, workspace_with_members


def published_private_list(t):
    lst = t.create_list("Cities")  # private: the runtime would need a token
    t.add_items(lst["id"], [{"value": "Paris", "rank": 10}, {"value": "Parma", "rank": 5},
                            {"value": "Berlin", "rank": 9}])
    v = t.publish(lst["id"])
    assert v["state"] == "active", v
    return lst


def test_preview_answers_the_active_version_of_a_private_list(server):
    t, ms = workspace_with_members(server, roles=("viewer",))
    lst = published_private_list(t)
    r = ms["viewer"].call("GET", f"/lists/{lst['id']}/preview?q=Par")
    assert r.status == 200, r
    b = r.json()
    assert [i["value"] for i in b["items"]] == ["Paris", "Parma"], b
    assert b["list"] == {"id": lst["id"]} and b["versionNumber"] == 1
    # The highlight is the runtime's: the three characters typed.
    assert b["items"][0]["highlight"] == [[0, 3]], b
    # Typo tolerance from the list's policy (4+ characters allow one typo).
    assert [i["value"] for i in ms["viewer"].call(
        "GET", f"/lists/{lst['id']}/preview?q=berlim").json()["items"]] == ["Berlin"]
    assert len(ms["viewer"].call("GET", f"/lists/{lst['id']}/preview?q=pa&limit=1")
               .json()["items"]) == 1


def test_preview_follows_the_list_and_refuses_bad_input(server):
    t, ms = workspace_with_members(server, roles=("viewer",))
    v = ms["viewer"]
    lst = t.create_list("Empty")
    assert_error(v.call("GET", f"/lists/{lst['id']}/preview?q=pa"), 404, "list_not_published")
    assert_error(v.call("GET", f"/lists/{lst['id']}/preview"), 400, "invalid_request", field="q")
    assert_error(v.call("GET", f"/lists/{lst['id']}/preview?q=" + "a" * 256), 400,
                 "query_too_long")
    assert_error(v.call("GET", f"/lists/{lst['id']}/preview?q=pa&limit=11"), 400,
                 "invalid_request", field="limit")
    assert v.call("GET", "/lists/lst_nope/preview?q=pa").status == 404
    # Another workspace's list is not found, exactly like a missing one.
    other = server.tenant()
    theirs = published_private_list(other)
    assert v.call("GET", f"/lists/{theirs['id']}/preview?q=pa").status == 404
    # A republish is seen at once: the preview loads the new version's artifact.
    mine = published_private_list(t)
    assert v.call("GET", f"/lists/{mine['id']}/preview?q=lyo").json()["items"] == []
    t.add_items(mine["id"], [{"value": "Lyon"}])
    assert t.publish(mine["id"])["state"] == "active"
    r = v.call("GET", f"/lists/{mine['id']}/preview?q=lyo").json()
    assert [i["value"] for i in r["items"]] == ["Lyon"] and r["versionNumber"] == 2, r
    # Shorter than the list's minimum: the runtime's typed answer, no items.
    assert t.api("PATCH", f"/lists/{mine['id']}", {"queryPolicy": {"minQueryChars": 3}}).status == 200
    r = v.call("GET", f"/lists/{mine['id']}/preview?q=ly").json()
    assert r["items"] == [] and r["code"] == "query_too_short", r
    # No session, no preview.
    assert request(server.control_port, "GET",
                   f"/dashboard/api/lists/{mine['id']}/preview?q=lyo").status == 401


def test_preview_is_not_billed(server):
    t, ms = workspace_with_members(server, roles=("owner",))
    o = ms["owner"]
    assert o.call("PATCH", f"/applications/{t.application_id}", {"monthlyQuota": 1}).status == 200
    lst = published_private_list(t)
    for _ in range(5):
        assert len(o.call("GET", f"/lists/{lst['id']}/preview?q=par").json()["items"]) == 2
    app = [a for a in o.call("GET", "/usage").json()["applications"]
           if a["id"] == t.application_id][0]
    assert app["used"] == 0, app


def test_applications_are_paged(server):
    t, ms = workspace_with_members(server, roles=("admin",))
    a = ms["admin"]
    for i in range(4):
        assert a.call("POST", "/applications", {"name": f"App {i}"}).status == 201
    seen, cursor = [], None
    while True:
        r = a.call("GET", "/applications?limit=2" + (f"&cursor={cursor}" if cursor else ""))
        assert r.status == 200, r
        b = r.json()
        assert len(b["data"]) <= 2
        seen += [x["name"] for x in b["data"]]
        cursor = b.get("nextCursor")
        if not cursor:
            break
    # Every application exactly once, in the order of the unpaged list.
    assert len(seen) == 5 and len(set(seen)) == 5, seen
    assert seen == [x["name"] for x in a.call("GET", "/applications?limit=100").json()["data"]]
    assert_error(a.call("GET", "/applications?limit=0"), 400, "invalid_request", field="limit")
    assert_error(a.call("GET", "/applications?cursor=forged"), 400, "invalid_request",
                 field="cursor")


def test_quota_audit_and_capabilities_per_role(server):
    t, ms = workspace_with_members(server)
    caps = {r: m.call("GET", "/me").json()["capabilities"] for r, m in ms.items()}
    assert [r for r in ms if caps[r]["setQuotas"]] == ["owner"]
    assert [r for r in ms if caps[r]["readAudit"]] == ["admin", "owner"]
    for role in ("viewer", "data_steward", "admin"):
        assert_error(ms[role].call("PATCH", f"/applications/{t.application_id}",
                                   {"monthlyQuota": 5}), 403, "forbidden",
                     reason="insufficient_role")
    r = ms["owner"].call("PATCH", f"/applications/{t.application_id}", {"monthlyQuota": 5})
    assert r.status == 200 and r.json()["monthlyQuota"] == 5, r
    for role in ("viewer", "data_steward"):
        assert_error(ms[role].call("GET", "/audit"), 403, "forbidden", reason="insufficient_role")
    entries = ms["admin"].call("GET", "/audit?limit=1")
    assert entries.status == 200 and entries.json()["nextCursor"], entries
    assert entries.json()["data"][0]["action"] == "application.set_quota"


def test_password_change_attempts_are_rate_limited(make_server):
    s = make_server(["--signin-rate-email", "3"])
    t = s.tenant()
    create_member(s, t.workspace_id, "owner@example.com", "owner")
    m = Member(s, "owner@example.com")
    codes = [m.call("POST", "/me/password", {"currentPassword": f"guess {i}",
                                             "newPassword": "a brand new passphrase"}).status
             for i in range(5)]
    assert codes[:2] == [401, 401] and codes[-1] == 429, codes
    r = m.call("POST", "/me/password", {"currentPassword": PASSWORD,
                                        "newPassword": "a brand new passphrase"})
    assert_error(r, 429, "rate_limited")
    assert int(r.header("retry-after")) >= 1
    # The member's session and sign-in are untouched by the guesses.
    assert m.call("GET", "/me").status == 200


def test_usage_without_a_data_source_says_so(tmp_path):
    """Usage and selections answer that no data source is configured (used: null, not 0),
    and say so."""
    data = str(tmp_path)
    first = Server(data, mode="control").start()  # lays out the database and edge store
    t = first.tenant()
    create_member(first, t.workspace_id, "viewer@example.com", "viewer")
    create_member(first, t.workspace_id, "ds@example.com", "data_steward")
    first.stop()
    port = free_port()
    log = open(os.path.join(data, "bare.log"), "ab")
    proc = subprocess.Popen([BINARY, "control", "--database", first.database or data, "--edge",
                             os.path.join(data, "edge"), "--control-listen",
                             f"127.0.0.1:{port}"], stdout=log, stderr=log)
    try:
        wait_until(lambda: _healthy(port), timeout=10)
        s = types.SimpleNamespace(control_port=port, data_dir=data)
        v, ds = Member(s, "viewer@example.com"), Member(s, "ds@example.com")
        u = v.call("GET", "/usage").json()
        assert u["usageAvailable"] is False, u
        assert u["applications"] and all(a["used"] is None for a in u["applications"]), u
        lid = ds.call("POST", "/lists", {"name": "X"}).json()["id"]
        sel = v.call("GET", f"/lists/{lid}/selections").json()
        assert sel["eventsAvailable"] is False and sel["total"] == 0, sel
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()


def _healthy(port):
    try:
        return request(port, "GET", "/healthz", timeout=1).status == 200
    except OSError:
        return False
