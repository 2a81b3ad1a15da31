"""Member emails are unique per workspace, not across the service (issue 22 item 8).

An admin's invitation answers the same whether the email is unused or a member of another
workspace, so it cannot probe other workspaces. One email may be a member of several
workspaces, each with its own password; sign-in verifies the password against each and,
when it opens more than one, asks which (409 workspace_required). Runs on SQLite and, under
scripts/with-pg.sh, on PostgreSQL.
"""
from control_helpers import assert_error
from dashboard_helpers import PASSWORD, Member, create_member, request, session_cookie

OTHER = "another long password"


def workspace(server, name):
    return server.admin("workspace", "create", "--name", name)["id"]


def sign_in(server, email, password, workspace_id=None):
    body = {"email": email, "password": password}
    if workspace_id is not None:
        body["workspaceId"] = workspace_id
    return request(server.control_port, "POST", "/dashboard/api/session", body=body,
                   headers={"Content-Type": "application/json"})


def test_invitation_answers_the_same_for_an_email_of_another_workspace(server):
    a, b = workspace(server, "Alpha"), workspace(server, "Beta")
    create_member(server, a, "admin@example.com", "admin")
    victim = create_member(server, b, "victim@example.com", "owner", OTHER)
    adm = Member(server, "admin@example.com")
    used = adm.call("POST", "/members", {"email": "victim@example.com", "role": "viewer"})
    unused = adm.call("POST", "/members", {"email": "unused@example.com", "role": "viewer"})
    for r in (used, unused):
        assert r.status == 201, r
        assert sorted(r.json()) == sorted(unused.json())
        assert r.json()["workspaceId"] == a and r.json()["status"] == "active"
    new = used.json()
    assert new["id"] != victim and new["role"] == "viewer"
    # An independent member: its own password opens this workspace, the other member's
    # opens the other one, and neither is the other's.
    r = sign_in(server, "victim@example.com", new["temporaryPassword"])
    assert r.status == 200, r
    assert r.json()["member"] == {"id": new["id"], "email": "victim@example.com",
                                  "role": "viewer", "workspaceId": a}
    r = sign_in(server, "victim@example.com", OTHER)
    assert r.status == 200 and r.json()["member"]["id"] == victim, r
    assert r.json()["member"]["workspaceId"] == b and r.json()["member"]["role"] == "owner"
    # member_exists speaks about this workspace only.
    assert_error(adm.call("POST", "/members", {"email": "Victim@example.com", "role": "viewer"}),
                 409, "invalid_request", reason="member_exists")
    listed = {m["email"] for m in adm.call("GET", "/members").json()["data"]}
    assert listed == {"admin@example.com", "victim@example.com", "unused@example.com"}


def test_same_email_with_different_passwords_signs_in_to_each_workspace(server):
    a, b = workspace(server, "Alpha"), workspace(server, "Beta")
    ma = create_member(server, a, "pat@example.com", "owner", PASSWORD)
    mb = create_member(server, b, "pat@example.com", "viewer", OTHER)
    ra, rb = sign_in(server, "pat@example.com", PASSWORD), sign_in(server, "pat@example.com", OTHER)
    assert ra.status == 200 and rb.status == 200, (ra, rb)
    assert (ra.json()["member"]["id"], ra.json()["member"]["workspaceId"]) == (ma, a)
    assert (rb.json()["member"]["id"], rb.json()["member"]["workspaceId"]) == (mb, b)
    assert ra.json()["capabilities"]["manageMembers"] and not rb.json()["capabilities"]["manageMembers"]
    # Each session sees its own workspace's members only.
    for r, ws in ((ra, a), (rb, b)):
        me = request(server.control_port, "GET", "/dashboard/api/me",
                     headers={"Cookie": f"sg_session={session_cookie(r)}"})
        assert me.json()["member"]["workspaceId"] == ws
    # A wrong password is the usual 401; so is a workspaceId the password does not open.
    wrong = sign_in(server, "pat@example.com", "not the password at all")
    assert_error(wrong, 401, "invalid_credentials")
    assert_error(sign_in(server, "pat@example.com", PASSWORD, b), 401, "invalid_credentials")
    assert sign_in(server, "pat@example.com", OTHER, b).status == 200
    unknown = sign_in(server, "nobody@example.com", PASSWORD)
    assert_error(unknown, 401, "invalid_credentials")
    assert wrong.json()["message"] == unknown.json()["message"]
    # A sign-in to one workspace leaves no trace in the other's audit log.
    audit = Member(server, "pat@example.com", PASSWORD).call("GET", "/audit").json()["data"]
    assert all(e["target"] != mb for e in audit), audit
    failed = [e for e in audit if e["action"] == "session.sign_in_failed"]
    # Only the wrong password failed here: Beta's sign-ins (and the one that named Beta
    # with Alpha's password) are no failure of Alpha's member.
    assert [e["target"] for e in failed] == [ma], failed


def test_one_password_for_several_workspaces_asks_which(server):
    a, b, c = workspace(server, "Alpha"), workspace(server, "Beta"), workspace(server, "Gamma")
    ma = create_member(server, a, "sam@example.com", "owner")
    mb = create_member(server, b, "sam@example.com", "admin")
    create_member(server, c, "sam@example.com", "viewer", OTHER)
    r = sign_in(server, "SAM@example.com", PASSWORD)
    body = assert_error(r, 409, "invalid_request", reason="workspace_required")
    assert r.cookies == {}
    # Only the workspaces this password opened, never Gamma.
    assert sorted(body["details"]["workspaces"], key=lambda w: w["name"]) == [
        {"workspaceId": a, "name": "Alpha"}, {"workspaceId": b, "name": "Beta"}]
    r = sign_in(server, "sam@example.com", PASSWORD, b)
    assert r.status == 200, r
    assert r.json()["member"]["id"] == mb and r.json()["member"]["role"] == "admin"
    assert session_cookie(r)
    r = sign_in(server, "sam@example.com", PASSWORD, a)
    assert r.status == 200 and r.json()["member"]["id"] == ma, r
    # Gamma's password opens Gamma alone, without a choice.
    r = sign_in(server, "sam@example.com", OTHER)
    assert r.status == 200 and r.json()["member"]["workspaceId"] == c, r
    # A workspaceId the password does not open, or no workspace at all, is a plain 401.
    assert_error(sign_in(server, "sam@example.com", PASSWORD, c), 401, "invalid_credentials")
    assert_error(sign_in(server, "sam@example.com", PASSWORD, "wsp_nope"), 401,
                 "invalid_credentials")
    for bad in (7, "", "w" * 64, None):
        r = request(server.control_port, "POST", "/dashboard/api/session",
                    body={"email": "sam@example.com", "password": PASSWORD, "workspaceId": bad},
                    headers={"Content-Type": "application/json"})
        assert_error(r, 400, "invalid_request", field="workspaceId")
    # Once the member of Beta is removed, the password opens Alpha alone.
    create_member(server, b, "boss@example.com", "owner")
    boss = Member(server, "boss@example.com")
    assert boss.call("DELETE", f"/members/{mb}").status == 200
    r = sign_in(server, "sam@example.com", PASSWORD)
    assert r.status == 200 and r.json()["member"]["id"] == ma, r


def test_password_change_touches_only_this_workspace(server):
    a, b = workspace(server, "Alpha"), workspace(server, "Beta")
    create_member(server, a, "kim@example.com", "viewer")
    mb = create_member(server, b, "kim@example.com", "viewer", OTHER)
    m = Member(server, "kim@example.com", OTHER)
    assert m.me["id"] == mb
    r = m.call("POST", "/me/password", {"currentPassword": PASSWORD,
                                        "newPassword": "a brand new password"})
    assert_error(r, 401, "invalid_credentials")  # Alpha's password is not this member's
    r = m.call("POST", "/me/password", {"currentPassword": OTHER,
                                        "newPassword": "a brand new password"})
    assert r.status == 200, r
    assert sign_in(server, "kim@example.com", "a brand new password").json()["member"]["id"] == mb
    assert sign_in(server, "kim@example.com", PASSWORD).json()["member"]["workspaceId"] == a
    assert_error(sign_in(server, "kim@example.com", OTHER), 401, "invalid_credentials")


def test_an_email_joins_at_most_twenty_workspaces(make_server):
    s = make_server(["--invite-rate", "0"])
    spaces = [workspace(s, f"W{i}") for i in range(20)]
    for i, ws in enumerate(spaces):
        create_member(s, ws, "many@example.com", "viewer", f"password number {i:02d}")
    extra = workspace(s, "Extra")
    create_member(s, extra, "admin@example.com", "admin")
    adm = Member(s, "admin@example.com")
    body = assert_error(adm.call("POST", "/members", {"email": "many@example.com", "role": "viewer"}),
                        409, "invalid_request", reason="email_membership_limit_reached")
    assert all(ws not in str(body) for ws in spaces)  # names no other workspace
    # The same email in a workspace that has it is still member_exists.
    create_member(s, spaces[0], "boss@example.com", "admin")
    boss = Member(s, "boss@example.com")
    assert_error(boss.call("POST", "/members", {"email": "many@example.com", "role": "viewer"}),
                 409, "invalid_request", reason="member_exists")
    # Every one of the 20 signs in with its own password (the last one too).
    r = sign_in(s, "many@example.com", "password number 19")
    assert r.status == 200 and r.json()["member"]["workspaceId"] == spaces[19], r
    # A removed membership frees a place.
    mid = [m for m in boss.call("GET", "/members").json()["data"]
           if m["email"] == "many@example.com"][0]["id"]
    assert boss.call("DELETE", f"/members/{mid}").status == 200
    assert adm.call("POST", "/members", {"email": "many@example.com", "role": "viewer"}).status == 201
