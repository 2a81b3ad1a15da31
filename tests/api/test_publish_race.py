"""A synchronous publish answers 200 only with an active version, or a draft with
validationErrors (docs/DESIGN.md §2; issue 11, defect 9: concurrent publishes of one list could answer
200 with "superseded")."""
import threading

from conftest import wait_until


def test_concurrent_sync_publishes_answer_only_active_or_draft(server, tenant):
    lst = tenant.create_list()
    tenant.add_items(lst["id"], [{"value": f"item {i}"} for i in range(300)])
    results, lock = [], threading.Lock()

    def publisher():
        for _ in range(6):
            r = tenant.api("POST", f"/lists/{lst['id']}/versions")
            with lock:
                results.append(r)

    threads = [threading.Thread(target=publisher) for _ in range(6)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert len(results) == 36
    bad = [(r.status, r.json().get("state")) for r in results
           if r.status == 200 and r.json()["state"] != "active"]
    assert not bad, bad
    assert all(r.status in (200, 202) for r in results), [r.status for r in results]
    # The newest version is the one served, and none is left unresolved.
    newest = max(r.json()["versionNumber"] for r in results)
    assert wait_until(lambda: tenant.api("GET", f"/lists/{lst['id']}").json()
                      ["activeVersionNumber"] == newest, timeout=30)
    versions = tenant.api("GET", f"/lists/{lst['id']}/versions?limit=100").json()["data"]
    assert {v["state"] for v in versions} <= {"active", "superseded"}, versions
