"""Dashboard sign-in, sessions, CSRF and sign-in rate limits (docs/DESIGN.md §7).

Each test starts the real binary and drives the JSON API the dashboard pages call, with
members created by `suggestd admin member create`.
"""
import os
import time

from conftest import store_bytes
from control_helpers import assert_error
from dashboard_helpers import (PASSWORD, Member, create_member, request, session_cookie,
                               sign_in)


def owner(server, email="owner@example.com"):
    t = server.tenant()
    create_member(server, t.workspace_id, email, "owner")
    return t


def test_sign_in_sets_a_strict_httponly_cookie_and_returns_a_csrf_token(server):
    t = owner(server)
    r = sign_in(server, "Owner@Example.COM")  # emails compare case-insensitively
    assert r.status == 200, r
    cookie = r.cookies["sg_session"]
    parts = [p.strip() for p in cookie.split(";")]
    assert parts[0].startswith("sg_session=") and len(parts[0]) == len("sg_session=") + 43
    assert "HttpOnly" in parts and "SameSite=Strict" in parts and "Path=/dashboard" in parts
    assert "Secure" not in parts  # plain HTTP, no TLS in front
    b = r.json()
    assert b["member"]["email"] == "owner@example.com"
    assert b["member"]["role"] == "owner" and b["member"]["workspaceId"] == t.workspace_id
    assert len(b["csrfToken"]) == 43
    assert b["idleTimeoutSeconds"] == 43200
    assert r.header("cache-control") == "no-store"


def test_secure_cookie_behind_tls(make_server):
    s = make_server(["--dashboard-secure-cookies"])
    owner(s)
    r = sign_in(s, "owner@example.com")
    assert "; Secure" in r.cookies["sg_session"] and "; Secure" in r.cookies["sg_device"]
    # A TLS-terminating proxy says so with X-Forwarded-Proto.
    s2 = make_server()
    owner(s2)
    r = sign_in(s2, "owner@example.com", headers={"X-Forwarded-Proto": "https"})
    assert "; Secure" in r.cookies["sg_session"]


def test_wrong_password_and_unknown_email_answer_the_same(server):
    owner(server)
    a = sign_in(server, "owner@example.com", "wrong password here")
    b = sign_in(server, "nobody@example.com", PASSWORD)
    for r in (a, b):
        assert_error(r, 401, "invalid_credentials")
        assert r.cookies == {}
    assert a.json()["message"] == b.json()["message"]


def test_unknown_email_costs_a_password_verification(server):
    """An unknown email runs a dummy Argon2id verification, so it takes as long as a wrong
    password instead of answering at once."""
    owner(server)
    def timed(email, pw):
        t0 = time.monotonic()
        r = sign_in(server, email, pw)
        assert r.status == 401
        return time.monotonic() - t0
    wrong = min(timed("owner@example.com", "wrong password here") for _ in range(3))
    unknown = min(timed("nobody@example.com", "wrong password here") for _ in range(3))
    assert unknown > wrong * 0.5, (unknown, wrong)
    assert unknown > 0.01  # Argon2id with 64 MiB takes tens of milliseconds at least


def test_sign_in_refuses_forms_and_other_sites(server):
    owner(server)
    body = '{"email":"owner@example.com","password":"%s"}' % PASSWORD
    # A cross-site form can only send text/plain or form encodings: refused.
    r = request(server.control_port, "POST", "/dashboard/api/session", raw=body.encode(),
                headers={"Content-Type": "text/plain"})
    assert_error(r, 415, "invalid_request", reason="unsupported_media_type")
    r = request(server.control_port, "POST", "/dashboard/api/session", raw=body.encode(),
                headers={"Content-Type": "application/json", "Origin": "https://evil.example"})
    assert_error(r, 403, "forbidden", reason="cross_origin")
    r = request(server.control_port, "POST", "/dashboard/api/session", raw=body.encode(),
                headers={"Content-Type": "application/json",
                         "Origin": f"http://127.0.0.1:{server.control_port}"})
    assert r.status == 200, r


def test_sign_in_validates_its_body(server):
    owner(server)
    r = request(server.control_port, "POST", "/dashboard/api/session",
                body={"email": "not-an-email", "password": "x", "remember": True})
    b = assert_error(r, 400, "invalid_request")
    paths = {f["path"] for f in b["details"]["fields"]}
    assert paths == {"email", "remember"}
    # An email with a NUL inside is never read as the email before the NUL.
    r = request(server.control_port, "POST", "/dashboard/api/session",
                body={"email": "owner@example.com\u0000junk", "password": PASSWORD})
    assert_error(r, 400, "invalid_request", field="body")
    r = request(server.control_port, "POST", "/dashboard/api/session",
                body={"email": "owner@example.com", "password": "x" * 1025})
    assert_error(r, 400, "invalid_request", field="password")
    r = request(server.control_port, "GET", "/dashboard/api/session")
    assert_error(r, 405, "method_not_allowed")


def test_api_needs_a_session(server):
    owner(server)
    for path in ("/me", "/lists", "/applications", "/members", "/usage", "/audit"):
        r = request(server.control_port, "GET", "/dashboard/api" + path)
        assert_error(r, 401, "invalid_session")
        r = request(server.control_port, "GET", "/dashboard/api" + path,
                    headers={"Cookie": "sg_session=" + "A" * 43})
        assert_error(r, 401, "invalid_session")
    # A secret key is not a dashboard credential.
    t = server.tenant()
    r = request(server.control_port, "GET", "/dashboard/api/lists",
                headers={"Authorization": f"Bearer {t.secret_key}"})
    assert_error(r, 401, "invalid_session")


def test_me_returns_the_same_csrf_token_after_a_reload(server):
    owner(server)
    m = Member(server, "owner@example.com")
    r = m.call("GET", "/me")
    assert r.status == 200, r
    assert r.json()["csrfToken"] == m.csrf
    assert r.json()["capabilities"]["setQuotas"] is True


def test_writes_need_the_csrf_token(server):
    owner(server)
    m = Member(server, "owner@example.com")
    for method, path, body in (("POST", "/lists", {"name": "Cities"}),
                               ("POST", "/applications", {"name": "web"}),
                               ("POST", "/session/sign-out", None),
                               ("POST", "/sessions/revoke-all", None)):
        r = m.call(method, path, body, csrf=False)
        assert_error(r, 403, "forbidden", reason="csrf_token_invalid")
        r = m.call(method, path, body, csrf=False, headers={"X-CSRF-Token": "x" * 43})
        assert_error(r, 403, "forbidden", reason="csrf_token_invalid")
    # Another session's token does not fit this session.
    other = Member(server, "owner@example.com")
    assert other.csrf != m.csrf
    r = m.call("POST", "/lists", {"name": "Cities"}, csrf=False,
               headers={"X-CSRF-Token": other.csrf})
    assert_error(r, 403, "forbidden", reason="csrf_token_invalid")
    # Nothing was created by the refused writes.
    assert m.call("GET", "/lists").json()["data"] == []
    assert m.call("POST", "/lists", {"name": "Cities"}).status == 201


def test_cross_site_requests_are_refused_even_with_a_token(server):
    owner(server)
    m = Member(server, "owner@example.com")
    r = m.call("POST", "/lists", {"name": "Cities"}, headers={"Origin": "https://evil.example"})
    assert_error(r, 403, "forbidden", reason="cross_origin")
    r = m.call("GET", "/lists", headers={"Sec-Fetch-Site": "cross-site"})
    assert_error(r, 403, "forbidden", reason="cross_origin")
    r = m.call("POST", "/lists", {"name": "Cities"},
               headers={"Origin": f"http://127.0.0.1:{server.control_port}",
                        "Sec-Fetch-Site": "same-origin"})
    assert r.status == 201, r


def test_sign_out_ends_only_this_session(server):
    owner(server)
    a = Member(server, "owner@example.com")
    b = Member(server, "owner@example.com")
    r = a.call("POST", "/session/sign-out")
    assert r.status == 200, r
    assert "Max-Age=0" in r.cookies["sg_session"] and session_cookie(r) == ""
    assert_error(a.call("GET", "/me"), 401, "invalid_session")
    assert b.call("GET", "/me").status == 200


def test_sign_out_everywhere_revokes_every_session(server):
    owner(server)
    sessions = [Member(server, "owner@example.com") for _ in range(3)]
    r = sessions[0].call("POST", "/sessions/revoke-all")
    assert r.status == 200, r
    assert r.json()["sessionsRevoked"] == 3
    for s in sessions:
        assert_error(s.call("GET", "/me"), 401, "invalid_session")


def test_sessions_expire_when_idle_and_slide_when_used(make_server):
    s = make_server(["--session-idle-seconds", "3"])
    owner(s)
    idle = Member(s, "owner@example.com")
    busy = Member(s, "owner@example.com")
    assert idle.call("GET", "/me").json()["idleTimeoutSeconds"] == 3
    # The busy session is used every second for longer than the idle window.
    for _ in range(5):
        time.sleep(1)
        assert busy.call("GET", "/me").status == 200
    assert_error(idle.call("GET", "/me"), 401, "invalid_session")
    time.sleep(3.5)
    assert_error(busy.call("GET", "/me"), 401, "invalid_session")


def test_sessions_survive_a_restart(server):
    owner(server)
    m = Member(server, "owner@example.com")
    server.restart()
    r = m.call("GET", "/me")
    assert r.status == 200 and r.json()["csrfToken"] == m.csrf


def test_disabled_member_loses_its_sessions(server):
    t = server.tenant()
    create_member(server, t.workspace_id, "owner@example.com", "owner")
    mid = create_member(server, t.workspace_id, "viewer@example.com", "viewer")
    v = Member(server, "viewer@example.com")
    server.admin("member", "disable", mid)
    assert_error(v.call("GET", "/me"), 401, "invalid_session")
    assert_error(sign_in(server, "viewer@example.com"), 401, "invalid_credentials")


def test_sign_in_is_rate_limited_per_ip(make_server):
    s = make_server(["--signin-rate-ip", "3", "--signin-rate-email", "0"])
    owner(s)
    for i in range(3):
        assert sign_in(s, f"nobody{i}@example.com").status == 401
    r = sign_in(s, "owner@example.com")
    assert_error(r, 429, "rate_limited")
    assert 1 <= int(r.header("retry-after")) <= 60


def test_sign_in_is_rate_limited_per_email_and_recovers(make_server):
    # 6 a minute refills one attempt every 10 seconds: a member locked out by someone
    # guessing its password waits seconds once the guessing stops, never for ever.
    s = make_server(["--signin-rate-ip", "0", "--signin-rate-email", "6"])
    owner(s)
    codes = [sign_in(s, "owner@example.com", "wrong password here").status for _ in range(6)]
    assert codes == [401] * 6, codes
    r = sign_in(s, "OWNER@example.com")  # the same email, whatever its case
    assert_error(r, 429, "rate_limited")
    wait = int(r.header("retry-after"))
    assert 1 <= wait <= 10, wait
    # Other emails are not affected.
    assert sign_in(s, "other@example.com").status == 401
    time.sleep(wait + 0.2)
    assert sign_in(s, "owner@example.com").status == 200


def test_a_browser_that_signed_in_before_is_not_locked_out_by_guessing(make_server):
    """The per-email limit must not let an attacker lock the real member out: a browser
    that signed in successfully before carries a device cookie and draws from a bucket of
    its own. The cookie dies with a password change."""
    s = make_server(["--signin-rate-ip", "0", "--signin-rate-email", "3"])
    owner(s)
    real = Member(s, "owner@example.com")
    # The real sign-in took one attempt of the email's three; the guesser takes the rest.
    for _ in range(2):
        assert sign_in(s, "owner@example.com", "a guess at the password").status == 401
    assert_error(sign_in(s, "owner@example.com"), 429, "rate_limited")
    # The real member's browser still signs in; its device cookie is not a password.
    r = sign_in(s, "owner@example.com", headers={"Cookie": real.device})
    assert r.status == 200, r
    r = sign_in(s, "owner@example.com", "a guess at the password",
                headers={"Cookie": real.device})
    assert_error(r, 401, "invalid_credentials")
    # A forged or another member's device cookie is an ordinary attempt.
    r = sign_in(s, "owner@example.com", headers={"Cookie": "sg_device=" + "A" * 43})
    assert_error(r, 429, "rate_limited")
    assert "A" * 43 not in real.device


def test_password_is_never_logged_or_stored(server):
    owner(server)
    Member(server, "owner@example.com")
    sign_in(server, "owner@example.com", "wrong password here")
    log = server.read_log()
    assert PASSWORD not in log and "wrong password here" not in log
    stored = store_bytes(server.data_dir)
    assert PASSWORD.encode() not in stored
    assert b"$argon2id$" in stored


def test_password_change_ends_other_sessions(server):
    owner(server)
    a = Member(server, "owner@example.com")
    b = Member(server, "owner@example.com")
    r = a.call("POST", "/me/password", {"currentPassword": "nope", "newPassword": "x" * 12})
    assert_error(r, 401, "invalid_credentials")
    r = a.call("POST", "/me/password", {"currentPassword": PASSWORD, "newPassword": "short"})
    assert_error(r, 400, "invalid_request", field="newPassword")
    new = "a brand new passphrase"
    r = a.call("POST", "/me/password", {"currentPassword": PASSWORD, "newPassword": new})
    assert r.status == 200, r
    assert a.call("GET", "/me").status == 200
    assert_error(b.call("GET", "/me"), 401, "invalid_session")
    assert sign_in(server, "owner@example.com").status == 401
    assert sign_in(server, "owner@example.com", new).status == 200


def test_admin_member_create_validates(server):
    t = server.tenant()
    path = os.path.join(server.data_dir, "short")
    with open(path, "w") as f:
        f.write("short\n")
    r = server.admin("member", "create", "--workspace", t.workspace_id, "--email", "a@b.co",
                     "--role", "owner", "--password-file", path, check=False)
    assert r.returncode != 0 and "at least 12" in r.stderr
    for email, role in (("not-an-email", "owner"), ("a@b.co", "superuser")):
        r = server.admin("member", "create", "--workspace", t.workspace_id, "--email", email,
                         "--role", role, "--password-file", path, check=False)
        assert r.returncode != 0, r
    create_member(server, t.workspace_id, "dup@example.com", "viewer")
    r = server.admin("member", "create", "--workspace", t.workspace_id, "--email",
                     "DUP@example.com", "--role", "viewer", "--password-file", path, check=False)
    assert r.returncode != 0
    listed = server.admin("member", "list", "--workspace", t.workspace_id)["data"]
    assert [m["email"] for m in listed] == ["dup@example.com"]
    assert all("password" not in k.lower() and "hash" not in k.lower() for m in listed for k in m)
    assert "$argon2" not in str(listed)


def test_operator_resets_a_forgotten_password(server):
    t = server.tenant()
    mid = create_member(server, t.workspace_id, "owner@example.com", "owner")
    m = Member(server, "owner@example.com")
    path = os.path.join(server.data_dir, "new-password")
    with open(path, "w") as f:
        f.write("the operator's new one\r\n")
    out = server.admin("member", "set-password", mid, "--password-file", path)
    assert out == {"id": mid, "passwordChanged": True}
    assert_error(m.call("GET", "/me"), 401, "invalid_session")
    assert sign_in(server, "owner@example.com").status == 401
    assert sign_in(server, "owner@example.com", "the operator's new one").status == 200
    r = server.admin("member", "set-password", "mbr_nope", "--password-file", path, check=False)
    assert r.returncode != 0 and "not found" in r.stderr
    entries = [e for e in Member(server, "owner@example.com", "the operator's new one")
               .call("GET", "/audit").json()["data"] if e["action"] == "member.set-password"]
    assert len(entries) == 1 and entries[0]["actor"] == "cli" and entries[0]["target"] == mid


def test_default_idle_expiry_is_twelve_hours(server):
    """Sessions live in the store, so a restart with the clock moved forward shows the
    default window without waiting: 11 h 59 min idle is fine, 12 h is not."""
    owner(server)
    m = Member(server, "owner@example.com")
    server.stop()
    server.env["SUGGESTD_CLOCK_OFFSET"] = str(12 * 3600 - 60)
    server.start()
    assert m.call("GET", "/me").status == 200  # and this use slides the window
    server.stop()
    server.env["SUGGESTD_CLOCK_OFFSET"] = str(2 * 12 * 3600 - 90)
    server.start()
    assert m.call("GET", "/me").status == 200
    server.stop()
    server.env["SUGGESTD_CLOCK_OFFSET"] = str(3 * 12 * 3600)
    server.start()
    assert_error(m.call("GET", "/me"), 401, "invalid_session")
