"""Invitations (POST /dashboard/api/members) are rate limited per workspace before any
password is hashed (issue 22 items 3 and 8): --invite-rate N per minute, a burst of N."""
import time

from control_helpers import assert_error
from dashboard_helpers import create_member, Member


def test_invitations_are_rate_limited_per_workspace(make_server):
    s = make_server(["--invite-rate", "3"])
    t, other = s.tenant(), s.tenant()
    create_member(s, t.workspace_id, "admin@example.com", "admin")
    create_member(s, other.workspace_id, "admin2@example.com", "admin")
    a, b = Member(s, "admin@example.com"), Member(s, "admin2@example.com")
    statuses = [a.call("POST", "/members", {"email": f"m{i}@example.com", "role": "viewer"}).status
                for i in range(3)]
    assert statuses == [201, 201, 201]
    # Re-inviting an existing email draws from the same bucket: it cannot be repeated
    # without limit (each one would run Argon2id).
    t0 = time.monotonic()
    r = a.call("POST", "/members", {"email": "m0@example.com", "role": "viewer"})
    assert time.monotonic() - t0 < 0.1  # refused before any hashing
    assert_error(r, 429, "rate_limited")
    assert int(r.header("retry-after")) >= 1
    assert a.call("POST", "/members", {"email": "new@example.com", "role": "viewer"}).status == 429
    # Another workspace has its own bucket; an invalid body is refused without a token.
    assert b.call("POST", "/members", {"email": "x@example.com", "role": "viewer"}).status == 201
    assert b.call("POST", "/members", {"email": "nope", "role": "viewer"}).status == 400
    assert b.call("POST", "/members", {"email": "y@example.com", "role": "viewer"}).status == 201
    assert b.call("POST", "/members", {"email": "z@example.com", "role": "viewer"}).status == 201
    assert b.call("POST", "/members", {"email": "w@example.com", "role": "viewer"}).status == 429


def test_invite_rate_zero_turns_it_off(make_server):
    s = make_server(["--invite-rate", "0"])
    t = s.tenant()
    create_member(s, t.workspace_id, "admin@example.com", "admin")
    a = Member(s, "admin@example.com")
    for i in range(12):
        r = a.call("POST", "/members", {"email": f"m{i}@example.com", "role": "viewer",
                                        "password": "a password of the admin"})
        assert r.status == 201, (i, r)
