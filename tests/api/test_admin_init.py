"""`suggestd admin init` (issue 27): a fleet's first run, as `make run` does it for one
machine — workspace, application, secret key (shown once), token signing key and owner —
refused on a store that already holds a workspace."""
import json
import subprocess

from conftest import BINARY, NO_LIMITS, Server, database_args, wait_until
from dashboard_helpers import PASSWORD


def init(data_dir, *extra, server=None):
    args = [BINARY, "admin", "init", "--data-dir", data_dir, *database_args(data_dir), *extra]
    return subprocess.run(args, capture_output=True, text=True, timeout=60)


def test_init_then_everything_works(tmp_path):
    d = str(tmp_path / "data")
    r = init(d)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["workspaceId"].startswith("wsp_") and out["applicationId"].startswith("app_")
    assert out["secretKey"]["secretKey"].startswith(out["secretKey"]["id"] + "_")
    assert out["signingKeyId"].startswith("kid_")
    assert out["owner"]["email"] == "owner@localhost" and len(out["owner"]["password"]) == 20
    assert any(n.startswith("suggestd control --data-dir " + d) for n in out["next"])
    assert any("publishable-key create --application " + out["applicationId"] in n
               for n in out["next"])
    again = init(d)
    assert again.returncode != 0 and "already initialised" in again.stderr
    s = Server(d, extra=NO_LIMITS).start()
    try:
        key = out["secretKey"]["secretKey"]
        r = s.control("POST", "/api/v1/lists", {"name": "Cities"}, key=key)
        assert r.status == 201, r
        # The signing key mints tokens for private lists.
        r = s.control("POST", "/api/v1/token", {"listIds": [r.json()["id"]]}, key=key)
        assert r.status == 200, r
        # The owner signs in to the dashboard with the password shown once.
        r = s.control("POST", "/dashboard/api/session",
                      {"email": "owner@localhost", "password": out["owner"]["password"]},
                      headers={"Origin": f"http://127.0.0.1:{s.control_port}"})
        assert r.status == 200, r
        assert r.json()["member"]["role"] == "owner"
    finally:
        s.stop()


def test_init_with_a_password_file_shows_no_password(tmp_path):
    pw = tmp_path / "pw"
    pw.write_text(PASSWORD + "\n")
    d = str(tmp_path / "data")
    r = init(d, "--password-file", str(pw), "--email", "Boss@Example.com", "--name", "Acme")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert "password" not in out["owner"] and out["owner"]["email"] == "boss@example.com"
    assert PASSWORD not in r.stdout
    ws = subprocess.run([BINARY, "admin", "workspace", "list", "--data-dir", d,
                         *database_args(d)], capture_output=True, text=True).stdout
    assert json.loads(ws)["data"][0]["name"] == "Acme"
