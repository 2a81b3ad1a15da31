"""Helpers for the dashboard API's black-box tests (tests/api/test_dashboard_*.py).

A member is created with the real admin CLI (`admin member create … --password-file`), signs
in over HTTP like a browser would, and keeps its cookie and CSRF token.
"""
import os
import re
import tempfile

from conftest import request


PASSWORD = "correct horse battery staple"


def create_member(server, workspace_id, email, role, password=PASSWORD):
    fd, path = tempfile.mkstemp(dir=server.data_dir, prefix="pw-")
    with os.fdopen(fd, "w") as f:
        f.write(password + "\n")
    try:
        return server.admin("member", "create", "--workspace", workspace_id, "--email", email,
                            "--role", role, "--password-file", path)["id"]
    finally:
        os.unlink(path)


def sign_in(server, email, password=PASSWORD, headers=None):
    hdrs = {"Content-Type": "application/json"}
    hdrs.update(headers or {})
    return request(server.control_port, "POST", "/dashboard/api/session",
                   body={"email": email, "password": password}, headers=hdrs)


def session_cookie(resp):
    """The sg_session value set by resp, or None."""
    m = re.match(r"sg_session=([^;]*)", resp.cookies.get("sg_session", ""))
    return m.group(1) if m else None


class Member:
    """A signed-in dashboard session."""

    def __init__(self, server, email, password=PASSWORD, headers=None):
        self.server = server
        self.email = email
        r = sign_in(server, email, password, headers=headers)
        assert r.status == 200, r
        self.cookie = session_cookie(r)
        assert self.cookie
        self.csrf = r.json()["csrfToken"]
        self.me = r.json()["member"]
        self.device = r.cookies["sg_device"].split(";")[0]

    def call(self, method, path, body=None, headers=None, raw=None, csrf=True):
        hdrs = {"Cookie": f"sg_session={self.cookie}"}
        if csrf and method not in ("GET", "HEAD"):
            hdrs["X-CSRF-Token"] = self.csrf
        hdrs.update(headers or {})
        return request(self.server.control_port, method, "/dashboard/api" + path, body=body,
                       headers=hdrs, raw=raw)


def workspace_with_members(server, roles=("viewer", "data_steward", "admin", "owner")):
    """A tenant (workspace, application, secret key) plus one signed-in member per role."""
    t = server.tenant()
    members = {}
    for role in roles:
        email = f"{role}@example.com"
        create_member(server, t.workspace_id, email, role)
        members[role] = Member(server, email)
    return t, members
