"""Role checks of the dashboard API, per role (docs/DESIGN.md §7): viewer reads everything but
keys; data_steward adds list content and publishing; admin adds applications, keys,
origins and members; owner adds quotas and owners. Every action is tried as every role.
"""
import itertools

import pytest

from control_helpers import assert_error
from dashboard_helpers import workspace_with_members

ROLES = ["viewer", "data_steward", "admin", "owner"]
RANK = {r: i for i, r in enumerate(ROLES)}
counter = itertools.count()


def actions(t, list_id):
    """(name, weakest role allowed, method, path, body factory)."""
    n = lambda: next(counter)  # noqa: E731 - unique names per call
    app = t.application_id
    return [
        ("read lists", "viewer", "GET", "/lists", None),
        ("read a list", "viewer", "GET", f"/lists/{list_id}", None),
        ("read items", "viewer", "GET", f"/lists/{list_id}/items", None),
        ("export items", "viewer", "GET", f"/lists/{list_id}/items/export", None),
        ("read versions", "viewer", "GET", f"/lists/{list_id}/versions", None),
        ("read selections", "viewer", "GET", f"/lists/{list_id}/selections", None),
        ("read applications", "viewer", "GET", "/applications", None),
        ("read members", "viewer", "GET", "/members", None),
        ("read usage", "viewer", "GET", "/usage", None),
        ("create a list", "data_steward", "POST", "/lists", lambda: {"name": f"L{n()}"}),
        ("edit list settings", "data_steward", "PATCH", f"/lists/{list_id}",
         lambda: {"displayOrder": n()}),
        ("add an item", "data_steward", "POST", f"/lists/{list_id}/items",
         lambda: {"value": f"v{n()}"}),
        ("publish", "data_steward", "POST", f"/lists/{list_id}/versions", None),
        ("read secret keys", "admin", "GET", f"/applications/{app}/secret-keys", None),
        ("create a secret key", "admin", "POST", f"/applications/{app}/secret-keys", None),
        ("read publishable keys", "admin", "GET", f"/applications/{app}/publishable-keys", None),
        ("create a publishable key", "admin", "POST", f"/applications/{app}/publishable-keys",
         lambda: {"listId": list_id, "origins": ["https://shop.example"]}),
        ("create an application", "admin", "POST", "/applications",
         lambda: {"name": f"app{n()}"}),
        ("invite a viewer", "admin", "POST", "/members",
         lambda: {"email": f"m{n()}@example.com", "role": "viewer"}),
        ("read the audit log", "admin", "GET", "/audit", None),
        ("set a quota", "owner", "PATCH", f"/applications/{app}", lambda: {"monthlyQuota": 1000}),
        ("create an application with a quota", "owner", "POST", "/applications",
         lambda: {"name": f"app{n()}", "monthlyQuota": 5}),
        ("invite an owner", "owner", "POST", "/members",
         lambda: {"email": f"o{n()}@example.com", "role": "owner"}),
    ]


@pytest.fixture
def setup(server):
    t, members = workspace_with_members(server)
    lst = t.create_list("Cities")
    t.add_items(lst["id"], [{"value": "Paris"}])
    return t, members, lst["id"]


@pytest.mark.parametrize("role", ROLES)
def test_every_action_as_every_role(setup, role):
    t, members, list_id = setup
    m = members[role]
    for name, weakest, method, path, body in actions(t, list_id):
        r = m.call(method, path, body() if body else None)
        if RANK[role] >= RANK[weakest]:
            assert 200 <= r.status < 300, (role, name, r)
        else:
            b = assert_error(r, 403, "forbidden", reason="insufficient_role")
            assert b["details"]["role"] == role, (name, b)


def test_data_steward_never_sees_a_key(setup):
    t, members, list_id = setup
    admin = members["admin"]
    sk = admin.call("POST", f"/applications/{t.application_id}/secret-keys").json()
    pk = admin.call("POST", f"/applications/{t.application_id}/publishable-keys",
                    {"listId": list_id}).json()
    for role in ("viewer", "data_steward"):
        m = members[role]
        for path in (f"/applications/{t.application_id}/secret-keys",
                     f"/applications/{t.application_id}/publishable-keys"):
            assert_error(m.call("GET", path), 403, "forbidden", reason="insufficient_role")
        for path in ("/applications", "/usage", "/members", "/me"):
            body = m.call("GET", path).body.decode()
            assert sk["id"] not in body and sk["secretKey"] not in body
            assert pk["publishableKey"] not in body
        assert_error(m.call("POST", f"/secret-keys/{sk['id']}/revoke"), 403, "forbidden",
                     reason="insufficient_role")
        assert_error(m.call("POST", f"/publishable-keys/{pk['id']}/revoke"), 403, "forbidden",
                     reason="insufficient_role")


def test_viewer_cannot_write_anything(setup):
    t, members, list_id = setup
    v = members["viewer"]
    item = t.api("GET", f"/lists/{list_id}/items").json()["data"][0]
    writes = [("PATCH", f"/lists/{list_id}", {"name": "X"}),
              ("PATCH", f"/lists/{list_id}/items/{item['id']}", {"value": "X"}),
              ("DELETE", f"/lists/{list_id}/items/{item['id']}", None),
              ("POST", f"/lists/{list_id}/items/import", None),
              ("POST", f"/applications/{t.application_id}/disable", None),
              ("PATCH", f"/members/{members['owner'].me['id']}", {"role": "viewer"}),
              ("DELETE", f"/members/{members['owner'].me['id']}", None)]
    for method, path, body in writes:
        r = v.call(method, path, body, raw=b"" if body is None and method == "POST" else None,
                   headers={"Content-Type": "application/x-ndjson"} if "import" in path else None)
        assert_error(r, 403, "forbidden", reason="insufficient_role")
    # Nothing changed.
    assert t.api("GET", f"/lists/{list_id}").json()["name"] == "Cities"
    assert t.api("GET", f"/lists/{list_id}/items").json()["data"][0]["value"] == "Paris"


def test_admin_cannot_touch_owners_or_quotas(setup):
    t, members, _ = setup
    admin, owner = members["admin"], members["owner"]
    oid = owner.me["id"]
    assert_error(admin.call("PATCH", f"/members/{oid}", {"role": "viewer"}), 403, "forbidden",
                 reason="insufficient_role")
    assert_error(admin.call("DELETE", f"/members/{oid}"), 403, "forbidden",
                 reason="insufficient_role")
    vid = members["viewer"].me["id"]
    assert_error(admin.call("PATCH", f"/members/{vid}", {"role": "owner"}), 403, "forbidden",
                 reason="insufficient_role")
    assert_error(admin.call("PATCH", f"/applications/{t.application_id}",
                            {"monthlyQuota": 10}), 403, "forbidden", reason="insufficient_role")
    # But an admin manages the other roles.
    r = admin.call("PATCH", f"/members/{vid}", {"role": "data_steward"})
    assert r.status == 200 and r.json()["role"] == "data_steward", r


def test_a_role_change_applies_to_open_sessions(setup):
    t, members, list_id = setup
    ds = members["data_steward"]
    assert ds.call("POST", "/lists", {"name": "Before"}).status == 201
    r = members["owner"].call("PATCH", f"/members/{ds.me['id']}", {"role": "viewer"})
    assert r.status == 200, r
    assert_error(ds.call("POST", "/lists", {"name": "After"}), 403, "forbidden",
                 reason="insufficient_role")
    assert ds.call("GET", "/me").json()["member"]["role"] == "viewer"
