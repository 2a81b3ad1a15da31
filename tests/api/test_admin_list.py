"""`suggestd admin … list` (issue 16): workspaces, applications, keys (ids and metadata,
never secrets) and subscriptions, with filters; one JSON object on stdout."""
import json


def test_lists_show_ids_and_metadata_never_secrets(server):
    a = server.tenant()
    b = server.tenant()
    shared = a.create_list("Shared", visibility="shared")
    pk = a.publishable_key(shared["id"], origins=["https://shop.example.com"])
    sub = server.admin("subscription", "create", "--workspace", b.workspace_id, "--list",
                       shared["id"])
    extra = server.admin("secret-key", "create", "--application", a.application_id)
    server.admin("secret-key", "revoke", extra["id"])

    ws = server.admin("workspace", "list")["data"]
    assert {w["id"] for w in ws} == {a.workspace_id, b.workspace_id}
    assert all(set(w) == {"id", "name", "status", "createdAt"} for w in ws)

    apps = server.admin("application", "list", "--workspace", a.workspace_id)["data"]
    assert [x["id"] for x in apps] == [a.application_id]
    assert apps[0]["monthlyQuota"] is None and apps[0]["status"] == "active"

    sks = server.admin("secret-key", "list", "--application", a.application_id)["data"]
    assert [k["id"] for k in sks] == [a.key_id, extra["id"]]
    assert sks[1]["status"] == "revoked" and sks[1]["revokedAt"]
    assert all(set(k) == {"id", "applicationId", "workspaceId", "status", "createdAt",
                          "revokedAt"} for k in sks)
    assert server.admin("secret-key", "list", "--workspace", b.workspace_id)["data"][0]["id"] == b.key_id

    pks = server.admin("publishable-key", "list", "--list", shared["id"])["data"]
    assert [k["id"] for k in pks] == [pk["id"]]
    assert pks[0]["origins"] == ["https://shop.example.com"]
    assert pks[0]["applicationId"] == a.application_id and pks[0]["status"] == "active"

    subs = server.admin("subscription", "list", "--workspace", b.workspace_id)["data"]
    assert subs == [{"id": sub["id"], "workspaceId": b.workspace_id, "listId": shared["id"],
                     "status": "active", "createdAt": subs[0]["createdAt"]}]
    assert server.admin("subscription", "list", "--workspace", a.workspace_id)["data"] == []

    # No secret, in any listing.
    everything = json.dumps([server.admin(n, "list") for n in (
        "workspace", "application", "secret-key", "publishable-key", "subscription")])
    for secret in (a.secret_key, b.secret_key, extra["secretKey"], pk["publishableKey"]):
        assert secret not in everything
    # The secret part of sk_<id>_<secret> never shows, not even as a prefix.
    assert a.secret_key.split("_", 2)[2][:12] not in everything


def test_list_of_an_empty_store_and_unknown_filters(server):
    assert server.admin("workspace", "list") == {"data": []}
    assert server.admin("application", "list", "--workspace", "wsp_nope") == {"data": []}
    r = server.admin("widget", "list", check=False)
    assert r.returncode != 0 and "workspace list" in json.loads(r.stderr)["error"]
