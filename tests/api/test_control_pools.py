"""One tenant's slow work must not stall another tenant's control plane (issue 22 item 3,
docs/DASHBOARD.md "Worker pools"). Password hashing (sign-in, invitations, password
changes) and preview artifact loads run on bounded worker pools with the connection
suspended, never on the listener's connection threads; a full pool answers 503
internal_error (reason server_busy) with Retry-After at once; previews keep recently used
artifacts loaded.

Each test floods the control listener from a separate process (flooder.py) while it
measures another tenant's GET /api/v1/lists with its secret key, and prints the p50 and
max it saw (run pytest with -s to read them). The bound is generous for a small shared
test machine; the goal is 50 ms."""
import json
import os
import statistics
import subprocess
import sys
import time
import uuid

from conftest import free_port, request, wait_until
from dashboard_helpers import PASSWORD, create_member, Member

FLOODER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "flooder.py")
P50_BOUND = 0.2  # seconds
# The floods come from one address: its 48 connections, reopened after each 503 that
# closes one, must not meet the per-IP connection cap (tested on its own elsewhere), which
# refuses a connection by closing it (seen as resets on a loaded machine).
NO_AUTH_LIMITS = ["--signin-rate-ip", "0", "--signin-rate-email", "0", "--invite-rate", "0",
                  "--control-per-ip-connections", "0"]


def flood_and_measure(server, victim, label, requests, connections=48, seconds=8.0,
                      warmup=1.5):
    """Runs the flood, measures victim's GET /api/v1/lists during it, and returns
    (latencies, flooder's result)."""
    spec = {"port": server.control_port, "seconds": seconds, "connections": connections,
            "requests": requests}
    p = subprocess.Popen([sys.executable, FLOODER, json.dumps(spec)], stdout=subprocess.PIPE,
                         text=True)
    time.sleep(warmup)
    lat = []
    end = time.monotonic() + seconds - warmup - 1.0
    while time.monotonic() < end or len(lat) < 5:
        t0 = time.monotonic()
        r = victim.api("GET", "/lists")
        lat.append(time.monotonic() - t0)
        assert r.status == 200, r
        time.sleep(0.05)
    out, _ = p.communicate(timeout=120)
    result = json.loads(out)
    p50, mx = statistics.median(lat), max(lat)
    print(f"\n[{label}] other tenant GET /api/v1/lists during the flood: p50 {p50 * 1000:.1f} ms,"
          f" max {mx * 1000:.1f} ms over {len(lat)} requests; flood answers {result}")
    return lat, result


def assert_busy_answers(result):
    """Every 503 of a flood is the typed server_busy with Retry-After."""
    if result["statuses"].get("503"):
        assert result["reasons"] == ["server_busy"], result
        assert result["retryAfter"] == ["1"], result


def test_sign_in_flood_does_not_stall_other_tenants(make_server):
    s = make_server(NO_AUTH_LIMITS)
    victim, target = s.tenant(), s.tenant()
    victim.create_list("Mine")
    create_member(s, target.workspace_id, "owner@example.com", "owner")
    # Wrong passwords for a real email and for unknown ones: every attempt runs Argon2id.
    reqs = [{"method": "POST", "path": "/dashboard/api/session",
             "body": {"email": e, "password": "not the password at all"}}
            for e in ("owner@example.com", "nobody@example.com", "ghost@example.com")]
    lat, result = flood_and_measure(s, victim, "sign-in flood", reqs)
    assert statistics.median(lat) < P50_BOUND
    st = result["statuses"]
    assert st.get("401", 0) > 0 and set(st) <= {"401", "503"}, result
    # 48 connections against 2 threads and a queue of 32: the rest is refused at once.
    assert st.get("503", 0) > 0, result
    assert_busy_answers(result)
    # The flood is over: the pool takes work again and the real password still works.
    assert Member(s, "owner@example.com").me["role"] == "owner"


def test_full_pool_answers_503_with_retry_after(make_server):
    mport = free_port()
    s = make_server(NO_AUTH_LIMITS + ["--worker-queue", "0", "--metrics-listen",
                                      f"127.0.0.1:{mport}"])
    t = s.tenant()
    create_member(s, t.workspace_id, "owner@example.com", "owner")
    reqs = [{"method": "POST", "path": "/dashboard/api/session",
             "body": {"email": "owner@example.com", "password": "not the password at all"}}]
    spec = {"port": s.control_port, "seconds": 3, "connections": 12, "requests": reqs}
    out = subprocess.run([sys.executable, FLOODER, json.dumps(spec)], capture_output=True,
                         text=True, timeout=60, check=True).stdout
    result = json.loads(out)
    st = result["statuses"]
    assert st.get("401", 0) > 0 and st.get("503", 0) > 0 and set(st) <= {"401", "503"}, result
    assert_busy_answers(result)
    r = request(s.control_port, "GET", "/docs/errors")
    assert r.status == 200 and b"server_busy" in r.body
    # The refusals are counted per pool.
    m = request(mport, "GET", "/metrics").body.decode()
    line = [x for x in m.splitlines()
            if x.startswith('suggestd_worker_pool_rejected_total{pool="password"}')]
    assert line and int(line[0].split()[-1]) >= st["503"], m[-2000:]
    assert 'suggestd_worker_pool_admitted{pool="artifact"} 0' in m


def test_invite_flood_does_not_stall_other_tenants(make_server):
    s = make_server(NO_AUTH_LIMITS)
    victim, t = s.tenant(), s.tenant()
    victim.create_list("Mine")
    create_member(s, t.workspace_id, "admin@example.com", "admin")
    create_member(s, t.workspace_id, "already@example.com", "viewer")
    a = Member(s, "admin@example.com")
    hdrs = {"Cookie": f"sg_session={a.cookie}", "X-CSRF-Token": a.csrf}
    # Re-inviting an existing email with a password: each one hashes it, then 409.
    reqs = [{"method": "POST", "path": "/dashboard/api/members", "headers": hdrs,
             "body": {"email": "already@example.com", "role": "viewer",
                      "password": "a password chosen by the admin"}}]
    lat, result = flood_and_measure(s, victim, "invite flood", reqs)
    assert statistics.median(lat) < P50_BOUND
    st = result["statuses"]
    assert st.get("409", 0) > 0 and set(st) <= {"409", "503"}, result
    assert_busy_answers(result)


def big_items(n):
    return "".join(json.dumps({"value": f"Item number {i} of the big list, words {i * 7919 % 100003}"})
                   + "\n" for i in range(n)).encode()


def test_preview_switching_does_not_stall_other_tenants(make_server):
    s = make_server(NO_AUTH_LIMITS)
    victim, t = s.tenant(), s.tenant()
    victim.create_list("Mine")
    big, small = t.create_list("Big"), t.create_list("Small")
    r = t.api("POST", f"/lists/{big['id']}/items/import?mode=append", raw=big_items(100000),
              headers={"Content-Type": "application/x-ndjson"})
    assert r.status == 200, r
    t.add_items(small["id"], [{"value": "Paris"}, {"value": "Lyon"}])
    assert t.publish(big["id"], timeout=300)["state"] == "active"
    assert t.publish(small["id"])["state"] == "active"
    create_member(s, t.workspace_id, "viewer@example.com", "viewer")
    v = Member(s, "viewer@example.com")
    hdrs = {"Cookie": f"sg_session={v.cookie}"}
    # Viewers on 48 connections, each alternating between the big list's preview (a ~44 MB
    # artifact) and the small one's. (With 16 connections and this artifact, smaller than
    # the 155 MB, the stall before the pools was rarer: p50 1 ms, max 0.9 s.)
    reqs = [{"method": "GET", "path": f"/dashboard/api/lists/{lst['id']}/preview?q={q}",
             "headers": hdrs} for lst, q in ((big, "item"), (small, "par"))]
    lat, result = flood_and_measure(s, victim, "preview switching", reqs)
    assert statistics.median(lat) < P50_BOUND
    st = result["statuses"]
    assert set(st) <= {"200", "503"}, result
    # Kept loaded, the artifacts are not read and hashed again on every switch: a load
    # per preview would allow a few hundred in the flood's time, not thousands.
    assert st.get("200", 0) > 1000, result
    assert_busy_answers(result)
    # The previews still answer the right list.
    r = v.call("GET", f"/lists/{small['id']}/preview?q=par")
    assert [i["value"] for i in r.json()["items"]] == ["Paris"]
    r = v.call("GET", f"/lists/{big['id']}/preview?q=item%20number%2042")
    assert r.status == 200 and r.json()["items"], r


def test_selections_report_flood_does_not_stall_other_tenants(make_server):
    """The reports over the analytics aggregates (the list page's selections, the analytics
    page, GET /api/v1/lists/{id}/analytics) run on the control plane's one-thread report
    pool: 48 connections asking for them on a list with thousands of selected items do
    not slow another tenant."""
    s = make_server(NO_AUTH_LIMITS + ["--selection-rate", "100000"])
    victim, t = s.tenant(), s.tenant()
    victim.create_list("Mine")
    lst = t.create_list("Many", visibility="public")
    r = t.api("POST", f"/lists/{lst['id']}/items/import?mode=append", raw=big_items(3000),
              headers={"Content-Type": "application/x-ndjson"})
    assert r.status == 200, r
    assert t.publish(lst["id"], timeout=120)["state"] == "active"
    pk = t.publishable_key(lst["id"])["publishableKey"]
    ids = []
    after = ""
    while len(ids) < 3000:
        page = t.api("GET", f"/lists/{lst['id']}/items?limit=100" + after).json()
        ids += [i["id"] for i in page["data"]]
        if not page.get("nextCursor"):
            break
        after = f"&cursor={page['nextCursor']}"
    assert len(ids) == 3000
    assert s.serves(pk, t.api("GET", f"/lists/{lst['id']}").json()["activeContentHash"], 10)
    for i, item in enumerate(ids):
        body = {"key": pk, "selectionId": str(uuid.uuid4()), "queryRequestId": "req_1",
                "listId": lst["id"], "itemId": item, "position": 1 + i % 10, "query": "item"}
        assert s.runtime("POST", "/v1/selection", body=body).status == 200
    create_member(s, t.workspace_id, "viewer@example.com", "viewer")
    v = Member(s, "viewer@example.com")

    def counted():
        return v.call("GET", f"/lists/{lst['id']}/selections?days=90").json().get("total") == 3000
    assert wait_until(counted, timeout=30, interval=0.5)
    hdrs = {"Cookie": f"sg_session={v.cookie}"}
    day = time.strftime("%Y-%m-%d", time.gmtime())
    reqs = [{"method": "GET", "path": f"/dashboard/api/lists/{lst['id']}/selections?days=90",
             "headers": hdrs},
            {"method": "GET", "path": f"/dashboard/api/lists/{lst['id']}/analytics?from={day}&to={day}",
             "headers": hdrs},
            {"method": "GET", "path": f"/api/v1/lists/{lst['id']}/analytics?from={day}&to={day}",
             "headers": {"Authorization": f"Bearer {t.secret_key}"}}]
    lat, result = flood_and_measure(s, victim, "selections and analytics reports", reqs)
    # The goal, met with room on the test machine (p50 ~1 ms; 141 ms when the
    # reports ran on the connection threads).
    assert statistics.median(lat) < 0.05
    assert set(result["statuses"]) <= {"200", "503"}, result
    assert result["statuses"].get("200", 0) > 100, result
    assert_busy_answers(result)
