"""Per-parent limits (issue 22 item 9; docs/STORE.md "Limits"): lists per workspace,
active members per workspace, active publishable and secret keys per application. Each is
checked by the store inside the create's write transaction, so the control API, the
dashboard API and the admin CLI meet the same limit, and processes racing for the last
place cannot pass it together. The limits are lowered with their flags so the tests are
fast; the defaults are in the last test."""
import json
import os
import subprocess
import threading

from conftest import BINARY
from control_helpers import assert_error
from dashboard_helpers import PASSWORD, create_member, Member


def limit_flags(lists=3, members=3, pub=2, secret=2):
    return ["--max-lists-per-workspace", str(lists), "--max-members-per-workspace", str(members),
            "--max-publishable-keys-per-application", str(pub),
            "--max-secret-keys-per-application", str(secret)]


def admin(server, *words, flags=None):
    """The admin CLI with the server's limit flags (it enforces them in its own process)."""
    return server.admin(*words, *(flags if flags is not None else limit_flags()), check=False)


def test_lists_per_workspace(make_server):
    s = make_server(limit_flags(lists=3))
    t, other = s.tenant(), s.tenant()
    for i in range(3):
        t.create_list(f"L{i}")
    r = t.api("POST", "/lists", {"name": "one too many"})
    b = assert_error(r, 409, "invalid_request", reason="list_limit_reached")
    assert "--max-lists-per-workspace" in b["message"]
    assert "--max-lists-per-workspace" in b["remediation"]
    assert b["docsUrl"] == "/docs/errors#invalid_request"
    assert len(t.api("GET", "/lists").json()["data"]) == 3
    # An archived list still counts; another workspace has its own budget.
    lst = t.api("GET", "/lists").json()["data"][0]
    assert t.api("PATCH", f"/lists/{lst['id']}", {"status": "archived"}).status == 200
    assert t.api("POST", "/lists", {"name": "still too many"}).status == 409
    other.create_list("theirs")
    # The error is documented on /docs/errors.
    page = s.control("GET", "/docs/errors").body.decode()
    assert 'id="invalid_request-list_limit_reached"' in page


def test_secret_keys_per_application(make_server):
    s = make_server(limit_flags(secret=2))
    t = s.tenant()  # one active secret key
    owner = "owner@example.com"
    create_member(s, t.workspace_id, owner, "owner")
    m = Member(s, owner)
    path = f"/applications/{t.application_id}/secret-keys"
    r = m.call("POST", path)
    assert r.status == 201, r
    second = r.json()["id"]
    b = assert_error(m.call("POST", path), 409, "invalid_request", reason="secret_key_limit_reached")
    assert "--max-secret-keys-per-application" in b["message"]
    r = admin(s, "secret-key", "create", "--application", t.application_id)
    assert r.returncode != 0 and "--max-secret-keys-per-application" in json.loads(r.stderr)["error"]
    # A revoked key frees its place.
    assert m.call("POST", f"/secret-keys/{second}/revoke").status == 200
    r = admin(s, "secret-key", "create", "--application", t.application_id)
    assert r.returncode == 0, r.stderr
    assert m.call("POST", path).status == 409


def test_publishable_keys_per_application(make_server):
    s = make_server(limit_flags(pub=2))
    t = s.tenant()
    lst = t.create_list("Cities")
    owner = "owner@example.com"
    create_member(s, t.workspace_id, owner, "owner")
    m = Member(s, owner)
    path = f"/applications/{t.application_id}/publishable-keys"
    first = m.call("POST", path, {"listId": lst["id"], "origins": []})
    assert first.status == 201, first
    r = admin(s, "publishable-key", "create", "--application", t.application_id, "--list", lst["id"])
    assert r.returncode == 0, r.stderr
    b = assert_error(m.call("POST", path, {"listId": lst["id"], "origins": []}), 409,
                     "invalid_request", reason="publishable_key_limit_reached")
    assert "--max-publishable-keys-per-application" in b["message"]
    r = admin(s, "publishable-key", "create", "--application", t.application_id, "--list", lst["id"])
    assert r.returncode != 0
    assert "--max-publishable-keys-per-application" in json.loads(r.stderr)["error"]
    assert m.call("POST", f"/publishable-keys/{first.json()['id']}/revoke").status == 200
    assert m.call("POST", path, {"listId": lst["id"], "origins": []}).status == 201


def test_members_per_workspace(make_server):
    s = make_server(limit_flags(members=3))
    t = s.tenant()
    create_member(s, t.workspace_id, "owner@example.com", "owner")
    m = Member(s, "owner@example.com")
    r = m.call("POST", "/members", {"email": "a@example.com", "role": "viewer"})
    assert r.status == 201, r
    victim = r.json()["id"]
    assert m.call("POST", "/members", {"email": "b@example.com", "role": "viewer"}).status == 201
    b = assert_error(m.call("POST", "/members", {"email": "c@example.com", "role": "viewer"}),
                     409, "invalid_request", reason="member_limit_reached")
    assert "--max-members-per-workspace" in b["message"]
    pw = os.path.join(s.data_dir, "pw")
    with open(pw, "w") as f:
        f.write(PASSWORD + "\n")
    r = admin(s, "member", "create", "--workspace", t.workspace_id, "--email", "d@example.com",
              "--role", "viewer", "--password-file", pw)
    assert r.returncode != 0
    assert "--max-members-per-workspace" in json.loads(r.stderr)["error"]
    # A removed member frees its place.
    assert m.call("DELETE", f"/members/{victim}").status == 200
    assert m.call("POST", "/members", {"email": "c@example.com", "role": "viewer"}).status == 201


def test_racing_processes_do_not_pass_the_limit(make_server):
    """Eight admin processes issue secret keys at once with room for three more: exactly
    three succeed (the count and the insert are one transaction with the parent locked)."""
    s = make_server(limit_flags(secret=4))
    t = s.tenant()  # one key
    cmd = [BINARY, "admin", "secret-key", "create", "--application", t.application_id,
           "--data-dir", s.data_dir, *s.store_args(), *limit_flags(secret=4)]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(8)]
    results = [p.communicate(timeout=60) + (p.returncode,) for p in procs]
    ok = [r for r in results if r[2] == 0]
    refused = [r for r in results if r[2] != 0]
    assert len(ok) == 3, results
    for _, err, _ in refused:
        assert "--max-secret-keys-per-application" in err, err
    keys = s.admin("secret-key", "list", "--application", t.application_id)["data"]
    assert len([k for k in keys if k["status"] == "active"]) == 4


def test_racing_list_creates_stop_at_the_limit(make_server):
    s = make_server(limit_flags(lists=5))
    t = s.tenant()
    statuses = []
    lock = threading.Lock()

    def create(i):
        r = t.api("POST", "/lists", {"name": f"L{i}"})
        with lock:
            statuses.append(r.status)

    threads = [threading.Thread(target=create, args=(i,)) for i in range(12)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert sorted(statuses) == [201] * 5 + [409] * 7, statuses
    assert len(t.api("GET", "/lists").json()["data"]) == 5


def test_bad_limit_flag_is_refused(make_server):
    s = make_server()
    for bad in ("0", "-1", "x", "1000000001"):
        r = admin(s, "workspace", "list", flags=["--max-lists-per-workspace", bad])
        assert r.returncode != 0
        assert "--max-lists-per-workspace must be an integer" in json.loads(r.stderr)["error"]


def test_defaults_are_documented_in_help():
    out = subprocess.run([BINARY, "serve", "--help"], capture_output=True, text=True).stdout
    for flag, default in (("--max-lists-per-workspace", "10000"),
                          ("--max-members-per-workspace", "1000"),
                          ("--max-publishable-keys-per-application", "100"),
                          ("--max-secret-keys-per-application", "20")):
        line = next(l for l in out.splitlines() if flag in l)
        assert f"({default})" in line, line
